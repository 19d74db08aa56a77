//! The certificate as one self-contained HTML page (no network, no server): the verdict, the
//! judges with their seconds, every finding worst first across judges, and each judge's own
//! page within it, opened on a click.

use std::fmt::Write as _;

use super::certificate::{html, Certificate, Verdict};
use super::judged::Ran;

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#222}\
h1{font-size:1.5em}table{border-collapse:collapse;margin:1em 0}\
td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}\
th{background:#f3f3f3}.failed,.could-not-run{color:#b00020;font-weight:bold}\
.passed{color:#1b7f3b;font-weight:bold}.inconclusive{color:#a06000;font-weight:bold}\
.left-out{color:#888}.known{color:#777}code{font-size:.92em}\
iframe{width:100%;height:80vh;border:1px solid #ccc}details{margin:.6em 0}\
summary{cursor:pointer;font-weight:bold}";

/// The page.
pub fn page(c: &Certificate) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>kconform certify: {}</title><style>{STYLE}</style></head><body>",
        html(&c.target)
    );
    let _ = write!(
        s,
        "<h1 class=\"{}\">{}</h1><p>{} against {}; took {:.0} s{}.</p>",
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
        let what = match &j.part.ran {
            Ran::LeftOut(why) | Ran::CouldNotRun(why) => why.clone(),
            Ran::Inconclusive(why) => format!("{} — {why}", j.part.summary),
            Ran::Ran => j.part.summary.clone(),
        };
        let on = match (&j.part.target, &j.part.against) {
            (Some(t), Some(a)) => format!("{t} vs {a}"),
            (Some(t), None) => t.clone(),
            _ => String::new(),
        };
        let _ = write!(
            s,
            "<tr><td><a href=\"#{0}\">{0}</a></td><td class=\"{1}\">{2}</td><td>{3}</td><td>{4}</td><td>{5:.0}</td><td>{6}</td><td>{7}</td></tr>",
            j.part.judge.name(),
            class(j.verdict),
            j.verdict.label(),
            j.new,
            j.known,
            j.part.secs,
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
    s.push_str(
        "<table><tr><th></th><th>severity</th><th>judge</th><th>finding</th><th>times</th></tr>",
    );
    for f in &c.findings {
        let (mark, cls) = match f.new {
            true if c.baseline.is_some() => ("NEW", "failed"),
            true => ("", "failed"),
            false => ("known", "known"),
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
    s.push_str("</table><h2>Each judge's report</h2>");
    for j in &c.judges {
        let Some(inner) = &j.part.page else { continue };
        let _ = write!(
            s,
            "<details id=\"{0}\"><summary>{0}: {1}</summary><iframe srcdoc=\"{2}\" title=\"{0}\"></iframe></details>",
            j.part.judge.name(),
            j.verdict.label(),
            html(inner)
        );
    }
    for n in &c.notes {
        let _ = write!(s, "<p class=\"known\">note: {}</p>", html(n));
    }
    s.push_str("</body></html>\n");
    s
}

fn class(v: Verdict) -> &'static str {
    match v {
        Verdict::Failed => "failed",
        Verdict::CouldNotRun => "could-not-run",
        Verdict::Inconclusive => "inconclusive",
        Verdict::Passed => "passed",
        Verdict::LeftOut => "left-out",
    }
}
