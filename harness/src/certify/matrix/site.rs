//! The matrix as a static site (no server, no network): `index.html`, the brokers by their
//! latest run against each Apache, a cell a word linked to its broker's page; one page per
//! broker with every run kept and what changed between runs of one kconform version; and
//! `matrix.json`, the latest runs for a program to read.

use std::fmt::Write as _;
use std::path::Path;

use super::cell::{Word, USERS_MEET};
use super::history::{self, Run};
use crate::report::html::document;
use crate::report::junit::xml as esc;

/// The columns before what users meet: whether it could be had and claims transactions, then
/// the judges in the order certify runs them.
const JUDGES: [&str; 9] = [
    "start",
    "certify",
    "transactions",
    "scenarios",
    "cluster-scenarios",
    "clients",
    "chaos",
    "fuzz",
    "peers",
];

/// Writes the site for `runs` (every run kept, oldest first) into `site`: the paths written.
pub fn write(site: &Path, runs: &[Run], notes: &[String]) -> std::io::Result<Vec<String>> {
    let mut written = vec!["index.html".to_owned(), "matrix.json".to_owned()];
    let latest: Vec<&Run> = history::latest(runs);
    std::fs::write(site.join("index.html"), index(&latest, notes))?;
    let json = serde_json::json!({
        "schema_version": history::SCHEMA_VERSION,
        "runs": latest,
    });
    std::fs::write(
        site.join("matrix.json"),
        serde_json::to_string_pretty(&json).expect("runs serialise"),
    )?;
    let mut brokers: Vec<&str> = latest.iter().map(|r| r.broker.as_str()).collect();
    brokers.dedup();
    for broker in brokers {
        let name = format!("{broker}.html");
        std::fs::write(site.join(&name), broker_page(broker, runs, &latest))?;
        written.push(name);
    }
    Ok(written)
}

/// The class a word's cell is painted with.
fn class(word: Word) -> &'static str {
    match word {
        Word::Identical | Word::Held => "w-identical",
        Word::Documented => "w-documented",
        Word::Wrong | Word::Undocumented => "w-wrong",
        Word::Informational => "w-info",
        Word::NotServed => "w-unserved",
        Word::CouldNotRun | Word::CouldNotStart => "w-broken",
        Word::NotRun => "w-none",
    }
}

const STYLE: &str = "<style>.w-identical{background:#c8f0c8}.w-documented{background:#e8f4c0}\
.w-wrong{background:#f6b8b8}.w-info{background:#dde4f4}.w-unserved{background:#e4e4e4}\
.w-broken{background:#f4d090}.w-none{color:#999}td.cell a{color:inherit;text-decoration:none;display:block}\
th.rot{font-weight:normal}</style>";

/// The columns the runs have, judges first then what users meet; a column no run has a word
/// in (a judge none ran, no broker that failed to start) is left out of the matrix.
fn columns(runs: &[&Run]) -> Vec<&'static str> {
    let ran = |c: &str| {
        runs.iter()
            .any(|r| r.cell(c).is_some_and(|cell| cell.word != Word::NotRun))
    };
    JUDGES
        .iter()
        .copied()
        .filter(|c| ran(c))
        .chain(USERS_MEET.iter().map(|(c, _)| *c))
        .collect()
}

/// The matrix page.
fn index(latest: &[&Run], notes: &[String]) -> String {
    let columns = columns(latest);
    let mut s = String::from(STYLE);
    let _ = write!(
        s,
        "<p>Every broker of the brokers file, certified by <code>kconform certify</code> against the Apache named, its latest run; each cell links to the broker's page. Words: <span class=\"w-identical\">identical</span> (answers as Apache does; <span class=\"w-identical\">held</span> for the fuzzer, which has no answers to compare: no crash, every answer readable), <span class=\"w-documented\">documented</span> (differs only where its own documentation says), <span class=\"w-wrong\">wrong</span>, <span class=\"w-info\">informational</span> (too little happened to judge, or another Apache release: how Kafka moved), <span class=\"w-unserved\">not served</span> (refuses transactions cleanly), <span class=\"w-broken\">could not start / could not run</span>.</p>"
    );
    for note in notes {
        let _ = write!(s, "<p class=\"dim\">{}</p>", esc(note));
    }
    s.push_str("<table><tr><th>broker</th><th>version</th><th>against</th>");
    for c in &columns {
        let _ = write!(s, "<th class=\"rot\">{}</th>", esc(c));
    }
    s.push_str("<th>kconform</th><th>seconds</th><th>run</th></tr>");
    for run in latest {
        let link = format!("{}.html", run.broker);
        let _ = write!(
            s,
            "<tr><td><a href=\"{}\">{}</a></td><td>{}</td><td>{}</td>",
            esc(&link),
            esc(&run.broker),
            esc(&run.broker_version),
            esc(&run.against)
        );
        for c in &columns {
            match run.cell(c) {
                Some(cell) => {
                    let _ = write!(
                        s,
                        "<td class=\"cell {}\" title=\"{}\"><a href=\"{}\">{}</a></td>",
                        class(cell.word),
                        esc(&cell.why),
                        esc(&link),
                        cell.word.label()
                    );
                }
                None => s.push_str("<td class=\"cell w-none\">-</td>"),
            }
        }
        let _ = write!(
            s,
            "<td>{}</td><td>{:.0}</td><td>{}</td></tr>",
            esc(&run.kconform_version),
            run.secs,
            stamp(run.started)
        );
    }
    s.push_str("</table><h2>What users meet</h2><ul>");
    for (c, what) in USERS_MEET {
        let _ = write!(s, "<li><b>{}</b>: {}</li>", esc(c), esc(what));
    }
    s.push_str("</ul>");
    document("kconform matrix", "the matrix", &s)
}

/// One broker's page: its latest run against each Apache cell by cell, what changed, and every
/// run kept.
fn broker_page(broker: &str, runs: &[Run], latest: &[&Run]) -> String {
    let mine: Vec<&Run> = runs.iter().filter(|r| r.broker == broker).collect();
    let mut s = String::from(STYLE);
    let _ = write!(s, "<p><a href=\"index.html\">the matrix</a></p>");
    for run in latest.iter().filter(|r| r.broker == broker) {
        let _ = write!(
            s,
            "<h2>Against {}: {}</h2><p>version {}; transaction APIs advertised: {}; {:.0} s; {}{}{}</p><table><tr><th>column</th><th>word</th><th>what it rests on</th></tr>",
            esc(&run.against),
            esc(&run.summary),
            esc(&run.broker_version),
            match &run.transaction_apis {
                None => "not asked (a target kconform starts)".to_owned(),
                Some(apis) if apis.is_empty() => "none".to_owned(),
                Some(apis) => format!("{apis:?}"),
            },
            run.secs,
            stamp(run.started),
            link(" · <a href=\"{}\">certificate</a>", run.page.as_deref()),
            link(" · <a href=\"{}\">log</a>", run.log.as_deref()),
        );
        for cell in &run.cells {
            let _ = write!(
                s,
                "<tr><td>{}</td><td class=\"{}\">{}</td><td>{}</td></tr>",
                esc(&cell.column),
                class(cell.word),
                cell.word.label(),
                esc(&cell.why)
            );
        }
        s.push_str("</table>");
        let changes = history::changes(runs, broker, &run.against);
        let _ = write!(s, "<h3>What changed (runs of one kconform version)</h3>");
        if changes.is_empty() {
            s.push_str("<p>Nothing: every run kept gave each column the same word.</p>");
        } else {
            s.push_str("<table class=\"changes\"><tr><th>column</th><th>was</th><th>became</th><th>between</th></tr>");
            for c in &changes {
                let _ = write!(
                    s,
                    "<tr><td>{}</td><td class=\"{}\">{}</td><td class=\"{}\">{}</td><td>{} and {}</td></tr>",
                    esc(&c.column),
                    class(c.from),
                    c.from.label(),
                    class(c.to),
                    c.to.label(),
                    stamp(c.since),
                    stamp(c.at)
                );
            }
            s.push_str("</table>");
        }
    }
    s.push_str("<h2>Every run kept</h2><table><tr><th>run</th><th>version</th><th>against</th><th>kconform</th><th>summary</th><th>seconds</th></tr>");
    for run in mine.iter().rev() {
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}{}</td><td>{:.0}</td></tr>",
            stamp(run.started),
            esc(&run.broker_version),
            esc(&run.against),
            esc(&run.kconform_version),
            esc(&run.summary),
            link(" (<a href=\"{}\">certificate</a>)", run.page.as_deref()),
            run.secs
        );
    }
    s.push_str("</table>");
    document(&format!("kconform matrix: {broker}"), broker, &s)
}

/// `template` with `{}` the escaped `path`, or nothing.
fn link(template: &str, path: Option<&str>) -> String {
    path.map_or(String::new(), |p| template.replace("{}", &esc(p)))
}

/// Seconds since 1970 as `YYYY-MM-DD HH:MM UTC`.
pub fn stamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let (h, m) = ((secs % 86_400) / 3600, (secs % 3600) / 60);
    // Civil date from days since 1970 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{d:02} {h:02}:{m:02} UTC")
}

#[cfg(test)]
mod tests {
    use super::super::cell::Cell;
    use super::*;

    /// Dates are civil dates, in UTC.
    #[test]
    fn stamps_are_civil_dates() {
        assert_eq!(stamp(0), "1970-01-01 00:00 UTC");
        assert_eq!(stamp(1_796_691_600), "2026-12-08 01:00 UTC");
        assert_eq!(stamp(951_782_400), "2000-02-29 00:00 UTC");
    }

    fn run(started: u64, word: Word) -> Run {
        Run {
            schema_version: history::SCHEMA_VERSION,
            kconform_version: "0.1.0".into(),
            broker: "kaas-ref".into(),
            broker_version: "0.1".into(),
            against: "apache".into(),
            started,
            secs: 3.0,
            transaction_apis: Some(vec![22]),
            cells: vec![Cell {
                column: "scenarios".into(),
                word,
                why: "because <b>".into(),
            }],
            summary: "CERTIFIED".into(),
            page: Some("runs/kaas-ref/2-apache.html".into()),
            certificate: None,
            log: None,
        }
    }

    /// The matrix shows the latest word, escaped reasons, and the broker's page the change.
    #[test]
    fn the_matrix_shows_the_latest_run_and_the_broker_page_its_change() {
        let site = tempfile::tempdir().unwrap();
        let runs = vec![run(1, Word::Documented), run(2, Word::Wrong)];
        let written = write(site.path(), &runs, &[]).unwrap();
        assert_eq!(written, ["index.html", "matrix.json", "kaas-ref.html"]);
        let index = std::fs::read_to_string(site.path().join("index.html")).unwrap();
        assert!(index.contains("<td class=\"cell w-wrong\" title=\"because &lt;b&gt;\"><a href=\"kaas-ref.html\">wrong</a></td>"), "{index}");
        assert!(
            !index.contains(">documented</a>"),
            "only the latest run: {index}"
        );
        let page = std::fs::read_to_string(site.path().join("kaas-ref.html")).unwrap();
        assert!(
            page.contains(
                "<td class=\"w-documented\">documented</td><td class=\"w-wrong\">wrong</td>"
            ),
            "{page}"
        );
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(site.path().join("matrix.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(json["runs"].as_array().unwrap().len(), 1);
    }
}
