//! The classic consumer-group coordinator (JoinGroup / SyncGroup / Heartbeat / LeaveGroup), as
//! Apache 3.7's default (old) group coordinator runs it, in memory.
//!
//! States: Empty → PreparingRebalance → CompletingRebalance → Stable, back to
//! PreparingRebalance whenever membership changes. A join completes when every known member
//! has rejoined, or at the rebalance timeout (members that did not rejoin are dropped); the
//! first rebalance of an empty group also waits `group.initial.rebalance.delay.ms`. Members that
//! stop heartbeating for their session timeout are removed. A timer task drives deadlines.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::{oneshot, watch};
use tokio::time::Instant;

use crate::broker::State;
use crate::errors;
use crate::lock_order::{Level, OrderedGuard, OrderedMutex};

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
        }
    }
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
    pending_member_ids: HashSet<String>,
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
            pending_member_ids: HashSet::new(),
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
        let all_joined = self.members.keys().all(|id| self.joins.contains_key(id));
        if !all_joined && !force {
            return;
        }
        let absent: Vec<String> = self
            .members
            .keys()
            .filter(|id| !self.joins.contains_key(*id))
            .cloned()
            .collect();
        for id in absent {
            self.members.remove(&id);
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
        let protocol = self.protocol.clone();
        let members: Vec<(String, Option<String>, Bytes)> = self
            .members
            .values()
            .map(|m| {
                let meta = m
                    .protocols
                    .iter()
                    .find(|(n, _)| Some(n) == protocol.as_ref())
                    .map(|(_, b)| b.clone())
                    .unwrap_or_default();
                (m.id.clone(), m.instance_id.clone(), meta)
            })
            .collect();
        for (id, tx) in self.joins.drain() {
            let _ = tx.send(JoinOutcome {
                error: errors::NONE,
                generation: self.generation,
                protocol: protocol.clone(),
                protocol_type: self.protocol_type.clone(),
                leader: leader.clone(),
                members: if id == leader {
                    members.clone()
                } else {
                    Vec::new()
                },
                member_id: id,
            });
        }
        for m in self.members.values_mut() {
            m.last_heartbeat = Instant::now();
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

    fn remove_member(&mut self, id: &str, initial_delay: Duration) {
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
}

/// All groups of this broker.
#[derive(Debug)]
pub struct GroupCoordinator {
    groups: OrderedMutex<HashMap<String, Group>>,
    initial_delay: Duration,
}

impl GroupCoordinator {
    /// A coordinator with no groups.
    pub fn new(initial_delay: Duration) -> Self {
        GroupCoordinator {
            groups: OrderedMutex::new(Level::Groups, HashMap::new()),
            initial_delay,
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
            let mut member_id = req.member_id.clone();
            if member_id.is_empty() {
                member_id = format!("{}-{}", req.client_id, uuid::Uuid::new_v4());
                if req.require_known_member_id {
                    group.pending_member_ids.insert(member_id.clone());
                    return JoinOutcome::error(errors::MEMBER_ID_REQUIRED, &member_id);
                }
            } else if !group.members.contains_key(&member_id)
                && !group.pending_member_ids.remove(&member_id)
            {
                return JoinOutcome::error(errors::UNKNOWN_MEMBER_ID, &member_id);
            }
            if group.members.is_empty() {
                group.protocol_type = Some(req.protocol_type.clone());
            }
            let now = Instant::now();
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
                    last_heartbeat: now,
                },
            );
            let (tx, rx) = oneshot::channel();
            if let Some(old) = group.joins.insert(member_id.clone(), tx) {
                let _ = old.send(JoinOutcome::error(errors::UNKNOWN_MEMBER_ID, &member_id));
            }
            if group.state != GroupState::PreparingRebalance {
                group.prepare_rebalance(self.initial_delay);
            }
            group.maybe_complete_join(false);
            rx
        };
        rx.await
            .unwrap_or_else(|_| JoinOutcome::error(errors::UNKNOWN_MEMBER_ID, &req.member_id))
    }

    /// SyncGroup: resolves once the leader's assignment is in.
    pub async fn sync(
        &self,
        group_id: &str,
        member_id: &str,
        generation: i32,
        assignments: Vec<(String, Bytes)>,
    ) -> SyncOutcome {
        let rx = {
            let mut groups = self.lock();
            let Some(group) = groups.get_mut(group_id) else {
                return (errors::UNKNOWN_MEMBER_ID, Bytes::new());
            };
            if !group.members.contains_key(member_id) {
                return (errors::UNKNOWN_MEMBER_ID, Bytes::new());
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
    pub fn heartbeat(&self, group_id: &str, member_id: &str, generation: i32) -> i16 {
        let mut groups = self.lock();
        let Some(group) = groups.get_mut(group_id) else {
            return errors::UNKNOWN_MEMBER_ID;
        };
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
    pub fn leave(&self, group_id: &str, member_id: &str) -> i16 {
        let mut groups = self.lock();
        let Some(group) = groups.get_mut(group_id) else {
            return errors::UNKNOWN_MEMBER_ID;
        };
        if !group.members.contains_key(member_id) {
            return errors::UNKNOWN_MEMBER_ID;
        }
        group.remove_member(member_id, self.initial_delay);
        errors::NONE
    }

    /// Checks a member for OffsetCommit / TxnOffsetCommit: NONE when the commit may proceed.
    pub fn validate_commit(&self, group_id: &str, member_id: &str, generation: i32) -> i16 {
        let groups = self.lock();
        let Some(group) = groups.get(group_id) else {
            return match generation < 0 {
                true => errors::NONE,
                false => errors::ILLEGAL_GENERATION,
            };
        };
        if generation < 0 && member_id.is_empty() && group.state == GroupState::Empty {
            return errors::NONE;
        }
        if !group.members.contains_key(member_id) {
            return errors::UNKNOWN_MEMBER_ID;
        }
        if generation != group.generation {
            return errors::ILLEGAL_GENERATION;
        }
        match group.state {
            GroupState::PreparingRebalance | GroupState::CompletingRebalance => {
                errors::REBALANCE_IN_PROGRESS
            }
            _ => errors::NONE,
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
    fn tick(&self) {
        let now = Instant::now();
        let mut groups = self.lock();
        for group in groups.values_mut() {
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

/// The timer task: ticks the group coordinator until shutdown.
pub async fn run_timers(state: Arc<State>, mut shutdown: watch::Receiver<bool>) {
    let mut interval = tokio::time::interval(Duration::from_millis(100));
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = interval.tick() => state.groups.tick(),
            _ = shutdown.changed() => return,
        }
    }
}
