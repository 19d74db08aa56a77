//! Where each process's sends landed, counted in records (the dense index): a later
//! transaction's first send to a partition at or before an earlier one's last
//! (nonmonotonic-send), and inside one transaction a send at or before the one sent before it
//! (int-nonmonotonic-send) or with others' records between them (int-send-skip: Kafka allows
//! it, since transactions do not isolate writes). Only sends whose offset was acknowledged, of
//! transactions that ended ok or unknown, count.

use std::collections::BTreeMap;

use super::order::Orders;
use super::{anomaly, at, Mop, Op, Status};
use crate::clients::chaos::checker::{Anomaly, Kind};

/// A send's place: (dense index, offset, value).
type Place<'a> = (usize, i64, &'a str);

/// Per key, the places of `op`'s acknowledged sends, in the order it sent them.
fn places<'a>(op: &'a Op, orders: &Orders) -> BTreeMap<&'a str, Vec<Place<'a>>> {
    let mut by_key: BTreeMap<&str, Vec<Place>> = BTreeMap::new();
    for m in op.mops() {
        let Mop::Send {
            key,
            value,
            offset: Some(offset),
        } = m
        else {
            continue;
        };
        if let Some(i) = orders.index(key, *offset) {
            by_key.entry(key).or_default().push((i, *offset, value));
        }
    }
    by_key
}

/// Every finding of the sends in `history`.
pub fn check(history: &[Op], orders: &Orders) -> Vec<Anomaly> {
    let mut found = Vec::new();
    // process → key → (the last place sent, by which op)
    let mut last: BTreeMap<u32, BTreeMap<&str, (usize, i64, usize)>> = BTreeMap::new();
    for (n, op) in history.iter().enumerate() {
        if op.status == Status::Fail {
            continue;
        }
        for (key, sends) in places(op, orders) {
            let mine = last.entry(op.process).or_default();
            let (first, end) = (sends[0], sends[sends.len() - 1]);
            if let Some(&(before, before_offset, by)) = mine.get(key) {
                if first.0 <= before {
                    found.push(anomaly(
                        Kind::NonmonotonicSend,
                        false,
                        format!(
                            "process {}: {} sent '{}' to {}, at or before {} where its earlier {} had sent",
                            op.process,
                            op.label,
                            first.2,
                            at(key, first.1),
                            at(key, before_offset),
                            history[by].label
                        ),
                    ));
                }
            }
            mine.insert(key, (end.0, end.1, n));
            for pair in sends.windows(2) {
                let ((a, a_offset, _), (b, b_offset, value)) = (pair[0], pair[1]);
                let (kind, allowed, what) = match b as i64 - a as i64 {
                    d if d < 1 => (Kind::IntNonmonotonicSend, false, "at or before".into()),
                    d if d > 1 => (
                        Kind::IntSendSkip,
                        true,
                        format!("{} other record(s) after", d - 1),
                    ),
                    _ => continue,
                };
                found.push(anomaly(
                    kind,
                    allowed,
                    format!(
                        "{} sent '{value}' to {}, {what} its own previous send at {}",
                        op.label,
                        at(key, b_offset),
                        at(key, a_offset)
                    ),
                ));
            }
        }
    }
    found
}
