//! Field-by-field differences between two transcripts of one scenario: what the ledger
//! classifies.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::runner::{Outcome, StepRecord, Transcript};

/// One difference between two transcripts of a scenario.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiffRow {
    /// Scenario.
    pub scenario: String,
    /// Step.
    pub step: String,
    /// API of the step.
    pub api: String,
    /// Version of the step.
    pub version: Option<i16>,
    /// Field path in the response, or "outcome" when the kinds of answer differ.
    pub path: String,
    /// The left transcript's value.
    pub left: String,
    /// The right transcript's value.
    pub right: String,
}

fn kind(o: &Outcome) -> &'static str {
    match o {
        Outcome::Response(_) => "response",
        Outcome::Unsupported { .. } => "unsupported",
        Outcome::NoAnswer(_) => "no_answer",
        Outcome::Malformed(_) => "malformed",
        Outcome::Unsendable(_) => "unsendable",
        Outcome::Skipped(_) => "skipped",
        Outcome::Slept(_) => "slept",
    }
}

/// Field-by-field differences between two transcripts of one scenario.
pub fn diff(left: &Transcript, right: &Transcript) -> Vec<DiffRow> {
    let mut out = Vec::new();
    let rights: BTreeMap<&str, &StepRecord> =
        right.steps.iter().map(|s| (s.step.as_str(), s)).collect();
    for l in &left.steps {
        let mut row = |path: String, a: String, b: String| {
            out.push(DiffRow {
                scenario: left.scenario.clone(),
                step: l.step.clone(),
                api: l.api.clone(),
                version: l.version,
                path,
                left: a,
                right: b,
            })
        };
        let Some(r) = rights.get(l.step.as_str()) else {
            row("outcome".into(), kind(&l.outcome).into(), "missing".into());
            continue;
        };
        match (&l.outcome, &r.outcome) {
            (Outcome::Response(a), Outcome::Response(b)) => {
                let mut rows = Vec::new();
                diff_values("", a, b, &mut rows);
                for (path, x, y) in rows {
                    row(path, x, y);
                }
            }
            (a, b) if kind(a) != kind(b) => row("outcome".into(), kind(a).into(), kind(b).into()),
            (a, b) if a != b => row(
                "outcome".into(),
                serde_json::to_string(a).unwrap_or_default(),
                serde_json::to_string(b).unwrap_or_default(),
            ),
            _ => {}
        }
    }
    out
}

fn diff_values(path: &str, l: &Value, r: &Value, out: &mut Vec<(String, String, String)>) {
    match (l, r) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                diff_values(
                    &p,
                    a.get(k).unwrap_or(&Value::Null),
                    b.get(k).unwrap_or(&Value::Null),
                    out,
                );
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                diff_values(&format!("{path}.{i}"), x, y, out);
            }
        }
        _ if l != r => out.push((path.to_owned(), l.to_string(), r.to_string())),
        _ => {}
    }
}
