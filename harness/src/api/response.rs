//! Responses as plain trees (JSON values): what transcripts record, normalise and compare.

use kafka_protocol::messages::ResponseKind;
use serde_json::{json, Value};

/// Per-topic, per-partition error codes: the results of WriteTxnMarkers and TxnOffsetCommit,
/// the same fields in two generated types.
macro_rules! partition_errors {
    ($topics:expr) => {
        $crate::api::response::by_name(
            $topics
                .iter()
                .map(|t| {
                    json!({
                        "name": t.name.0.as_str(),
                        "partitions": $crate::api::response::sorted(t.partitions.iter().map(|p| json!({
                            "partition_index": p.partition_index,
                            "error_code": p.error_code,
                        })).collect()),
                    })
                })
                .collect(),
        )
    };
}

/// The response's fields at `version` as a tree, named as Apache names them (snake_case).
pub fn to_value(response: &ResponseKind, version: i16) -> Value {
    crate::api::APIS
        .iter()
        .find_map(|a| (a.read)(response, version))
        .unwrap_or_else(|| {
            json!({ "unrecorded": format!("{response:?}").chars().take(200).collect::<String>() })
        })
}

/// Per-partition results in partition order: brokers answer them from maps, so their order on
/// the wire carries no meaning.
pub(super) fn sorted(mut partitions: Vec<Value>) -> Vec<Value> {
    partitions.sort_by_key(|p| p.get("partition_index").and_then(Value::as_i64));
    partitions
}

/// WriteTxnMarkers results in producer-id order (the raw ids: both brokers allocate them in
/// increasing order, so the order survives normalisation).
pub(super) fn by_producer(mut markers: Vec<Value>) -> Vec<Value> {
    markers.sort_by_key(|m| m.get("producer_id").and_then(Value::as_i64));
    markers
}

/// Per-topic results in name order, for the same reason (Apache's come from hash maps).
pub(super) fn by_name(mut topics: Vec<Value>) -> Vec<Value> {
    topics.sort_by(|a, b| {
        let name = |v: &Value| {
            v.get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        name(a).cmp(&name(b))
    });
    topics
}

/// The value at a dotted path (`results.0.results.0.partition_error_code`).
pub fn at<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.')
        .try_fold(value, |v, part| match part.parse::<usize>() {
            Ok(i) => v.get(i),
            Err(_) => v.get(part),
        })
}

/// Replaces the field at `path` (as [`at`] reads it) by `with`; whether there was one.
pub fn replace_at(value: &mut Value, path: &str, with: Value) -> bool {
    let mut v = value;
    for part in path.split('.') {
        let next = match part.parse::<usize>() {
            Ok(i) => v.get_mut(i),
            Err(_) => v.get_mut(part),
        };
        match next {
            Some(n) => v = n,
            None => return false,
        }
    }
    *v = with;
    true
}
