//! The anomalies Jepsen's Kafka checker (`jepsen.tests.kafka`) names beyond the exactly-once
//! checker's own, over a history of operations as Jepsen records one: each operation a
//! process's transaction of sends (each with the offset its acknowledgement gave) and polls
//! (each with the offsets it returned), or an assign or subscribe; each ended ok, failed, or
//! unknown (Jepsen's `:info`). Bytes in, findings out: no broker, no I/O.
//!
//! The stages, a module each: the [`order`] of each key's log, which offsets the sends and
//! polls saw (inconsistent offsets); the [`polls`] of each process (skips, going back, a
//! transaction reading its own sends); the [`sends`] of each process (landing out of order);
//! what was acknowledged and never read ([`unseen`]); and the dependency [`cycles`] between
//! transactions (G0, G1c). Kinds Kafka allows (a write cycle, a send with others between, a
//! skip under a subscription that rebalances) are reported as allowed, as Jepsen does.

pub mod cycles;
pub mod from_chaos;
pub mod order;
pub mod polls;
pub mod sends;
pub mod unseen;

use serde::Serialize;

use super::checker::{Anomaly, Kind};
use order::Orders;

/// A key: one partition of one topic (`out-1`).
pub type Key = String;

/// How an operation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// It took effect (a transaction committed; polls returned).
    Ok,
    /// It did not (a transaction aborted).
    Fail,
    /// Nobody can tell (Jepsen's `:info`).
    Unknown,
}

/// One step of a transaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mop {
    /// A record sent to `key`, and the offset its acknowledgement gave (`None`: none came).
    Send {
        /// Where it went.
        key: Key,
        /// Its value, unique within the key.
        value: String,
        /// Where it landed, as acknowledged.
        offset: Option<i64>,
    },
    /// What one poll returned of `key`, in the order it returned it.
    Poll {
        /// The partition read.
        key: Key,
        /// (offset, value) pairs.
        records: Vec<(i64, String)>,
    },
}

/// What an operation did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Body {
    /// Sends and polls, in one transaction (or none, for a client without).
    Txn(Vec<Mop>),
    /// The consumer assigned these keys, each at a position it chose (a seek): whatever it
    /// read before says nothing of where it reads next.
    Assign(Vec<Key>),
    /// The consumer subscribed to these keys: a group gives it partitions and takes them
    /// away, so its reads may skip or go back without any fault (allowed, as in Jepsen).
    Subscribe(Vec<Key>),
}

/// One operation of the history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Op {
    /// The process (one producer and one consumer) that did it.
    pub process: u32,
    /// How a finding names it: `w0.t12 (committed)`.
    pub label: String,
    /// When it began, in milliseconds from the start of the workload.
    pub invoked_ms: u64,
    /// When it ended.
    pub completed_ms: u64,
    /// How it ended.
    pub status: Status,
    /// What it did.
    pub body: Body,
    /// Keys a rebalance moved during it (its reads of them are not held to order).
    pub rebalanced: Vec<Key>,
}

impl Op {
    /// Its sends and polls (none for an assign or subscribe).
    pub fn mops(&self) -> &[Mop] {
        match &self.body {
            Body::Txn(mops) => mops,
            _ => &[],
        }
    }
}

/// Where a record sits: `out-1@57`.
pub(crate) fn at(key: &str, offset: i64) -> String {
    format!("{key}@{offset}")
}

/// Every Jepsen kind `history` shows, kinds Kafka does not allow first, each finding with the
/// operations that prove it.
pub fn check(history: &[Op]) -> Vec<Anomaly> {
    let orders = Orders::of(history);
    let mut found = orders.inconsistent(history);
    found.extend(orders.moved(history));
    found.extend(polls::check(history, &orders));
    found.extend(sends::check(history, &orders));
    found.extend(unseen::check(history));
    found.extend(cycles::check(history, &orders));
    found.sort_by_key(|a| (a.allowed, a.kind));
    found
}

/// A finding of `kind` with `detail`.
pub(crate) fn anomaly(kind: Kind, allowed: bool, detail: String) -> Anomaly {
    Anomaly {
        kind,
        detail,
        placement: None,
        allowed,
    }
}

#[cfg(test)]
mod tests;
