//! JoinGroup: how a scenario step's fields become its request, and its answer the tree a
//! transcript records.

use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use serde_json::{json, Value};

use super::request::Fields;

/// JoinGroup's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "JoinGroup",
    key: ApiKey::JoinGroup,
    cap: None,
    codes: &[],
    build,
    read: super::Reading::Typed(read),
};

/// The request at `version` from a step's fields.
fn build(_version: i16, f: &Fields<'_>) -> Result<RequestKind, String> {
    Ok(RequestKind::JoinGroup(
        JoinGroupRequest::default()
            .with_group_id(GroupId(f.str("group_id")?))
            .with_session_timeout_ms(f.i32("session_timeout_ms", 30_000)?)
            .with_rebalance_timeout_ms(f.i32("rebalance_timeout_ms", 30_000)?)
            .with_member_id(f.str("member_id")?)
            .with_group_instance_id(f.opt_str("group_instance_id")?)
            .with_protocol_type(
                f.opt_str("protocol_type")?
                    .unwrap_or(StrBytes::from_static_str("consumer")),
            )
            .with_protocols(vec![join_group_request::JoinGroupRequestProtocol::default(
            )
            .with_name(
                f.opt_str("protocol")?
                    .unwrap_or(StrBytes::from_static_str("range")),
            )]),
    ))
}

/// The answer at `version` as a tree, when it is JoinGroup's.
fn read(response: &ResponseKind, version: i16) -> Option<Value> {
    let ResponseKind::JoinGroup(r) = response else {
        return None;
    };
    Some({
        let mut tree = json!({
            "throttle_time_ms": r.throttle_time_ms,
            "error_code": r.error_code,
            "generation_id": r.generation_id,
            "protocol_name": r.protocol_name.as_ref().map(|m| m.as_str()),
            "leader": r.leader.as_str(),
            "member_id": r.member_id.as_str(),
            "members": r.members.len(),
        });
        if version >= 9 {
            tree["skip_assignment"] = json!(r.skip_assignment);
        }
        tree
    })
}
