//! The classic consumer-group coordinator (JoinGroup / SyncGroup / Heartbeat / LeaveGroup), as
//! Apache 3.7's default (old) group coordinator runs it, in memory.
//!
//! States: Empty → PreparingRebalance → CompletingRebalance → Stable, back to
//! PreparingRebalance whenever membership changes. A join completes when every known member
//! has rejoined and no member told MEMBER_ID_REQUIRED is still to come back, or at the
//! rebalance timeout (dynamic members that did not rejoin are dropped, static ones kept); the
//! first rebalance of an empty group also waits `group.initial.rebalance.delay.ms`. Members that
//! stop heartbeating for their session timeout are removed, and so are pending member ids
//! never used within theirs. Static members (KIP-345): a join with a known instance id and no
//! member id takes over that member (the old id is fenced, FENCED_INSTANCE_ID), without a
//! rebalance when the group is Stable and the protocol stays; LeaveGroup can remove a member by
//! its instance id. A timer task drives deadlines.

use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::errors;
use crate::lock_order::{Level, OrderedGuard, OrderedMutex};
use crate::storage::offsets::OffsetStore;

mod group;
use group::Group;

/// Apache's `group.min.session.timeout.ms` and `group.max.session.timeout.ms` defaults.
pub const MIN_SESSION_TIMEOUT_MS: i32 = 6000;
/// See [`MIN_SESSION_TIMEOUT_MS`].
pub const MAX_SESSION_TIMEOUT_MS: i32 = 1_800_000;

/// Group states, named as Apache names them in DescribeGroups / ListGroups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupState {
    /// No members.
    Empty,
    /// Waiting for members to (re)join.
    PreparingRebalance,
    /// Waiting for the leader's assignment.
    CompletingRebalance,
    /// Assignment distributed.
    Stable,
}

impl GroupState {
    /// The name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            GroupState::Empty => "Empty",
            GroupState::PreparingRebalance => "PreparingRebalance",
            GroupState::CompletingRebalance => "CompletingRebalance",
            GroupState::Stable => "Stable",
        }
    }
}

/// One member.
#[derive(Debug, Clone)]
pub struct Member {
    /// Member id.
    pub id: String,
    /// Static member id.
    pub instance_id: Option<String>,
    /// Client id.
    pub client_id: String,
    /// Client host.
    pub client_host: String,
    /// Session timeout.
    pub session_timeout: Duration,
    /// Rebalance timeout.
    pub rebalance_timeout: Duration,
    /// Supported protocols (name, metadata), in preference order.
    pub protocols: Vec<(String, Bytes)>,
    /// Assignment from the last sync.
    pub assignment: Bytes,
    last_heartbeat: Instant,
}

/// What a completed join tells one member.
#[derive(Debug, Clone)]
pub struct JoinOutcome {
    /// Error code.
    pub error: i16,
    /// Generation.
    pub generation: i32,
    /// Chosen protocol.
    pub protocol: Option<String>,
    /// Protocol type.
    pub protocol_type: Option<String>,
    /// Leader member id.
    pub leader: String,
    /// The member's own id.
    pub member_id: String,
    /// Members and their metadata (leader only).
    pub members: Vec<(String, Option<String>, Bytes)>,
    /// KIP-814 (JoinGroup v9+): the leader is told to keep the current assignment rather than
    /// compute one (a static leader that rejoined a Stable group).
    pub skip_assignment: bool,
}

impl JoinOutcome {
    fn error(error: i16, member_id: &str) -> JoinOutcome {
        JoinOutcome {
            error,
            generation: -1,
            protocol: None,
            protocol_type: None,
            leader: String::new(),
            member_id: member_id.to_owned(),
            members: Vec::new(),
            skip_assignment: false,
        }
    }
}

/// A join answered at once, or one that waits for the join phase to complete.
enum Joined {
    Now(JoinOutcome),
    Waiting(oneshot::Receiver<JoinOutcome>),
}

/// What a completed sync tells one member: (error, assignment).
pub type SyncOutcome = (i16, Bytes);

/// A request to join.
#[derive(Debug, Clone)]
pub struct JoinRequest {
    /// Group id.
    pub group_id: String,
    /// Member id ("" for a new member).
    pub member_id: String,
    /// Static member id.
    pub instance_id: Option<String>,
    /// Client id.
    pub client_id: String,
    /// Session timeout (ms).
    pub session_timeout_ms: i32,
    /// Rebalance timeout (ms).
    pub rebalance_timeout_ms: i32,
    /// Protocol type ("consumer").
    pub protocol_type: String,
    /// Protocols.
    pub protocols: Vec<(String, Bytes)>,
    /// Whether the version requires a known member id first (v4+: MEMBER_ID_REQUIRED).
    pub require_known_member_id: bool,
    /// Whether the version can tell a leader to skip the assignment (v9+, KIP-814).
    pub supports_skip_assignment: bool,
}

/// All groups of this broker.
#[derive(Debug)]
pub struct GroupCoordinator {
    groups: OrderedMutex<HashMap<String, Group>>,
    initial_delay: Duration,
    /// Apache's `group.max.size` (`crate::limits`).
    max_members: usize,
}

impl GroupCoordinator {
    /// A coordinator with no groups, whose groups take at most `max_members` members.
    pub fn new(initial_delay: Duration, max_members: usize) -> Self {
        GroupCoordinator {
            groups: OrderedMutex::new(Level::Groups, HashMap::new()),
            initial_delay,
            max_members,
        }
    }

    fn lock(&self) -> OrderedGuard<std::sync::MutexGuard<'_, HashMap<String, Group>>> {
        self.groups.lock()
    }

    /// JoinGroup: resolves when the join phase completes (or at once for errors).
    pub async fn join(&self, req: JoinRequest) -> JoinOutcome {
        let rx = {
            let mut groups = self.lock();
            if req.group_id.is_empty() {
                return JoinOutcome::error(errors::INVALID_GROUP_ID, &req.member_id);
            }
            if !(MIN_SESSION_TIMEOUT_MS..=MAX_SESSION_TIMEOUT_MS).contains(&req.session_timeout_ms)
            {
                return JoinOutcome::error(errors::INVALID_SESSION_TIMEOUT, &req.member_id);
            }
            let group = groups
                .entry(req.group_id.clone())
                .or_insert_with(Group::new);
            if req.protocols.is_empty()
                || (!group.members.is_empty()
                    && (group.protocol_type.as_deref() != Some(&req.protocol_type)
                        || !req.protocols.iter().any(|(n, _)| {
                            group
                                .members
                                .values()
                                .all(|m| m.protocols.iter().any(|(p, _)| p == n))
                        })))
            {
                return JoinOutcome::error(errors::INCONSISTENT_GROUP_PROTOCOL, &req.member_id);
            }
            match self.join_locked(group, &req) {
                Joined::Now(outcome) => return outcome,
                Joined::Waiting(rx) => rx,
            }
        };
        rx.await
            .unwrap_or_else(|_| JoinOutcome::error(errors::UNKNOWN_MEMBER_ID, &req.member_id))
    }

    /// Apache's `handleJoinGroup` once the request is valid: a new member (dynamic or static),
    /// a static member taking over its instance id, or a current member rejoining.
    fn join_locked(&self, group: &mut Group, req: &JoinRequest) -> Joined {
        let instance = req.instance_id.as_deref();
        if req.member_id.is_empty() {
            let prefix = instance.unwrap_or(&req.client_id);
            let member_id = format!("{prefix}-{}", uuid::Uuid::new_v4());
            if let Some(old) = instance.and_then(|i| group.static_members.get(i).cloned()) {
                return self.rejoin_static(group, req, &old, &member_id);
            }
            // A new member of a full group (members and ids handed out, as Apache counts).
            if group.members.len() + group.pending_member_ids.len() >= self.max_members {
                return Joined::Now(JoinOutcome::error(
                    errors::GROUP_MAX_SIZE_REACHED,
                    &req.member_id,
                ));
            }
            if instance.is_none() && req.require_known_member_id {
                let expires = Instant::now() + Duration::from_millis(req.session_timeout_ms as u64);
                group.pending_member_ids.insert(member_id.clone(), expires);
                return Joined::Now(JoinOutcome::error(errors::MEMBER_ID_REQUIRED, &member_id));
            }
            return self.add_member(group, req, member_id);
        }
        if group.pending_member_ids.remove(&req.member_id).is_some() {
            return self.add_member(group, req, req.member_id.clone());
        }
        match group.validate_member(&req.member_id, instance) {
            errors::NONE => {}
            code => return Joined::Now(JoinOutcome::error(code, &req.member_id)),
        }
        let member = &group.members[&req.member_id];
        let same_metadata = member.protocols == req.protocols;
        let is_leader = group.leader.as_deref() == Some(req.member_id.as_str());
        match group.state {
            // A member that lost its join answer, or a follower with nothing new, is told the
            // current generation at once.
            GroupState::CompletingRebalance if same_metadata => {
                Joined::Now(group.current_generation(&req.member_id, is_leader))
            }
            GroupState::Stable if same_metadata && !is_leader => {
                Joined::Now(group.current_generation(&req.member_id, false))
            }
            _ => self.update_and_rebalance(group, req, req.member_id.clone()),
        }
    }

    /// A new member: added, and the group rebalances.
    fn add_member(&self, group: &mut Group, req: &JoinRequest, member_id: String) -> Joined {
        if group.members.is_empty() {
            group.protocol_type = Some(req.protocol_type.clone());
        }
        group.members.insert(
            member_id.clone(),
            Member {
                id: member_id.clone(),
                instance_id: req.instance_id.clone(),
                client_id: req.client_id.clone(),
                client_host: "/127.0.0.1".into(),
                session_timeout: Duration::from_millis(req.session_timeout_ms as u64),
                rebalance_timeout: Duration::from_millis(req.rebalance_timeout_ms.max(0) as u64),
                protocols: req.protocols.clone(),
                assignment: Bytes::new(),
                last_heartbeat: Instant::now(),
            },
        );
        if let Some(i) = &req.instance_id {
            group.static_members.insert(i.clone(), member_id.clone());
        }
        self.update_and_rebalance(group, req, member_id)
    }

    /// A member's join registered (its protocols and timeouts updated), then a rebalance
    /// prepared unless one is under way, completed if every member is in.
    fn update_and_rebalance(
        &self,
        group: &mut Group,
        req: &JoinRequest,
        member_id: String,
    ) -> Joined {
        if let Some(m) = group.members.get_mut(&member_id) {
            m.protocols = req.protocols.clone();
            m.session_timeout = Duration::from_millis(req.session_timeout_ms as u64);
            m.rebalance_timeout = Duration::from_millis(req.rebalance_timeout_ms.max(0) as u64);
            m.last_heartbeat = Instant::now();
        }
        let (tx, rx) = oneshot::channel();
        if let Some(old) = group.joins.insert(member_id.clone(), tx) {
            let _ = old.send(JoinOutcome::error(errors::UNKNOWN_MEMBER_ID, &member_id));
        }
        if group.state != GroupState::PreparingRebalance {
            group.prepare_rebalance(self.initial_delay);
        }
        group.maybe_complete_join(false);
        Joined::Waiting(rx)
    }

    /// A static member back with no member id (Apache's `updateStaticMemberAndRebalance`): it
    /// takes over its instance id under `new_id`. In a Stable group whose protocol stays the
    /// same it gets the current generation at once, told the leader as it was before (so it
    /// does not assign); otherwise it joins the rebalance.
    fn rejoin_static(
        &self,
        group: &mut Group,
        req: &JoinRequest,
        old: &str,
        new_id: &str,
    ) -> Joined {
        let instance = req.instance_id.as_deref().unwrap_or_default();
        let leader_before = group.leader.clone().unwrap_or_default();
        group.replace_static(instance, old, new_id);
        match group.state {
            GroupState::Stable => {
                if let Some(m) = group.members.get_mut(new_id) {
                    m.protocols = req.protocols.clone();
                    m.last_heartbeat = Instant::now();
                }
                if group.protocol.is_some() && group.select_protocol() == group.protocol {
                    // A static leader is sent the members and told to skip the assignment
                    // where the version can say so (v9+, which names the leader as it now
                    // is); older versions name the leader as it was, so that the new
                    // incarnation does not assign (scenario group-static-member-rejoin).
                    let skip =
                        req.supports_skip_assignment && group.leader.as_deref() == Some(new_id);
                    let mut outcome = group.current_generation(new_id, skip);
                    if !req.supports_skip_assignment {
                        outcome.leader = leader_before;
                    }
                    outcome.skip_assignment = skip;
                    return Joined::Now(outcome);
                }
                self.update_and_rebalance(group, req, new_id.to_owned())
            }
            _ => self.update_and_rebalance(group, req, new_id.to_owned()),
        }
    }

    /// SyncGroup: resolves once the leader's assignment is in.
    pub async fn sync(
        &self,
        group_id: &str,
        member_id: &str,
        instance_id: Option<&str>,
        generation: i32,
        assignments: Vec<(String, Bytes)>,
    ) -> SyncOutcome {
        let rx = {
            let mut groups = self.lock();
            let Some(group) = groups.get_mut(group_id) else {
                return (errors::UNKNOWN_MEMBER_ID, Bytes::new());
            };
            match group.validate_member(member_id, instance_id) {
                errors::NONE => {}
                code => return (code, Bytes::new()),
            }
            if generation != group.generation {
                return (errors::ILLEGAL_GENERATION, Bytes::new());
            }
            match group.state {
                GroupState::Empty => return (errors::UNKNOWN_MEMBER_ID, Bytes::new()),
                GroupState::PreparingRebalance => {
                    return (errors::REBALANCE_IN_PROGRESS, Bytes::new())
                }
                GroupState::Stable => {
                    return (errors::NONE, group.members[member_id].assignment.clone())
                }
                GroupState::CompletingRebalance => {}
            }
            let (tx, rx) = oneshot::channel();
            group.syncs.insert(member_id.to_owned(), tx);
            if group.leader.as_deref() == Some(member_id) {
                let given: HashMap<String, Bytes> = assignments.into_iter().collect();
                for m in group.members.values_mut() {
                    m.assignment = given.get(&m.id).cloned().unwrap_or_default();
                }
                group.state = GroupState::Stable;
                let pending: Vec<_> = group.syncs.drain().collect();
                for (id, tx) in pending {
                    let a = group
                        .members
                        .get(&id)
                        .map(|m| m.assignment.clone())
                        .unwrap_or_default();
                    let _ = tx.send((errors::NONE, a));
                }
            }
            rx
        };
        rx.await
            .unwrap_or((errors::REBALANCE_IN_PROGRESS, Bytes::new()))
    }

    /// Heartbeat.
    pub fn heartbeat(
        &self,
        group_id: &str,
        member_id: &str,
        instance_id: Option<&str>,
        generation: i32,
    ) -> i16 {
        let mut groups = self.lock();
        let Some(group) = groups.get_mut(group_id) else {
            return errors::UNKNOWN_MEMBER_ID;
        };
        if group.fenced(instance_id, member_id) {
            return errors::FENCED_INSTANCE_ID;
        }
        let Some(member) = group.members.get_mut(member_id) else {
            return errors::UNKNOWN_MEMBER_ID;
        };
        member.last_heartbeat = Instant::now();
        if generation != group.generation {
            return errors::ILLEGAL_GENERATION;
        }
        match group.state {
            GroupState::PreparingRebalance => errors::REBALANCE_IN_PROGRESS,
            GroupState::Empty => errors::UNKNOWN_MEMBER_ID,
            _ => errors::NONE,
        }
    }

    /// LeaveGroup for one member.
    /// LeaveGroup for one member, as Apache's `handleLeaveGroup`: by instance id alone (an
    /// administrator removing a static member), a pending member id, or a current member
    /// (FENCED_INSTANCE_ID for an older incarnation of a static member).
    pub fn leave(&self, group_id: &str, member_id: &str, instance_id: Option<&str>) -> i16 {
        let mut groups = self.lock();
        let Some(group) = groups.get_mut(group_id) else {
            return errors::UNKNOWN_MEMBER_ID;
        };
        if member_id.is_empty() {
            return match instance_id.and_then(|i| group.static_members.get(i).cloned()) {
                Some(current) => {
                    group.remove_member(&current, self.initial_delay);
                    errors::NONE
                }
                None => errors::UNKNOWN_MEMBER_ID,
            };
        }
        if group.pending_member_ids.remove(member_id).is_some() {
            group.maybe_complete_join(false);
            return errors::NONE;
        }
        match group.validate_member(member_id, instance_id) {
            errors::NONE => {
                group.remove_member(member_id, self.initial_delay);
                errors::NONE
            }
            code => code,
        }
    }

    /// Checks a member for OffsetCommit: NONE when the commit may proceed. As Apache 3.7's
    /// group coordinator: a member of the current generation may commit while the group is
    /// Stable or PreparingRebalance (the commit also counts as a heartbeat; consumers commit
    /// from their revoke callbacks during a rebalance), not while it is CompletingRebalance
    /// (REBALANCE_IN_PROGRESS). Without member data, only an Empty group accepts commits.
    pub fn validate_commit(
        &self,
        group_id: &str,
        member_id: &str,
        instance_id: Option<&str>,
        generation: i32,
    ) -> i16 {
        let mut groups = self.lock();
        let Some(group) = groups.get_mut(group_id) else {
            return match generation < 0 {
                true => errors::NONE,
                false => errors::ILLEGAL_GENERATION,
            };
        };
        if generation < 0
            && member_id.is_empty()
            && instance_id.is_none()
            && group.state == GroupState::Empty
        {
            return errors::NONE;
        }
        if group.fenced(instance_id, member_id) {
            return errors::FENCED_INSTANCE_ID;
        }
        let Some(member) = group.members.get_mut(member_id) else {
            return errors::UNKNOWN_MEMBER_ID;
        };
        if generation != group.generation {
            return errors::ILLEGAL_GENERATION;
        }
        match group.state {
            GroupState::CompletingRebalance => errors::REBALANCE_IN_PROGRESS,
            GroupState::Stable | GroupState::PreparingRebalance => {
                member.last_heartbeat = Instant::now();
                errors::NONE
            }
            GroupState::Empty => errors::NONE,
        }
    }

    /// DeleteGroups for one group, as Apache's `handleDeleteGroups`: a group with members is
    /// NON_EMPTY_GROUP; an Empty one — known to the coordinator, or only through its committed
    /// offsets (Apache keeps such a group Empty) — is deleted with its offsets; any other is
    /// GROUP_ID_NOT_FOUND — the empty group id too, which Apache accepts for DeleteGroups as it
    /// does for the offset APIs (scenario group-delete).
    pub fn delete(&self, group_id: &str, offsets: &OrderedMutex<OffsetStore>) -> i16 {
        let mut groups = self.lock();
        let known = match groups.get(group_id) {
            Some(g) if g.state != GroupState::Empty => return errors::NON_EMPTY_GROUP,
            Some(_) => true,
            None => false,
        };
        let mut offsets = offsets.lock();
        match offsets.delete_group(group_id) {
            Ok(had_offsets) if known || had_offsets => {
                groups.remove(group_id);
                errors::NONE
            }
            Ok(_) => errors::GROUP_ID_NOT_FOUND,
            Err(e) => {
                tracing::warn!(group = %group_id, error = %e, "offsets not deleted");
                errors::COORDINATOR_NOT_AVAILABLE
            }
        }
    }

    /// (state, protocol type, protocol, members) for DescribeGroups; None when unknown.
    pub fn describe(&self, group_id: &str) -> Option<(GroupState, String, String, Vec<Member>)> {
        let groups = self.lock();
        let g = groups.get(group_id)?;
        Some((
            g.state,
            g.protocol_type.clone().unwrap_or_default(),
            g.protocol.clone().unwrap_or_default(),
            g.members.values().cloned().collect(),
        ))
    }

    /// (group id, protocol type, state) of every group.
    pub fn list(&self) -> Vec<(String, String, GroupState)> {
        let groups = self.lock();
        let mut out: Vec<_> = groups
            .iter()
            .map(|(id, g)| {
                (
                    id.clone(),
                    g.protocol_type.clone().unwrap_or_default(),
                    g.state,
                )
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// Drives deadlines: join phases, initial delays and session expiry.
    pub fn tick(&self) {
        let now = Instant::now();
        let mut groups = self.lock();
        for group in groups.values_mut() {
            let before = group.pending_member_ids.len();
            group.pending_member_ids.retain(|_, expires| *expires > now);
            if group.pending_member_ids.len() < before {
                group.maybe_complete_join(false);
            }
            let expired: Vec<String> = group
                .members
                .values()
                .filter(|m| {
                    !group.joins.contains_key(&m.id)
                        && !group.syncs.contains_key(&m.id)
                        && now.duration_since(m.last_heartbeat) > m.session_timeout
                })
                .map(|m| m.id.clone())
                .collect();
            for id in expired {
                tracing::info!(member = %id, "session expired");
                group.remove_member(&id, self.initial_delay);
            }
            let force = group.join_deadline.is_some_and(|d| now >= d);
            group.maybe_complete_join(force);
        }
    }
}
