//! What the chaos workload's clients believe happened (the history), and what it wrote: each
//! output record names the transaction and the input record it came from, so the checker can
//! tell, from the records alone, which transaction a visible record belongs to.

use serde::Serialize;

/// How a transaction ended, as its producer saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// `commit_transaction` returned ok: every record must be visible, once.
    Committed,
    /// `abort_transaction` returned ok (asked for, or after an abortable error): no record
    /// may be visible.
    Aborted,
    /// Neither could be told (a commit or abort that timed out, a fatal error, the producer
    /// dropped): all of its records visible, or none.
    Unknown,
}

impl Outcome {
    /// How it reads in a finding.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Committed => "committed",
            Outcome::Aborted => "aborted",
            Outcome::Unknown => "outcome unknown",
        }
    }
}

/// One transaction of one worker: the input records it consumed (a range of one input
/// partition) and, for each, the output partition its transformed record went to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Txn {
    /// The worker (it owns input partition `worker` and its own group).
    pub worker: u32,
    /// Its number among the worker's transactions, from 0.
    pub seq: u64,
    /// How it ended.
    pub outcome: Outcome,
    /// The input partition.
    pub input_partition: i32,
    /// The first input offset consumed.
    pub input_from: i64,
    /// For record `i` (input offset `input_from + i`), the output partition it went to.
    pub outputs: Vec<i32>,
    /// Milliseconds since the workload began, when it ended.
    pub ended_ms: u64,
    /// When it began (0 where the client does not say).
    pub began_ms: u64,
    /// For record `i`, the offset its delivery report gave (`None`: none came, or the client
    /// does not report them).
    pub landed: Vec<Option<i64>>,
}

impl Txn {
    /// How it reads in a finding: `w0.t12 (committed, input 0@340..346)`.
    pub fn label(&self) -> String {
        format!(
            "w{}.t{} ({}, input {}@{}..{})",
            self.worker,
            self.seq,
            self.outcome.name(),
            self.input_partition,
            self.input_from,
            self.input_from + self.outputs.len() as i64
        )
    }
}

/// What a worker's consumer did, in order: where it was told to read from, and what each
/// stretch of polls returned, every record as it came (those the worker then passed over
/// too), so that a skip or a step back is seen as the client saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Read {
    /// The consumer was assigned its input partition at `offset`.
    Seek {
        /// When, in milliseconds since the workload began.
        at_ms: u64,
        /// Where it reads from next.
        offset: i64,
    },
    /// Polls from one seek or transaction to the next.
    Polled {
        /// When the first poll began.
        from_ms: u64,
        /// When the last one returned.
        to_ms: u64,
        /// (offset, payload), in the order returned.
        records: Vec<(i64, String)>,
    },
}

/// The transactions that ended in one second of the workload, by how they ended: the
/// timeline a report draws beside the faults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Second {
    /// Committed.
    pub committed: u32,
    /// Aborted (on purpose or after an error).
    pub aborted: u32,
    /// Outcome unknown.
    pub unknown: u32,
    /// The median time from begin to end of the transactions that ended in it, in ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p50_ms: Option<u64>,
    /// The 99th percentile of the same.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99_ms: Option<u64>,
}

/// The `q`-quantile of sorted `values` (nearest rank).
fn quantile(sorted: &[u64], q: f64) -> Option<u64> {
    let last = sorted.len().checked_sub(1)?;
    sorted.get(((last as f64) * q).round() as usize).copied()
}

/// Per second from the workload's start, the transactions that ended in it (a transaction
/// still open when its worker was given up has no end and is not counted), and how long they
/// took (those whose client said when they began).
pub fn timeline(history: &[Txn]) -> Vec<Second> {
    let mut seconds: Vec<Second> = Vec::new();
    let mut took: Vec<Vec<u64>> = Vec::new();
    for t in history.iter().filter(|t| t.ended_ms > 0) {
        let at = (t.ended_ms / 1000) as usize;
        if seconds.len() <= at {
            seconds.resize(at + 1, Second::default());
            took.resize(at + 1, Vec::new());
        }
        if t.began_ms > 0 && t.began_ms <= t.ended_ms {
            took[at].push(t.ended_ms - t.began_ms);
        }
        let second = &mut seconds[at];
        match t.outcome {
            Outcome::Committed => second.committed += 1,
            Outcome::Aborted => second.aborted += 1,
            Outcome::Unknown => second.unknown += 1,
        }
    }
    for (second, mut took) in seconds.iter_mut().zip(took) {
        took.sort_unstable();
        second.p50_ms = quantile(&took, 0.5);
        second.p99_ms = quantile(&took, 0.99);
    }
    seconds
}

/// What one output record says of itself: `worker:seq:index:count:input_partition:input_offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OutValue {
    /// The worker.
    pub worker: u32,
    /// The transaction's number.
    pub seq: u64,
    /// The record's place in its transaction.
    pub index: u32,
    /// How many records the transaction wrote.
    pub count: u32,
    /// The input partition it came from.
    pub input_partition: i32,
    /// The input offset it came from.
    pub input_offset: i64,
}

impl OutValue {
    /// The record's payload.
    pub fn encode(&self) -> String {
        format!(
            "{}:{}:{}:{}:{}:{}",
            self.worker, self.seq, self.index, self.count, self.input_partition, self.input_offset
        )
    }

    /// Reads a payload back; `None` when it is not one the workload wrote.
    pub fn decode(text: &str) -> Option<OutValue> {
        let mut parts = text.split(':');
        let mut next = || parts.next();
        let value = OutValue {
            worker: next()?.parse().ok()?,
            seq: next()?.parse().ok()?,
            index: next()?.parse().ok()?,
            count: next()?.parse().ok()?,
            input_partition: next()?.parse().ok()?,
            input_offset: next()?.parse().ok()?,
        };
        match (next(), value.index < value.count) {
            (None, true) => Some(value),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn txn(outcome: Outcome, ended_ms: u64) -> Txn {
        Txn {
            worker: 0,
            seq: 0,
            outcome,
            input_partition: 0,
            input_from: 0,
            outputs: vec![0],
            ended_ms,
            began_ms: 0,
            landed: vec![],
        }
    }

    #[test]
    fn the_timeline_counts_each_ended_transaction_in_its_second() {
        let history = [
            txn(Outcome::Committed, 10),
            txn(Outcome::Committed, 999),
            txn(Outcome::Aborted, 2_500),
            txn(Outcome::Unknown, 2_001),
            txn(Outcome::Unknown, 0),
        ];
        let t = timeline(&history);
        assert_eq!(t.len(), 3);
        assert_eq!((t[0].committed, t[0].aborted, t[0].unknown), (2, 0, 0));
        assert_eq!((t[0].p50_ms, t[0].p99_ms), (None, None), "no begin said");
        assert_eq!(t[1], Second::default());
        assert_eq!((t[2].committed, t[2].aborted, t[2].unknown), (0, 1, 1));
    }

    /// How long the transactions that ended in a second took: the median and the 99th
    /// percentile, from when each began.
    #[test]
    fn the_timeline_says_how_long_each_seconds_transactions_took() {
        let history: Vec<Txn> = (1..=100u64)
            .map(|ms| Txn {
                began_ms: 5_000,
                ..txn(Outcome::Committed, 5_000 + ms)
            })
            .collect();
        let t = timeline(&history);
        assert_eq!(t.len(), 6);
        assert_eq!((t[5].p50_ms, t[5].p99_ms), (Some(51), Some(99)));
        assert_eq!(t[4].p50_ms, None);
    }

    #[test]
    fn a_value_reads_back_as_written() {
        let v = OutValue {
            worker: 2,
            seq: 17,
            index: 3,
            count: 5,
            input_partition: 2,
            input_offset: 4711,
        };
        assert_eq!(v.encode(), "2:17:3:5:2:4711");
        assert_eq!(OutValue::decode(&v.encode()), Some(v));
    }

    #[test]
    fn a_value_the_workload_did_not_write_is_none() {
        for bad in [
            "",
            "1:2:3:4:5",
            "1:2:3:4:5:6:7",
            "1:2:5:5:0:1",
            "a:2:3:4:5:6",
        ] {
            assert_eq!(OutValue::decode(bad), None, "{bad}");
        }
    }
}
