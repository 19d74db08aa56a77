//! ListOffsets: how a scenario step's fields become its request, and its answer the tree a
//! transcript records.

use kafka_protocol::messages::*;
use serde_json::{json, Value};

use super::request::{isolation, Fields};
use super::response::{by_name, sorted};

/// ListOffsets's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "ListOffsets",
    key: ApiKey::ListOffsets,
    cap: None,
    codes: &[],
    build,
    read: super::Reading::Typed(read),
};

/// The request at `version` from a step's fields.
fn build(_version: i16, f: &Fields<'_>) -> Result<RequestKind, String> {
    Ok(RequestKind::ListOffsets(
        ListOffsetsRequest::default()
            .with_replica_id(BrokerId(-1))
            .with_isolation_level(isolation(f)?)
            .with_topics(vec![list_offsets_request::ListOffsetsTopic::default()
                .with_name(TopicName(f.str("topic")?))
                .with_partitions(vec![
                    list_offsets_request::ListOffsetsPartition::default()
                        .with_partition_index(f.i32("partition", 0)?)
                        .with_timestamp(f.int("timestamp", -1)?),
                ])]),
    ))
}

/// The answer at `version` as a tree, when it is ListOffsets's.
fn read(response: &ResponseKind, _version: i16) -> Option<Value> {
    let ResponseKind::ListOffsets(r) = response else {
        return None;
    };
    Some(json!({
        "throttle_time_ms": r.throttle_time_ms,
        "topics": by_name(r.topics.iter().map(|t| json!({
            "name": t.name.0.as_str(),
            "partitions": sorted(t.partitions.iter().map(|p| json!({
                "partition_index": p.partition_index,
                "error_code": p.error_code,
                "offset": p.offset,
                "timestamp": p.timestamp,
                "leader_epoch": p.leader_epoch,
            })).collect()),
        })).collect()),
    }))
}
