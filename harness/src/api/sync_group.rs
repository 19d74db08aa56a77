//! SyncGroup: how a scenario step's fields become its request, and its answer the tree a
//! transcript records.

use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use serde_json::{json, Value};

use super::request::Fields;

/// SyncGroup's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "SyncGroup",
    key: ApiKey::SyncGroup,
    cap: None,
    codes: &[],
    build,
    read: super::Reading::Typed(read),
};

/// The request at `version` from a step's fields.
fn build(_version: i16, f: &Fields<'_>) -> Result<RequestKind, String> {
    Ok(RequestKind::SyncGroup(
        SyncGroupRequest::default()
            .with_group_id(GroupId(f.str("group_id")?))
            .with_generation_id(f.i32("generation_id", -1)?)
            .with_member_id(f.str("member_id")?)
            .with_group_instance_id(f.opt_str("group_instance_id")?)
            .with_protocol_type(Some(
                f.opt_str("protocol_type")?
                    .unwrap_or(StrBytes::from_static_str("consumer")),
            ))
            .with_protocol_name(Some(
                f.opt_str("protocol")?
                    .unwrap_or(StrBytes::from_static_str("range")),
            ))
            // The leader's assignment: each member named gets an empty assignment.
            .with_assignments(
                f.tables("assignments")?
                    .iter()
                    .map(|a| {
                        Ok(sync_group_request::SyncGroupRequestAssignment::default()
                            .with_member_id(a.str("member_id")?))
                    })
                    .collect::<Result<_, String>>()?,
            ),
    ))
}

/// The answer at `version` as a tree, when it is SyncGroup's.
fn read(response: &ResponseKind, _version: i16) -> Option<Value> {
    let ResponseKind::SyncGroup(r) = response else {
        return None;
    };
    Some(json!({
        "throttle_time_ms": r.throttle_time_ms,
        "error_code": r.error_code,
        "assignment_bytes": r.assignment.len(),
    }))
}
