//! FindCoordinator: how a scenario step's fields become its request, and its answer the tree a
//! transcript records.

use kafka_protocol::messages::*;
use serde_json::{json, Value};

use super::request::Fields;

/// FindCoordinator's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "FindCoordinator",
    key: ApiKey::FindCoordinator,
    cap: None,
    codes: &[],
    build,
    read: super::Reading::Typed(read),
};

/// The request at `version` from a step's fields.
fn build(version: i16, f: &Fields<'_>) -> Result<RequestKind, String> {
    Ok(RequestKind::FindCoordinator(
        match version >= 4 {
            // v4 batches keys.
            true => FindCoordinatorRequest::default().with_coordinator_keys(vec![f.str("key")?]),
            false => FindCoordinatorRequest::default().with_key(f.str("key")?),
        }
        .with_key_type(f.i16("key_type", 0)? as i8),
    ))
}

/// The answer at `version` as a tree, when it is FindCoordinator's.
fn read(response: &ResponseKind, version: i16) -> Option<Value> {
    let ResponseKind::FindCoordinator(r) = response else {
        return None;
    };
    // v4 batches keys: the single-key fields are not on the wire any more.
    Some(if version >= 4 {
        json!({
            "throttle_time_ms": r.throttle_time_ms,
            "coordinators": r.coordinators.iter().map(|c| json!({
                "key": c.key.as_str(),
                "node_id": c.node_id.0,
                "host": c.host.as_str(),
                "port": c.port,
                "error_code": c.error_code,
                "error_message": c.error_message.as_ref().map(|m| m.as_str()),
            })).collect::<Vec<_>>(),
        })
    } else {
        json!({
            "throttle_time_ms": r.throttle_time_ms,
            "error_code": r.error_code,
            "error_message": r.error_message.as_ref().map(|m| m.as_str()),
            "node_id": r.node_id.0,
            "host": r.host.as_str(),
            "port": r.port,
        })
    })
}
