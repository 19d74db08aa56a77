//! Metadata: how a scenario step's fields become its request, and its answer the tree a
//! transcript records.

use kafka_protocol::messages::*;
use serde_json::{json, Value};

use super::request::Fields;
use super::response::{by_name, sorted};

/// Metadata's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "Metadata",
    key: ApiKey::Metadata,
    cap: None,
    codes: &[],
    build,
    read: super::Reading::Typed(read),
};

/// The request at `version` from a step's fields.
fn build(_version: i16, f: &Fields<'_>) -> Result<RequestKind, String> {
    Ok(RequestKind::Metadata(
        MetadataRequest::default()
            .with_allow_auto_topic_creation(f.boolean("allow_auto_topic_creation", false)?)
            .with_topics(Some(
                f.tables("topics")?
                    .iter()
                    .map(|t| {
                        Ok(metadata_request::MetadataRequestTopic::default()
                            .with_name(Some(TopicName(t.str("name")?))))
                    })
                    .collect::<Result<_, String>>()?,
            )),
    ))
}

/// The answer at `version` as a tree, when it is Metadata's.
fn read(response: &ResponseKind, _version: i16) -> Option<Value> {
    let ResponseKind::Metadata(r) = response else {
        return None;
    };
    Some(json!({
        "throttle_time_ms": r.throttle_time_ms,
        "topics": by_name(r.topics.iter().map(|t| {
            let mut topic = json!({
                "name": t.name.as_ref().map(|n| n.0.as_str()),
                // For captures only (a later TxnOffsetCommit v6 names the topic by it): never
                // recorded (`response::strip_capture_only`), as Apache prints it.
                "topic_id": crate::wire::by_schema::uuid_text(t.topic_id.as_bytes()),
                "error_code": t.error_code,
                "partitions": sorted(t.partitions.iter().map(|p| json!({
                    "partition_index": p.partition_index,
                    "error_code": p.error_code,
                    "leader_id": p.leader_id.0,
                })).collect()),
            });
            // Only internal topics carry the flag, so ordinary topics' transcripts stay
            // as they were.
            if t.is_internal {
                topic["is_internal"] = json!(true);
            }
            topic
        }).collect()),
    }))
}
