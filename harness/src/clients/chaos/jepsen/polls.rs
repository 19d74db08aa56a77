//! What each process polled: a transaction that read its own sends before it committed
//! (precommitted-read), and the order of a process's reads of each partition, counted in
//! records (the dense index), across its polls (poll-skip, nonmonotonic-poll) and inside one
//! (int-poll-skip, int-nonmonotonic-poll). An assign starts a process's reads afresh (it seeks);
//! under a subscription a rebalance may move them, so skips there are allowed, as in Jepsen.
//! Polls of a failed or unknown operation count inside it, never as where the process stands.

use std::collections::BTreeMap;

use super::order::{KeyOrder, Orders};
use super::{anomaly, at, Body, Mop, Op, Status};
use crate::clients::chaos::checker::{Anomaly, Kind};

/// Every finding of the polls in `history`.
pub fn check(history: &[Op], orders: &Orders) -> Vec<Anomaly> {
    let mut found = precommitted(history);
    let mut by_process: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, op) in history.iter().enumerate() {
        by_process.entry(op.process).or_default().push(i);
    }
    for ops in by_process.values() {
        across(history, ops, orders, &mut found);
    }
    for op in history {
        inside(op, orders, &mut found);
    }
    found
}

/// A transaction that polled a record it sent itself.
fn precommitted(history: &[Op]) -> Vec<Anomaly> {
    let mut found = Vec::new();
    for op in history {
        let sent: BTreeMap<(&str, &str), Option<i64>> = op
            .mops()
            .iter()
            .filter_map(|m| match m {
                Mop::Send { key, value, offset } => Some(((key.as_str(), value.as_str()), *offset)),
                Mop::Poll { .. } => None,
            })
            .collect();
        for m in op.mops() {
            let Mop::Poll { key, records } = m else {
                continue;
            };
            for (offset, value) in records {
                if sent.contains_key(&(key.as_str(), value.as_str())) {
                    found.push(anomaly(
                        Kind::PrecommittedRead,
                        false,
                        format!(
                            "{} polled '{value}' at {}, which it had sent itself and not yet committed",
                            op.label,
                            at(key, *offset)
                        ),
                    ));
                }
            }
        }
    }
    found
}

/// A record's place in its key's order, and its offset.
type Place = (usize, i64);

/// Per key, the first and last place of the records `op` polled (in the order returned).
fn span(op: &Op, orders: &Orders) -> BTreeMap<String, (Place, Place)> {
    let mut spans: BTreeMap<String, (Place, Place)> = BTreeMap::new();
    for m in op.mops() {
        let Mop::Poll { key, records } = m else {
            continue;
        };
        for (offset, _) in records {
            let Some(i) = orders.index(key, *offset) else {
                continue;
            };
            spans
                .entry(key.clone())
                .and_modify(|s| s.1 = (i, *offset))
                .or_insert(((i, *offset), (i, *offset)));
        }
    }
    spans
}

/// What lies between two places of `key`, for a finding: `out-1@5, out-1@6`.
fn skipped(key: &str, order: Option<&KeyOrder>, from: usize, to: usize) -> String {
    let offsets = order.map_or_else(Vec::new, |o| o.offsets_between(from, to));
    let shown: Vec<String> = offsets.iter().take(5).map(|&o| at(key, o)).collect();
    match offsets.len() > shown.len() {
        true => format!(
            "{} and {} more",
            shown.join(", "),
            offsets.len() - shown.len()
        ),
        false => shown.join(", "),
    }
}

/// One process's successive polls of each key.
fn across(history: &[Op], ops: &[usize], orders: &Orders, found: &mut Vec<Anomaly>) {
    // key → (last place read, its offset, the op that read it)
    let mut last: BTreeMap<String, (usize, i64, usize)> = BTreeMap::new();
    let mut subscribed = false;
    for &i in ops {
        let op = &history[i];
        match &op.body {
            Body::Assign(_) | Body::Subscribe(_) => {
                last.clear();
                subscribed = matches!(op.body, Body::Subscribe(_));
                continue;
            }
            Body::Txn(_) if op.status != Status::Ok => continue,
            Body::Txn(_) => {}
        }
        for (key, (first, end)) in span(op, orders) {
            if let Some(&(before, before_offset, by)) = last.get(&key) {
                let delta = first.0 as i64 - before as i64;
                let kind = match delta {
                    d if d > 1 => Some(Kind::PollSkip),
                    d if d < 1 => Some(Kind::NonmonotonicPoll),
                    _ => None,
                };
                if let Some(kind) = kind {
                    let what = match kind {
                        Kind::PollSkip => format!(
                            "skipping {}",
                            skipped(&key, orders.keys.get(&key), before, first.0)
                        ),
                        _ => "going back".to_owned(),
                    };
                    let why = match subscribed {
                        true => " (subscribed: a rebalance may move a partition, allowed)",
                        false => "",
                    };
                    found.push(anomaly(
                        kind,
                        subscribed,
                        format!(
                            "process {}: {} read {} after {} read {}, {what}{why}",
                            op.process,
                            op.label,
                            at(&key, first.1),
                            history[by].label,
                            at(&key, before_offset)
                        ),
                    ));
                }
            }
            last.insert(key, (end.0, end.1, i));
        }
    }
}

/// One operation's polls of each key, record after record.
fn inside(op: &Op, orders: &Orders, found: &mut Vec<Anomaly>) {
    let mut last: BTreeMap<&str, (usize, i64)> = BTreeMap::new();
    for m in op.mops() {
        let Mop::Poll { key, records } = m else {
            continue;
        };
        if op.rebalanced.contains(key) {
            continue;
        }
        for (offset, _) in records {
            let Some(i) = orders.index(key, *offset) else {
                continue;
            };
            if let Some(&(before, before_offset)) = last.get(key.as_str()) {
                let kind = match i as i64 - before as i64 {
                    d if d > 1 => Some(Kind::IntPollSkip),
                    d if d < 1 => Some(Kind::IntNonmonotonicPoll),
                    _ => None,
                };
                if let Some(kind) = kind {
                    let what = match kind {
                        Kind::IntPollSkip => {
                            format!("skipping {}", skipped(key, orders.keys.get(key), before, i))
                        }
                        _ => "going back".to_owned(),
                    };
                    found.push(anomaly(
                        kind,
                        false,
                        format!(
                            "{} read {} right after {} in one poll, {what}",
                            op.label,
                            at(key, *offset),
                            at(key, before_offset)
                        ),
                    ));
                }
            }
            last.insert(key, (i, *offset));
        }
    }
}
