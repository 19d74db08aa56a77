//! Field-by-field differences between two transcripts of one scenario: what the ledger
//! classifies.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::transcript::{Outcome, StepRecord, Transcript};

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
    /// The left transcript's value (for "outcome", the kind of answer).
    pub left: Value,
    /// The right transcript's value.
    pub right: Value,
    /// For an outcome that differs in kind: what the odd answer was (a malformed answer's
    /// diagnosis, why no answer came, why a step was not sent), which the kind alone does not
    /// say; what root causes are grouped by.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// What an outcome says beyond its kind: a malformed answer's problem, why no answer came or
/// why a step was not sent.
fn detail(o: &Outcome) -> Option<String> {
    match o {
        Outcome::Malformed(m) => Some(m.problem.clone()),
        Outcome::NoAnswer(why) | Outcome::Skipped(why) | Outcome::Unsendable(why) => {
            Some(why.clone())
        }
        Outcome::Unsupported { min, max } => Some(format!("serves v{min}..=v{max}")),
        _ => None,
    }
}

/// A difference's value as a reader (and the ledger) reads it: text as it is, anything else as
/// compact JSON.
pub fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn kind(o: &Outcome) -> &'static str {
    match o {
        Outcome::Response(_) => "response",
        Outcome::Unsupported { .. } => "unsupported",
        Outcome::NoAnswer(_) => "no_answer",
        Outcome::Malformed(_) => "malformed",
        Outcome::Unsendable(_) => "unsendable",
        Outcome::Skipped(_) => "skipped",
        Outcome::Provisioned(_) => "provisioned",
        Outcome::Slept(_) => "slept",
        Outcome::Broker(_) => "broker",
        Outcome::Raced(_) => "raced",
        Outcome::Closed(_) => "closed",
        Outcome::Cut(_) => "cut",
    }
}

/// Field-by-field differences between two transcripts of one scenario.
pub fn diff(left: &Transcript, right: &Transcript) -> Vec<DiffRow> {
    let (left, right) = &renumbered(left, right);
    let mut out = Vec::new();
    let rights: BTreeMap<&str, &StepRecord> =
        right.steps.iter().map(|s| (s.step.as_str(), s)).collect();
    for l in &left.steps {
        let mut row = |path: String, a: Value, b: Value, detail: Option<String>| {
            out.push(DiffRow {
                scenario: left.scenario.clone(),
                step: l.step.clone(),
                api: l.api.clone(),
                version: l.version,
                path,
                left: a,
                right: b,
                detail,
            })
        };
        let provisioned = |o: &Outcome| matches!(o, Outcome::Provisioned(_));
        if provisioned(&l.outcome)
            || rights
                .get(l.step.as_str())
                .is_some_and(|r| provisioned(&r.outcome))
        {
            // Provisioned topics stood in for this step on one side: nothing to compare.
            continue;
        }
        let Some(r) = rights.get(l.step.as_str()) else {
            row(
                "outcome".into(),
                kind(&l.outcome).into(),
                "missing".into(),
                detail(&l.outcome),
            );
            continue;
        };
        match (&l.outcome, &r.outcome) {
            (Outcome::Response(a), Outcome::Response(b)) => {
                let mut rows = Vec::new();
                diff_values("", a, b, &mut rows);
                for (path, x, y) in rows {
                    row(path, x, y, None);
                }
            }
            (a, b) if kind(a) != kind(b) => {
                row(
                    "outcome".into(),
                    kind(a).into(),
                    kind(b).into(),
                    detail(a).or_else(|| detail(b)),
                );
                // An answer read past its framing defect is judged as the response it reads as.
                if let (Some(x), Some(y)) = (answer(a), answer(b)) {
                    let mut rows = Vec::new();
                    diff_values("", x, y, &mut rows);
                    for (path, x, y) in rows {
                        row(path, x, y, None);
                    }
                }
            }
            (a, b) if a != b => row(
                "outcome".into(),
                serde_json::to_value(a).unwrap_or_default(),
                serde_json::to_value(b).unwrap_or_default(),
                None,
            ),
            _ => {}
        }
    }
    let lefts: std::collections::BTreeSet<&str> =
        left.steps.iter().map(|s| s.step.as_str()).collect();
    for r in right
        .steps
        .iter()
        .filter(|r| !lefts.contains(r.step.as_str()))
    {
        out.push(DiffRow {
            scenario: left.scenario.clone(),
            step: r.step.clone(),
            api: r.api.clone(),
            version: r.version,
            path: "outcome".into(),
            left: "missing".into(),
            right: kind(&r.outcome).into(),
            detail: detail(&r.outcome),
        });
    }
    out.extend(relational(left, right));
    out.extend(read_back(left, right));
    out
}

/// The step label a read-back's differences are recorded at: not a step of any scenario, so
/// nothing flows from it, and the steps its stop left unsent fold under it.
pub const READ_BACK: &str = "read-back";

/// The API name a read-back's differences carry.
pub const READ_BACK_API: &str = "ReadBack";

/// Each transaction whose read-back verdict differs between the sides, where one side's
/// breaks exactly-once or is left open: a row at [`READ_BACK`] whose values are the verdicts
/// (a side not read back did not stop: every read it made held) and whose detail is the bad
/// side's verdict in words.
fn read_back(left: &Transcript, right: &Transcript) -> Vec<DiffRow> {
    use crate::transcript::ReadVerdict;
    let bad = |v: ReadVerdict| v.breaks_exactly_once() || v == ReadVerdict::Open;
    let mut names: Vec<&str> = left
        .readback
        .iter()
        .chain(&right.readback)
        .map(|t| t.name.as_str())
        .collect();
    names.sort_by_key(|n| crate::transcript::txn_number(n));
    names.dedup();
    let mut out = Vec::new();
    for name in names {
        let l = left.readback.iter().find(|t| t.name == name);
        let r = right.readback.iter().find(|t| t.name == name);
        let (lv, rv) = (l.map(|t| t.verdict), r.map(|t| t.verdict));
        if lv == rv || !(lv.is_some_and(bad) || rv.is_some_and(bad)) {
            continue;
        }
        let label = |v: Option<ReadVerdict>| match v {
            Some(v) => Value::String(v.label().to_owned()),
            None => Value::String("not read back (its reads held)".to_owned()),
        };
        let words = [l, r]
            .into_iter()
            .flatten()
            .find(|t| bad(t.verdict))
            .map(|t| t.words.clone());
        out.push(DiffRow {
            scenario: left.scenario.clone(),
            step: READ_BACK.to_owned(),
            api: READ_BACK_API.to_owned(),
            version: None,
            path: name.to_owned(),
            left: label(lv),
            right: label(rv),
            detail: words,
        });
    }
    out
}

/// The answer of a step: a response, or an answer read past its framing defect.
fn answer(o: &Outcome) -> Option<&Value> {
    match o {
        Outcome::Response(v) => Some(v),
        Outcome::Malformed(m) => m.read_past_answer.as_ref(),
        _ => None,
    }
}

/// Where a transcript holds a symbol (`pid#1`): (step, field path) → symbol.
fn symbols(t: &Transcript) -> BTreeMap<(String, String), String> {
    let mut out = BTreeMap::new();
    for step in &t.steps {
        if let Outcome::Response(v) = &step.outcome {
            let mut found = Vec::new();
            symbols_in("", v, &mut found);
            for (path, symbol) in found {
                out.insert((step.step.clone(), path), symbol);
            }
        }
    }
    out
}

/// The symbols in an answer, each with its field path, in the order a walk meets them.
fn symbols_in(path: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => m.iter().for_each(|(k, v)| {
            let p = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            symbols_in(&p, v, out)
        }),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, v)| symbols_in(&format!("{path}.{i}"), v, out)),
        Value::String(s) if is_symbol(s) => out.push((path.to_owned(), s.clone())),
        _ => {}
    }
}

/// Both transcripts with the symbols of their answers numbered again, each kind (`pid`,
/// `member`) from 1, in the order they first appear among the steps both transcripts have,
/// then among the rest. The normaliser numbers symbols as a run meets them, so a step one side
/// alone has (a later release's version in a sweep: InitProducerId v5 handing out a producer
/// id) would shift every later symbol of its kind, a difference at steps that agree. Numbered
/// so, two transcripts that hold the same values alike at their shared steps read the same
/// there; what one holds alike and the other not still differs (and [`relational`] says so).
fn renumbered(left: &Transcript, right: &Transcript) -> (Transcript, Transcript) {
    let rights: std::collections::BTreeSet<&str> =
        right.steps.iter().map(|s| s.step.as_str()).collect();
    let shared: std::collections::BTreeSet<&str> = left
        .steps
        .iter()
        .map(|s| s.step.as_str())
        .filter(|s| rights.contains(s))
        .collect();
    let shared = &shared;
    let renumber = |t: &Transcript| {
        fn rewrite(v: &mut Value, new: &BTreeMap<String, String>) {
            match v {
                Value::Object(m) => m.values_mut().for_each(|v| rewrite(v, new)),
                Value::Array(a) => a.iter_mut().for_each(|v| rewrite(v, new)),
                Value::String(s) => {
                    if let Some(n) = new.get(s.as_str()) {
                        *s = n.clone();
                    }
                }
                _ => {}
            }
        }
        let answers = |first: bool| {
            t.steps
                .iter()
                .filter(move |s| shared.contains(s.step.as_str()) == first)
                .filter_map(|s| match &s.outcome {
                    Outcome::Response(v) => Some(v),
                    _ => None,
                })
        };
        let mut met = Vec::new();
        answers(true)
            .chain(answers(false))
            .for_each(|v| symbols_in("", v, &mut met));
        let mut new = BTreeMap::new();
        let mut counts: BTreeMap<String, u32> = BTreeMap::new();
        for (_, symbol) in met {
            if new.contains_key(&symbol) {
                continue;
            }
            let kind = symbol.split_once('#').map_or("", |(k, _)| k).to_owned();
            let n = counts.entry(kind.clone()).or_default();
            *n += 1;
            new.insert(symbol, format!("{kind}#{n}"));
        }
        let mut t = t.clone();
        for step in &mut t.steps {
            if let Outcome::Response(v) = &mut step.outcome {
                rewrite(v, &new);
            }
        }
        t
    };
    (renumber(left), renumber(right))
}

/// `pid#1`, `member#12`: what the normaliser makes of a run-specific value.
fn is_symbol(s: &str) -> bool {
    s.split_once('#').is_some_and(|(kind, n)| {
        !kind.is_empty()
            && kind.bytes().all(|b| b.is_ascii_lowercase())
            && !n.is_empty()
            && n.bytes().all(|b| b.is_ascii_digit())
    })
}

/// A symbol means "the same value as wherever else it appears", so two transcripts can show the
/// same symbol at a step and still disagree on what it is the same as: a broker that answers
/// one InitProducerId with another producer id than the rest shows `pid#1` there like Apache,
/// and differs only in that it is not the id of the later answers. Among the places where both
/// transcripts hold a symbol, each place whose symbol is equal on both sides but equals other
/// places on one side than on the other is a difference, shown with those places.
fn relational(left: &Transcript, right: &Transcript) -> Vec<DiffRow> {
    let (l, r) = (symbols(left), symbols(right));
    let both: Vec<&(String, String)> = l.keys().filter(|k| r.contains_key(*k)).collect();
    let same_as = |side: &BTreeMap<(String, String), String>, at: &(String, String)| {
        both.iter()
            .filter(|q| **q != at && side[**q] == side[at])
            .map(|(step, path)| format!("{step} {path}"))
            .collect::<Vec<_>>()
    };
    let describe = |symbol: &str, places: &[String]| match places.len() {
        0 => format!("{symbol}, as nowhere else"),
        n if n <= 3 => format!("{symbol}, as at {}", places.join(", ")),
        n => format!(
            "{symbol}, as at {} and {} more",
            places[..3].join(", "),
            n - 3
        ),
    };
    let mut out = Vec::new();
    for at in &both {
        if l[*at] != r[*at] {
            continue;
        }
        let (a, b) = (same_as(&l, at), same_as(&r, at));
        if a != b {
            let step = left
                .steps
                .iter()
                .find(|s| s.step == at.0)
                .expect("a step of left");
            out.push(DiffRow {
                scenario: left.scenario.clone(),
                step: at.0.clone(),
                api: step.api.clone(),
                version: step.version,
                path: at.1.clone(),
                left: describe(&l[*at], &a).into(),
                right: describe(&r[*at], &b).into(),
                detail: None,
            });
        }
    }
    out
}

fn diff_values(path: &str, l: &Value, r: &Value, out: &mut Vec<(String, Value, Value)>) {
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
        _ if l != r => out.push((path.to_owned(), l.clone(), r.clone())),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn transcript(steps: &[(&str, &str)]) -> Transcript {
        Transcript {
            scenario: "s".into(),
            target: "t".into(),
            steps: steps
                .iter()
                .map(|(step, pid)| StepRecord {
                    step: (*step).into(),
                    api: "InitProducerId".into(),
                    version: Some(5),
                    request: Value::Null,
                    outcome: Outcome::Response(json!({ "producer_id": pid })),
                    encoding: Vec::new(),
                })
                .collect(),
            failed_expectations: Vec::new(),
            stopped: None,
            readback: Vec::new(),
        }
    }

    #[test]
    fn a_step_one_side_alone_has_shifts_no_symbol_of_the_steps_both_have() {
        // Apache 4.4 sends v5 too, which hands out a producer id kaas never does.
        let kaas = transcript(&[("a@v4", "pid#1"), ("b", "pid#2")]);
        let apache = transcript(&[("a@v4", "pid#1"), ("a@v5", "pid#2"), ("b", "pid#3")]);
        let rows = diff(&kaas, &apache);
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert_eq!(
            (rows[0].step.as_str(), rows[0].path.as_str()),
            ("a@v5", "outcome")
        );
        // What differs at the shared steps still does: b holding a's id on one side only.
        let same = transcript(&[("a@v4", "pid#1"), ("b", "pid#1")]);
        let rows = diff(&same, &apache);
        assert!(
            rows.iter()
                .any(|r| r.step == "b" && r.path == "producer_id"),
            "{rows:?}"
        );
    }
}
