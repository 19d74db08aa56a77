//! Records acknowledged and never read (Jepsen's `unseen`): walking the operations that ended
//! ok in the order they ended, each committed send joins its partition's unseen records until
//! a poll returns it. Counted over time, it shows how far readers fell behind under each
//! fault; what is still unseen at the end is a finding (a write lost, or one no reader
//! reached: only the final reads can tell them apart).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::{anomaly, at, Key, Mop, Op, Status};
use crate::clients::chaos::checker::{Anomaly, Kind};

/// The unseen records at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sample {
    /// Milliseconds from the start of the workload.
    pub at_ms: u64,
    /// Per key, how many records were acknowledged and not yet read.
    pub unseen: BTreeMap<Key, usize>,
}

/// Per key, the records unseen at the end: (value, the offset acknowledged, the op that sent it).
pub type Left = BTreeMap<Key, Vec<(String, Option<i64>, usize)>>;

/// What is unseen after each operation that changed it, and the records unseen at the end:
/// per key, (value, offset, the op that sent it).
pub fn walk(history: &[Op]) -> (Vec<Sample>, Left) {
    let mut order: Vec<usize> = (0..history.len())
        .filter(|&i| history[i].status == Status::Ok)
        .collect();
    order.sort_by_key(|&i| history[i].completed_ms);
    let mut seen: BTreeSet<(&str, &str)> = BTreeSet::new();
    let mut unseen: BTreeMap<&str, BTreeMap<&str, (Option<i64>, usize)>> = BTreeMap::new();
    let mut samples: Vec<Sample> = Vec::new();
    for i in order {
        let op = &history[i];
        let mut changed = false;
        for m in op.mops() {
            match m {
                Mop::Poll { key, records } => {
                    for (_, value) in records {
                        seen.insert((key, value));
                        let gone = unseen
                            .get_mut(key.as_str())
                            .and_then(|u| u.remove(value.as_str()));
                        changed |= gone.is_some();
                    }
                }
                Mop::Send { key, value, offset } => {
                    if !seen.contains(&(key.as_str(), value.as_str())) {
                        unseen.entry(key).or_default().insert(value, (*offset, i));
                        changed = true;
                    }
                }
            }
        }
        if changed {
            samples.push(Sample {
                at_ms: op.completed_ms,
                unseen: unseen
                    .iter()
                    .map(|(k, u)| (k.to_string(), u.len()))
                    .collect(),
            });
        }
    }
    let left = unseen
        .into_iter()
        .filter(|(_, u)| !u.is_empty())
        .map(|(k, u)| {
            let records = u
                .into_iter()
                .map(|(v, (o, by))| (v.to_owned(), o, by))
                .collect();
            (k.to_owned(), records)
        })
        .collect();
    (samples, left)
}

/// One finding per key with records unseen at the end: how many, and the first few.
pub fn check(history: &[Op]) -> Vec<Anomaly> {
    let (_, left) = walk(history);
    left.into_iter()
        .map(|(key, records)| {
            let shown: Vec<String> = records
                .iter()
                .take(3)
                .map(|(value, offset, by)| {
                    let place = offset.map_or("no offset acknowledged".into(), |o| at(&key, o));
                    format!("'{value}' ({place}, sent by {})", history[*by].label)
                })
                .collect();
            anomaly(
                Kind::Unseen,
                false,
                format!(
                    "{key}: {} record(s) acknowledged and never read: {}{}",
                    records.len(),
                    shown.join(", "),
                    match records.len() > shown.len() {
                        true => ", ...",
                        false => "",
                    }
                ),
            )
        })
        .collect()
}
