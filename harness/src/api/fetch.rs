//! Fetch: how a scenario step's fields become its request, and its answer the tree a
//! transcript records.
//! Fetch 13 and later name topics by id, which scenarios do not carry.

use kafka_protocol::messages::*;
use serde_json::{json, Value};

use super::request::{isolation, Fields};
use super::response::{by_name, sorted};

/// Fetch's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "Fetch",
    key: ApiKey::Fetch,
    cap: Some(12),
    codes: &[],
    build,
    read: super::Reading::Typed(read),
};

/// The request at `version` from a step's fields.
fn build(_version: i16, f: &Fields<'_>) -> Result<RequestKind, String> {
    Ok(RequestKind::Fetch(fetch(f)?))
}

/// The answer at `version` as a tree, when it is Fetch's.
fn read(response: &ResponseKind, _version: i16) -> Option<Value> {
    let ResponseKind::Fetch(r) = response else {
        return None;
    };
    Some(json!({
        "throttle_time_ms": r.throttle_time_ms,
        "error_code": r.error_code,
        "responses": by_name(r.responses.iter().map(|t| json!({
            "name": t.topic.0.as_str(),
            "partitions": sorted(t.partitions.iter().map(|p| {
                let mut aborted: Vec<(i64, i64)> = p.aborted_transactions.iter().flatten()
                    .map(|a| (a.first_offset, a.producer_id.0)).collect();
                aborted.sort();
                json!({
                    "partition_index": p.partition_index,
                    "error_code": p.error_code,
                    "high_watermark": p.high_watermark,
                    "last_stable_offset": p.last_stable_offset,
                    "log_start_offset": p.log_start_offset,
                    "aborted_transactions": p.aborted_transactions.as_ref().map(|_| aborted.iter()
                        .map(|(first_offset, producer_id)| json!({
                            "producer_id": producer_id,
                            "first_offset": first_offset,
                        })).collect::<Vec<_>>()),
                    "batches": crate::wire::record_batch::describe(&p.records),
                })
            }).collect()),
        })).collect()),
    }))
}

/// Fetch from one partition by topic name (versions up to 12; 13 and later name topics by id).
fn fetch(f: &Fields<'_>) -> Result<FetchRequest, String> {
    Ok(FetchRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_max_wait_ms(f.i32("max_wait_ms", 100)?)
        .with_min_bytes(f.i32("min_bytes", 1)?)
        .with_max_bytes(f.i32("max_bytes", 1 << 20)?)
        .with_isolation_level(isolation(f)?)
        .with_session_epoch(-1)
        .with_topics(vec![fetch_request::FetchTopic::default()
            .with_topic(TopicName(f.str("topic")?))
            .with_partitions(vec![fetch_request::FetchPartition::default()
                .with_partition(f.i32("partition", 0)?)
                .with_fetch_offset(f.int("fetch_offset", 0)?)
                .with_partition_max_bytes(
                    f.i32("partition_max_bytes", 1 << 20)?,
                )])]))
}
