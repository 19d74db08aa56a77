//! Responses as plain trees (JSON values): what transcripts record, normalise and compare.

use kafka_protocol::messages::{ApiKey, ResponseKind};
use serde_json::{json, Value};

use crate::api::Reading;
use crate::wire::frame::Decoded;

/// The response's fields at `version` as a tree, named as Apache names them (snake_case), from
/// kafka-protocol's message: for the APIs read that way (not the six transaction APIs, whose
/// trees come from [`tree`]).
pub fn to_value(response: &ResponseKind, version: i16) -> Value {
    crate::api::APIS
        .iter()
        .find_map(|a| match a.read {
            Reading::Typed(read) => read(response, version),
            Reading::Definitions { .. } => None,
        })
        .unwrap_or_else(|| {
            json!({ "unrecorded": format!("{response:?}").chars().take(200).collect::<String>() })
        })
}

/// The tree a transcript records of a decoded answer of `api` at `version`: the values
/// Apache's definitions read, for an API read so (`Reading::Definitions`), in the order
/// `in_order` gives and with its renamings; else kafka-protocol's message as [`to_value`]
/// reads it.
pub fn tree(decoded: &Decoded, api: ApiKey, version: i16) -> Value {
    let renamed = match crate::api::by_key(api).map(|a| a.read) {
        Some(Reading::Definitions { renamed, .. }) => renamed,
        _ => &[],
    };
    match (&decoded.values, &decoded.response) {
        (Some(values), _) => in_order(values.clone(), renamed),
        (None, Some(response)) => to_value(response, version),
        (None, None) => json!({ "unrecorded": "no reading of this answer" }),
    }
}

/// `values` with each array of results in an order that carries no meaning put in one that
/// survives a comparison (Apache answers them from hash maps): markers by producer id, topics
/// by name, partitions by index; and the fields of `renamed` under their transcript names.
fn in_order(values: Value, renamed: &[(&str, &str)]) -> Value {
    match values {
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(key, value)| {
                    let key = renamed
                        .iter()
                        .find(|(from, _)| *from == key)
                        .map_or(key, |(_, to)| (*to).to_owned());
                    (key, in_order(value, renamed))
                })
                .collect(),
        ),
        Value::Array(items) => {
            let items: Vec<Value> = items.into_iter().map(|v| in_order(v, renamed)).collect();
            let all_have = |key: &str| items.iter().all(|i| i.get(key).is_some());
            Value::Array(match () {
                _ if all_have("producer_id") => by_producer(items),
                _ if all_have("name") => by_name(items),
                _ if all_have("partition_index") => sorted(items),
                _ => items,
            })
        }
        other => other,
    }
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

/// Fields a step may capture from an answer that no transcript records, by API: values a
/// broker makes up per run that only a later request needs (Metadata's topic ids, which
/// TxnOffsetCommit v6 names topics by). A value captured from one reads back as its variable
/// (`${topic_id}`) wherever a later answer carries it.
const CAPTURE_ONLY: [(&str, &str); 1] = [("Metadata", "topic_id")];

/// Whether `path`, captured from an answer of `api`, ends in a capture-only field.
pub fn capture_only(api: &str, path: &str) -> bool {
    let last = path.rsplit('.').next().unwrap_or(path);
    CAPTURE_ONLY.contains(&(api, last))
}

/// Removes `api`'s capture-only fields from a tree, at any depth, before it is recorded.
pub fn strip_capture_only(api: &str, value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|k, _| !CAPTURE_ONLY.contains(&(api, k.as_str())));
            map.values_mut().for_each(|v| strip_capture_only(api, v));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| strip_capture_only(api, v)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Metadata answer keeps its topic ids for captures, and records none of them; another
    /// API's field of the same name is recorded.
    #[test]
    fn capture_only_fields_are_not_recorded() {
        let answer =
            json!({"topics": [{"name": "t", "topic_id": "x", "partitions": [{"topic_id": "y"}]}]});
        let mut recorded = answer.clone();
        strip_capture_only("Metadata", &mut recorded);
        assert_eq!(
            recorded,
            json!({"topics": [{"name": "t", "partitions": [{}]}]})
        );
        let mut other = answer.clone();
        strip_capture_only("TxnOffsetCommit", &mut other);
        assert_eq!(other, answer);
        assert!(capture_only("Metadata", "topics.0.topic_id"));
        assert!(!capture_only("Metadata", "topics.0.name"));
        assert!(!capture_only("TxnOffsetCommit", "topics.0.topic_id"));
    }

    #[test]
    fn results_answered_from_hash_maps_are_put_in_order_and_renamed() {
        let answer = json!({
            "throttle_time_ms": 0,
            "markers": [
                {"producer_id": 9, "topics": [
                    {"name": "b", "partitions": [{"partition_index": 1, "error_code": 0}, {"partition_index": 0, "error_code": 6}]},
                    {"name": "a", "partitions": []},
                ]},
                {"producer_id": 2, "topics": []},
            ],
            "results_by_transaction": [{"transactional_id": "z"}, {"transactional_id": "y"}],
            "results_by_topic_v3_and_below": [{"name": "t", "results_by_partition": []}],
        });
        let ordered = in_order(
            answer,
            &[
                ("results_by_topic_v3_and_below", "results"),
                ("results_by_partition", "results"),
            ],
        );
        assert_eq!(
            ordered,
            json!({
                "throttle_time_ms": 0,
                "markers": [
                    {"producer_id": 2, "topics": []},
                    {"producer_id": 9, "topics": [
                        {"name": "a", "partitions": []},
                        {"name": "b", "partitions": [{"partition_index": 0, "error_code": 6}, {"partition_index": 1, "error_code": 0}]},
                    ]},
                ],
                // No key to order by: left as the broker sent them.
                "results_by_transaction": [{"transactional_id": "z"}, {"transactional_id": "y"}],
                "results": [{"name": "t", "results": []}],
            })
        );
    }
}
