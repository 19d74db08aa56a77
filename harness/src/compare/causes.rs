//! Root causes: a run's differences grouped by what they have in common, so that a broker that
//! differs from Apache in twenty ways reads as twenty findings, not five hundred lines.
//!
//! A difference's signature is its API, its field path without indices, and each side's value
//! or value class (a message field's value is only null, empty or text; an id only which id it
//! is the same as; a count only whether it is 0, 1, -1 or another number). A malformed answer's
//! signature is its diagnosis alone, whatever the API, since one framing defect shows on every
//! API, and of the diagnosis its first reading (the header version that reads the frame whole),
//! not the alternative whose field differs from API to API. Versions are merged into the
//! group's range, per API where a cause shows on several. A step skipped because its scenario had
//! stopped is not a difference of its own: it is folded under the cause that stopped the
//! scenario. Groups are ordered by what a client would notice ([`Notice`]), which fields a
//! client only logs being data (`scenarios/field-classes.toml`), not code.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::compare::diff::{text, DiffRow};

/// How much a client notices a difference, most first: the order root causes are reported in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Notice {
    /// An answer a client cannot read: malformed, none at all, or missing.
    Unreadable,
    /// What a client acts on: error codes and state (ids, epochs, offsets, records, versions
    /// served), and scenarios that stopped.
    State,
    /// A field clients only log (`field-classes.toml`).
    Logged,
}

impl Notice {
    /// The word the reports use.
    pub fn label(self) -> &'static str {
        match self {
            Notice::Unreadable => "unreadable",
            Notice::State => "state",
            Notice::Logged => "logged",
        }
    }
}

/// A field a client only logs, and why the ledger of field classes says so.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoggedField {
    /// The field's name (the last part of a difference's path).
    pub field: String,
    /// What the clients do with it.
    pub why: String,
}

/// `scenarios/field-classes.toml`: which response fields clients only log. Every other field
/// is one they act on.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldClasses {
    /// The fields clients only log.
    #[serde(default)]
    pub logged: Vec<LoggedField>,
}

/// Why the field classes cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{place}: {reason}")]
pub struct FieldClassesError {
    place: String,
    reason: String,
}

/// The file name of the field classes, beside the ledger.
pub const FIELD_CLASSES: &str = "field-classes.toml";

impl FieldClasses {
    /// Reads `field-classes.toml` of the scenarios.
    pub fn read(scenarios: &crate::data::Source) -> Result<FieldClasses, FieldClassesError> {
        let text = scenarios
            .read(FIELD_CLASSES)
            .map_err(|e| FieldClassesError {
                place: e.place,
                reason: e.reason,
            })?;
        toml::from_str(&text).map_err(|e| FieldClassesError {
            place: scenarios.place(FIELD_CLASSES),
            reason: e.to_string(),
        })
    }

    fn logged(&self, path: &str) -> bool {
        let last = path.rsplit('.').next().unwrap_or(path);
        self.logged.iter().any(|f| f.field == last)
    }
}

/// One difference as grouping sees it: the row, and the ledger entry that documents it.
#[derive(Debug, Clone, Copy)]
pub struct Classified<'a> {
    /// The difference.
    pub row: &'a DiffRow,
    /// The documenting entry, if one does.
    pub documented_by: Option<&'a str>,
}

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
    /// Differences at later steps of a scenario whose first difference is this cause's, which
    /// show nowhere as a first difference of their own: what this cause breaks downstream
    /// (each also a row of the flat list).
    pub consequences: usize,
    /// The signatures of those consequences, each once, in the order met.
    pub consequence_signatures: Vec<String>,
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
}

impl Cause {
    /// A cause with nothing counted yet, `example` its first difference.
    fn new(notice: Notice, signature: String, example: &Classified<'_>) -> Cause {
        Cause {
            notice,
            signature,
            versions: String::new(),
            documented_by: example.documented_by.map(str::to_owned),
            differences: 0,
            folded: 0,
            consequences: 0,
            consequence_signatures: Vec::new(),
            kept_from_reach: Vec::new(),
            steps: BTreeSet::new(),
            scenarios: Vec::new(),
            example: example.row.clone(),
            configuration: None,
        }
    }

    /// The rows of the flat list the cause stands for.
    pub fn rows(&self) -> usize {
        self.differences + self.folded + self.consequences
    }
}

/// Groups `differences` into root causes, folding each step skipped after a stop (`stops`)
/// under the cause of the difference at the step that stopped it (or under a cause of its own,
/// "stopped: ...", when that step shows none). Undocumented causes come first, each part
/// ordered by [`Notice`], then by how many rows a cause stands for.
pub fn group(
    differences: &[Classified<'_>],
    stops: &[Stop<'_>],
    classes: &FieldClasses,
) -> Vec<Cause> {
    // (signature, documented_by) → cause
    let mut causes: BTreeMap<(String, Option<String>), Cause> = BTreeMap::new();
    let mut versions: BTreeMap<(String, Option<String>), BTreeMap<String, BTreeSet<i16>>> =
        BTreeMap::new();
    // (scenario, step) → the key of the cause of the difference there
    let mut at: BTreeMap<(&str, &str), (String, Option<String>)> = BTreeMap::new();
    let mut skipped = Vec::new();
    // Each row signed once (skipped steps are not: they fold under what stopped them); the
    // consequence rule needs the first steps' signatures too.
    let signed: Vec<Option<(Notice, String)>> = differences
        .iter()
        .map(|d| {
            skipped_side(d.row)
                .is_none()
                .then(|| signature(d.row, classes))
        })
        .collect();
    let later = Later::of(differences, &signed);
    let mut consequences = Vec::new();
    for (d, signed) in differences.iter().zip(signed) {
        let Some((notice, signature)) = signed else {
            let side = skipped_side(d.row).expect("only skipped steps go unsigned");
            skipped.push((d, side));
            continue;
        };
        if later.is_consequence(d, &signature) {
            consequences.push((d, signature));
            continue;
        }
        let key = (signature.clone(), d.documented_by.map(str::to_owned));
        let cause = causes
            .entry(key.clone())
            .or_insert_with(|| Cause::new(notice, signature, d));
        cause.differences += 1;
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
    for (d, signature) in consequences {
        let first = later
            .first_of(&d.row.scenario)
            .expect("a consequence has a first difference");
        let key = at
            .get(&(first.row.scenario.as_str(), first.row.step.as_str()))
            .cloned()
            .expect("the first difference's cause was made above");
        at.entry((&d.row.scenario, &d.row.step))
            .or_insert(key.clone());
        let cause = causes.get_mut(&key).expect("made above");
        cause.consequences += 1;
        cause
            .steps
            .insert((d.row.scenario.clone(), d.row.step.clone()));
        if !cause.consequence_signatures.contains(&signature) {
            cause.consequence_signatures.push(signature);
        }
    }
    for (d, side) in skipped {
        let stop = stops
            .iter()
            .find(|s| s.scenario == d.row.scenario && s.side == side);
        let stopped_at = stop.and_then(|s| stopping_step(s.why));
        let key = match stopped_at.and_then(|step| at.get(&(d.row.scenario.as_str(), step))) {
            Some(key) => key.clone(),
            None => {
                let why = stop.map_or("a step was not sent", |s| s.why);
                let signature = format!("stopped: {}", shape(why_after_step(why)));
                let key = (signature.clone(), d.documented_by.map(str::to_owned));
                causes
                    .entry(key.clone())
                    .or_insert_with(|| Cause::new(Notice::State, signature, d));
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
        (
            a.documented_by.is_some(),
            a.notice,
            std::cmp::Reverse(a.rows()),
        )
            .cmp(&(
                b.documented_by.is_some(),
                b.notice,
                std::cmp::Reverse(b.rows()),
            ))
            .then_with(|| a.signature.cmp(&b.signature))
    });
    out
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

/// Which differences come after a scenario's first: a difference at a later step of a
/// scenario, undocumented, whose signature is no scenario's first difference anywhere, and
/// whose scenario's first difference is undocumented, is a consequence of that first one. (A
/// documented first difference takes no undocumented consequence: that would pass the run on
/// what no ledger entry says.) A malformed answer is neither: a framing defect is a cause of
/// its own wherever it shows, and, read past, its scenario goes on as if the answer were right,
/// so what differs after it is not its doing.
struct Later<'d, 'r> {
    /// Each scenario's first difference (skipped steps aside), by scenario.
    first: BTreeMap<&'r str, &'d Classified<'r>>,
    /// The signatures of the differences at the first differing step of some scenario.
    firsts: BTreeSet<String>,
}

impl<'d, 'r> Later<'d, 'r> {
    /// The first differences of `differences`, each signed as `signed` (in the same order;
    /// skipped steps unsigned).
    fn of(differences: &'d [Classified<'r>], signed: &[Option<(Notice, String)>]) -> Later<'d, 'r> {
        let behaviour = |d: &&Classified<'_>| skipped_side(d.row).is_none() && !framing(d.row);
        let mut first: BTreeMap<&'r str, &'d Classified<'r>> = BTreeMap::new();
        for d in differences.iter().filter(behaviour) {
            first.entry(d.row.scenario.as_str()).or_insert(d);
        }
        let firsts = differences
            .iter()
            .zip(signed)
            .filter(|(d, _)| behaviour(d))
            .filter(|(d, _)| {
                first
                    .get(d.row.scenario.as_str())
                    .is_some_and(|f| f.row.step == d.row.step)
            })
            .filter_map(|(_, signed)| signed.as_ref().map(|(_, s)| s.clone()))
            .collect();
        Later { first, firsts }
    }

    fn first_of(&self, scenario: &str) -> Option<&'d Classified<'r>> {
        self.first.get(scenario).copied()
    }

    fn is_consequence(&self, d: &Classified<'_>, signature: &str) -> bool {
        let Some(first) = self.first.get(d.row.scenario.as_str()) else {
            return false;
        };
        first.row.step != d.row.step
            && !framing(d.row)
            && d.documented_by.is_none()
            && first.documented_by.is_none()
            && !self.firsts.contains(signature)
    }
}

/// Whether a difference is a malformed answer (a framing defect).
fn framing(row: &DiffRow) -> bool {
    row.path == "outcome"
        && (row.left.as_str() == Some("malformed") || row.right.as_str() == Some("malformed"))
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

/// The first of a diagnosis's readings (`...; or a stray byte ...`): the one a kaas engineer
/// fixes, and the same whichever API showed it.
pub fn first_reading(diagnosis: &str) -> &str {
    match diagnosis.split_once("; or ") {
        Some((first, _)) => first,
        None => diagnosis,
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

/// A row's notice and signature.
fn signature(row: &DiffRow, classes: &FieldClasses) -> (Notice, String) {
    if framing(row) {
        // One framing defect shows on every API: the diagnosis alone, and of it the first
        // reading (a header version that reads the frame whole), not the alternative whose
        // field varies from API to API.
        let kinds = format!("{} | {}", text(&row.left), text(&row.right));
        let why = row
            .detail
            .as_deref()
            .map(|d| shape(first_reading(d)))
            .unwrap_or_default();
        return (Notice::Unreadable, format!("malformed ({kinds}): {why}"));
    }
    let sides = [row.left.as_str(), row.right.as_str()];
    if row.path == "outcome" {
        let unreadable = ["malformed", "no_answer", "missing"];
        let detail = row.detail.as_deref().map(shape);
        let notice = match sides.iter().flatten().any(|s| unreadable.contains(s)) {
            true => Notice::Unreadable,
            false => Notice::State,
        };
        let detail = detail.map(|d| format!(" ({d})")).unwrap_or_default();
        let kinds = format!("{} | {}", class(&row.left), class(&row.right));
        return (notice, format!("{} outcome: {kinds}{detail}", row.api));
    }
    let path = indexless(&row.path);
    let (notice, l, r) = match classes.logged(&row.path) {
        true => (Notice::Logged, logged(&row.left), logged(&row.right)),
        false => (Notice::State, class(&row.left), class(&row.right)),
    };
    (notice, format!("{} {path}: {l} | {r}", row.api))
}

/// A path without its array indices: `topics.0.partitions.1.error_code` →
/// `topics[].partitions[].error_code`.
fn indexless(path: &str) -> String {
    path.split('.')
        .map(|part| match part.bytes().all(|b| b.is_ascii_digit()) {
            true => "[]",
            false => part,
        })
        .fold(String::new(), |mut out, part| {
            if !out.is_empty() && part != "[]" {
                out.push('.');
            }
            out.push_str(part);
            out
        })
}

/// What a logged field holds: null, empty or text.
fn logged(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::String(s) if s.is_empty() => "empty".into(),
        Value::String(_) => "text".into(),
        other => class(other),
    }
}

/// A value as grouping sees it: error codes and short words as they are, an id by whether it
/// is shared, a number by whether it is 0, 1, -1 or another, a collection by whether it is
/// empty.
fn class(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_i64() {
            Some(k @ -1..=1) => k.to_string(),
            _ => "N".into(),
        },
        Value::String(s) if is_error_code(s) => s.clone(),
        Value::String(s) => symbol_class(s).unwrap_or_else(|| shape(s)),
        Value::Array(a) if a.is_empty() => "[]".into(),
        Value::Array(_) => "[…]".into(),
        Value::Object(m) if m.is_empty() => "{}".into(),
        Value::Object(_) => "{…}".into(),
    }
}

/// `48 INVALID_TXN_STATE`: an error code as the normaliser writes it, kept as it is.
fn is_error_code(s: &str) -> bool {
    s.split_once(' ').is_some_and(|(code, name)| {
        code.trim_start_matches('-')
            .bytes()
            .all(|b| b.is_ascii_digit())
            && !code.trim_start_matches('-').is_empty()
            && !name.is_empty()
            && name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
    })
}

/// `pid#3` → `pid#N`; `pid#3, as at init producer_id` → `pid#N (shared)`; `..., as nowhere
/// else` → `pid#N (alone)`.
fn symbol_class(s: &str) -> Option<String> {
    let (symbol, relation) = match s.split_once(", as ") {
        Some((symbol, rest)) => (symbol, Some(rest.starts_with("nowhere"))),
        None => (s, None),
    };
    let (kind, n) = symbol.split_once('#')?;
    let is_symbol = !kind.is_empty()
        && kind.bytes().all(|b| b.is_ascii_lowercase())
        && !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit());
    if !is_symbol {
        return None;
    }
    Some(match relation {
        None => format!("{kind}#N"),
        Some(true) => format!("{kind}#N (alone)"),
        Some(false) => format!("{kind}#N (shared)"),
    })
}

/// Text as grouping sees it: what is particular to one place (an API and version named, a
/// number, a quoted name, what follows "as sent:") taken out, at most 120 characters.
pub fn shape(text: &str) -> String {
    let text = text.split(" (as sent: ").next().unwrap_or(text);
    // "(so it is without byte 3, 7 or 12 others)": where else the stray byte might be.
    let owned;
    let text = match text.split_once(" (so it is without ") {
        Some((before, after)) => {
            owned = format!(
                "{before}{}",
                after.split_once(')').map_or("", |(_, rest)| rest)
            );
            owned.as_str()
        }
        None => text,
    };
    let words: Vec<&str> = text.split(' ').collect();
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        let next_is_version = words.get(i + 1).is_some_and(|n| {
            let n = n.trim_end_matches([',', ':', ';', ')']);
            n.len() > 1 && n.starts_with('v') && n[1..].bytes().all(|b| b.is_ascii_digit())
        });
        if w.starts_with(|c: char| c.is_ascii_uppercase()) && next_is_version {
            let tail = &words[i + 1][words[i + 1].trim_end_matches([',', ':', ';', ')']).len()..];
            out.push(format!("<API>{tail}"));
            i += 2;
            continue;
        }
        // "a stray byte 2a": the byte's value, whatever it is.
        let hex_byte = w.len() == 2
            && w.bytes().all(|b| b.is_ascii_hexdigit())
            && i >= 1
            && words[i - 1] == "byte"
            && words.get(i - 2) == Some(&"stray");
        match hex_byte {
            true => out.push("xx".into()),
            false => out.push(quoted_out(&digits_out(w))),
        }
        i += 1;
    }
    let mut shaped = out.join(" ");
    if shaped.chars().count() > 120 {
        shaped = shaped.chars().take(119).collect::<String>() + "…";
    }
    shaped
}

fn digits_out(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut in_digits = false;
    for c in word.chars() {
        match c.is_ascii_digit() {
            true if !in_digits => {
                out.push('N');
                in_digits = true;
            }
            true => {}
            false => {
                out.push(c);
                in_digits = false;
            }
        }
    }
    out
}

fn quoted_out(word: &str) -> String {
    match word.len() > 2 && word.starts_with('\'') && word.ends_with('\'') {
        true => "'…'".into(),
        false => word.to_owned(),
    }
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
    use serde_json::json;

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
        let causes = group(&undocumented(&rows), &[], &classes());
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
        let causes = group(&undocumented(&rows), &[], &classes());
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
        let causes = group(&undocumented(&rows), &stops, &classes());
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
        let causes = group(&classified, &[], &classes());
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

    /// A difference at a later step of a scenario that is no scenario's first difference folds
    /// under the scenario's first as a consequence; one that is some scenario's first stays a
    /// cause of its own; a documented first takes none; a malformed answer is never one.
    #[test]
    fn later_differences_fold_under_the_first_as_consequences() {
        let code = |scenario: &str, step: &str, l: &str, r: &str| {
            row(scenario, step, 1, "error_code", json!(l), json!(r))
        };
        let rows = vec![
            code("s1", "a", "50 INVALID_TXN_STATE", "48 INVALID_TRANSITION"),
            code("s1", "b", "51 CONCURRENT_TRANSACTIONS", "0 NONE"),
            row("s1", "c", 1, "high_watermark", json!(1), json!(0)),
            row(
                "s1",
                "d",
                1,
                "outcome",
                json!("malformed"),
                json!("response"),
            ),
            code("s2", "x", "51 CONCURRENT_TRANSACTIONS", "0 NONE"),
        ];
        let causes = group(&undocumented(&rows), &[], &classes());
        let first = causes
            .iter()
            .find(|c| c.signature.contains("50 INVALID_TXN_STATE"))
            .unwrap();
        assert_eq!(
            (first.differences, first.consequences),
            (1, 1),
            "{causes:#?}"
        );
        assert_eq!(first.rows(), 2);
        assert_eq!(first.consequence_signatures.len(), 1);
        assert!(first.consequence_signatures[0].contains("high_watermark"));
        let concurrent = causes
            .iter()
            .find(|c| c.signature.contains("51 CONCURRENT"))
            .unwrap();
        assert_eq!(
            concurrent.differences, 2,
            "first in s2, so a cause in s1 too"
        );
        assert_eq!(causes.len(), 3, "{causes:#?}");
        let total: usize = causes.iter().map(Cause::rows).sum();
        assert_eq!(total, rows.len());
        // Documented first: nothing folds under it.
        let mut classified = undocumented(&rows);
        classified[0].documented_by = Some("invalid-transition-wire-50");
        let causes = group(&classified, &[], &classes());
        assert!(causes.iter().all(|c| c.consequences == 0), "{causes:#?}");
        assert_eq!(causes.len(), 4);
    }
}
