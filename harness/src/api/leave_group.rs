//! LeaveGroup: how a scenario step's fields become its request, and its answer the tree a
//! transcript records.

use kafka_protocol::messages::*;
use serde_json::{json, Value};

use super::request::Fields;

/// LeaveGroup's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "LeaveGroup",
    key: ApiKey::LeaveGroup,
    cap: None,
    codes: &[],
    build,
    read: super::Reading::Typed(read),
};

/// The request at `version` from a step's fields.
fn build(version: i16, f: &Fields<'_>) -> Result<RequestKind, String> {
    Ok(RequestKind::LeaveGroup(leave_group(version, f)?))
}

/// The answer at `version` as a tree, when it is LeaveGroup's.
fn read(response: &ResponseKind, _version: i16) -> Option<Value> {
    let ResponseKind::LeaveGroup(r) = response else {
        return None;
    };
    Some(json!({
        "throttle_time_ms": r.throttle_time_ms,
        "error_code": r.error_code,
        "members": r.members.iter().map(|m| json!({
            "member_id": m.member_id.as_str(),
            "group_instance_id": m.group_instance_id.as_ref().map(|i| i.as_str()),
            "error_code": m.error_code,
        })).collect::<Vec<_>>(),
    }))
}

/// LeaveGroup: v0–2 carry one `member_id`; v3+ a batch of `members` ([{ member_id,
/// group_instance_id }]), or the one `member_id` when no batch is given.
fn leave_group(version: i16, f: &Fields<'_>) -> Result<LeaveGroupRequest, String> {
    let request = LeaveGroupRequest::default().with_group_id(GroupId(f.str("group_id")?));
    if version < 3 {
        return Ok(request.with_member_id(f.str("member_id")?));
    }
    let mut members = f
        .tables("members")?
        .iter()
        .map(|m| {
            Ok(leave_group_request::MemberIdentity::default()
                .with_member_id(m.str("member_id")?)
                .with_group_instance_id(m.opt_str("group_instance_id")?))
        })
        .collect::<Result<Vec<_>, String>>()?;
    if members.is_empty() {
        members.push(
            leave_group_request::MemberIdentity::default().with_member_id(f.str("member_id")?),
        );
    }
    Ok(request.with_members(members))
}
