//! ConsumerGroupHeartbeat (KIP-848's consumer group protocol): how a scenario step's fields
//! become its request, and its answer the tree a transcript records. A member joins with epoch
//! 0 and gets the group's epoch, which TxnOffsetCommit then carries as its member epoch.

use kafka_protocol::messages::*;
use serde_json::{json, Value};

use super::request::Fields;

/// ConsumerGroupHeartbeat's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "ConsumerGroupHeartbeat",
    key: ApiKey::ConsumerGroupHeartbeat,
    cap: None,
    codes: &[],
    build,
    read: super::Reading::Typed(read),
};

/// The request at `version` from a step's fields: a member (`member_id`, empty to have the
/// coordinator name one at v0) at `member_epoch` (0 joins, -1 leaves), subscribed to
/// `subscribed_topic_names`.
fn build(_version: i16, f: &Fields<'_>) -> Result<RequestKind, String> {
    let topics = f.strs("subscribed_topic_names")?;
    Ok(RequestKind::ConsumerGroupHeartbeat(
        ConsumerGroupHeartbeatRequest::default()
            .with_group_id(GroupId(f.str("group_id")?))
            .with_member_id(f.opt_str("member_id")?.unwrap_or_default())
            .with_member_epoch(f.i32("member_epoch", 0)?)
            .with_rebalance_timeout_ms(f.i32("rebalance_timeout_ms", 30000)?)
            .with_subscribed_topic_names(
                (!topics.is_empty()).then(|| topics.into_iter().map(TopicName).collect()),
            )
            .with_topic_partitions(Some(Vec::new())),
    ))
}

/// The answer at `version` as a tree, when it is ConsumerGroupHeartbeat's. The assignment is
/// each topic's partition count, not its id (ids differ every run).
fn read(response: &ResponseKind, _version: i16) -> Option<Value> {
    let ResponseKind::ConsumerGroupHeartbeat(r) = response else {
        return None;
    };
    Some(json!({
        "throttle_time_ms": r.throttle_time_ms,
        "error_code": r.error_code,
        "error_message": r.error_message.as_ref().map(|m| m.as_str()),
        "member_id": r.member_id.as_ref().map(|m| m.as_str()),
        "member_epoch": r.member_epoch,
        "heartbeat_interval_ms": r.heartbeat_interval_ms,
        "assigned_partitions": r.assignment.as_ref().map(|a| {
            a.topic_partitions.iter().map(|t| t.partitions.len()).sum::<usize>()
        }),
    }))
}
