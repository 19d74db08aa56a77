//! Heartbeat: how a scenario step's fields become its request, and its answer the tree a
//! transcript records.

use kafka_protocol::messages::*;
use serde_json::{json, Value};

use super::request::Fields;

/// Heartbeat's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "Heartbeat",
    key: ApiKey::Heartbeat,
    cap: None,
    codes: &[],
    build,
    read: super::Reading::Typed(read),
};

/// The request at `version` from a step's fields.
fn build(_version: i16, f: &Fields<'_>) -> Result<RequestKind, String> {
    Ok(RequestKind::Heartbeat(
        HeartbeatRequest::default()
            .with_group_id(GroupId(f.str("group_id")?))
            .with_generation_id(f.i32("generation_id", -1)?)
            .with_member_id(f.str("member_id")?)
            .with_group_instance_id(f.opt_str("group_instance_id")?),
    ))
}

/// The answer at `version` as a tree, when it is Heartbeat's.
fn read(response: &ResponseKind, _version: i16) -> Option<Value> {
    let ResponseKind::Heartbeat(r) = response else {
        return None;
    };
    Some(json!({
        "throttle_time_ms": r.throttle_time_ms,
        "error_code": r.error_code,
    }))
}
