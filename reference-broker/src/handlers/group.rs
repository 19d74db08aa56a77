//! JoinGroup, SyncGroup, Heartbeat, LeaveGroup, DescribeGroups and ListGroups, on the group
//! coordinator in `crate::groups`.

use kafka_protocol::messages::delete_groups_response::DeletableGroupResult;
use kafka_protocol::messages::describe_groups_response::{DescribedGroup, DescribedGroupMember};
use kafka_protocol::messages::join_group_response::JoinGroupResponseMember;
use kafka_protocol::messages::leave_group_response::MemberResponse;
use kafka_protocol::messages::list_groups_response::ListedGroup;
use kafka_protocol::messages::*;

use super::{sb, Ctx};
use crate::auth::{Operation, Resource};
use crate::errors;
use crate::groups::JoinRequest;

/// Answers JoinGroup (waits for the join phase to complete).
pub async fn join(ctx: &Ctx, req: JoinGroupRequest) -> JoinGroupResponse {
    let group_id = req.group_id.0.to_string();
    if !ctx.allowed(Operation::Read, Resource::Group(&group_id)) {
        return JoinGroupResponse::default()
            .with_error_code(errors::GROUP_AUTHORIZATION_FAILED)
            .with_generation_id(-1);
    }
    // An invalid (empty) group id is the coordinator's own refusal, before routing.
    if !group_id.is_empty() && !ctx.state.membership.owns(&group_id) {
        return JoinGroupResponse::default()
            .with_error_code(errors::NOT_COORDINATOR)
            .with_generation_id(-1);
    }
    let outcome = ctx
        .state
        .groups
        .join(JoinRequest {
            group_id,
            member_id: req.member_id.to_string(),
            instance_id: req.group_instance_id.as_ref().map(|s| s.to_string()),
            client_id: ctx.client_id.clone(),
            session_timeout_ms: req.session_timeout_ms,
            rebalance_timeout_ms: if ctx.version >= 1 {
                req.rebalance_timeout_ms
            } else {
                req.session_timeout_ms
            },
            protocol_type: req.protocol_type.to_string(),
            protocols: req
                .protocols
                .iter()
                .map(|p| (p.name.to_string(), p.metadata.clone()))
                .collect(),
            require_known_member_id: ctx.version >= 4,
            supports_skip_assignment: ctx.version >= 9,
        })
        .await;
    let members = outcome
        .members
        .into_iter()
        .map(|(id, instance, meta)| {
            JoinGroupResponseMember::default()
                .with_member_id(sb(&id))
                .with_group_instance_id(instance.filter(|_| ctx.version >= 5).map(|i| sb(&i)))
                .with_metadata(meta)
        })
        .collect();
    let protocol_name = match ctx.version {
        v if v >= 7 => outcome.protocol.as_deref().map(sb),
        _ => Some(sb(outcome.protocol.as_deref().unwrap_or_default())),
    };
    JoinGroupResponse::default()
        .with_error_code(outcome.error)
        .with_generation_id(outcome.generation)
        .with_protocol_type(
            outcome
                .protocol_type
                .as_deref()
                .filter(|_| ctx.version >= 7)
                .map(sb),
        )
        .with_protocol_name(protocol_name)
        .with_leader(sb(&outcome.leader))
        .with_member_id(sb(&outcome.member_id))
        .with_skip_assignment(outcome.skip_assignment)
        .with_members(members)
}

/// Answers SyncGroup (the followers wait for the leader).
pub async fn sync(ctx: &Ctx, req: SyncGroupRequest) -> SyncGroupResponse {
    let group_id = req.group_id.0.to_string();
    if !ctx.allowed(Operation::Read, Resource::Group(&group_id)) {
        return SyncGroupResponse::default().with_error_code(errors::GROUP_AUTHORIZATION_FAILED);
    }
    // An invalid (empty) group id is the coordinator's own refusal, before routing.
    if !group_id.is_empty() && !ctx.state.membership.owns(&group_id) {
        return SyncGroupResponse::default().with_error_code(errors::NOT_COORDINATOR);
    }
    let (error, assignment) = ctx
        .state
        .groups
        .sync(
            &group_id,
            &req.member_id,
            req.group_instance_id.as_deref(),
            req.generation_id,
            req.assignments
                .iter()
                .map(|a| (a.member_id.to_string(), a.assignment.clone()))
                .collect(),
        )
        .await;
    let mut resp = SyncGroupResponse::default()
        .with_error_code(error)
        .with_assignment(assignment);
    if ctx.version >= 5 && error == errors::NONE {
        resp = resp
            .with_protocol_type(req.protocol_type.clone())
            .with_protocol_name(req.protocol_name.clone());
    }
    resp
}

/// Answers Heartbeat.
pub fn heartbeat(ctx: &Ctx, req: HeartbeatRequest) -> HeartbeatResponse {
    let group_id = req.group_id.0.to_string();
    let code = match ctx.allowed(Operation::Read, Resource::Group(&group_id)) {
        false => errors::GROUP_AUTHORIZATION_FAILED,
        true if !group_id.is_empty() && !ctx.state.membership.owns(&group_id) => {
            errors::NOT_COORDINATOR
        }
        true => ctx.state.groups.heartbeat(
            &group_id,
            &req.member_id,
            req.group_instance_id.as_deref(),
            req.generation_id,
        ),
    };
    HeartbeatResponse::default().with_error_code(code)
}

/// Answers LeaveGroup (v0–2 one member, v3+ a batch).
pub fn leave(ctx: &Ctx, req: LeaveGroupRequest) -> LeaveGroupResponse {
    let group_id = req.group_id.0.to_string();
    if !ctx.allowed(Operation::Read, Resource::Group(&group_id)) {
        return LeaveGroupResponse::default().with_error_code(errors::GROUP_AUTHORIZATION_FAILED);
    }
    // An invalid (empty) group id is the coordinator's own refusal, before routing.
    if !group_id.is_empty() && !ctx.state.membership.owns(&group_id) {
        return LeaveGroupResponse::default().with_error_code(errors::NOT_COORDINATOR);
    }
    let groups = &ctx.state.groups;
    if ctx.version < 3 {
        return LeaveGroupResponse::default().with_error_code(groups.leave(
            &group_id,
            &req.member_id,
            None,
        ));
    }
    let members = req
        .members
        .iter()
        .map(|m| {
            MemberResponse::default()
                .with_member_id(m.member_id.clone())
                .with_group_instance_id(m.group_instance_id.clone())
                .with_error_code(groups.leave(
                    &group_id,
                    &m.member_id,
                    m.group_instance_id.as_deref(),
                ))
        })
        .collect();
    LeaveGroupResponse::default().with_members(members)
}

/// Answers DescribeGroups.
pub fn describe(ctx: &Ctx, req: DescribeGroupsRequest) -> DescribeGroupsResponse {
    let groups = req
        .groups
        .iter()
        .map(|g| {
            let id = g.0.to_string();
            let d = DescribedGroup::default()
                .with_group_id(g.clone())
                .with_authorized_operations(i32::MIN);
            if !ctx.allowed(Operation::Describe, Resource::Group(&id)) {
                return d.with_error_code(errors::GROUP_AUTHORIZATION_FAILED);
            }
            if !ctx.state.membership.owns(&id) {
                return d.with_error_code(errors::NOT_COORDINATOR);
            }
            match ctx.state.groups.describe(&id) {
                None => d.with_group_state(sb("Dead")),
                Some((state, ptype, protocol, members)) => d
                    .with_group_state(sb(state.name()))
                    .with_protocol_type(sb(&ptype))
                    .with_protocol_data(sb(&protocol))
                    .with_members(
                        members
                            .into_iter()
                            .map(|m| {
                                let meta = m
                                    .protocols
                                    .iter()
                                    .find(|(n, _)| *n == protocol)
                                    .map(|(_, b)| b.clone())
                                    .unwrap_or_default();
                                DescribedGroupMember::default()
                                    .with_member_id(sb(&m.id))
                                    .with_group_instance_id(
                                        m.instance_id.filter(|_| ctx.version >= 4).map(|i| sb(&i)),
                                    )
                                    .with_client_id(sb(&m.client_id))
                                    .with_client_host(sb(&m.client_host))
                                    .with_member_metadata(meta)
                                    .with_member_assignment(m.assignment)
                            })
                            .collect(),
                    ),
            }
        })
        .collect();
    DescribeGroupsResponse::default().with_groups(groups)
}

/// Answers DeleteGroups: DELETE on each group (30), then the coordinator's verdict.
pub fn delete(ctx: &Ctx, req: DeleteGroupsRequest) -> DeleteGroupsResponse {
    let results = req
        .groups_names
        .iter()
        .map(|g| {
            let code = match ctx.allowed(Operation::Delete, Resource::Group(g)) {
                false => errors::GROUP_AUTHORIZATION_FAILED,
                true if !ctx.state.membership.owns(g) => errors::NOT_COORDINATOR,
                true => ctx.state.groups.delete(g, &ctx.state.offsets),
            };
            DeletableGroupResult::default()
                .with_group_id(g.clone())
                .with_error_code(code)
        })
        .collect();
    DeleteGroupsResponse::default().with_results(results)
}

/// Answers ListGroups.
pub fn list(ctx: &Ctx, req: ListGroupsRequest) -> ListGroupsResponse {
    let filter: Vec<String> = req.states_filter.iter().map(|s| s.to_string()).collect();
    let groups = ctx
        .state
        .groups
        .list()
        .into_iter()
        .filter(|(id, _, _)| ctx.allowed(Operation::Describe, Resource::Group(id)))
        .filter(|(_, _, state)| filter.is_empty() || filter.iter().any(|f| f == state.name()))
        .map(|(id, ptype, state)| {
            let g = ListedGroup::default()
                .with_group_id(GroupId(sb(&id)))
                .with_protocol_type(sb(&ptype));
            match ctx.version >= 4 {
                true => g.with_group_state(sb(state.name())),
                false => g,
            }
        })
        .collect();
    ListGroupsResponse::default().with_groups(groups)
}
