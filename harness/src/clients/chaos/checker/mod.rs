//! The exactly-once checker: what a read_committed reader sees of the output partitions, and
//! the offsets each group committed, against what the clients believe they did (the
//! [`history`](super::history)). Bytes in, findings out: no broker, no I/O, so each kind of
//! anomaly is shown to be found on a history built to have it.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::history::{OutValue, Outcome, Txn};

/// What was read back once the workload stopped and every fault was undone.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Readback {
    /// Each output partition as a read_committed reader saw it from the beginning.
    pub outputs: BTreeMap<i32, PartitionRead>,
    /// Each worker's committed offset of its input partition (`None`: nothing committed).
    pub group_offsets: BTreeMap<u32, Option<i64>>,
    /// The workers whose group's offsets a read_committed client could not read: pending
    /// (UNSTABLE_OFFSET_COMMIT) after every transaction ended.
    pub pending_groups: Vec<u32>,
    /// Where each input partition began for this run (none: 0), on provisioned topics what
    /// earlier runs left before it.
    pub input_base: BTreeMap<i32, i64>,
    /// Each worker's transaction coordinator (node id), as FindCoordinator named it at
    /// read-back; empty where it could not be asked.
    pub coordinators: BTreeMap<u32, i32>,
    /// Each output partition's leader (node id) at read-back; empty where it could not be asked.
    pub leaders: BTreeMap<i32, i32>,
    /// The workers whose group's offsets the reader could not read, and why: their offsets
    /// are left unchecked.
    pub unread_groups: BTreeMap<u32, String>,
}

/// One output partition, read.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PartitionRead {
    /// The records visible, in offset order: (offset, payload).
    #[serde(skip)]
    pub records: Vec<(i64, String)>,
    /// Where the log ends (a read_uncommitted reader's high watermark).
    pub high_watermark: i64,
    /// The last stable offset (a read_committed reader's end) after the settle wait.
    pub last_stable: i64,
    /// Where a read_committed reader stopped short of the last stable offset, if it did.
    pub stalled: Option<Stall>,
}

/// A read_committed reader that stopped short of a partition's last stable offset.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Stall {
    /// The offset it stayed at.
    pub at: i64,
    /// What a read_uncommitted reader found past the last record read (`offset=payload`).
    pub uncommitted_past: String,
}

/// The kinds of anomaly, after the names Jepsen gave them where it gave one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A record of an aborted transaction is visible to read_committed.
    AbortedRead,
    /// A committed transaction has no record visible.
    LostWrite,
    /// The same record, or two records of one input record, visible twice.
    Duplicate,
    /// Part of a transaction visible, part not.
    TornTransaction,
    /// One worker's records out of their order within a partition.
    OutOfOrder,
    /// A group's committed offset is past input records whose output is not visible.
    OffsetsWithoutRecords,
    /// Output visible for input records past the group's committed offset (processed again
    /// when the group resumes from it: a duplicate to come).
    RecordsWithoutOffsets,
    /// The last stable offset stays below the high watermark after every transaction ended.
    StableOffsetPinned,
    /// A group's transactional offsets stay pending after every transaction ended: a
    /// read_committed client's `committed()` never returns.
    OffsetsPending,
    /// A read_committed reader stops short of a partition's last stable offset, and gets
    /// neither records nor the partition's end.
    ReadStalled,
    /// A visible record no transaction of the workload wrote.
    #[serde(rename = "foreign-record")]
    Foreign,
    /// One offset of a partition holds two different values (from sends and polls).
    InconsistentOffsets,
    /// A transaction polled a record it had sent itself, before it committed.
    PrecommittedRead,
    /// A consumer's next poll of a partition jumped over records it had not read.
    PollSkip,
    /// A consumer's next poll of a partition went back, or stayed put.
    NonmonotonicPoll,
    /// Inside one poll, the records of a partition jump over others.
    IntPollSkip,
    /// Inside one poll, the records of a partition go back, or repeat.
    IntNonmonotonicPoll,
    /// A producer's later transaction landed at or before its earlier one in a partition.
    NonmonotonicSend,
    /// Inside one transaction, a later send landed at or before an earlier one.
    IntNonmonotonicSend,
    /// Inside one transaction, two sends to a partition have others' records between them
    /// (Kafka allows it).
    IntSendSkip,
    /// Records acknowledged and never read.
    Unseen,
    /// A cycle of transactions, each writing after the other in some partition (Kafka
    /// allows it: it does not isolate writes).
    #[serde(rename = "G0")]
    G0,
    /// A G0 cycle through a process's own order.
    #[serde(rename = "G0-process")]
    G0Process,
    /// A G0 cycle through the real-time order (one ended before the other began).
    #[serde(rename = "G0-realtime")]
    G0Realtime,
    /// A cycle of transactions with one reading what another wrote: information flowing in
    /// a circle.
    #[serde(rename = "G1c")]
    G1c,
    /// A G1c cycle through a process's own order.
    #[serde(rename = "G1c-process")]
    G1cProcess,
    /// A G1c cycle through the real-time order.
    #[serde(rename = "G1c-realtime")]
    G1cRealtime,
}

impl Kind {
    /// Every kind, in the order a report lists them.
    pub const ALL: [Kind; 27] = [
        Kind::AbortedRead,
        Kind::LostWrite,
        Kind::Duplicate,
        Kind::TornTransaction,
        Kind::OutOfOrder,
        Kind::OffsetsWithoutRecords,
        Kind::RecordsWithoutOffsets,
        Kind::StableOffsetPinned,
        Kind::OffsetsPending,
        Kind::ReadStalled,
        Kind::Foreign,
        Kind::InconsistentOffsets,
        Kind::PrecommittedRead,
        Kind::PollSkip,
        Kind::NonmonotonicPoll,
        Kind::IntPollSkip,
        Kind::IntNonmonotonicPoll,
        Kind::NonmonotonicSend,
        Kind::IntNonmonotonicSend,
        Kind::IntSendSkip,
        Kind::Unseen,
        Kind::G1c,
        Kind::G1cProcess,
        Kind::G1cRealtime,
        Kind::G0,
        Kind::G0Process,
        Kind::G0Realtime,
    ];

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Kind::AbortedRead => "aborted-read",
            Kind::LostWrite => "lost-write",
            Kind::Duplicate => "duplicate",
            Kind::TornTransaction => "torn-transaction",
            Kind::OutOfOrder => "out-of-order",
            Kind::OffsetsWithoutRecords => "offsets-without-records",
            Kind::RecordsWithoutOffsets => "records-without-offsets",
            Kind::StableOffsetPinned => "stable-offset-pinned",
            Kind::OffsetsPending => "offsets-pending",
            Kind::ReadStalled => "read-stalled",
            Kind::Foreign => "foreign-record",
            Kind::InconsistentOffsets => "inconsistent-offsets",
            Kind::PrecommittedRead => "precommitted-read",
            Kind::PollSkip => "poll-skip",
            Kind::NonmonotonicPoll => "nonmonotonic-poll",
            Kind::IntPollSkip => "int-poll-skip",
            Kind::IntNonmonotonicPoll => "int-nonmonotonic-poll",
            Kind::NonmonotonicSend => "nonmonotonic-send",
            Kind::IntNonmonotonicSend => "int-nonmonotonic-send",
            Kind::IntSendSkip => "int-send-skip",
            Kind::Unseen => "unseen",
            Kind::G0 => "G0",
            Kind::G0Process => "G0-process",
            Kind::G0Realtime => "G0-realtime",
            Kind::G1c => "G1c",
            Kind::G1cProcess => "G1c-process",
            Kind::G1cRealtime => "G1c-realtime",
        }
    }
}

/// One anomaly, with what shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Anomaly {
    /// Its kind.
    pub kind: Kind,
    /// What is wrong, naming transactions, records and offsets (`out-1@57` is offset 57 of
    /// output partition 1).
    pub detail: String,
    /// For a transaction's finding (aborted read, lost write, torn), its coordinator and the
    /// leaders of the partitions the finding is about: whether the markers there were the
    /// coordinator's own to write or queued for a peer.
    pub placement: Option<Placed>,
    /// Kafka allows it (a write cycle, a skip under a subscription that rebalances): shown, as
    /// Jepsen shows it, and never a failure.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub allowed: bool,
}

/// Where a transaction was coordinated and the partitions of a finding were led, as the
/// cluster named them at read-back (every fault undone): a marker its coordinator wrote
/// itself, or one it handed to a peer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Placed {
    /// The node id of the transaction's coordinator.
    pub coordinator: i32,
    /// The partitions of the finding, each with its leader's node id.
    pub leaders: BTreeMap<i32, i32>,
}

impl Placed {
    /// How it reads after a finding: `coordinator broker 0; out-1 led by broker 2 (apart)`.
    pub fn words(&self) -> String {
        let led: Vec<String> = self
            .leaders
            .iter()
            .map(|(p, l)| format!("out-{p} led by broker {l}"))
            .collect();
        let apart = self
            .leaders
            .values()
            .filter(|&&l| l != self.coordinator)
            .count();
        let how = match (apart, self.leaders.len()) {
            (0, _) => "the same broker",
            (a, n) if a == n => "apart",
            _ => "some apart",
        };
        format!(
            "coordinator broker {}; {} ({how})",
            self.coordinator,
            led.join(", ")
        )
    }
}

/// What the checker found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Checked {
    /// Output records read back.
    pub records_checked: usize,
    /// Every anomaly.
    pub anomalies: Vec<Anomaly>,
}

impl Checked {
    /// How many of each kind were found (kinds not found left out).
    pub fn counts(&self) -> BTreeMap<Kind, usize> {
        let mut counts = BTreeMap::new();
        for a in &self.anomalies {
            *counts.entry(a.kind).or_default() += 1;
        }
        counts
    }
}

/// Where a visible record sits: `out-1@57`.
fn at(partition: i32, offset: i64) -> String {
    format!("out-{partition}@{offset}")
}

/// Ranges of consecutive offsets, for a finding: `12..15, 20`.
fn ranges(offsets: &[i64]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < offsets.len() {
        let start = offsets[i];
        let mut end = start;
        while i + 1 < offsets.len() && offsets[i + 1] == end + 1 {
            i += 1;
            end = offsets[i];
        }
        parts.push(match start == end {
            true => start.to_string(),
            false => format!("{start}..{}", end + 1),
        });
        i += 1;
    }
    parts.join(", ")
}

/// Checks `read` against `history`.
pub fn check(history: &[Txn], read: &Readback) -> Checked {
    let mut anomalies = Vec::new();
    let (seen, records_checked) = partitions(history, read, &mut anomalies);
    duplicate_records(&seen, &mut anomalies);
    transactions(history, &seen, read, &mut anomalies);
    let by_input = inputs(&seen, &mut anomalies);
    group_offsets(history, read, &by_input, &mut anomalies);
    Checked {
        records_checked,
        anomalies,
    }
}

/// Where each visible record of the workload was seen (`out-P@O`), by its value.
type Seen = BTreeMap<OutValue, Vec<String>>;

/// Each output partition read back, record by record: what no worker wrote (foreign), a
/// worker's records out of their order, a read_committed reader that stalls, a last stable
/// offset pinned below the high watermark. The visible records, and how many were read.
fn partitions(history: &[Txn], read: &Readback, anomalies: &mut Vec<Anomaly>) -> (Seen, usize) {
    let txns: BTreeMap<(u32, u64), &Txn> = history.iter().map(|t| ((t.worker, t.seq), t)).collect();
    // Each visible record of the workload: where it was seen.
    let mut seen: Seen = BTreeMap::new();
    let mut records_checked = 0;
    for (&partition, part) in &read.outputs {
        // (worker) → the last (seq, index) seen in this partition, and where.
        let mut last: BTreeMap<u32, ((u64, u32), i64)> = BTreeMap::new();
        for (offset, payload) in &part.records {
            records_checked += 1;
            let Some(value) = OutValue::decode(payload) else {
                anomalies.push(Anomaly {
                    placement: None,
                    allowed: false,
                    kind: Kind::Foreign,
                    detail: format!(
                        "{} holds '{payload}', which no worker wrote",
                        at(partition, *offset)
                    ),
                });
                continue;
            };
            let here = at(partition, *offset);
            match txns.get(&(value.worker, value.seq)) {
                None => anomalies.push(Anomaly {
                    placement: None,
                    allowed: false,
                    kind: Kind::Foreign,
                    detail: format!(
                        "{here} holds w{}.t{}, a transaction no worker began",
                        value.worker, value.seq
                    ),
                }),
                Some(t) if t.outputs.get(value.index as usize) != Some(&partition) => anomalies
                    .push(Anomaly {
                        placement: None,
                        allowed: false,
                        kind: Kind::Foreign,
                        detail: format!(
                            "{here} holds record {} of {}, which was sent to {}",
                            value.index,
                            t.label(),
                            t.outputs
                                .get(value.index as usize)
                                .map_or("no partition".into(), |p| format!("out-{p}"))
                        ),
                    }),
                Some(_) => {}
            }
            if let Some(&(before, where_before)) = last.get(&value.worker) {
                if (value.seq, value.index) <= before {
                    anomalies.push(Anomaly {
                        placement: None,
                        allowed: false,
                        kind: Kind::OutOfOrder,
                        detail: format!(
                            "{here} holds w{}.t{} record {} after {} held w{}.t{} record {}",
                            value.worker,
                            value.seq,
                            value.index,
                            at(partition, where_before),
                            value.worker,
                            before.0,
                            before.1
                        ),
                    });
                }
            }
            last.insert(value.worker, ((value.seq, value.index), *offset));
            seen.entry(value).or_default().push(here);
        }
        if let Some(stall) = &part.stalled {
            anomalies.push(Anomaly {
                placement: None,
                allowed: false,
                kind: Kind::ReadStalled,
                detail: format!(
                    "out-{partition}: a read_committed reader stays at offset {} below the last stable offset {}, getting nothing more (read_uncommitted past its last record: {}); what lies past it counts as not visible below",
                    stall.at,
                    part.last_stable,
                    match stall.uncommitted_past.is_empty() {
                        true => "nothing",
                        false => &stall.uncommitted_past,
                    }
                ),
            });
        }
        if part.last_stable < part.high_watermark {
            anomalies.push(Anomaly {
                placement: None,
                allowed: false,
                kind: Kind::StableOffsetPinned,
                detail: format!(
                    "out-{partition}: the last stable offset stays at {} below the high watermark {} after every transaction ended",
                    part.last_stable, part.high_watermark
                ),
            });
        }
    }
    (seen, records_checked)
}

/// The same record visible twice.
fn duplicate_records(seen: &Seen, anomalies: &mut Vec<Anomaly>) {
    for (value, places) in seen {
        if places.len() > 1 {
            anomalies.push(Anomaly {
                placement: None,
                allowed: false,
                kind: Kind::Duplicate,
                detail: format!(
                    "record {} of w{}.t{} is visible {} times: {}",
                    value.index,
                    value.worker,
                    value.seq,
                    places.len(),
                    places.join(", ")
                ),
            });
        }
    }
}

/// Per transaction, how much of it is visible against how it ended: an aborted one read, a
/// committed one lost, one torn; each with where it was coordinated and led.
fn transactions(history: &[Txn], seen: &Seen, read: &Readback, anomalies: &mut Vec<Anomaly>) {
    let mut visible: BTreeMap<(u32, u64), BTreeSet<u32>> = BTreeMap::new();
    for value in seen.keys() {
        visible
            .entry((value.worker, value.seq))
            .or_default()
            .insert(value.index);
    }
    let none = BTreeSet::new();
    for t in history {
        let shown = visible.get(&(t.worker, t.seq)).unwrap_or(&none);
        let total = t.outputs.len();
        let kind = match (t.outcome, shown.len()) {
            (Outcome::Aborted, n) if n > 0 => Some(Kind::AbortedRead),
            (Outcome::Committed, 0) if total > 0 => Some(Kind::LostWrite),
            (Outcome::Committed | Outcome::Unknown, n) if n > 0 && n < total => {
                Some(Kind::TornTransaction)
            }
            _ => None,
        };
        let Some(kind) = kind else { continue };
        let places: Vec<&str> = seen
            .iter()
            .filter(|(v, _)| (v.worker, v.seq) == (t.worker, t.seq))
            .flat_map(|(_, p)| p.iter().map(String::as_str))
            .collect();
        // An aborted read is about where its records show; a lost or torn one, where not.
        let about: BTreeSet<i32> = t
            .outputs
            .iter()
            .enumerate()
            .filter(|(i, _)| shown.contains(&(*i as u32)) == (kind == Kind::AbortedRead))
            .map(|(_, &p)| p)
            .collect();
        let placement = read.coordinators.get(&t.worker).map(|&coordinator| Placed {
            coordinator,
            leaders: about
                .iter()
                .filter_map(|p| read.leaders.get(p).map(|&l| (*p, l)))
                .collect(),
        });
        let mut detail = match places.is_empty() {
            true => format!("{}: none of its {total} records is visible", t.label()),
            false => format!(
                "{}: {} of its {total} records visible ({})",
                t.label(),
                shown.len(),
                places.join(", ")
            ),
        };
        if let Some(p) = &placement {
            detail = format!("{detail}; {}", p.words());
        }
        anomalies.push(Anomaly {
            placement,
            allowed: false,
            kind,
            detail,
        });
    }
}

/// Per input record, the transactions whose output of it is visible; an input transformed by
/// more than one, each visible, is a duplicate.
fn inputs(seen: &Seen, anomalies: &mut Vec<Anomaly>) -> BTreeMap<(i32, i64), BTreeSet<(u32, u64)>> {
    let mut by_input: BTreeMap<(i32, i64), BTreeSet<(u32, u64)>> = BTreeMap::new();
    for value in seen.keys() {
        by_input
            .entry((value.input_partition, value.input_offset))
            .or_default()
            .insert((value.worker, value.seq));
    }
    for ((partition, offset), by) in &by_input {
        if by.len() > 1 {
            let names: Vec<String> = by.iter().map(|(w, s)| format!("w{w}.t{s}")).collect();
            anomalies.push(Anomaly {
                placement: None,
                allowed: false,
                kind: Kind::Duplicate,
                detail: format!(
                    "input {partition}@{offset} was transformed by {} transactions, all visible: {}",
                    by.len(),
                    names.join(", ")
                ),
            });
        }
    }
    by_input
}

/// The groups' offsets: pending for good, or against the input records whose output is
/// visible (offsets without records, records without offsets).
fn group_offsets(
    history: &[Txn],
    read: &Readback,
    by_input: &BTreeMap<(i32, i64), BTreeSet<(u32, u64)>>,
    anomalies: &mut Vec<Anomaly>,
) {
    for w in &read.pending_groups {
        anomalies.push(Anomaly {
            placement: None,
            allowed: false,
            kind: Kind::OffsetsPending,
            detail: format!(
                "w{w}'s group answers UNSTABLE_OFFSET_COMMIT after every transaction ended: its committed offset, read uncommitted, is {}",
                read.group_offsets.get(w).copied().flatten().map_or("none".into(), |o| o.to_string())
            ),
        });
    }
    // The group offsets against the input records whose output is visible.
    for (&worker, &committed) in &read.group_offsets {
        let partition = history
            .iter()
            .find(|t| t.worker == worker)
            .map_or(worker as i32, |t| t.input_partition);
        let base = read.input_base.get(&partition).copied().unwrap_or(0);
        let upto = committed.unwrap_or(base);
        let done: BTreeSet<i64> = by_input
            .keys()
            .filter(|(p, _)| *p == partition)
            .map(|(_, o)| *o)
            .collect();
        let missing: Vec<i64> = (base..upto).filter(|o| !done.contains(o)).collect();
        if !missing.is_empty() {
            anomalies.push(Anomaly {
                placement: None,
                allowed: false,
                kind: Kind::OffsetsWithoutRecords,
                detail: format!(
                    "w{worker}'s group committed input {partition} up to {upto}, and no output of input {partition}@{} is visible",
                    ranges(&missing)
                ),
            });
        }
        let beyond: Vec<i64> = done.range(upto..).copied().collect();
        if !beyond.is_empty() {
            anomalies.push(Anomaly {
                placement: None,
                allowed: false,
                kind: Kind::RecordsWithoutOffsets,
                detail: format!(
                    "output of input {partition}@{} is visible, and w{worker}'s group committed input {partition} only up to {upto}",
                    ranges(&beyond)
                ),
            });
        }
    }
}

#[cfg(test)]
mod tests;
