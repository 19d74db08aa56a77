//! One consumer group's state machine: its members, generation and protocol, the joins and
//! syncs waiting on a rebalance, and the steps between its states. The coordinator
//! ([`super::GroupCoordinator`]) holds every group and drives these under its lock.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::{GroupState, JoinOutcome, Member, SyncOutcome};
use crate::errors;

/// One group, as the coordinator keeps it.
#[derive(Debug)]
pub(super) struct Group {
    pub(super) state: GroupState,
    pub(super) generation: i32,
    pub(super) protocol_type: Option<String>,
    pub(super) protocol: Option<String>,
    pub(super) leader: Option<String>,
    pub(super) members: BTreeMap<String, Member>,
    /// Member ids handed out with MEMBER_ID_REQUIRED, until they join or their session
    /// timeout passes.
    pub(super) pending_member_ids: HashMap<String, Instant>,
    /// Static members: instance id → current member id.
    pub(super) static_members: HashMap<String, String>,
    pub(super) joins: HashMap<String, oneshot::Sender<JoinOutcome>>,
    pub(super) syncs: HashMap<String, oneshot::Sender<SyncOutcome>>,
    /// When the current join phase ends at the latest.
    pub(super) join_deadline: Option<Instant>,
    /// Not before this instant (the initial rebalance delay).
    pub(super) join_not_before: Option<Instant>,
}

impl Group {
    pub(super) fn new() -> Group {
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

    pub(super) fn max_rebalance_timeout(&self) -> Duration {
        self.members
            .values()
            .map(|m| m.rebalance_timeout)
            .max()
            .unwrap_or(Duration::ZERO)
    }

    pub(super) fn prepare_rebalance(&mut self, initial_delay: Duration) {
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
    pub(super) fn maybe_complete_join(&mut self, force: bool) {
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
    pub(super) fn current_generation(&self, member_id: &str, with_members: bool) -> JoinOutcome {
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
    pub(super) fn select_protocol(&self) -> Option<String> {
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
    pub(super) fn fenced(&self, instance_id: Option<&str>, member_id: &str) -> bool {
        instance_id
            .and_then(|i| self.static_members.get(i))
            .is_some_and(|current| current != member_id)
    }

    /// Apache's `validateCurrentMember`: FENCED_INSTANCE_ID, UNKNOWN_MEMBER_ID or NONE.
    pub(super) fn validate_member(&self, member_id: &str, instance_id: Option<&str>) -> i16 {
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
    pub(super) fn replace_static(&mut self, instance_id: &str, old_id: &str, new_id: &str) {
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

    pub(super) fn remove_member(&mut self, id: &str, initial_delay: Duration) {
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
