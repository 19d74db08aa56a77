//! Each key's log as the history saw it (Jepsen's version order): which value each offset
//! holds, from the acknowledged sends of transactions that must have committed and from every
//! poll, whatever its transaction's outcome (a poll should return only what is there). Offsets
//! no record was seen at (transaction markers, mostly) are dropped, so the order counts records:
//! the dense index. One offset with two values is an inconsistent offset; one value at two
//! offsets, Jepsen's duplicate. An offset only an acknowledgement names, for a value a poll
//! found elsewhere, is left out of the order: the poll shows where the record is, and the
//! acknowledgement's offset may be a marker's, which no reader skips.

use std::collections::{BTreeMap, BTreeSet};

use super::{anomaly, at, Key, Mop, Op, Status};
use crate::clients::chaos::checker::{Anomaly, Kind};

/// Which operations (indices into the history) showed a value at an offset.
#[derive(Debug, Default)]
pub struct Shown {
    /// Those whose send of it was acknowledged there.
    pub sent: BTreeSet<usize>,
    /// Those that polled it there.
    pub polled: BTreeSet<usize>,
}

/// One key's log: per offset, each value seen there and the operations that showed it.
#[derive(Debug, Default)]
pub struct KeyOrder {
    /// offset → value → who showed it there.
    pub by_offset: BTreeMap<i64, BTreeMap<String, Shown>>,
    /// offset → its place among the offsets that hold a record.
    dense: BTreeMap<i64, usize>,
}

impl KeyOrder {
    /// The place of `offset` among the offsets that hold a record (`None`: nothing seen there).
    pub fn index(&self, offset: i64) -> Option<usize> {
        self.dense.get(&offset).copied()
    }

    /// The offsets between two places, exclusive: what a read from one to the other skipped.
    pub fn offsets_between(&self, from: usize, to: usize) -> Vec<i64> {
        self.dense
            .iter()
            .filter(|(_, &i)| i > from && i < to)
            .map(|(&o, _)| o)
            .collect()
    }
}

impl KeyOrder {
    /// Whether a poll returned a record at `offset`.
    fn polled_at(&self, offset: i64) -> bool {
        self.by_offset
            .get(&offset)
            .is_some_and(|values| values.values().any(|s| !s.polled.is_empty()))
    }

    /// The offsets only an acknowledgement names, each of whose values a poll found at
    /// another offset.
    fn acknowledged_only(&self) -> BTreeSet<i64> {
        let mut polled_at: BTreeMap<&str, BTreeSet<i64>> = BTreeMap::new();
        for (&o, values) in &self.by_offset {
            for (v, shown) in values {
                if !shown.polled.is_empty() {
                    polled_at.entry(v).or_default().insert(o);
                }
            }
        }
        self.by_offset
            .iter()
            .filter(|(&o, values)| {
                !self.polled_at(o)
                    && values
                        .keys()
                        .all(|v| polled_at.get(v.as_str()).is_some_and(|at| !at.contains(&o)))
            })
            .map(|(&o, _)| o)
            .collect()
    }

    /// Each value acknowledged at an offset no poll returned it at, and read elsewhere:
    /// (value, acknowledged at, read at).
    fn moved(&self) -> Vec<(&str, i64, BTreeSet<i64>)> {
        let mut at: BTreeMap<&str, BTreeSet<i64>> = BTreeMap::new();
        for (&o, values) in &self.by_offset {
            for v in values.keys() {
                at.entry(v).or_default().insert(o);
            }
        }
        let mut moved = Vec::new();
        for (v, offsets) in at.into_iter().filter(|(_, o)| o.len() > 1) {
            let read: BTreeSet<i64> = offsets
                .iter()
                .copied()
                .filter(|&o| self.polled_at(o))
                .collect();
            for &o in offsets.iter().filter(|&&o| !self.polled_at(o)) {
                if !read.is_empty() {
                    moved.push((v, o, read.clone()));
                }
            }
        }
        moved
    }
}

/// Every key's log.
#[derive(Debug, Default)]
pub struct Orders {
    /// By key.
    pub keys: BTreeMap<Key, KeyOrder>,
    /// The operations whose sends are known to be in the log ([`must_have_committed`]).
    pub committed: BTreeSet<usize>,
}

/// Whether `op`'s sends are known to be in the log: it committed, or its outcome is unknown and
/// a poll saw one of its sends (a transaction lands whole or not at all).
fn must_have_committed(op: &Op, polled: &BTreeSet<(&str, &str)>) -> bool {
    match op.status {
        Status::Ok => true,
        Status::Fail => false,
        Status::Unknown => op.mops().iter().any(|m| match m {
            Mop::Send { key, value, .. } => polled.contains(&(key.as_str(), value.as_str())),
            Mop::Poll { .. } => false,
        }),
    }
}

/// Every (key, value) some poll returned.
fn polled(history: &[Op]) -> BTreeSet<(&str, &str)> {
    let mut seen = BTreeSet::new();
    for op in history {
        for m in op.mops() {
            if let Mop::Poll { key, records } = m {
                seen.extend(records.iter().map(|(_, v)| (key.as_str(), v.as_str())));
            }
        }
    }
    seen
}

impl Orders {
    /// The logs `history` shows.
    pub fn of(history: &[Op]) -> Orders {
        let polled = polled(history);
        let mut orders = Orders::default();
        for (i, op) in history.iter().enumerate() {
            let committed = must_have_committed(op, &polled);
            if committed {
                orders.committed.insert(i);
            }
            for m in op.mops() {
                match m {
                    Mop::Send {
                        key,
                        value,
                        offset: Some(offset),
                    } if committed => {
                        orders.shown(key, *offset, value).sent.insert(i);
                    }
                    Mop::Poll { key, records } => {
                        for (offset, value) in records {
                            orders.shown(key, *offset, value).polled.insert(i);
                        }
                    }
                    Mop::Send { .. } => {}
                }
            }
        }
        for order in orders.keys.values_mut() {
            let acknowledged_only = order.acknowledged_only();
            order.dense = order
                .by_offset
                .keys()
                .filter(|o| !acknowledged_only.contains(o))
                .enumerate()
                .map(|(i, &o)| (o, i))
                .collect();
        }
        orders
    }

    /// Who showed `value` at `offset` of `key` so far.
    fn shown(&mut self, key: &str, offset: i64, value: &str) -> &mut Shown {
        self.keys
            .entry(key.to_owned())
            .or_default()
            .by_offset
            .entry(offset)
            .or_default()
            .entry(value.to_owned())
            .or_default()
    }

    /// The place of `offset` in `key`'s log.
    pub fn index(&self, key: &str, offset: i64) -> Option<usize> {
        self.keys.get(key)?.index(offset)
    }

    /// Each offset that holds two values or more: `out-1@57 holds 2 values: '…' (sent by w0.t3),
    /// '…' (polled by reader)`.
    pub fn inconsistent(&self, history: &[Op]) -> Vec<Anomaly> {
        let mut found = Vec::new();
        for (key, order) in &self.keys {
            for (offset, values) in order.by_offset.iter().filter(|(_, v)| v.len() > 1) {
                let each: Vec<String> = values
                    .iter()
                    .map(|(value, shown)| {
                        let sent = shown.sent.iter().map(|&i| ("sent", i));
                        let polled = shown.polled.iter().map(|&i| ("polled", i));
                        let by: Vec<String> = sent
                            .chain(polled)
                            .map(|(how, i)| format!("{how} by {}", history[i].label))
                            .collect();
                        format!("'{value}' ({})", by.join(", "))
                    })
                    .collect();
                found.push(anomaly(
                    Kind::InconsistentOffsets,
                    false,
                    format!(
                        "{} holds {} values: {}",
                        at(key, *offset),
                        values.len(),
                        each.join("; ")
                    ),
                ));
            }
        }
        found
    }

    /// Each value acknowledged at one offset and read at another (Jepsen's duplicate: one
    /// value at two offsets; the read-back's own duplicates are the exactly-once checker's).
    pub fn moved(&self, history: &[Op]) -> Vec<Anomaly> {
        let mut found = Vec::new();
        for (key, order) in &self.keys {
            for (value, acknowledged, read) in order.moved() {
                let senders: Vec<&str> = order.by_offset[&acknowledged][value]
                    .sent
                    .iter()
                    .map(|&i| history[i].label.as_str())
                    .collect();
                let read: Vec<String> = read.iter().map(|&o| at(key, o)).collect();
                found.push(anomaly(
                    Kind::Duplicate,
                    false,
                    format!(
                        "'{value}' sits at two offsets: acknowledged to {} at {}, read at {}",
                        senders.join(", "),
                        at(key, acknowledged),
                        read.join(", ")
                    ),
                ));
            }
        }
        found
    }
}
