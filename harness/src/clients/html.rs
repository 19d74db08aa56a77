//! `kconform clients --html FILE`: the clients' verdict on one self-contained page, in the
//! shell every kconform page shares ([`crate::report::html::document`]): the targets, the
//! matrix of workload × client (what each client saw on each target, and the verdict), then a
//! section per line of the matrix that opens to its differences (each with the ledger entry
//! that documents it, or "undocumented") and the two transcripts side by side, the differing
//! calls and observations marked; stale claims and runs that gave no transcript last.

use std::fmt::Write as _;

use super::report::{ClientsReport, Key, RunRow};
use super::transcript::ClientTranscript;
use crate::report::html::document;
use crate::report::junit::xml as esc;

/// A transcript as one line per call and observation, the fields in `marked` highlighted.
fn transcript(t: &ClientTranscript, marked: &[&str]) -> String {
    t.fields()
        .iter()
        .map(|(field, value)| {
            let line = esc(&format!("{field} = {value}"));
            match marked.contains(&field.as_str()) {
                true => format!("<mark>{line}</mark>"),
                false => line,
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One side of a line: the target's transcript, or why its run gave none.
fn side(out: &mut String, run: Option<&RunRow>, target: &str, marked: &[&str]) {
    let _ = write!(out, "<div><b>{}</b>", esc(target));
    match run {
        None => out.push_str("<p class=\"dim\">not run</p>"),
        Some(r) => match (&r.transcript, &r.error) {
            (Some(t), _) => {
                let _ = write!(
                    out,
                    " <span class=\"dim\">{:.1} s</span><pre>{}</pre>",
                    r.secs,
                    transcript(t, marked)
                );
            }
            (None, error) => {
                let _ = write!(
                    out,
                    "<p class=\"bad\">no transcript ({:.1} s)</p><pre>{}</pre>",
                    r.secs,
                    esc(error.as_deref().unwrap_or_default())
                );
            }
        },
    }
    out.push_str("</div>");
}

/// The anchor of a line of the matrix.
fn anchor(index: usize) -> String {
    format!("line-{index}")
}

/// One line of the matrix opened: its differences, then the two transcripts side by side.
fn line(out: &mut String, report: &ClientsReport, index: usize, key: &Key) {
    let differences: Vec<_> = report
        .differences
        .iter()
        .filter(|d| key.has(&d.diff.client, &d.diff.workload, d.diff.coordinators))
        .collect();
    let failed = report.runs.iter().any(|r| r.is(key) && r.error.is_some());
    let stale = report
        .stale
        .iter()
        .any(|s| key.has(&s.client, &s.workload, s.coordinators));
    let bad = failed || stale || differences.iter().any(|d| d.documented_by.is_none());
    let class = match bad {
        true => "cause undocumented",
        false => "cause documented",
    };
    let _ = write!(
        out,
        "<details class=\"{class}\" id=\"{}\"><summary><b>{}</b> · {} · {}</summary>",
        anchor(index),
        esc(&key.label()),
        esc(&key.client),
        esc(&report.verdict_of(key))
    );
    if !differences.is_empty() {
        let (left, right) = (
            report.left.as_deref().unwrap_or("left"),
            report.right.as_deref().unwrap_or("right"),
        );
        let _ = write!(
            out,
            "<table><tr><th>call or observation</th><th>{}</th><th>{}</th><th>ledger</th></tr>",
            esc(left),
            esc(right)
        );
        for d in &differences {
            let ledger = match (&d.documented_by, d.consequence) {
                (Some(id), Some(c)) if c.harms() => format!(
                    "documented by <code>{}</code>: <strong class=\"bad\">{}</strong>",
                    esc(id),
                    c.name()
                ),
                (Some(id), _) => format!("documented by <code>{}</code>", esc(id)),
                (None, _) => "<strong class=\"bad\">undocumented</strong>".into(),
            };
            let _ = write!(
                out,
                "<tr><td><code>{}</code></td><td><mark>{}</mark></td><td><mark>{}</mark></td><td>{ledger}</td></tr>",
                esc(&d.diff.field),
                esc(&d.diff.left),
                esc(&d.diff.right)
            );
        }
        out.push_str("</table>");
    }
    let marked: Vec<&str> = differences.iter().map(|d| d.diff.field.as_str()).collect();
    out.push_str("<div class=\"sides\">");
    for t in &report.targets {
        let run = report.runs.iter().find(|r| r.is(key) && r.target == t.name);
        side(out, run, &t.name, &marked);
    }
    let _ = write!(
        out,
        "</div><p class=\"dim\">again: <code>kconform clients {} --client {}</code></p></details>",
        esc(&key.workload),
        esc(&key.client)
    );
}

/// The matrix: a row per workload, a column per client, each cell the line's verdict linking
/// to its section.
fn matrix(out: &mut String, report: &ClientsReport, keys: &[Key]) {
    // In the order the clients ran (Java, librdkafka, then the ecosystem's).
    let mut clients: Vec<&str> = Vec::new();
    for k in keys {
        if !clients.contains(&k.client.as_str()) {
            clients.push(&k.client);
        }
    }
    let mut rows: Vec<String> = Vec::new();
    for k in keys {
        if !rows.contains(&k.label()) {
            rows.push(k.label());
        }
    }
    out.push_str("<table class=\"matrix\"><tr><th>workload</th>");
    for c in &clients {
        let _ = write!(out, "<th>{}</th>", esc(c));
    }
    out.push_str("</tr>");
    for row in &rows {
        let _ = write!(out, "<tr><td>{}</td>", esc(row));
        for c in &clients {
            match keys
                .iter()
                .position(|k| k.label() == *row && k.client == *c)
            {
                None => out.push_str("<td class=\"dim\">-</td>"),
                Some(i) => {
                    let verdict = report.verdict_of(&keys[i]);
                    let class = match verdict.contains("UNDOCUMENTED")
                        || verdict.contains("STALE")
                        || verdict.contains("NO TRANSCRIPT")
                    {
                        true => "bad",
                        false => "good",
                    };
                    let _ = write!(
                        out,
                        "<td class=\"{class}\"><a href=\"#{}\">{}</a></td>",
                        anchor(i),
                        esc(&verdict)
                    );
                }
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
}

/// The page of `report`.
pub fn page(report: &ClientsReport) -> String {
    let verdict = crate::report::html::verdict(report.passed());
    let mut out = String::new();
    let undocumented = report
        .differences
        .iter()
        .filter(|d| d.documented_by.is_none())
        .count();
    let _ = write!(
        out,
        "<p>{} runs, {} differences ({undocumented} undocumented), {} stale claim(s)</p><ul>",
        report.runs.len(),
        report.differences.len(),
        report.stale.len()
    );
    for t in &report.targets {
        let _ = write!(
            out,
            "<li><b>{}</b>: {} ({:.0} s)</li>",
            esc(&t.name),
            esc(&t.origin),
            t.wall_secs
        );
    }
    out.push_str("</ul>");
    for note in &report.notes {
        let _ = write!(out, "<p class=\"dim\">note: {}</p>", esc(note));
    }
    if !report.consequences.is_empty() {
        out.push_str("<h2>What the documented differences did to the clients</h2><table><tr><th>entry</th><th>consequence</th><th>clients</th><th>workloads</th></tr>");
        for h in &report.consequences {
            let _ = write!(
                out,
                "<tr><td><code>{}</code></td><td class=\"bad\">{} ({})</td><td>{}</td><td>{}</td></tr>",
                esc(&h.deviation),
                h.consequence.name(),
                esc(h.consequence.about()),
                esc(&h.clients.join(", ")),
                esc(&h.workloads.join(", "))
            );
        }
        out.push_str("</table>");
    }
    let keys = report.keys();
    out.push_str("<h2>Workload × client</h2>");
    matrix(&mut out, report, &keys);
    out.push_str("<p class=\"filters\"><label><input type=\"checkbox\" id=\"show-documented\" checked> same or documented</label> <label><input type=\"checkbox\" id=\"show-undocumented\" checked> undocumented, stale or failed</label></p><h2>What each client saw</h2>\n");
    for (i, key) in keys.iter().enumerate() {
        line(&mut out, report, i, key);
    }
    if !report.stale.is_empty() {
        out.push_str("<h2>Stale claims</h2><ul>");
        for s in &report.stale {
            let _ = write!(
                out,
                "<li class=\"bad\"><code>{}</code>: {} {} <code>{}</code> should show kaas {} against Apache {}</li>",
                esc(&s.deviation),
                esc(&s.client),
                esc(&s.workload),
                esc(&s.field),
                esc(&s.kaas),
                esc(&s.apache)
            );
        }
        out.push_str("</ul>");
    }
    document("kconform clients", verdict, &out)
}
