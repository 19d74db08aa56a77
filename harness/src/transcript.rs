//! The transcript model: what a scenario's run on one target recorded, step by step. Runner,
//! recorded answers, diff, coverage and reports all read it; it depends on none of them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What one step got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The normalised response.
    Response(Value),
    /// The target does not serve this version of the API.
    Unsupported {
        /// Lowest version served (-1: the API is not served at all).
        min: i16,
        /// Highest version served.
        max: i16,
    },
    /// No answer: the connection closed or the deadline passed.
    NoAnswer(String),
    /// An answer that is not a well-formed response of the API at the version sent: what was
    /// wrong, where, and the frame.
    Malformed(crate::wire::frame::Malformed),
    /// The harness could not build or encode the request at this version (a scenario's
    /// problem, the same on every target).
    Unsendable(String),
    /// Not sent: the scenario had stopped on this target (why is in the transcript).
    Skipped(String),
    /// Not sent: a set-up CreateTopics whose topics were provisioned, or a CreateTopics under
    /// test on a broker that refuses CreateTopics. Not compared.
    Provisioned(String),
    /// A pause.
    Slept(u64),
    /// A request in flight when a `kill` raced it: answered (as `expect` asks) or cut off by the
    /// broker's death, as the race went; the reason the scenario gives.
    Raced(String),
    /// The broker closed the connection without an answer, as the step said it must
    /// (`closes`): a request before SASL authentication, say. The reason the scenario gives.
    Closed(String),
    /// kconform cut the connection as soon as the request was written, as the step says
    /// (`cut`): no answer was read, by design. The reason the scenario gives.
    Cut(String),
    /// A broker of the cluster killed or restarted, as the step names it ("killed
    /// coordinator").
    Broker(String),
}

/// One step as run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// Step name (with `@vN` when a version sweep expanded it).
    pub step: String,
    /// API name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api: String,
    /// Version sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<i16>,
    /// The request fields, with unique names back as placeholders.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub request: Value,
    /// What came back.
    pub outcome: Outcome,
    /// What was unusual but valid in how the answer was written (a tagged field at its
    /// default, an unknown tag, a long varint): shown, never compared, never a verdict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub encoding: Vec<crate::wire::frame::Note>,
}

/// A scenario's run against one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transcript {
    /// Scenario name.
    pub scenario: String,
    /// Target name.
    pub target: String,
    /// Steps, in order.
    pub steps: Vec<StepRecord>,
    /// Expectations that did not hold (a stop among them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_expectations: Vec<String>,
    /// Why the scenario stopped before its last step on this target: the step that failed and
    /// how. Later steps are recorded as skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// Where a scenario that wrote transactional records stopped: what each of its
    /// transactions left in the log, read back from where the scenario began (empty where it
    /// did not stop, wrote no transactional record, or its answers are recorded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub readback: Vec<TxnRead>,
}

/// One transaction of a scenario, read back: how its producer ended it, and what a reader of
/// each partition it wrote sees of its records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnRead {
    /// Its name in the scenario: `t<n>`, the n-th transaction begun, from 1.
    pub name: String,
    /// Its transactional id, as the scenario names it (`${txn}`).
    pub transactional_id: String,
    /// How the scenario ended it: `committed`, `aborted` (an EndTxn answered NONE), or `open`.
    pub ended: String,
    /// What its records show against how it ended.
    pub verdict: ReadVerdict,
    /// Each partition it wrote.
    pub partitions: Vec<PartitionRead>,
    /// The node id of its coordinator at read-back, where one was named.
    pub coordinator: Option<i32>,
    /// The verdict in words, naming partitions, leaders and coordinator: what a cause line says.
    pub words: String,
}

/// Where a transaction named `t<n>` comes in a scenario: `n` (past every number, a name not
/// so made), for lists in the order transactions began.
pub fn txn_number(name: &str) -> u32 {
    name.strip_prefix('t')
        .and_then(|n| n.parse().ok())
        .unwrap_or(u32::MAX)
}

/// What a transaction's records show against how it ended: the exactly-once verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadVerdict {
    /// Committed, and every record of it visible to read_committed: as it must be.
    CommittedVisible,
    /// Aborted, and no record of it visible: as it must be.
    AbortedHidden,
    /// Committed, and some record of it read as aborted or gone: committed records lost.
    CommittedLost,
    /// Aborted, and some record of it read as committed: aborted records read.
    AbortedVisible,
    /// Some record of it has no marker yet (or the transaction never ended): it holds the last
    /// stable offset back.
    Open,
}

impl ReadVerdict {
    /// How a report says it.
    pub fn label(self) -> &'static str {
        match self {
            ReadVerdict::CommittedVisible => "committed, visible",
            ReadVerdict::AbortedHidden => "aborted, not visible",
            ReadVerdict::CommittedLost => "committed, LOST",
            ReadVerdict::AbortedVisible => "aborted, VISIBLE",
            ReadVerdict::Open => "open",
        }
    }

    /// Whether it breaks exactly-once (a committed record lost, an aborted one read).
    pub fn breaks_exactly_once(self) -> bool {
        matches!(
            self,
            ReadVerdict::CommittedLost | ReadVerdict::AbortedVisible
        )
    }
}

/// What a reader sees of one transaction's records in one partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionRead {
    /// The partition, as the scenario names its topic (`${topic}-1`).
    pub partition: String,
    /// The node id of its leader at read-back.
    pub leader: Option<i32>,
    /// How many records the transaction sent there.
    pub records: usize,
    /// How they read: `committed`, `aborted`, `open` (no marker), `gone` (not in the log), or
    /// several of these joined by `+`.
    pub reads: String,
}

impl Transcript {
    /// Steps sent and answered after the first answer read past its framing defect
    /// ([`crate::wire::frame::read_past`]): those the defect would otherwise have kept from
    /// being judged.
    pub fn judged_past_framing(&self) -> usize {
        let read_past = |s: &StepRecord| matches!(&s.outcome, Outcome::Malformed(m) if m.read_past_as_header.is_some());
        let Some(first) = self.steps.iter().position(read_past) else {
            return 0;
        };
        self.steps[first + 1..]
            .iter()
            .filter(|s| !matches!(s.outcome, Outcome::Skipped(_) | Outcome::Slept(_)))
            .count()
    }

    /// What `--strict-encoding` asks: each encoding note (an answer Apache's parser reads but no
    /// canonical encoder writes) becomes a failed expectation of its own kind, named
    /// "non-canonical encoding", so that the run fails on it without calling the answer
    /// malformed or the values different.
    pub fn hold_to_canonical_encoding(&mut self) {
        let held: Vec<String> = self
            .steps
            .iter()
            .flat_map(|s| {
                s.encoding.iter().map(move |n| {
                    format!(
                        "{}: non-canonical encoding (--strict-encoding): {} at byte {}: {}",
                        s.step, n.field, n.offset, n.what
                    )
                })
            })
            .collect();
        self.failed_expectations.extend(held);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_encoding_fails_each_noted_step_by_name_and_leaves_others_alone() {
        let step = |name: &str, notes: usize| StepRecord {
            step: name.into(),
            api: "EndTxn".into(),
            version: Some(3),
            request: Value::Null,
            outcome: Outcome::Response(Value::Null),
            encoding: (0..notes)
                .map(|i| crate::wire::frame::Note {
                    field: "(tagged fields)".into(),
                    offset: 11 + i,
                    what: "varint 0 in 2 bytes, where 1 would do".into(),
                })
                .collect(),
        };
        let mut t = Transcript {
            scenario: "s".into(),
            target: "external".into(),
            steps: vec![step("plain", 0), step("long", 1)],
            failed_expectations: Vec::new(),
            stopped: None,
            readback: Vec::new(),
        };
        t.hold_to_canonical_encoding();
        assert_eq!(
            t.failed_expectations,
            ["long: non-canonical encoding (--strict-encoding): (tagged fields) at byte 11: varint 0 in 2 bytes, where 1 would do"]
        );
    }
}
