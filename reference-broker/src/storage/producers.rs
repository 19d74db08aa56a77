//! What one partition knows of each producer that wrote to it: its epoch, the coordinator epoch
//! of its last marker and its last few batches, derived from the log as it is read or appended
//! to. It decides what Apache's producer state decides of a new batch: a duplicate (answered
//! with the first write's offset), a stale epoch (INVALID_PRODUCER_EPOCH) or a gap in the
//! sequence (OUT_OF_ORDER_SEQUENCE_NUMBER).

use std::collections::VecDeque;

use super::batch::BatchHeader;
use crate::errors;

/// Why a batch is refused: the Kafka error code to answer, and why in words.
pub type Refusal = (i16, String);

/// How many recent batches per producer are remembered for duplicate detection (Apache: 5).
pub const PRODUCER_WINDOW: usize = 5;

/// One remembered batch: what a retry of it is recognised by and answered with.
#[derive(Debug, Clone, Copy)]
struct RecentBatch {
    first_sequence: i32,
    last_sequence: i32,
    base_offset: i64,
    /// Answered as the log-append time of a duplicate, as Apache does.
    max_timestamp: i64,
}

/// A producer's recent batches on this partition.
#[derive(Debug, Clone)]
pub struct ProducerState {
    /// Current epoch.
    pub epoch: i16,
    /// The coordinator epoch of the last transaction marker (-1: none yet). A marker with a
    /// lower one is refused (TRANSACTION_COORDINATOR_FENCED), as Apache's receiver does.
    pub coordinator_epoch: i32,
    /// The last few batches, oldest first.
    recent: VecDeque<RecentBatch>,
    /// Known here only from a marker of its current epoch (a transaction that wrote nothing
    /// here, or an epoch a marker moved it to): its first batch must start at sequence 0,
    /// as Apache's producer state requires.
    awaits_first_sequence: bool,
    /// A batch or a marker of the producer was read or appended here: the partition knows it
    /// (a fence alone makes an entry, not an acquaintance).
    seen: bool,
}

impl Default for ProducerState {
    fn default() -> Self {
        ProducerState {
            epoch: 0,
            coordinator_epoch: -1,
            awaits_first_sequence: false,
            seen: false,
            recent: VecDeque::new(),
        }
    }
}

fn fail<T>(code: i16, message: String) -> Result<T, Refusal> {
    Err((code, message))
}

impl ProducerState {
    /// A marker of the producer at `epoch`, written by coordinator epoch `coordinator_epoch`
    /// (none in a marker that carries none), read or appended. A marker moves the producer to
    /// its epoch (a bumped one starts a new sequence window) and records the coordinator epoch
    /// that wrote it; the first a partition sees of a producer (a fence is not seeing it) leaves
    /// it no sequence, so its first batch starts at 0.
    pub(super) fn on_marker(&mut self, epoch: i16, coordinator_epoch: Option<i32>) {
        let fresh = !self.seen;
        self.seen = true;
        if epoch > self.epoch {
            self.recent.clear();
            self.awaits_first_sequence = true;
            self.epoch = epoch;
        } else if epoch == self.epoch && fresh {
            self.awaits_first_sequence = true;
        }
        // A marker of an older epoch (a completed transaction's marker that a peer applies
        // after a rejoin's fence reached it first: peer markers are asynchronous) is appended
        // and changes nothing here: the fence stands, as the spec's rejoin fences the old
        // session on every partition. Lowering the epoch again let the zombie's idempotent
        // batches in, or not, by which of the two a peer's pass applied first.
        if let Some(epoch) = coordinator_epoch {
            self.coordinator_epoch = self.coordinator_epoch.max(epoch);
        }
    }

    /// A data batch of the producer, read or appended: its epoch, and its sequences in the
    /// window of recent batches.
    pub(super) fn on_batch(&mut self, h: &BatchHeader) {
        self.seen = true;
        if h.producer_epoch != self.epoch {
            self.recent.clear();
        }
        self.epoch = h.producer_epoch;
        self.awaits_first_sequence = false;
        if h.base_sequence >= 0 {
            if self.recent.len() == PRODUCER_WINDOW {
                self.recent.pop_front();
            }
            self.recent.push_back(RecentBatch {
                first_sequence: h.base_sequence,
                last_sequence: h.last_sequence(),
                base_offset: h.base_offset,
                max_timestamp: h.max_timestamp,
            });
        }
    }

    /// Fences the producer below `epoch`: later batches with an older epoch are refused and
    /// the duplicate window is cleared. Where the partition knew the producer (a batch or a
    /// marker of it, not an earlier fence), Apache's partition, which a rejoin does not reach,
    /// meets the new epoch with the producer's first batch of it, which must start at sequence
    /// 0 (45 otherwise); a producer it never knew may start anywhere, there as here, however
    /// many rejoins fenced it.
    pub(super) fn fence(&mut self, epoch: i16) {
        if epoch > self.epoch {
            self.epoch = epoch;
            self.recent.clear();
            self.awaits_first_sequence = self.seen;
        }
    }

    /// Whether a new data batch of the producer may be appended: `Ok(None)` if so,
    /// `Ok(Some((offset, max timestamp)))` for a duplicate of a batch already in the log, and
    /// the refusal otherwise.
    pub(super) fn check(&self, h: &BatchHeader) -> Result<Option<(i64, i64)>, Refusal> {
        if h.producer_epoch < self.epoch {
            return fail(
                errors::INVALID_PRODUCER_EPOCH,
                format!(
                    "producer {} epoch {} is older than {}",
                    h.producer_id, h.producer_epoch, self.epoch
                ),
            );
        }
        if h.base_sequence < 0 {
            return Ok(None);
        }
        if h.producer_epoch > self.epoch {
            return match h.base_sequence {
                0 => Ok(None),
                s => fail(
                    errors::OUT_OF_ORDER_SEQUENCE_NUMBER,
                    format!(
                        "new epoch {} must start at sequence 0, got {s}",
                        h.producer_epoch
                    ),
                ),
            };
        }
        let (first, last) = (h.base_sequence, h.last_sequence());
        if let Some(b) = self
            .recent
            .iter()
            .find(|b| b.first_sequence == first && b.last_sequence == last)
        {
            return Ok(Some((b.base_offset, b.max_timestamp)));
        }
        match self.recent.back() {
            None if !self.awaits_first_sequence => Ok(None),
            // Known only from a marker (a transaction that wrote nothing here): its epoch is
            // set and no sequence yet, so the first batch starts at 0, as Apache checks it.
            None => match first {
                0 => Ok(None),
                _ => fail(
                    errors::OUT_OF_ORDER_SEQUENCE_NUMBER,
                    format!(
                        "producer {} has no sequence here yet: its first batch starts at 0, not {first}",
                        h.producer_id
                    ),
                ),
            },
            Some(&RecentBatch {
                last_sequence: prev_last,
                ..
            }) => {
                let expected = if prev_last == i32::MAX {
                    0
                } else {
                    prev_last + 1
                };
                match first == expected {
                    true => Ok(None),
                    false => fail(
                        errors::OUT_OF_ORDER_SEQUENCE_NUMBER,
                        format!(
                            "producer {} sequence {first} after {prev_last}",
                            h.producer_id
                        ),
                    ),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(epoch: i16, base_sequence: i32) -> BatchHeader {
        BatchHeader {
            base_offset: 0,
            size: 0,
            attributes: 0,
            last_offset_delta: 0,
            max_timestamp: 0,
            producer_id: 7,
            producer_epoch: epoch,
            base_sequence,
            record_count: 1,
            control_type: None,
            coordinator_epoch: None,
        }
    }

    /// A rejoin fences a producer the partition knew: the first batch of the new epoch must
    /// start at 0, as Apache's partition (which meets the new epoch only with that batch)
    /// requires. One it never knew may start anywhere, there as here, however often fenced.
    /// (Both found by the long fuzz; scenarios records-produce-first-sequence-after-rejoin and
    /// records-produce-any-sequence-after-rejoins-unknown-here.)
    #[test]
    fn a_fenced_producer_starts_its_new_epoch_at_sequence_zero_where_it_was_known() {
        let mut known = ProducerState::default();
        known.on_batch(&batch(0, 0));
        known.fence(1);
        let (code, why) = known.check(&batch(1, 3)).unwrap_err();
        assert_eq!(code, errors::OUT_OF_ORDER_SEQUENCE_NUMBER, "{why}");
        assert_eq!(known.check(&batch(1, 0)), Ok(None));
        assert_eq!(
            known.check(&batch(0, 1)).unwrap_err().0,
            errors::INVALID_PRODUCER_EPOCH
        );
        // Never known here, fenced by two rejoins: still no acquaintance (found by the long
        // fuzz, seed 2: three InitProducerIds, then sequence 3, which Apache takes).
        let mut never = ProducerState::default();
        never.fence(1);
        never.fence(2);
        assert_eq!(never.check(&batch(2, 3)), Ok(None));
        // Known from a marker alone, then fenced: sequence 0 first.
        let mut marked = ProducerState::default();
        marked.on_marker(0, None);
        marked.fence(1);
        assert_eq!(
            marked.check(&batch(1, 3)).unwrap_err().0,
            errors::OUT_OF_ORDER_SEQUENCE_NUMBER
        );
    }

    /// A rejoin's fence reaches a partition before the producer wrote there; then the
    /// transaction that added the partition and wrote nothing ends, and its marker, of the
    /// fenced epoch, is the first the partition sees of the producer: as on Apache, its first
    /// batch must start at sequence 0 (the fence's entry had passed for an acquaintance, and
    /// the marker for nothing new).
    #[test]
    fn a_marker_after_a_fence_alone_is_the_first_the_partition_sees() {
        let mut p = ProducerState::default();
        p.fence(1);
        p.on_marker(1, None);
        assert_eq!(
            p.check(&batch(1, 3)).unwrap_err().0,
            errors::OUT_OF_ORDER_SEQUENCE_NUMBER
        );
        assert_eq!(p.check(&batch(1, 0)), Ok(None));
    }
}
