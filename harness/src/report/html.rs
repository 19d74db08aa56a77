//! The run's report as one self-contained page (`kconform run --html FILE`): no network, no
//! server. The verdict and the targets first; the root causes as a table worst first (the
//! undocumented ones), each opening to its differences and, for each, the two answers of that
//! step side by side with the differing field marked, the request that was sent, the ledger
//! entry or "undocumented", and the repro command; then stale and unreached entries and the
//! coverage matrix. Filters hide documented or undocumented causes. The page's script marks
//! the body `data-ready` when it ran and `data-error` when a script failed, which is what the
//! browser test reads.

use std::fmt::Write as _;

use serde_json::Value;

use super::junit::xml as esc;
use super::{Cause, Difference, Report};
use crate::api::coverage::Coverage;
use crate::targets::TargetSpec;
use crate::transcript::{StepRecord, Transcript};

/// The last name of a difference's path (`topics[0].error_code` → `error_code`).
fn last_name(path: &str) -> &str {
    let name = path.rsplit('.').next().unwrap_or(path);
    name.split('[').next().unwrap_or(name)
}

/// An answer as pretty JSON, the lines that hold `field` marked.
fn marked(value: &Value, field: &str) -> String {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    let key = format!("\"{field}\":");
    text.lines()
        .map(|line| match line.trim_start().starts_with(&key) {
            true => format!("<mark>{}</mark>", esc(line)),
            false => esc(line),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn step<'t>(
    transcripts: &'t [Transcript],
    scenario: &str,
    target: &str,
    step: &str,
) -> Option<&'t StepRecord> {
    transcripts
        .iter()
        .find(|t| t.scenario == scenario && t.target == target)?
        .steps
        .iter()
        .find(|s| s.step == step)
}

/// One difference: where, the values, the two answers side by side, the request.
fn difference(out: &mut String, report: &Report, transcripts: &[Transcript], d: &Difference) {
    let row = &d.row;
    let (left, right) = (&report.targets[0], &report.targets[1]);
    let verdict = match &d.documented_by {
        Some(id) => format!("documented by <code>{}</code>", esc(id)),
        None => "<strong class=\"bad\">undocumented</strong>".to_owned(),
    };
    let _ = write!(
        out,
        "<div class=\"difference\"><p><b>{}</b> · step <code>{}</code> ({} v{}) · <code>{}</code>: \
         {} <code>{}</code> | {} <code>{}</code> · {verdict}</p>",
        esc(&row.scenario),
        esc(&row.step),
        esc(&row.api),
        row.version.map(|v| v.to_string()).unwrap_or_else(|| "?".into()),
        esc(&row.path),
        esc(left),
        esc(&row.left.to_string()),
        esc(right),
        esc(&row.right.to_string()),
    );
    if let Some(spec) = &d.spec {
        let _ = write!(out, "<p class=\"dim\">spec: {}</p>", esc(spec));
    }
    // The field marked: the path's last name, or for answers of two kinds each side's kind.
    let field = |value: &Value| match row.path.as_str() {
        "outcome" => value.as_str().unwrap_or_default().to_owned(),
        path => last_name(path).to_owned(),
    };
    let (left_step, right_step) = (
        step(transcripts, &row.scenario, left, &row.step),
        step(transcripts, &row.scenario, right, &row.step),
    );
    let answer = |s: Option<&StepRecord>, value: &Value| {
        s.map(|s| {
            marked(
                &serde_json::to_value(&s.outcome).unwrap_or_default(),
                &field(value),
            )
        })
        .unwrap_or_else(|| "(no transcript)".into())
    };
    let _ = write!(
        out,
        "<div class=\"sides\"><div><h4>{}</h4><pre>{}</pre></div><div><h4>{}</h4><pre>{}</pre></div></div>",
        esc(left),
        answer(left_step, &row.left),
        esc(right),
        answer(right_step, &row.right)
    );
    if let Some(s) = left_step {
        let request = serde_json::to_string_pretty(&s.request).unwrap_or_default();
        let _ = write!(
            out,
            "<details><summary>request sent</summary><pre>{}</pre></details>",
            esc(&request)
        );
    }
    let targets = match report.target_args.is_empty() {
        true => &report.targets,
        false => &report.target_args,
    };
    let flags: String = report.repro_flags.iter().map(|f| format!(" {f}")).collect();
    let _ = write!(
        out,
        "<p class=\"dim\">repro: <code>kconform repro {} --target {} --target {}{}</code></p></div>",
        esc(&row.scenario),
        esc(&targets[0]),
        esc(&targets[1]),
        esc(&flags)
    );
}

/// The differences a cause opens to, at most (a framing defect can be hundreds).
const SHOWN: usize = 50;

/// One cause: a row that opens to its differences.
fn cause(out: &mut String, report: &Report, transcripts: &[Transcript], c: &Cause) {
    let (class, verdict) = match &c.documented_by {
        Some(id) => (
            "documented",
            format!("documented by <code>{}</code>", esc(id)),
        ),
        None => (
            "undocumented",
            "<strong class=\"bad\">UNDOCUMENTED</strong>".to_owned(),
        ),
    };
    let _ = write!(
        out,
        "<details class=\"cause {class}\"><summary><span class=\"sig\">{}</span> <span class=\"dim\">{}</span> · {} difference(s), {} consequence(s) · {verdict}</summary>",
        esc(&c.title),
        esc(&c.versions),
        c.differences,
        c.consequences
    );
    if !c.consequence_chains.is_empty() {
        out.push_str("<p class=\"dim\">its consequences, each where the differing value flowed:</p><ul class=\"chains\">");
        for chain in &c.consequence_chains {
            let _ = write!(
                out,
                "<li><code>{}</code> <span class=\"dim\">{}</span></li>",
                esc(&chain.signature),
                esc(&chain.words())
            );
        }
        out.push_str("</ul>");
    }
    let mine: Vec<&Difference> = report
        .differences
        .iter()
        .filter(|d| {
            c.steps
                .contains(&(d.row.scenario.clone(), d.row.step.clone()))
        })
        .collect();
    for d in mine.iter().take(SHOWN) {
        difference(out, report, transcripts, d);
    }
    if mine.len() > SHOWN {
        let _ = write!(
            out,
            "<p class=\"dim\">the first {SHOWN} of {}: <code>kconform run --json</code> has them all</p>",
            mine.len()
        );
    }
    out.push_str("</details>\n");
}

/// A Markdown table (the coverage matrix) as an HTML table.
fn table(markdown: &str) -> String {
    let mut out = String::from("<table>");
    for (i, line) in markdown.lines().filter(|l| l.starts_with('|')).enumerate() {
        if i == 1 {
            continue;
        }
        let tag = if i == 0 { "th" } else { "td" };
        out.push_str("<tr>");
        for cell in line.trim().trim_matches('|').split('|') {
            let _ = write!(out, "<{tag}>{}</{tag}>", esc(cell.trim()));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
    out
}

/// The page.
pub fn page(report: &Report, transcripts: &[Transcript]) -> String {
    let mut out = String::new();
    let verdict = verdict(report.passed());
    let undocumented = report
        .causes
        .iter()
        .filter(|c| c.documented_by.is_none())
        .count();
    let _ = write!(
        out,
        "<p>{}, {} in {} root cause(s), {undocumented} undocumented; {} stale</p><ul>",
        super::counted(report.runs.len(), "transcript"),
        super::counted(report.differences.len(), "difference"),
        report.causes.len(),
        report.stale.len()
    );
    for o in &report.origins {
        let _ = write!(
            out,
            "<li><b>{}</b>: {}</li>",
            esc(&o.target),
            esc(&o.origin)
        );
    }
    out.push_str("</ul>");
    if !report.client_harms.is_empty() {
        out.push_str("<h2>What documented deviations do to clients</h2><table><tr><th>entry</th><th>consequence</th><th>clients</th><th>workloads</th></tr>");
        for h in &report.client_harms {
            let class = match h.consequence.harms() {
                true => "bad",
                false => "dim",
            };
            let _ = write!(
                out,
                "<tr><td><code>{}</code></td><td class=\"{class}\">{} ({})</td><td>{}</td><td>{}</td></tr>",
                esc(&h.deviation),
                h.consequence.name(),
                esc(h.consequence.about()),
                esc(&h.clients.join(", ")),
                esc(&h.workloads.join(", "))
            );
        }
        out.push_str("</table>");
    }
    out.push_str("<p class=\"filters\"><label><input type=\"checkbox\" id=\"show-documented\" checked> documented</label> <label><input type=\"checkbox\" id=\"show-undocumented\" checked> undocumented</label></p><h2>Root causes, worst first</h2>\n");
    // The report's one ranking, as every other form has it.
    for c in &report.causes {
        cause(&mut out, report, transcripts, c);
    }
    if !report.stale.is_empty() || !report.not_reached.is_empty() {
        out.push_str("<h2>Entries that did not show</h2><ul>");
        for s in &report.stale {
            let _ = write!(
                out,
                "<li class=\"bad\">STALE <code>{}</code> in {}</li>",
                esc(&s.entry),
                esc(&s.scenario)
            );
        }
        for n in &report.not_reached {
            let _ = write!(
                out,
                "<li>NOT REACHED <code>{}</code> in {}: {}</li>",
                esc(&n.entry),
                esc(&n.scenario),
                esc(&n.stopped)
            );
        }
        out.push_str("</ul>");
    }
    let mut coverage = Coverage::default();
    transcripts
        .iter()
        .for_each(|t| coverage.add(t, TargetSpec::answers_as_named(&t.target)));
    let _ = write!(
        out,
        "<h2>Coverage: API × version × error code</h2>{}",
        table(&coverage.markdown())
    );
    document("kconform report", verdict, &out)
}

/// The verdict as every page's heading shows it.
pub fn verdict(passed: bool) -> &'static str {
    match passed {
        true => "<span class=\"good\">PASSED</span>",
        false => "<span class=\"bad\">FAILED</span>",
    }
}

/// A self-contained page: the title, the verdict as a heading, the body, the style and the
/// script every kconform page shares (filters, `#open-all`, the `data-ready` and `data-error`
/// marks a browser test reads).
pub fn document(title: &str, verdict: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>\
         <h1>kconform: {verdict}</h1>{body}<script>{SCRIPT}</script></body></html>\n",
        esc(title)
    )
}

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:1400px}\
code,pre{font:12px/1.35 ui-monospace,monospace}pre{background:#f6f6f6;padding:.5em;overflow:auto;max-height:30em}\
mark{background:#ffe08a}.bad{color:#b00020}.good{color:#0a7d22}.dim{color:#666}\
details.cause{border:1px solid #ddd;border-radius:4px;margin:.3em 0;padding:.3em .6em}\
details.cause.undocumented{border-color:#b00020}.sides{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:1em}\
.scroll{overflow-x:auto}.difference{border-top:1px solid #eee;margin-top:.5em}table{border-collapse:collapse}\
td,th{border:1px solid #ddd;padding:2px 6px;font-size:12px}body.hide-documented .documented,\
body.hide-undocumented .undocumented{display:none}";

const SCRIPT: &str = "window.onerror=function(m){document.body.dataset.error=String(m)};\
for(const k of ['documented','undocumented']){const box=document.getElementById('show-'+k);if(box){box.addEventListener('change',e=>{document.body.classList.toggle('hide-'+k,!e.target.checked)})}}\
if(location.hash==='#open-all'){document.querySelectorAll('details').forEach(d=>d.open=true)}\
document.body.dataset.ready='1';";
