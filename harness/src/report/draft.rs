//! Ledger entries drafted from a report: for each undocumented root cause of a `kconform run
//! --json` report, the `[[deviation]]` to paste into `deviations.toml`, filled with what the
//! run saw (the API, the scenarios, each field difference and its two values, the signature
//! and versions as a comment) and marked `TODO` where only a person can say (the spec section
//! that documents it, what an application on each client notices). Pasted and completed, it
//! makes that cause DOCUMENTED on the next run.

use std::fmt::Write as _;

use serde::Deserialize;

use crate::compare::shown::Shown;

/// Why a report cannot be drafted from.
#[derive(Debug, thiserror::Error)]
pub enum DraftError {
    /// Not the JSON of a `kconform run` report.
    #[error("not a kconform run report (--json of `kconform run`): {0}")]
    NotAReport(String),
    /// A report of a kconform that keeps no field differences per cause.
    #[error("its causes keep no field differences (`shows`): a report of an older kconform; run it again")]
    NoShows,
}

#[derive(Deserialize)]
struct Report {
    causes: Vec<Cause>,
}

#[derive(Deserialize)]
struct Cause {
    title: String,
    versions: String,
    documented_by: Option<String>,
    differences: usize,
    scenarios: Vec<String>,
    shows: Option<Vec<ShownIn>>,
}

#[derive(Deserialize)]
struct ShownIn {
    api: String,
    field: String,
    kaas: String,
    apache: String,
}

/// The draft of every undocumented cause of `report` (a `kconform run --json` report), as
/// TOML text; none drafted when every cause is documented (said in a comment).
pub fn draft(report: &str) -> Result<String, DraftError> {
    let report: Report =
        serde_json::from_str(report).map_err(|e| DraftError::NotAReport(e.to_string()))?;
    let undocumented: Vec<&Cause> = report
        .causes
        .iter()
        .filter(|c| c.documented_by.is_none())
        .collect();
    let mut out = String::from(
        "# Drafted by `kconform ledger draft`: one entry per undocumented root cause. Complete each\n\
         # TODO (the spec section that documents it; what a Java and a librdkafka application\n\
         # notice, or why no client workload reaches it), then add it to deviations.toml.\n",
    );
    if undocumented.is_empty() {
        out.push_str("# Every cause of the report is documented: nothing to draft.\n");
    }
    let mut ids: Vec<String> = Vec::new();
    for cause in undocumented {
        let shows: Vec<Shown> = cause
            .shows
            .as_ref()
            .ok_or(DraftError::NoShows)?
            .iter()
            .map(|s| Shown {
                api: s.api.clone(),
                field: s.field.clone(),
                kaas: s.kaas.clone(),
                apache: s.apache.clone(),
            })
            .collect();
        let id = unique(slug(&cause.title), &mut ids);
        entry(&mut out, cause, &id, &shows);
    }
    Ok(out)
}

/// One `[[deviation]]`.
fn entry(out: &mut String, cause: &Cause, id: &str, shows: &[Shown]) {
    let api = shows.first().map_or("", |s| s.api.as_str());
    let versions = match cause.versions.is_empty() {
        true => String::new(),
        false => format!(" ({})", cause.versions),
    };
    let _ = write!(
        out,
        "\n# {}{versions}: {} difference(s)\n[[deviation]]\nid = {}\napi = {}\n\
         spec = {}\njava_client = {}\nlibrdkafka_client = {}\nscenarios = [{}]\n",
        cause.title.replace('\n', " "),
        cause.differences,
        quote(id),
        quote(api),
        quote("TODO: the section of the kaas documentation that says so"),
        quote("Not reached: TODO why no Java workload reaches it, or what a Java 3.7 application notices (then a [[deviation.client]] claim for java, and this text without 'Not reached')"),
        quote("Not reached: TODO, as for the Java client"),
        cause
            .scenarios
            .iter()
            .map(|s| quote(s))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for s in shows {
        out.push_str("[[deviation.shows]]\n");
        if s.api != api {
            let _ = writeln!(out, "api = {}", quote(&s.api));
        }
        let _ = writeln!(
            out,
            "field = {}\nkaas = {}\napache = {}",
            quote(&s.field),
            quote(&s.kaas),
            quote(&s.apache)
        );
    }
    if shows.len() == crate::compare::shown::MOST {
        out.push_str(
            "# (the cause holds more kinds of difference: see its differences in the report)\n",
        );
    }
}

/// A TOML string.
fn quote(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

/// An id from a cause's title: lower case words joined by `-`, at most 60 characters.
fn slug(title: &str) -> String {
    let mut out = String::new();
    for word in title
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if out.len() + word.len() + 1 > 60 {
            break;
        }
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(&word.to_ascii_lowercase());
    }
    match out.is_empty() {
        true => "deviation".into(),
        false => out,
    }
}

/// `id`, or `id-2`, `id-3`... where it is taken.
fn unique(id: String, taken: &mut Vec<String>) -> String {
    let mut candidate = id.clone();
    let mut n = 2;
    while taken.contains(&candidate) {
        candidate = format!("{id}-{n}");
        n += 1;
    }
    taken.push(candidate.clone());
    candidate
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = r#"{"causes": [
      {"title": "Heartbeat, LeaveGroup, SyncGroup error codes: 25 UNKNOWN_MEMBER_ID | 82 FENCED_INSTANCE_ID",
       "versions": "Heartbeat v4; SyncGroup v5", "documented_by": null, "differences": 3,
       "scenarios": ["group-static-member-rejoin"],
       "shows": [{"api": "Heartbeat", "field": "error_code", "kaas": "25 UNKNOWN_MEMBER_ID", "apache": "82 FENCED_INSTANCE_ID"},
                 {"api": "SyncGroup", "field": "error_code", "kaas": "25 UNKNOWN_MEMBER_ID", "apache": "82 FENCED_INSTANCE_ID"}]},
      {"title": "EndTxn error_code: 50 | 48", "versions": "v3", "documented_by": "wire-50",
       "differences": 1, "scenarios": ["s"], "shows": []}
    ]}"#;

    #[test]
    fn an_undocumented_cause_drafts_an_entry_the_ledger_loads() {
        let text = draft(REPORT).unwrap();
        assert!(
            !text.contains("wire-50"),
            "a documented cause is not drafted: {text}"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deviations.toml");
        std::fs::write(&path, &text).unwrap();
        let ledger = crate::compare::ledger::Ledger::load(&path).unwrap();
        let d = &ledger.deviations[0];
        assert_eq!(d.api, "Heartbeat");
        assert_eq!(d.scenarios, ["group-static-member-rejoin"]);
        let fields: Vec<(Option<&str>, &str)> = d
            .field_differences()
            .map(|f| (f.api.as_deref(), f.kaas.as_str()))
            .collect();
        assert_eq!(
            fields,
            [
                (None, "25 UNKNOWN_MEMBER_ID"),
                (Some("SyncGroup"), "25 UNKNOWN_MEMBER_ID")
            ]
        );
        assert!(text.contains("spec = \"TODO"), "{text}");
        assert!(
            text.contains("id = \"heartbeat-leavegroup-syncgroup-error-codes-25"),
            "{text}"
        );
    }

    #[test]
    fn what_is_no_report_is_refused_by_name() {
        assert!(matches!(draft("[]"), Err(DraftError::NotAReport(_))));
        let old = r#"{"causes": [{"title": "t", "versions": "", "documented_by": null,
            "differences": 1, "scenarios": ["s"]}]}"#;
        assert!(matches!(draft(old), Err(DraftError::NoShows)));
    }
}
