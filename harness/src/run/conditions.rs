//! What a step's conditions ask of an answer: `expect` and `until` (field path → value),
//! whether an error code in it can still change by retrying, and `until_roles`.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::api::response;
use crate::wire::error_codes;

/// An error code in the answer that no retry can change, when `until` does not ask for it:
/// a non-zero code that is not retriable ([`error_codes::retriable`]) and not OPERATION_NOT_ATTEMPTED
/// (55: the broker did not try this partition because another failed, perhaps retriably).
pub(super) fn final_error(raw: &Value, until: &BTreeMap<String, toml::Value>) -> Option<i16> {
    let wanted: Vec<i64> = until.values().filter_map(toml::Value::as_integer).collect();
    let mut codes = Vec::new();
    error_codes(raw, &mut codes);
    codes.into_iter().find(|&c| {
        c != 0 && c != 55 && !error_codes::retriable(c) && !wanted.contains(&i64::from(c))
    })
}

/// A condition of `until` on a record a Fetch answer already holds, with another value: the
/// record at an offset is not rewritten (a consumer is served only what every replica has), so
/// no retry brings the value asked for. Said as "path is X, expected Y". A record not there yet
/// (no batch, or fewer records) decides nothing: it may still come.
pub(super) fn decided_record(raw: &Value, until: &BTreeMap<String, toml::Value>) -> Option<String> {
    until.iter().find_map(|(path, expected)| {
        let record = record_of(path)?;
        response::at(raw, record)?.as_object()?;
        let expected = serde_json::to_value(expected).unwrap_or(Value::Null);
        let found = response::at(raw, path).cloned().unwrap_or(Value::Null);
        (found != expected).then(|| format!("{path} is {found}, expected {expected}"))
    })
}

/// The path of the record a condition's path is within (`…batches.0.records.1`), when it is
/// one of a record's fields (`…batches.0.records.1.key`).
fn record_of(path: &str) -> Option<&str> {
    let at = path.find(".records.")?;
    let index_end = path[at + ".records.".len()..]
        .find('.')
        .map(|i| at + ".records.".len() + i)?;
    path[..at]
        .contains("batches.")
        .then_some(&path[..index_end])
}

/// Whether an answer carries an error code a client retries ([`error_codes::retriable`]).
pub(super) fn carries_retriable(raw: &Value) -> bool {
    let mut codes = Vec::new();
    error_codes(raw, &mut codes);
    codes.into_iter().any(error_codes::retriable)
}

fn error_codes(v: &Value, out: &mut Vec<i16>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.ends_with("error_code"), v.as_i64()) {
                    (true, Some(c)) => out.push(c as i16),
                    _ => error_codes(v, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|v| error_codes(v, out)),
        _ => {}
    }
}

/// The conditions (field path → value) an answer does not meet, each as "path is X, expected
/// Y": what `until` waits out and `expect` reports. A missing field counts as null, and is
/// said to be absent (a record not yet fetched reads otherwise than one whose key is null).
pub(super) fn mismatches(conditions: &BTreeMap<String, toml::Value>, raw: &Value) -> Vec<String> {
    conditions
        .iter()
        .filter_map(|(path, expected)| {
            let expected = serde_json::to_value(expected).unwrap_or(Value::Null);
            let found = response::at(raw, path);
            (found.unwrap_or(&Value::Null) != &expected).then(|| match found {
                Some(found) => format!("{path} is {found}, expected {expected}"),
                None => {
                    format!("{path} is absent (the answer has no such field), expected {expected}")
                }
            })
        })
        .collect()
}

/// The conditions of `until_roles` (path → role or `not-<role>`) the answer misses, given the
/// roles bound so far (role → node id).
pub(super) fn roles_missed(
    wanted: &BTreeMap<String, String>,
    roles: &BTreeMap<String, i32>,
    raw: &Value,
) -> Vec<String> {
    wanted
        .iter()
        .filter_map(|(path, role)| {
            let node = response::at(raw, path).and_then(Value::as_i64);
            let (name, negated) = match role.strip_prefix("not-") {
                Some(r) => (r, true),
                None => (role.as_str(), false),
            };
            let holder = roles.get(name).map(|n| i64::from(*n));
            let holds = node.is_some() && holder.is_some() && (node == holder) != negated;
            (!holds).then(|| format!("{path} is {node:?}, wanted {role} ({holder:?})"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_record_already_there_with_another_value_decides_until() {
        let path = "responses.0.partitions.0.batches.0.records.0.key";
        let mut until = BTreeMap::new();
        until.insert(path.to_owned(), toml::Value::String("k1".into()));
        let with = |records: Value| json!({"responses": [{"partitions": [{"batches": [{"records": records}]}]}]});
        assert_eq!(
            decided_record(&with(json!([{"key": null, "value": "v"}])), &until).as_deref(),
            Some("responses.0.partitions.0.batches.0.records.0.key is null, expected \"k1\"")
        );
        // Not there yet: it may still come.
        assert_eq!(decided_record(&with(json!([])), &until), None);
        assert_eq!(
            decided_record(
                &json!({"responses": [{"partitions": [{"batches": []}]}]}),
                &until
            ),
            None
        );
        // There, and as asked.
        assert_eq!(decided_record(&with(json!([{"key": "k1"}])), &until), None);
        // A condition on what may still change (the stable offset) decides nothing.
        let mut lso = BTreeMap::new();
        lso.insert(
            "responses.0.partitions.0.last_stable_offset".to_owned(),
            toml::Value::Integer(6),
        );
        assert_eq!(
            decided_record(
                &json!({"responses": [{"partitions": [{"last_stable_offset": 4}]}]}),
                &lso
            ),
            None
        );
    }

    #[test]
    fn mismatches_name_each_condition_an_answer_misses() {
        let raw = json!({"error_code": 51, "results": [{"code": 0}]});
        let mut conditions = BTreeMap::new();
        conditions.insert("results.0.code".to_owned(), toml::Value::Integer(0));
        assert!(mismatches(&conditions, &raw).is_empty());
        conditions.insert("error_code".to_owned(), toml::Value::Integer(0));
        conditions.insert("missing".to_owned(), toml::Value::Integer(1));
        assert_eq!(
            mismatches(&conditions, &raw),
            [
                "error_code is 51, expected 0",
                "missing is absent (the answer has no such field), expected 1"
            ]
        );
    }
}
