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

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::errors;
use crate::lock_order::{Level, OrderedGuard, OrderedMutex};
use crate::storage::offsets::OffsetStore;

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

#[derive(Debug)]
struct Group {
    state: GroupState,
    generation: i32,
    protocol_type: Option<String>,
    protocol: Option<String>,
    leader: Option<String>,
    members: BTreeMap<String, Member>,
    /// Member ids handed out with MEMBER_ID_REQUIRED, until they join or their session
    /// timeout passes.
    pending_member_ids: HashMap<String, Instant>,
    /// Static members: instance id → current member id.
    static_members: HashMap<String, String>,
    joins: HashMap<String, oneshot::Sender<JoinOutcome>>,
    syncs: HashMap<String, oneshot::Sender<SyncOutcome>>,
    /// When the current join phase ends at the latest.
    join_deadline: Option<Instant>,
    /// Not before this instant (the initial rebalance delay).
    join_not_before: Option<Instant>,
}

impl Group {
    fn new() -> Group {
        Group {
            state: GroupState::Empty,
            generation: 0,
            protocol_type: None,
            protocol: None,
            leader: None,
            members: BTreeMap::new(),
            pending_member_ids: HashMap::new(),
            static_members: HashMap::new(),
            joins: HashMap::new(),
            syncs: HashMap::new(),
            join_deadline: None,
            join_not_before: None,
        }
    }

    fn max_rebalance_timeout(&self) -> Duration {
        self.members
            .values()
            .map(|m| m.rebalance_timeout)
            .max()
            .unwrap_or(Duration::ZERO)
    }

    fn prepare_rebalance(&mut self, initial_delay: Duration) {
        let now = Instant::now();
        if self.state == GroupState::CompletingRebalance {
            for (_, tx) in self.syncs.drain() {
                let _ = tx.send((errors::REBALANCE_IN_PROGRESS, Bytes::new()));
            }
        }
        if self.state == GroupState::Empty {
            self.join_not_before = Some(now + initial_delay);
        }
        self.state = GroupState::PreparingRebalance;
        self.join_deadline = Some(now + self.max_rebalance_timeout().max(initial_delay));
    }

    /// Completes the join phase if it can; `force` at the deadline drops absent members.
    fn maybe_complete_join(&mut self, force: bool) {
        if self.state != GroupState::PreparingRebalance {
            return;
        }
        let now = Instant::now();
        if self.join_not_before.is_some_and(|t| now < t) {
            return;
        }
        let all_joined = self.members.keys().all(|id| self.joins.contains_key(id))
            && self.pending_member_ids.is_empty();
        if !all_joined && !force {
            return;
        }
        // Apache drops the dynamic members that did not rejoin in time; static ones stay.
        let absent: Vec<String> = self
            .members
            .values()
            .filter(|m| !self.joins.contains_key(&m.id) && m.instance_id.is_none())
            .map(|m| m.id.clone())
            .collect();
        for id in absent {
            self.members.remove(&id);
        }
        if self.members.is_empty() {
            self.static_members.clear();
        }
        self.join_deadline = None;
        self.join_not_before = None;
        self.generation += 1;
        if self.members.is_empty() {
            self.state = GroupState::Empty;
            self.protocol = None;
            self.leader = None;
            return;
        }
        if !self
            .leader
            .as_ref()
            .is_some_and(|l| self.members.contains_key(l))
        {
            self.leader = self.members.keys().next().cloned();
        }
        self.protocol = self.select_protocol();
        self.state = GroupState::CompletingRebalance;
        let leader = self.leader.clone().unwrap_or_default();
        let joins: Vec<_> = self.joins.drain().collect();
        for (id, tx) in joins {
            let is_leader = id == leader;
            let _ = tx.send(self.current_generation(&id, is_leader));
        }
        for m in self.members.values_mut() {
            m.last_heartbeat = Instant::now();
        }
    }

    /// The current generation as a join answer for `member_id`: every member's metadata for the
    /// chosen protocol goes to the leader only.
    fn current_generation(&self, member_id: &str, with_members: bool) -> JoinOutcome {
        let members = match with_members {
            false => Vec::new(),
            true => self
                .members
                .values()
                .map(|m| {
                    let meta = m
                        .protocols
                        .iter()
                        .find(|(n, _)| Some(n) == self.protocol.as_ref())
                        .map(|(_, b)| b.clone())
                        .unwrap_or_default();
                    (m.id.clone(), m.instance_id.clone(), meta)
                })
                .collect(),
        };
        JoinOutcome {
            error: errors::NONE,
            generation: self.generation,
            protocol: self.protocol.clone(),
            protocol_type: self.protocol_type.clone(),
            leader: self.leader.clone().unwrap_or_default(),
            member_id: member_id.to_owned(),
            members,
            skip_assignment: false,
        }
    }

    /// The protocol every member supports that gets the most votes (each member votes for its
    /// first supported one), as Apache selects it.
    fn select_protocol(&self) -> Option<String> {
        let first = self.members.values().next()?;
        let candidates: Vec<&String> = first
            .protocols
            .iter()
            .map(|(n, _)| n)
            .filter(|n| {
                self.members
                    .values()
                    .all(|m| m.protocols.iter().any(|(p, _)| p == *n))
            })
            .collect();
        let mut votes: HashMap<&String, usize> = HashMap::new();
        for m in self.members.values() {
            if let Some((n, _)) = m.protocols.iter().find(|(p, _)| candidates.contains(&p)) {
                *votes.entry(n).or_default() += 1;
            }
        }
        candidates
            .into_iter()
            .max_by_key(|n| votes.get(n).copied().unwrap_or(0))
            .cloned()
    }

    /// The member id an instance id currently maps to differs from `member_id`: the caller is
    /// an older incarnation of a static member (Apache's `isStaticMemberFenced`).
    fn fenced(&self, instance_id: Option<&str>, member_id: &str) -> bool {
        instance_id
            .and_then(|i| self.static_members.get(i))
            .is_some_and(|current| current != member_id)
    }

    /// Apache's `validateCurrentMember`: FENCED_INSTANCE_ID, UNKNOWN_MEMBER_ID or NONE.
    fn validate_member(&self, member_id: &str, instance_id: Option<&str>) -> i16 {
        if self.fenced(instance_id, member_id) {
            errors::FENCED_INSTANCE_ID
        } else if !self.members.contains_key(member_id) {
            errors::UNKNOWN_MEMBER_ID
        } else {
            errors::NONE
        }
    }

    /// A static member rejoining under a new member id: the old id's pending join and sync
    /// are answered FENCED_INSTANCE_ID and the member (with its assignment) moves to `new_id`.
    fn replace_static(&mut self, instance_id: &str, old_id: &str, new_id: &str) {
        if let Some(tx) = self.joins.remove(old_id) {
            let _ = tx.send(JoinOutcome::error(errors::FENCED_INSTANCE_ID, old_id));
        }
        if let Some(tx) = self.syncs.remove(old_id) {
            let _ = tx.send((errors::FENCED_INSTANCE_ID, Bytes::new()));
        }
        if let Some(mut m) = self.members.remove(old_id) {
            m.id = new_id.to_owned();
            self.members.insert(new_id.to_owned(), m);
        }
        if self.leader.as_deref() == Some(old_id) {
            self.leader = Some(new_id.to_owned());
        }
        self.static_members
            .insert(instance_id.to_owned(), new_id.to_owned());
    }

    fn remove_member(&mut self, id: &str, initial_delay: Duration) {
        if let Some(instance) = self.members.get(id).and_then(|m| m.instance_id.clone()) {
            if self.static_members.get(&instance).map(String::as_str) == Some(id) {
                self.static_members.remove(&instance);
            }
        }
        self.members.remove(id);
        self.joins.remove(id);
        self.syncs.remove(id);
        match self.state {
            GroupState::Stable | GroupState::CompletingRebalance => {
                self.prepare_rebalance(initial_delay)
            }
            _ => {}
        }
        self.maybe_complete_join(false);
    }
}

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
