//! The certificate as one self-contained HTML page (no network, no server), in the shell every
//! kconform page shares ([`crate::report::html::document`]): the verdict, the judges with their
//! seconds, every finding worst first across judges, and each judge's own page within it,
//! opened on a click.

use std::fmt::Write as _;

use super::certificate::{html, Certificate, Verdict};

/// The page.
pub fn page(c: &Certificate) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<p class=\"{}\">{}</p><p>{} against {}; took {:.0} s{}.</p>",
        class(c.verdict),
        html(&c.headline()),
        html(&c.target),
        html(&c.against),
        c.secs,
        c.budget_secs
            .map_or(String::new(), |b| format!(" (budget {b} s)"))
    );
    s.push_str("<table><tr><th>judge</th><th>verdict</th><th>new</th><th>known</th><th>seconds</th><th>on</th><th>summary</th></tr>");
    for j in &c.judges {
        let what = j.what();
        let on = match (&j.part.target, &j.part.against) {
            (Some(t), Some(a)) => format!("{t} vs {a}"),
            (Some(t), None) => t.clone(),
            _ => String::new(),
        };
        let numbers = match j.verdict {
            Verdict::LeftOut => "<td>-</td><td>-</td><td>-</td>".to_owned(),
            _ => format!(
                "<td>{}</td><td>{}</td><td>{:.0}</td>",
                j.new, j.known, j.part.secs
            ),
        };
        let _ = write!(
            s,
            "<tr><td><a href=\"#{0}\">{0}</a></td><td class=\"{1}\">{2}</td>{3}<td>{4}</td><td>{5}</td></tr>",
            j.part.judge.name(),
            class(j.verdict),
            j.verdict.label(),
            numbers,
            html(&on),
            html(&what)
        );
    }
    s.push_str("</table>");
    if let Some(b) = &c.baseline {
        let _ = write!(s, "<p>{}.</p>", html(&b.summary()));
        if !b.fixed.is_empty() {
            let _ = write!(
                s,
                "<details><summary>Fixed ({})</summary><ul>",
                b.fixed.len()
            );
            for k in &b.fixed {
                let judge = k.judge.map_or("scenarios", |j| j.name());
                let _ = write!(s, "<li>[{judge}] <code>{}</code></li>", html(&k.key));
            }
            s.push_str("</ul></details>");
        }
    }
    let _ = write!(s, "<h2>Findings, worst first ({})</h2>", c.findings.len());
    match c.findings.is_empty() {
        true => s.push_str("<p class=\"good\">None: no judge found anything.</p>"),
        false => s.push_str(
            "<table><tr><th></th><th>severity</th><th>judge</th><th>finding</th><th>times</th></tr>",
        ),
    }
    for f in &c.findings {
        let (mark, cls) = match f.new {
            true if c.baseline.is_some() => ("NEW", "bad"),
            true => ("", "bad"),
            false => ("known", "dim"),
        };
        let _ = write!(
            s,
            "<tr class=\"{cls}\"><td>{mark}</td><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td></tr>",
            f.gated.severity.label(),
            f.gated.judge,
            html(&f.gated.key),
            f.gated.rows
        );
    }
    if !c.findings.is_empty() {
        s.push_str("</table>");
    }
    s.push_str("<h2>Each judge's report</h2>");
    for j in &c.judges {
        let Some(inner) = &j.part.page else { continue };
        let _ = write!(
            s,
            "<details id=\"{0}\"><summary>{0}: {1}</summary><iframe srcdoc=\"{2}\" title=\"{0}\" style=\"width:100%;height:80vh;border:1px solid #ddd\"></iframe></details>",
            j.part.judge.name(),
            j.verdict.label(),
            html(inner)
        );
    }
    for n in &c.notes {
        let _ = write!(s, "<p class=\"dim\">note: {}</p>", html(n));
    }
    let verdict = format!(
        "<span class=\"{}\">certify {}</span>",
        class(c.verdict),
        c.verdict.label()
    );
    crate::report::html::document(&format!("kconform certify: {}", c.target), &verdict, &s)
}

/// The shell's tone for a verdict.
fn class(v: Verdict) -> &'static str {
    match v {
        Verdict::Failed | Verdict::CouldNotRun => "bad",
        Verdict::Passed => "good",
        Verdict::Inconclusive | Verdict::LeftOut => "dim",
    }
}
