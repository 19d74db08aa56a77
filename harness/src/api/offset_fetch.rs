//! OffsetFetch: how a scenario step's fields become its request, and its answer the tree a
//! transcript records.
//! OffsetFetch 8 and later batch groups; scenarios name one group, so the plain shape.

use kafka_protocol::messages::*;
use serde_json::{json, Value};

use super::request::Fields;
use super::response::{by_name, sorted};

/// The `topics` of an OffsetFetch request as `$ty` (a different generated type in the v0–7
/// and the v8+ shape, with the same fields).
macro_rules! offset_fetch_topics {
    ($topics:expr, $ty:ty) => {
        $topics
            .iter()
            .map(|t| {
                Ok(<$ty>::default()
                    .with_name(TopicName(t.str("name")?))
                    .with_partition_indexes(t.i32s("partition_indexes")?))
            })
            .collect::<Result<Vec<_>, String>>()?
    };
}

/// OffsetFetch's per-topic results, the same fields in the v0–7 and the v8+ shape (two
/// generated types).
macro_rules! offset_fetch_results {
    ($topics:expr) => {
        by_name(
            $topics
                .iter()
                .map(|t| {
                    json!({
                        "name": t.name.0.as_str(),
                        "partitions": sorted(t.partitions.iter().map(|p| json!({
                            "partition_index": p.partition_index,
                            "error_code": p.error_code,
                            "committed_offset": p.committed_offset,
                            "metadata": p.metadata.as_ref().map(|m| m.as_str()),
                        })).collect()),
                    })
                })
                .collect(),
        )
    };
}

/// OffsetFetch's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "OffsetFetch",
    key: ApiKey::OffsetFetch,
    cap: Some(7),
    codes: &[],
    build,
    read: super::Reading::Typed(read),
};

/// The request at `version` from a step's fields.
fn build(version: i16, f: &Fields<'_>) -> Result<RequestKind, String> {
    Ok(RequestKind::OffsetFetch(offset_fetch(version, f)?))
}

/// The answer at `version` as a tree, when it is OffsetFetch's.
fn read(response: &ResponseKind, version: i16) -> Option<Value> {
    let ResponseKind::OffsetFetch(r) = response else {
        return None;
    };
    // v8+: the batched shape, one entry per group.
    Some(if version >= 8 {
        json!({
            "throttle_time_ms": r.throttle_time_ms,
            "groups": r.groups.iter().map(|g| json!({
                "error_code": g.error_code,
                "topics": offset_fetch_results!(g.topics),
            })).collect::<Vec<_>>(),
        })
    } else {
        json!({
            "throttle_time_ms": r.throttle_time_ms,
            "error_code": r.error_code,
            "topics": offset_fetch_results!(r.topics),
        })
    })
}

/// OffsetFetch of one group: `topics = [{ name, partition_indexes }]`, the v0–7 shape or the
/// v8+ batched shape with the same fields.
fn offset_fetch(version: i16, f: &Fields<'_>) -> Result<OffsetFetchRequest, String> {
    let topics = f.tables("topics")?;
    let group = GroupId(f.str("group_id")?);
    let request =
        OffsetFetchRequest::default().with_require_stable(f.boolean("require_stable", false)?);
    Ok(match version >= 8 {
        true => request.with_groups(vec![
            offset_fetch_request::OffsetFetchRequestGroup::default()
                .with_group_id(group)
                .with_topics(Some(offset_fetch_topics!(
                    topics,
                    offset_fetch_request::OffsetFetchRequestTopics
                ))),
        ]),
        false => request
            .with_group_id(group)
            .with_topics(Some(offset_fetch_topics!(
                topics,
                offset_fetch_request::OffsetFetchRequestTopic
            ))),
    })
}
