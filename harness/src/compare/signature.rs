//! What a difference's signature is, for grouping it into root causes ([`super::causes`]): its
//! API, its field path without indices, and each side's value or value class (a message field's
//! value is only null, empty or text; an id only which id it is the same as; a count only
//! whether it is 0, 1, -1 or another number); a malformed answer's diagnosis alone, of it the
//! first reading; and how much a client notices it ([`Notice`]), which fields a client only
//! logs being data (`scenarios/field-classes.toml`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::compare::diff::{text, DiffRow};

/// How much a client notices a difference, most first: the order root causes are reported in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Notice {
    /// A transaction whose records, read back, break exactly-once (a committed one lost, an
    /// aborted one read) or stay open: worst of all, whatever the answers said.
    ExactlyOnce,
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
            Notice::ExactlyOnce => "exactly-once",
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

/// Fields of one API's answer that one decision of the broker sets together (JoinGroup's
/// `generation_id`, `leader`, `members`, `member_id` and `skip_assignment`: whether a join
/// rebalances the group and who leads it), so that a broker that decides otherwise is one
/// cause, not one per field it shows in.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decision {
    /// The API whose answer holds the fields.
    pub api: String,
    /// What the decision is called in a cause's signature (`the join's outcome`).
    pub name: String,
    /// The fields (the last part of a difference's path) it sets.
    pub fields: Vec<String>,
    /// Why one decision sets them, from Apache's code.
    pub why: String,
}

/// `scenarios/field-classes.toml`: which response fields clients only log (every other field
/// is one they act on), and which fields one decision sets together.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldClasses {
    /// The fields clients only log.
    #[serde(default)]
    pub logged: Vec<LoggedField>,
    /// The fields one decision sets together.
    #[serde(default)]
    pub decision: Vec<Decision>,
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

    pub(crate) fn logged(&self, path: &str) -> bool {
        let last = field_name(path);
        self.logged.iter().any(|f| f.field == last)
    }

    /// The decision that sets `api`'s field at `path`, if one does.
    pub(crate) fn decision(&self, api: &str, path: &str) -> Option<&Decision> {
        let last = field_name(path);
        self.decision
            .iter()
            .find(|d| d.api == api && d.fields.iter().any(|f| f == last))
    }
}

/// A difference's field: the last part of its path (`topics.0.partitions.1.error_code` →
/// `error_code`), what the field classes and the ledger name.
pub(crate) fn field_name(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

/// Whether a difference is a malformed answer (a framing defect).
pub(crate) fn framing(row: &DiffRow) -> bool {
    row.path == "outcome"
        && (row.left.as_str() == Some("malformed") || row.right.as_str() == Some("malformed"))
}

/// The first of a diagnosis's readings (`...; or a stray byte ...`): the one a kaas engineer
/// fixes, and the same whichever API showed it.
pub fn first_reading(diagnosis: &str) -> &str {
    match diagnosis.split_once("; or ") {
        Some((first, _)) => first,
        None => diagnosis,
    }
}

/// A row's notice and signature.
pub(crate) fn signature(row: &DiffRow, classes: &FieldClasses) -> (Notice, String) {
    if row.api == crate::compare::diff::READ_BACK_API {
        // The verdicts alone: which transaction of which scenario is in the title.
        return (
            Notice::ExactlyOnce,
            format!("exactly-once: {} | {}", text(&row.left), text(&row.right)),
        );
    }
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
        // A sweep's step at a version only one side serves is missing on the other: the
        // versions served differ (ApiVersions shows it), and no answer was lost or unreadable.
        let only_one_serves = sides.contains(&Some("missing"))
            && row
                .version
                .is_some_and(|v| row.step.ends_with(&format!("@v{v}")));
        let notice = match sides.iter().flatten().any(|s| unreadable.contains(s)) {
            true if !only_one_serves => Notice::Unreadable,
            _ => Notice::State,
        };
        let detail = detail.map(|d| format!(" ({d})")).unwrap_or_default();
        let kinds = format!("{} | {}", class(&row.left), class(&row.right));
        return (notice, format!("{} outcome: {kinds}{detail}", row.api));
    }
    if let Some(decision) = classes.decision(&row.api, &row.path) {
        // Which of its fields shows varies with the version and the run (a leader the same as
        // another id one run and not the next): the decision alone.
        return (
            Notice::State,
            format!(
                "{} {}: decided otherwise ({})",
                row.api,
                decision.name,
                decision.fields.join(", ")
            ),
        );
    }
    let path = indexless(&row.path);
    let (notice, l, r) = match classes.logged(&row.path) {
        true => (Notice::Logged, logged(&row.left), logged(&row.right)),
        false => (Notice::State, class(&row.left), class(&row.right)),
    };
    (notice, format!("{} {path}: {l} | {r}", row.api))
}

/// What a report calls a row's cause, given its `signature`: the signature, except that a
/// malformed answer's keeps the words of its diagnosis (`the response header is v1, but
/// FindCoordinator v2 answers with header v0`), which the signature shapes to what every API
/// shares (`vN`, `<API>`) so that one defect is one cause and a baseline keys it alike; and a
/// read-back's is its verdict in words (`t2 committed, its records LOST: ${topic}-1 reads
/// aborted (1 record), led by broker 2; its coordinator is broker 0`).
pub(crate) fn title(row: &DiffRow, signature: &str) -> String {
    if let (true, Some(words)) = (
        row.api == crate::compare::diff::READ_BACK_API,
        row.detail.as_deref(),
    ) {
        return words.to_owned();
    }
    match (framing(row), row.detail.as_deref()) {
        (true, Some(detail)) => {
            let kinds = format!("{} | {}", text(&row.left), text(&row.right));
            format!(
                "malformed ({kinds}): {}",
                without_asides(first_reading(detail))
            )
        }
        _ => signature.to_owned(),
    }
}

/// A path without its array indices: `topics.0.partitions.1.error_code` →
/// `topics[].partitions[].error_code`.
pub(crate) fn indexless(path: &str) -> String {
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
pub(crate) fn logged(v: &Value) -> String {
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
pub(crate) fn class(v: &Value) -> String {
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
pub(crate) fn is_error_code(s: &str) -> bool {
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
pub(crate) fn symbol_class(s: &str) -> Option<String> {
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

/// A diagnosis without its asides: what follows "(as sent: ", and "(so it is without byte 3,
/// 7 or 12 others)", where else a stray byte might be.
fn without_asides(text: &str) -> String {
    let text = text.split(" (as sent: ").next().unwrap_or(text);
    match text.split_once(" (so it is without ") {
        Some((before, after)) => format!(
            "{before}{}",
            after.split_once(')').map_or("", |(_, rest)| rest)
        ),
        None => text.to_owned(),
    }
}

/// Text as grouping sees it: what is particular to one place (an API and version named, a
/// number, a quoted name, what follows "as sent:") taken out, at most 120 characters.
pub fn shape(text: &str) -> String {
    let text = without_asides(text);
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

pub(crate) fn digits_out(word: &str) -> String {
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

pub(crate) fn quoted_out(word: &str) -> String {
    match word.len() > 2 && word.starts_with('\'') && word.ends_with('\'') {
        true => "'…'".into(),
        false => word.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn committed() -> FieldClasses {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
        FieldClasses::read(&crate::data::Source::Dir(path)).unwrap()
    }

    fn join(path: &str, l: Value, r: Value) -> DiffRow {
        DiffRow {
            scenario: "static".into(),
            step: "rejoin".into(),
            api: "JoinGroup".into(),
            version: Some(9),
            path: path.into(),
            left: l,
            right: r,
            detail: None,
        }
    }

    #[test]
    fn the_fields_one_decision_sets_sign_alike_and_no_other_does() {
        let classes = committed();
        let generation = signature(&join("generation_id", json!(2), json!(1)), &classes);
        let leader = signature(
            &join(
                "leader",
                json!("member#2, as nowhere else"),
                json!("member#1"),
            ),
            &classes,
        );
        let skip = signature(
            &join("skip_assignment", json!(false), json!(true)),
            &classes,
        );
        assert_eq!(generation, leader);
        assert_eq!(generation, skip);
        assert_eq!(generation.0, Notice::State);
        assert!(generation
            .1
            .starts_with("JoinGroup the join's outcome: decided otherwise ("));
        // The error code is no field of the decision, nor is another API's generation.
        let code = signature(
            &join(
                "error_code",
                json!("0 NONE"),
                json!("79 MEMBER_ID_REQUIRED"),
            ),
            &classes,
        );
        assert_eq!(
            code.1,
            "JoinGroup error_code: 0 NONE | 79 MEMBER_ID_REQUIRED"
        );
        let mut sync = join("generation_id", json!(2), json!(1));
        sync.api = "SyncGroup".into();
        assert_eq!(
            signature(&sync, &classes).1,
            "SyncGroup generation_id: N | 1"
        );
    }

    /// A step missing on one side is unreadable, but a sweep's step at a version the other
    /// side does not serve is a state: the answer was there, the version was not.
    #[test]
    fn a_version_only_one_side_serves_is_no_unreadable_answer() {
        let classes = committed();
        let mut row = join("outcome", json!("response"), json!("missing"));
        row.api = "InitProducerId".into();
        assert_eq!(signature(&row, &classes).0, Notice::Unreadable);
        row.step = "idempotent@v5".into();
        row.version = Some(4);
        assert_eq!(
            signature(&row, &classes).0,
            Notice::Unreadable,
            "another version"
        );
        row.step = "idempotent@v5".into();
        row.version = Some(5);
        let (notice, title) = signature(&row, &classes);
        assert_eq!(notice, Notice::State);
        assert_eq!(title, "InitProducerId outcome: response | missing");
    }

    #[test]
    fn every_committed_decision_says_why_and_names_fields() {
        let classes = committed();
        assert!(!classes.decision.is_empty());
        for d in &classes.decision {
            assert!(!d.why.is_empty() && !d.fields.is_empty(), "{}", d.name);
        }
    }
}
