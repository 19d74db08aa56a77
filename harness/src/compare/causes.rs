//! Root causes: a run's differences grouped by what they have in common, so that a broker that
//! differs from Apache in twenty ways reads as twenty findings, not five hundred lines.
//!
//! A difference's signature ([`super::signature`]) is its API, its field path without indices
//! and each side's value class, or a malformed answer's diagnosis. Versions are merged into the
//! group's range, per API where a cause shows on several. A step skipped because its scenario had
//! stopped is not a difference of its own: it is folded under the cause that stopped the
//! scenario. A difference at a later step is a consequence of an earlier one only where the
//! earlier differing value flowed into the later step ([`super::flow`]: a capture it sends, a
//! role that routes it); every other difference is a cause of its own, for a report that is
//! longer is honest and one that folds real defects under a text field hides them. Groups are
//! ordered by what a client would notice ([`Notice`]), which fields a client only logs being
//! data (`scenarios/field-classes.toml`), not code, then by how many scenarios they touch.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

pub use super::folding::Classified;
use super::folding::{fold_refusals, Flowed};
use crate::compare::diff::DiffRow;
use crate::compare::flow::Flows;
pub use crate::compare::shown::Shown;
pub use crate::compare::signature::{
    first_reading, shape, FieldClasses, FieldClassesError, LoggedField, Notice, FIELD_CLASSES,
};
use crate::compare::signature::{framing, signature, title};

/// A scenario that stopped early on one target, and why ("step 'x' ...").
#[derive(Debug, Clone, Copy)]
pub struct Stop<'a> {
    /// The scenario.
    pub scenario: &'a str,
    /// Which side: 0 (left) or 1 (right).
    pub side: usize,
    /// Why, as the transcript says.
    pub why: &'a str,
}

/// One root cause: differences that share a signature, and the steps skipped after the stops it
/// caused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cause {
    /// What a client would notice of it.
    pub notice: Notice,
    /// The signature: stable across runs and machines (no addresses, no generated names, no
    /// versions), so that a baseline can name it.
    pub signature: String,
    /// What a reader is shown of it: the signature, but for a malformed answer in the words
    /// of its first difference's diagnosis, versions kept (`the response header is v1, but
    /// FindCoordinator v2 answers with header v0`).
    pub title: String,
    /// Versions of the API it showed at, as a range or list (`v0..=3`, `v1, v4`), or empty; for
    /// a cause that shows on several APIs (a framing defect), each API with its own
    /// (`EndTxn v3; Metadata v9`).
    pub versions: String,
    /// The ledger entry that documents it, or none (it fails the run).
    pub documented_by: Option<String>,
    /// Differences in the group (the rows of the flat list it stands for).
    pub differences: usize,
    /// Steps skipped after a stop this cause made (each also a row of the flat list).
    pub folded: usize,
    /// Differences at later steps into which one of this cause's differing values flowed (a
    /// capture they sent, a role that routed them), directly or through another consequence,
    /// and which show nowhere as a scenario's first difference: what this cause breaks
    /// downstream (each also a row of the flat list).
    pub consequences: usize,
    /// The signatures of those consequences, each once, in the order met.
    pub consequence_signatures: Vec<String>,
    /// How each of those signatures follows from this cause, the first time it was met.
    pub consequence_chains: Vec<Chain>,
    /// The ledger entries this cause kept from being reached: entries of a scenario it stopped
    /// before the steps where they show (set by the report, which knows them).
    pub kept_from_reach: Vec<String>,
    /// Where its differences and consequences are: (scenario, step).
    #[serde(skip)]
    pub steps: BTreeSet<(String, String)>,
    /// The scenarios it shows in, sorted.
    pub scenarios: Vec<String>,
    /// One difference of it, as the flat list shows it.
    pub example: DiffRow,
    /// When every scenario it shows in depends on a setting that a target has otherwise (the
    /// settings check before the run): which, on which target. The difference is then that
    /// broker's configuration's, not its behaviour's; it still fails the run.
    pub configuration: Option<String>,
    /// Each field difference of its own it holds, as a ledger entry would state it, each once
    /// (at most [`super::shown::MOST`]): what `kconform ledger draft` writes.
    pub shows: Vec<Shown>,
}

impl Cause {
    /// A cause with nothing counted yet, `example` its first difference, `title` what a
    /// reader is shown of it.
    fn new(notice: Notice, signature: String, title: String, example: &Classified<'_>) -> Cause {
        Cause {
            notice,
            signature,
            title,
            versions: String::new(),
            documented_by: example.documented_by.map(str::to_owned),
            differences: 0,
            folded: 0,
            consequences: 0,
            consequence_signatures: Vec::new(),
            consequence_chains: Vec::new(),
            kept_from_reach: Vec::new(),
            steps: BTreeSet::new(),
            scenarios: Vec::new(),
            example: example.row.clone(),
            configuration: None,
            shows: Vec::new(),
        }
    }

    /// The rows of the flat list the cause stands for.
    pub fn rows(&self) -> usize {
        self.differences + self.folded + self.consequences
    }
}

/// How a consequence follows from its cause: the values it was handed, hop by hop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Chain {
    /// The consequence's signature.
    pub signature: String,
    /// Each value that carried the cause's difference to it, from the cause's step on
    /// (`'init'.producer_epoch as ${epoch}`).
    pub follows: Vec<String>,
}

impl Chain {
    /// `follows from 'init'.producer_epoch as ${epoch}, then 'add'.… as …`; of a long chain
    /// the first two hops and the last, with how many were left out.
    pub fn words(&self) -> String {
        let hops = match self.follows.len() {
            0..=4 => self.follows.join(", then "),
            n => format!(
                "{}, then {}, then … ({} more), then {}",
                self.follows[0],
                self.follows[1],
                n - 3,
                self.follows[n - 1]
            ),
        };
        format!("follows from {hops}")
    }
}

/// Groups `differences` into root causes, folding each step skipped after a stop (`stops`)
/// under the cause of the difference at the step that stopped it (or under a cause of its own,
/// "stopped: ...", when that step shows none), and each difference a differing value flowed
/// into (`flows`) under the cause that value's difference belongs to. Undocumented causes come
/// first, each part ordered by [`Notice`], then by how many scenarios a cause touches, then by
/// how many rows it stands for.
pub fn group(
    differences: &[Classified<'_>],
    stops: &[Stop<'_>],
    classes: &FieldClasses,
    flows: &Flows,
) -> Vec<Cause> {
    // (signature, documented_by) → cause
    let mut causes: BTreeMap<Key, Cause> = BTreeMap::new();
    let mut versions: BTreeMap<Key, BTreeMap<String, BTreeSet<i16>>> = BTreeMap::new();
    // (scenario, step) → the key of the cause of the difference there
    let mut at: BTreeMap<(&str, &str), Key> = BTreeMap::new();
    let mut skipped = Vec::new();
    // Each row signed once (skipped steps are not: they fold under what stopped them); the
    // consequence rule needs the first steps' signatures too.
    let mut signed: Vec<Option<(Notice, String)>> = differences
        .iter()
        .map(|d| {
            skipped_side(d.row)
                .is_none()
                .then(|| signature(d.row, classes))
        })
        .collect();
    let mut flowed = Flowed::of(differences, &signed, flows);
    fold_refusals(&mut flowed, differences, &signed);
    // Causes of their own, undocumented: one refusal on several APIs of a scenario is one.
    let rows: Vec<&DiffRow> = differences.iter().map(|d| d.row).collect();
    let mergeable: Vec<bool> = differences
        .iter()
        .zip(&flowed)
        .map(|(d, f)| f.is_none() && d.documented_by.is_none() && !framing(d.row))
        .collect();
    super::alike::merge(&rows, &mergeable, &mut signed);
    let key_of = |i: usize| -> Key {
        let (_, signature) = signed[i].as_ref().expect("a root is signed");
        (
            signature.clone(),
            differences[i].documented_by.map(str::to_owned),
        )
    };
    let mut consequences = Vec::new();
    for (i, (d, signed)) in differences.iter().zip(&signed).enumerate() {
        let Some((notice, signature)) = signed else {
            let side = skipped_side(d.row).expect("only skipped steps go unsigned");
            skipped.push((d, side));
            continue;
        };
        if let Some(flow) = &flowed[i] {
            consequences.push((d, signature.clone(), flow));
            continue;
        }
        let key = key_of(i);
        let cause = causes
            .entry(key.clone())
            .or_insert_with(|| Cause::new(*notice, signature.clone(), title(d.row, signature), d));
        cause.differences += 1;
        super::shown::add(&mut cause.shows, d.row);
        cause
            .steps
            .insert((d.row.scenario.clone(), d.row.step.clone()));
        if !cause.scenarios.contains(&d.row.scenario) {
            cause.scenarios.push(d.row.scenario.clone());
        }
        if let Some(v) = d.row.version {
            versions
                .entry(key.clone())
                .or_default()
                .entry(d.row.api.clone())
                .or_default()
                .insert(v);
        }
        at.entry((&d.row.scenario, &d.row.step)).or_insert(key);
    }
    for (d, signature, flow) in consequences {
        let key = key_of(flow.root);
        at.entry((&d.row.scenario, &d.row.step))
            .or_insert(key.clone());
        let cause = causes.get_mut(&key).expect("a root is a cause, made above");
        cause.consequences += 1;
        cause
            .steps
            .insert((d.row.scenario.clone(), d.row.step.clone()));
        if !cause.consequence_signatures.contains(&signature) {
            cause.consequence_chains.push(Chain {
                signature: signature.clone(),
                follows: flow.follows.clone(),
            });
            cause.consequence_signatures.push(signature);
        }
    }
    for (d, side) in skipped {
        let stop = stops
            .iter()
            .find(|s| s.scenario == d.row.scenario && s.side == side);
        // A stop whose read-back names a transaction it broke folds under that verdict; else
        // under the difference at the step that stopped it.
        let read_back = at.get(&(d.row.scenario.as_str(), crate::compare::diff::READ_BACK));
        let stopped_at = stop.and_then(|s| stopping_step(s.why));
        let at_stop = stopped_at.and_then(|step| at.get(&(d.row.scenario.as_str(), step)));
        let key = match read_back.or(at_stop) {
            Some(key) => key.clone(),
            None => {
                let why = stop.map_or("a step was not sent", |s| s.why);
                let signature = format!("stopped: {}", shape(why_after_step(why)));
                let key = (signature.clone(), d.documented_by.map(str::to_owned));
                causes
                    .entry(key.clone())
                    .or_insert_with(|| Cause::new(Notice::State, signature.clone(), signature, d));
                key
            }
        };
        let cause = causes
            .get_mut(&key)
            .expect("the key was just found or made");
        cause.folded += 1;
        if !cause.scenarios.contains(&d.row.scenario) {
            cause.scenarios.push(d.row.scenario.clone());
        }
    }
    let mut out: Vec<Cause> = causes
        .into_iter()
        .map(|(key, mut cause)| {
            cause.versions = versions.get(&key).map(per_api).unwrap_or_default();
            cause.scenarios.sort();
            cause
        })
        .collect();
    out.sort_by(|a, b| {
        rank(a)
            .cmp(&rank(b))
            .then_with(|| a.signature.cmp(&b.signature))
    });
    out
}

/// A cause's key while grouping: its signature and the entry that documents it.
type Key = (String, Option<String>);

/// Where a cause stands on the first screen: undocumented first, then by what a client
/// notices, then by how many scenarios it touches, then by how many rows it stands for.
fn rank(
    c: &Cause,
) -> (
    bool,
    Notice,
    std::cmp::Reverse<usize>,
    std::cmp::Reverse<usize>,
) {
    (
        c.documented_by.is_some(),
        c.notice,
        std::cmp::Reverse(c.scenarios.len()),
        std::cmp::Reverse(c.rows()),
    )
}

/// The versions a cause showed at: a range or list for one API (`v0..=3`), each API with its
/// own for a cause that shows on several (`EndTxn v3; Metadata v9..=12`).
fn per_api(apis: &BTreeMap<String, BTreeSet<i16>>) -> String {
    match apis.len() {
        1 => apis.values().next().map(range).unwrap_or_default(),
        _ => apis
            .iter()
            .map(|(api, v)| format!("{api} {}", range(v)))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// Which side a row's step was skipped on (0 left, 1 right), if it is a skipped step.
fn skipped_side(row: &DiffRow) -> Option<usize> {
    if row.path != "outcome" {
        return None;
    }
    match (row.left.as_str(), row.right.as_str()) {
        (Some("skipped"), _) => Some(0),
        (_, Some("skipped")) => Some(1),
        _ => None,
    }
}

/// The step a stop names: `step 'x' got no answer` → `x`.
pub fn stopping_step(why: &str) -> Option<&str> {
    let rest = why.strip_prefix("step '")?;
    rest.split_once('\'').map(|(step, _)| step)
}

/// A stop's cause without the step it names.
fn why_after_step(why: &str) -> &str {
    why.strip_prefix("step '")
        .and_then(|rest| rest.split_once("' "))
        .map_or(why, |(_, cause)| cause)
}

/// Versions as a reader takes them in: `v3`, `v0..=4`, `v0, v2, v5`.
fn range(versions: &BTreeSet<i16>) -> String {
    let v: Vec<i16> = versions.iter().copied().collect();
    match v.as_slice() {
        [] => String::new(),
        [one] => format!("v{one}"),
        [first, .., last] if (*last - *first) as usize + 1 == v.len() => {
            format!("v{first}..={last}")
        }
        many => many
            .iter()
            .map(|v| format!("v{v}"))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::flow::Taken;
    use crate::compare::signature::*;
    use serde_json::{json, Value};

    fn row(scenario: &str, step: &str, version: i16, path: &str, l: Value, r: Value) -> DiffRow {
        DiffRow {
            scenario: scenario.into(),
            step: step.into(),
            api: "FindCoordinator".into(),
            version: Some(version),
            path: path.into(),
            left: l,
            right: r,
            detail: None,
        }
    }

    fn classes() -> FieldClasses {
        FieldClasses {
            logged: vec![LoggedField {
                field: "error_message".into(),
                why: "logged".into(),
            }],
            decision: Vec::new(),
        }
    }

    fn undocumented(rows: &[DiffRow]) -> Vec<Classified<'_>> {
        rows.iter()
            .map(|row| Classified {
                row,
                documented_by: None,
            })
            .collect()
    }

    #[test]
    fn one_message_difference_at_many_places_is_one_cause() {
        let rows: Vec<DiffRow> = (0..4)
            .map(|i| {
                row(
                    &format!("s{}", i % 2),
                    &format!("find{i}"),
                    i as i16,
                    &format!("coordinators.{i}.error_message"),
                    Value::Null,
                    json!(format!("The coordinator is loading ({i})")),
                )
            })
            .collect();
        let causes = group(&undocumented(&rows), &[], &classes(), &Flows::default());
        assert_eq!(causes.len(), 1, "{causes:#?}");
        let c = &causes[0];
        assert_eq!(
            c.signature,
            "FindCoordinator coordinators[].error_message: null | text"
        );
        assert_eq!(c.notice, Notice::Logged);
        assert_eq!((c.differences, c.folded), (4, 0));
        assert_eq!(c.versions, "v0..=3");
        assert_eq!(c.scenarios, ["s0", "s1"]);
    }

    #[test]
    fn a_malformed_answer_groups_by_diagnosis_across_apis_and_comes_first() {
        let header = |api: &str, v: i16| {
            DiffRow {
            api: api.into(),
            detail: Some(format!(
                "the response header is v1, but {api} v{v} answers with header v0; or a stray byte 00 at byte 4, before {}: without it the answer is well-formed (as sent: header.x at byte 4)",
                match api { "EndTxn" => "throttle_time_ms", _ => "topics (count)" }
            )),
            ..row("s", "x", v, "outcome", json!("malformed"), json!("response"))
        }
        };
        let rows = vec![
            row(
                "s",
                "a",
                1,
                "error_code",
                json!("51 CONCURRENT_TRANSACTIONS"),
                json!("0 NONE"),
            ),
            header("EndTxn", 3),
            header("Metadata", 9),
        ];
        let causes = group(&undocumented(&rows), &[], &classes(), &Flows::default());
        assert_eq!(causes.len(), 2, "{causes:#?}");
        assert_eq!(causes[0].notice, Notice::Unreadable);
        assert_eq!(
            causes[0].signature,
            "malformed (malformed | response): the response header is vN, but <API> answers with header vN"
        );
        assert_eq!(causes[0].differences, 2);
        assert_eq!(causes[0].versions, "EndTxn v3; Metadata v9");
        assert_eq!(
            causes[1].signature,
            "FindCoordinator error_code: 51 CONCURRENT_TRANSACTIONS | 0 NONE"
        );
    }

    #[test]
    fn steps_skipped_after_a_stop_fold_under_what_stopped_it() {
        let skipped =
            |step: &str| row("s", step, 0, "outcome", json!("skipped"), json!("response"));
        let rows = vec![
            DiffRow {
                detail: Some("connection closed".into()),
                ..row(
                    "s",
                    "init",
                    0,
                    "outcome",
                    json!("no_answer"),
                    json!("response"),
                )
            },
            skipped("add"),
            skipped("end"),
            // Another scenario stopped where both sides answered alike: a cause of its own.
            row("t", "b", 0, "outcome", json!("skipped"), json!("response")),
        ];
        let stops = [
            Stop {
                scenario: "s",
                side: 0,
                why: "step 'init' got no answer: connection closed",
            },
            Stop {
                scenario: "t",
                side: 0,
                why: "step 'a' expected error_code 0, got 48 after 3000 ms",
            },
        ];
        let causes = group(&undocumented(&rows), &stops, &classes(), &Flows::default());
        assert_eq!(causes.len(), 2, "{causes:#?}");
        assert_eq!(
            (causes[0].differences, causes[0].folded, causes[0].notice),
            (1, 2, Notice::Unreadable)
        );
        assert_eq!(
            causes[1].signature,
            "stopped: expected error_code N, got N after N ms"
        );
        assert_eq!((causes[1].differences, causes[1].folded), (0, 1));
        // Every row of the flat list is in exactly one cause.
        assert_eq!(causes.iter().map(Cause::rows).sum::<usize>(), rows.len());
    }

    #[test]
    fn documented_and_undocumented_rows_never_share_a_cause() {
        let rows = [
            row("s", "a", 0, "error_code", json!("50 X"), json!("48 Y")),
            row("t", "a", 0, "error_code", json!("50 X"), json!("48 Y")),
        ];
        let classified = vec![
            Classified {
                row: &rows[0],
                documented_by: Some("wire-50"),
            },
            Classified {
                row: &rows[1],
                documented_by: None,
            },
        ];
        let causes = group(&classified, &[], &classes(), &Flows::default());
        assert_eq!(causes.len(), 2);
        // Undocumented first.
        assert_eq!(causes[0].documented_by, None);
        assert_eq!(causes[1].documented_by.as_deref(), Some("wire-50"));
    }

    #[test]
    fn a_diagnosis_is_shaped_to_what_it_shares_with_others() {
        assert_eq!(
            shape("a stray byte 2a at byte 9, before error_code: without it the answer is well-formed (so it is without byte 10, 11 or 4 others) (as sent: x at byte 9)"),
            "a stray byte xx at byte N, before error_code: without it the answer is well-formed"
        );
        assert_eq!(
            shape("the response header is v1, but EndTxn v3 answers with header v0"),
            "the response header is vN, but <API> answers with header vN"
        );
        assert_eq!(shape("expected 'x' in 'abc'"), "expected '…' in '…'");
    }

    #[test]
    fn values_are_classed_not_copied() {
        assert_eq!(class(&json!(7)), "N");
        assert_eq!(class(&json!(-1)), "-1");
        assert_eq!(class(&json!("pid#3")), "pid#N");
        assert_eq!(class(&json!("pid#3, as nowhere else")), "pid#N (alone)");
        assert_eq!(
            class(&json!("pid#1, as at init producer_id")),
            "pid#N (shared)"
        );
        assert_eq!(class(&json!([1])), "[…]");
        assert_eq!(
            indexless("topics.0.partitions.12.error_code"),
            "topics[].partitions[].error_code"
        );
        assert_eq!(range(&[0, 1, 2].into_iter().collect()), "v0..=2");
        assert_eq!(range(&[1, 4].into_iter().collect()), "v1, v4");
    }

    /// The fields of a refused answer fold under its error code, and what a later step takes
    /// from the refused answer too; a field of an answer whose error codes agree is a cause of
    /// its own (seen failing: without the fold, four causes).
    #[test]
    fn a_refused_answers_fields_fold_under_its_error_code() {
        let rows = vec![
            row(
                "s",
                "join",
                5,
                "error_code",
                json!("0 NONE"),
                json!("79 MEMBER_ID_REQUIRED"),
            ),
            row("s", "join", 5, "generation_id", json!(1), json!(-1)),
            row("s", "join", 5, "members", json!(1), json!(0)),
            // Takes the member id from the refused answer: carries the refusal.
            row("s", "sync", 3, "protocol_name", json!("range"), Value::Null),
            // Agrees on its error code: a cause of its own.
            row("t", "join", 5, "generation_id", json!(2), json!(1)),
        ];
        let flows = Flows::default().taking("s", "sync", taken("join", "member_id", "${member}"));
        let causes = group(&undocumented(&rows), &[], &classes(), &flows);
        let refusal = causes
            .iter()
            .find(|c| c.signature.contains("79 MEMBER_ID_REQUIRED"))
            .unwrap();
        assert_eq!(
            (refusal.differences, refusal.consequences),
            (1, 3),
            "{causes:#?}"
        );
        assert!(
            refusal.consequence_chains[0]
                .words()
                .contains("the answer that refused with 'join'.error_code"),
            "{causes:#?}"
        );
        assert_eq!(causes.len(), 2, "{causes:#?}");
    }

    fn taken(from: &str, path: &str, how: &str) -> Taken {
        Taken {
            from: from.into(),
            path: path.into(),
            how: how.into(),
        }
    }

    /// A later difference folds under an earlier one only where the earlier differing value
    /// flowed into its step, hop by hop; one that nothing flowed into, or that is some
    /// scenario's first, is a cause of its own; a documented difference, a text field and a
    /// malformed answer hand nothing on.
    #[test]
    fn later_differences_fold_only_where_a_differing_value_flowed() {
        let code = |scenario: &str, step: &str, l: &str, r: &str| {
            row(scenario, step, 1, "error_code", json!(l), json!(r))
        };
        let rows = vec![
            // The text field every scenario starts with.
            row("s1", "find", 3, "error_message", Value::Null, json!("NONE")),
            row("s1", "init", 1, "producer_epoch", json!(1), json!(0)),
            // Takes the epoch: a consequence.
            code("s1", "add", "47 INVALID_PRODUCER_EPOCH", "0 NONE"),
            // Takes add's answer (a capture of its own): a consequence, two hops on.
            row("s1", "offsets", 1, "high_watermark", json!(1), json!(0)),
            // Takes nothing: a defect of its own, however late.
            code("s1", "commit", "0 NONE", "48 INVALID_TXN_STATE"),
            row("s2", "find", 3, "error_message", Value::Null, json!("NONE")),
            // Takes the text field's step's answer only: nothing flows from a text field.
            code("s2", "join", "0 NONE", "79 MEMBER_ID_REQUIRED"),
        ];
        let flows = Flows::default()
            .taking("s1", "add", taken("init", "producer_epoch", "${epoch}"))
            .taking("s1", "offsets", taken("add", "error_code", "${code}"))
            .taking("s1", "commit", taken("init", "producer_id", "${pid}"))
            .taking("s2", "join", taken("find", "error_message", "${text}"));
        let causes = group(&undocumented(&rows), &[], &classes(), &flows);
        let find = |needle: &str| {
            causes
                .iter()
                .find(|c| c.signature.contains(needle))
                .unwrap_or_else(|| panic!("no cause with {needle}: {causes:#?}"))
        };
        let text = find("error_message");
        assert_eq!((text.differences, text.consequences), (2, 0), "{causes:#?}");
        let epoch = find("producer_epoch");
        assert_eq!(
            (epoch.differences, epoch.consequences),
            (1, 2),
            "{causes:#?}"
        );
        assert_eq!(
            epoch.consequence_chains[1].words(),
            "follows from 'init'.producer_epoch as ${epoch}, then 'add'.error_code as ${code}"
        );
        assert_eq!(find("48 INVALID_TXN_STATE").differences, 1);
        assert_eq!(find("79 MEMBER_ID_REQUIRED").differences, 1);
        assert_eq!(causes.len(), 4, "{causes:#?}");
        assert_eq!(causes.iter().map(Cause::rows).sum::<usize>(), rows.len());
        // Ranked: state before logged, and among state causes the one in more scenarios first.
        assert_eq!(causes.last().unwrap().notice, Notice::Logged);

        // A consequence whose signature is another scenario's first is a cause of its own.
        let mut more = rows.clone();
        more.push(code("s3", "add", "47 INVALID_PRODUCER_EPOCH", "0 NONE"));
        let causes = group(&undocumented(&more), &[], &classes(), &flows);
        let fenced = causes
            .iter()
            .find(|c| c.signature.contains("47 INVALID_PRODUCER_EPOCH"))
            .unwrap();
        assert_eq!(fenced.differences, 2, "{causes:#?}");

        // A documented giver hands nothing on; a malformed answer takes nothing.
        let mut classified = undocumented(&rows);
        classified[1].documented_by = Some("init-epoch");
        let causes = group(&classified, &[], &classes(), &flows);
        let documented = causes.iter().find(|c| c.documented_by.is_some()).unwrap();
        assert_eq!(documented.consequences, 0, "{causes:#?}");
        let fenced = causes
            .iter()
            .find(|c| c.signature.contains("47 INVALID_PRODUCER_EPOCH"))
            .unwrap();
        assert_eq!(
            (fenced.differences, fenced.consequences),
            (1, 1),
            "a cause of its own now, and what it handed on follows it: {causes:#?}"
        );
        let malformed = [
            row("s1", "init", 1, "producer_epoch", json!(1), json!(0)),
            row(
                "s1",
                "add",
                1,
                "outcome",
                json!("malformed"),
                json!("response"),
            ),
        ];
        let causes = group(&undocumented(&malformed), &[], &classes(), &flows);
        assert!(causes.iter().all(|c| c.consequences == 0), "{causes:#?}");
    }

    /// Among causes of one notice, the one that touches more scenarios comes first, whatever
    /// their sizes.
    #[test]
    fn causes_rank_by_notice_then_by_scenarios_touched() {
        let code = |scenario: &str, l: &str| {
            row(scenario, "a", 1, "error_code", json!(l), json!("0 NONE"))
        };
        let mut rows: Vec<DiffRow> = (0..5).map(|_| code("big", "3 UNKNOWN")).collect();
        rows.extend(["s1", "s2"].map(|s| code(s, "48 INVALID_TXN_STATE")));
        let causes = group(&undocumented(&rows), &[], &classes(), &Flows::default());
        assert!(causes[0].signature.contains("48"), "{causes:#?}");
        assert_eq!(causes[0].scenarios.len(), 2);
    }
}
