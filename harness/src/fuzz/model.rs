//! The generator of `kconform fuzz`: request sequences over one transactional id, one topic
//! of two partitions and one group, drawn from a model of the transaction state machine —
//! mostly a valid flow (init, add, produce, send offsets, end), perturbed with wrong, stale
//! and future epochs and producer ids, unknown and empty ids and groups, every version, odd
//! timeouts, repeated and reordered calls and sleeps past a transaction's timeout. A sequence
//! is written as a scenario file ([`super::script`]), so that what the fuzzer finds replays as
//! it is (`kconform run --scenarios <findings>`).

pub use kconform_wire::Rng;

/// The producer id a request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pid {
    /// The one the last InitProducerId gave.
    Current,
    /// One no broker gave.
    Unknown,
}

/// The epoch a request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Epoch {
    /// The one the last InitProducerId gave.
    Current,
    /// The one the first InitProducerId gave (stale once the producer re-initialised).
    First,
    /// One no broker has given yet.
    Future,
}

/// The transactional id an InitProducerId names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Id {
    /// The sequence's transactional id.
    Txn,
    /// The empty id (the idempotent path).
    Empty,
}

/// One request (or pause) of a sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// InitProducerId.
    Init {
        /// Version sent.
        version: i16,
        /// Which id.
        id: Id,
        /// transaction_timeout_ms.
        timeout_ms: i32,
    },
    /// AddPartitionsToTxn.
    AddPartitions {
        /// Version sent.
        version: i16,
        /// Producer id.
        pid: Pid,
        /// Epoch.
        epoch: Epoch,
        /// Partitions of the topic (0, 1 or both).
        partitions: Vec<i32>,
    },
    /// AddOffsetsToTxn.
    AddOffsets {
        /// Version sent.
        version: i16,
        /// Producer id.
        pid: Pid,
        /// Epoch.
        epoch: Epoch,
        /// The group "" instead of the sequence's.
        empty_group: bool,
    },
    /// TxnOffsetCommit of partition 0.
    TxnOffsetCommit {
        /// Version sent.
        version: i16,
        /// Producer id.
        pid: Pid,
        /// Epoch.
        epoch: Epoch,
        /// The offset committed.
        offset: i64,
    },
    /// EndTxn.
    EndTxn {
        /// Version sent.
        version: i16,
        /// Producer id.
        pid: Pid,
        /// Epoch.
        epoch: Epoch,
        /// Commit (else abort).
        commit: bool,
    },
    /// A transactional Produce of `records` records.
    Produce {
        /// Partition.
        partition: i32,
        /// Producer id.
        pid: Pid,
        /// Epoch.
        epoch: Epoch,
        /// base_sequence.
        sequence: i32,
        /// How many records.
        records: u8,
    },
    /// Fetch of a partition from offset 0.
    Fetch {
        /// Partition.
        partition: i32,
        /// read_committed (else read_uncommitted).
        committed: bool,
    },
    /// ListOffsets latest of a partition.
    ListOffsets {
        /// Partition.
        partition: i32,
        /// read_committed (else read_uncommitted).
        committed: bool,
    },
    /// OffsetFetch of the group's partition 0.
    OffsetFetch,
    /// A pause.
    Sleep {
        /// How long.
        ms: u64,
    },
    /// The shapes of the sequence's transactional id, group and topic (indices into
    /// [`SHAPES`], 0 the plain name): written in the scenario's `unique`, sending nothing. An
    /// action of its own, so that shrinking drops it where the plain names show the finding
    /// too, and keeps it where only the shape does.
    Names {
        /// The transactional id's shape.
        txn: u8,
        /// The group's.
        group: u8,
        /// The topic's (plain, or one of the [`TOPIC_SHAPES`]).
        topic: u8,
    },
}

/// The shapes ids are drawn in, at the edges of what Kafka allows (index 0: the plain name).
/// A shape of a few bytes is left to the scenarios: unique only by chance, it would let two
/// sequences run at once share an id.
pub const SHAPES: &[&str] = &[
    "",
    "bytes = 249",
    "bytes = 255",
    "bytes = 256",
    "bytes = 300",
    "bytes = 4096",
    "bytes = 32767",
    "bytes = 300, fill = \"é\"",
    "bytes = 255, fill = \"日本\"",
    "prefix = \"../a/b\\\\c/\"",
    "prefix = \"\\u0000\"",
    "prefix = \"e\\u0301-\"",
];

/// The shapes a topic name is drawn in: Kafka allows 249 bytes of `[a-zA-Z0-9._-]`.
pub const TOPIC_SHAPES: &[&str] = &["", "bytes = 249"];

/// What the model knows while it draws: whether the producer was initialised, and the next
/// sequence number of each partition for the current epoch.
#[derive(Debug, Default)]
struct State {
    initialised: bool,
    sequence: [i32; 2],
    short_timeout: bool,
}

fn perturbed_pid(rng: &mut Rng) -> Pid {
    match rng.one_in(12) {
        true => Pid::Unknown,
        false => Pid::Current,
    }
}

fn perturbed_epoch(rng: &mut Rng) -> Epoch {
    match rng.below(14) {
        0 => Epoch::First,
        1 => Epoch::Future,
        _ => Epoch::Current,
    }
}

fn version(rng: &mut Rng, highest: i16) -> i16 {
    // The highest version most of the time (what clients send), any other now and then.
    match rng.one_in(3) {
        true => rng.below(highest as u64 + 1) as i16,
        false => highest,
    }
}

/// Draws a sequence of `len` actions (at least one: an InitProducerId comes first): half the
/// time a walk that picks each action at random, half the time whole transactions (add
/// partitions and produce, send offsets, end, read back) with some actions perturbed, some
/// inserted and some swapped.
pub fn sequence(rng: &mut Rng, len: usize) -> Vec<Action> {
    let mut actions = match rng.one_in(2) {
        true => walk(rng, len),
        false => flow(rng, len),
    };
    // Half the sequences name their ids at an edge; the names go first, as the scenario
    // writes them before any step.
    if rng.one_in(2) {
        let mut shape = |n: usize| match rng.one_in(2) {
            true => 0,
            false => 1 + rng.below(n as u64 - 1) as u8,
        };
        let names = Action::Names {
            txn: shape(SHAPES.len()),
            group: shape(SHAPES.len()),
            topic: shape(TOPIC_SHAPES.len()),
        };
        actions.insert(0, names);
    }
    actions
}

fn flow(rng: &mut Rng, len: usize) -> Vec<Action> {
    let len = len.max(1);
    let mut state = State::default();
    let mut out = vec![init(rng, &mut state, false)];
    while out.len() < len {
        let mut txn = Vec::new();
        let partition = rng.below(2) as i32;
        if rng.one_in(2) || !rng.one_in(3) {
            txn.push(Action::AddPartitions {
                version: version(rng, 3),
                pid: Pid::Current,
                epoch: Epoch::Current,
                partitions: vec![partition],
            });
            for _ in 0..=rng.below(2) {
                let records = 1 + rng.below(3) as u8;
                let sequence = state.sequence[partition as usize];
                state.sequence[partition as usize] += i32::from(records);
                txn.push(Action::Produce {
                    partition,
                    pid: Pid::Current,
                    epoch: Epoch::Current,
                    sequence,
                    records,
                });
            }
        }
        if rng.one_in(2) {
            let offsets = [
                Action::AddOffsets {
                    version: version(rng, 3),
                    pid: Pid::Current,
                    epoch: Epoch::Current,
                    empty_group: false,
                },
                Action::TxnOffsetCommit {
                    version: version(rng, 3),
                    pid: Pid::Current,
                    epoch: Epoch::Current,
                    offset: 1 + rng.below(3) as i64,
                },
            ];
            // After the records, as a consume-process-produce loop sends them, or first (the
            // protocol allows either): a short sequence then still stores offsets.
            match rng.one_in(2) {
                true => drop(txn.splice(0..0, offsets)),
                false => txn.extend(offsets),
            }
        }
        txn.push(Action::EndTxn {
            version: version(rng, 3),
            pid: Pid::Current,
            epoch: Epoch::Current,
            commit: !rng.one_in(3),
        });
        txn.push(match rng.below(3) {
            0 => Action::Fetch {
                partition,
                committed: true,
            },
            1 => Action::ListOffsets {
                partition,
                committed: true,
            },
            _ => Action::OffsetFetch,
        });
        for action in txn {
            match rng.below(12) {
                // Perturbed: another epoch or producer id, where the action has one.
                0 => out.push(perturb(rng, action)),
                // Another action first.
                1 => {
                    out.push(next(rng, &mut state));
                    out.push(action);
                }
                _ => out.push(action),
            }
        }
    }
    out.truncate(len);
    // Two neighbours swapped, now and then (never the first init).
    if out.len() > 2 && rng.one_in(5) {
        let i = 1 + rng.below(out.len() as u64 - 2) as usize;
        out.swap(i, i + 1);
    }
    out
}

/// `action` with another epoch or producer id (or itself, when it has neither).
fn perturb(rng: &mut Rng, action: Action) -> Action {
    let (pid, epoch) = match rng.one_in(3) {
        true => (Pid::Unknown, Epoch::Current),
        false => (
            Pid::Current,
            [Epoch::First, Epoch::Future][rng.below(2) as usize],
        ),
    };
    match action {
        Action::AddPartitions {
            version,
            partitions,
            ..
        } => Action::AddPartitions {
            version,
            pid,
            epoch,
            partitions,
        },
        Action::AddOffsets {
            version,
            empty_group,
            ..
        } => Action::AddOffsets {
            version,
            pid,
            epoch,
            empty_group,
        },
        Action::TxnOffsetCommit {
            version, offset, ..
        } => Action::TxnOffsetCommit {
            version,
            pid,
            epoch,
            offset,
        },
        Action::EndTxn {
            version, commit, ..
        } => Action::EndTxn {
            version,
            pid,
            epoch,
            commit,
        },
        Action::Produce {
            partition,
            sequence,
            records,
            ..
        } => Action::Produce {
            partition,
            pid,
            epoch,
            sequence,
            records,
        },
        other => other,
    }
}

fn walk(rng: &mut Rng, len: usize) -> Vec<Action> {
    let mut state = State::default();
    let mut out = Vec::new();
    while out.len() < len.max(1) {
        let action = match state.initialised {
            false => init(rng, &mut state, false),
            true => next(rng, &mut state),
        };
        out.push(action);
    }
    out
}

fn init(rng: &mut Rng, state: &mut State, perturb: bool) -> Action {
    let id = match perturb && rng.one_in(6) {
        true => Id::Empty,
        false => Id::Txn,
    };
    let timeout_ms = match perturb && rng.one_in(4) {
        true => rng.pick(&[0, -1, 900_001, 1000, i32::MAX]),
        false => match rng.one_in(8) {
            true => 1000,
            false => 60_000,
        },
    };
    if id == Id::Txn {
        state.initialised = true;
        state.sequence = [0, 0];
        state.short_timeout = timeout_ms == 1000;
    }
    Action::Init {
        version: version(rng, 4),
        id,
        timeout_ms,
    }
}

fn next(rng: &mut Rng, state: &mut State) -> Action {
    match rng.below(20) {
        0 | 1 => init(rng, state, true),
        2..=4 => Action::AddPartitions {
            version: version(rng, 3),
            pid: perturbed_pid(rng),
            epoch: perturbed_epoch(rng),
            partitions: match rng.below(3) {
                0 => vec![0],
                1 => vec![1],
                _ => vec![0, 1],
            },
        },
        5..=7 => {
            let partition = rng.below(2) as usize;
            let records = 1 + rng.below(3) as u8;
            let valid = state.sequence[partition];
            let sequence = match rng.below(10) {
                0 if valid > 0 => valid - 1,
                1 => valid + 3,
                _ => valid,
            };
            if sequence == valid {
                state.sequence[partition] += i32::from(records);
            }
            Action::Produce {
                partition: partition as i32,
                pid: perturbed_pid(rng),
                epoch: perturbed_epoch(rng),
                sequence,
                records,
            }
        }
        8 | 9 => Action::AddOffsets {
            version: version(rng, 3),
            pid: perturbed_pid(rng),
            epoch: perturbed_epoch(rng),
            empty_group: rng.one_in(10),
        },
        10 | 11 => Action::TxnOffsetCommit {
            version: version(rng, 3),
            pid: perturbed_pid(rng),
            epoch: perturbed_epoch(rng),
            offset: rng.below(4) as i64,
        },
        12..=14 => Action::EndTxn {
            version: version(rng, 3),
            pid: perturbed_pid(rng),
            epoch: perturbed_epoch(rng),
            commit: !rng.one_in(3),
        },
        15 | 16 => Action::Fetch {
            partition: rng.below(2) as i32,
            committed: !rng.one_in(3),
        },
        17 => Action::ListOffsets {
            partition: rng.below(2) as i32,
            committed: rng.one_in(2),
        },
        18 => Action::OffsetFetch,
        _ => Action::Sleep {
            // Past a 1 s transaction timeout and a 500 ms reaper, or just a moment.
            ms: match state.short_timeout || rng.one_in(4) {
                true => 1800,
                false => 100,
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_draws_the_same_sequence_and_it_begins_with_an_init() {
        let a = sequence(&mut Rng::new(7), 12);
        let b = sequence(&mut Rng::new(7), 12);
        assert_eq!(a, b);
        let drawn: Vec<&Action> = a
            .iter()
            .filter(|a| !matches!(a, Action::Names { .. }))
            .collect();
        assert_eq!(drawn.len(), 12);
        assert!(
            matches!(drawn[0], Action::Init { id: Id::Txn, .. }),
            "{a:?}"
        );
        assert_ne!(a, sequence(&mut Rng::new(8), 12));
    }
}
