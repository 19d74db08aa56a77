//! OffsetCommit: how a scenario step's fields become its request, and its answer the tree a
//! transcript records.

use kafka_protocol::messages::*;
use serde_json::{json, Value};

use super::request::Fields;
use super::response::{by_name, sorted};

/// OffsetCommit's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "OffsetCommit",
    key: ApiKey::OffsetCommit,
    cap: None,
    codes: &[],
    build,
    read: super::Reading::Typed(read),
};

/// The request at `version` from a step's fields.
fn build(_version: i16, f: &Fields<'_>) -> Result<RequestKind, String> {
    Ok(RequestKind::OffsetCommit(
        OffsetCommitRequest::default()
            .with_group_id(GroupId(f.str("group_id")?))
            .with_generation_id_or_member_epoch(f.i32("generation_id", -1)?)
            .with_member_id(f.str("member_id")?)
            .with_group_instance_id(f.opt_str("group_instance_id")?)
            .with_retention_time_ms(f.int("retention_time_ms", -1)?)
            .with_topics(committed_topics!(
                f,
                offset_commit_request::OffsetCommitRequestTopic,
                offset_commit_request::OffsetCommitRequestPartition
            )),
    ))
}

/// The answer at `version` as a tree, when it is OffsetCommit's.
fn read(response: &ResponseKind, _version: i16) -> Option<Value> {
    let ResponseKind::OffsetCommit(r) = response else {
        return None;
    };
    Some(json!({
        "throttle_time_ms": r.throttle_time_ms,
        "topics": by_name(r.topics.iter().map(|t| json!({
            "name": t.name.0.as_str(),
            "partitions": sorted(t.partitions.iter().map(|p| json!({
                "partition_index": p.partition_index,
                "error_code": p.error_code,
            })).collect()),
        })).collect()),
    }))
}
