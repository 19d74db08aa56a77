//! The exactly-once verdict of a scenario's transactions, from bytes already read: which
//! transactions the scenario's own records began and ended (its Produce and EndTxn steps), and
//! what each partition's log holds of their records (data batches, and the COMMIT and ABORT
//! markers that decide them). No I/O, so each verdict is shown on a log built to have it.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::transcript::{Outcome, PartitionRead, ReadVerdict, StepRecord, TxnRead};

/// A partition as the scenario names it: (`${topic}`, partition).
pub type Place = (String, i32);

/// A record as a scenario sent it: its key and value, as text.
pub type Sent = (Option<String>, Option<String>);

/// One transaction the scenario's records show: the records it sent, where, and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioTxn {
    /// `t<n>`, from 1, in the order transactions began.
    pub name: String,
    /// The transactional id as the scenario names it.
    pub transactional_id: String,
    /// `committed`, `aborted` or `open`.
    pub ended: &'static str,
    /// Each partition written, with the (key, value) of each record sent there, in order.
    pub writes: BTreeMap<Place, Vec<Sent>>,
}

/// An error code as a recorded answer holds it: a number, or `"0 NONE"`.
fn code(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.split_whitespace().next()?.parse().ok(),
        _ => None,
    }
}

/// A record's key or value as a scenario's request holds it.
fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// The transactions of a run, from its records: a transactional Produce answered NONE adds its
/// records to its transactional id's open transaction (beginning one), an EndTxn answered NONE
/// ends it as it asked. A transaction that wrote nothing is left out.
pub fn transactions(records: &[StepRecord]) -> Vec<ScenarioTxn> {
    let mut done: Vec<ScenarioTxn> = Vec::new();
    let mut open: BTreeMap<String, ScenarioTxn> = BTreeMap::new();
    let mut begun = 0;
    for r in records {
        let Outcome::Response(answer) = &r.outcome else {
            continue;
        };
        let id = text(r.request.get("transactional_id"));
        match (r.api.as_str(), id) {
            ("Produce", Some(id)) if r.request.get("transactional") == Some(&Value::Bool(true)) => {
                if code(answer.pointer("/responses/0/partitions/0/error_code")) != Some(0) {
                    continue;
                }
                let (Some(topic), Some(partition)) = (
                    text(r.request.get("topic")),
                    r.request.get("partition").and_then(Value::as_i64),
                ) else {
                    continue;
                };
                let txn = open.entry(id.clone()).or_insert_with(|| {
                    begun += 1;
                    ScenarioTxn {
                        name: format!("t{begun}"),
                        transactional_id: id,
                        ended: "open",
                        writes: BTreeMap::new(),
                    }
                });
                let sent = r.request.get("records").and_then(Value::as_array);
                txn.writes
                    .entry((topic, partition as i32))
                    .or_default()
                    .extend(
                        sent.into_iter()
                            .flatten()
                            .map(|rec| (text(rec.get("key")), text(rec.get("value")))),
                    );
            }
            ("EndTxn", Some(id)) if code(answer.get("error_code")) == Some(0) => {
                if let Some(mut txn) = open.remove(&id) {
                    txn.ended = match r.request.get("committed") {
                        Some(Value::Bool(true)) => "committed",
                        _ => "aborted",
                    };
                    done.push(txn);
                }
            }
            _ => {}
        }
    }
    done.extend(open.into_values());
    done.sort_by_key(|t| crate::transcript::txn_number(&t.name));
    done
}

/// How one record in a log reads: decided by its producer's next marker there, or open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fate {
    /// A COMMIT marker of its producer follows it.
    Committed,
    /// An ABORT marker of its producer follows it.
    Aborted,
    /// No marker of its producer follows it yet.
    Open,
    /// Not a transactional record: visible as written.
    Plain,
}

impl Fate {
    fn word(self) -> &'static str {
        match self {
            Fate::Committed | Fate::Plain => "committed",
            Fate::Aborted => "aborted",
            Fate::Open => "open",
        }
    }
}

/// One data record of a partition's log, decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRecord {
    /// Its key, as text.
    pub key: Option<String>,
    /// Its value, as text.
    pub value: Option<String>,
    /// How it reads.
    pub fate: Fate,
}

/// One entry of a partition's log as fetched: a data record of a producer, or a marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A data record.
    Data {
        /// Its producer id (-1: none).
        producer_id: i64,
        /// Whether its batch is transactional.
        transactional: bool,
        /// Its key, as text.
        key: Option<String>,
        /// Its value, as text.
        value: Option<String>,
    },
    /// A COMMIT (true) or ABORT marker of a producer.
    Marker {
        /// The producer it ends a transaction of.
        producer_id: i64,
        /// COMMIT.
        commit: bool,
    },
}

/// Decides each data record of a log, in offset order: a transactional record reads as its
/// producer's next marker says, or open where none follows.
pub fn decide(log: &[Entry]) -> Vec<LogRecord> {
    let mut out: Vec<LogRecord> = Vec::new();
    let mut pending: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    for entry in log {
        match entry {
            Entry::Data {
                producer_id,
                transactional,
                key,
                value,
            } => {
                let fate = match transactional {
                    true => Fate::Open,
                    false => Fate::Plain,
                };
                if *transactional {
                    pending.entry(*producer_id).or_default().push(out.len());
                }
                out.push(LogRecord {
                    key: key.clone(),
                    value: value.clone(),
                    fate,
                });
            }
            Entry::Marker {
                producer_id,
                commit,
            } => {
                for i in pending.remove(producer_id).unwrap_or_default() {
                    out[i].fate = match commit {
                        true => Fate::Committed,
                        false => Fate::Aborted,
                    };
                }
            }
        }
    }
    out
}

/// Where the cluster has things: each partition's leader and each transactional id's
/// coordinator (node ids), where they could be asked.
#[derive(Debug, Clone, Default)]
pub struct Placement {
    /// Partition → leader.
    pub leaders: BTreeMap<Place, i32>,
    /// Transactional id (as the scenario names it) → coordinator.
    pub coordinators: BTreeMap<String, i32>,
}

/// Each transaction's verdict against the logs read back (`logs`: each written partition's
/// records, decided). A record sent is matched to the first record of the log with its key
/// and value not matched before; a record sent and not found is gone.
pub fn judge(
    txns: &[ScenarioTxn],
    logs: &BTreeMap<Place, Vec<LogRecord>>,
    placement: &Placement,
) -> Vec<TxnRead> {
    let mut taken: BTreeMap<&Place, Vec<bool>> = logs
        .iter()
        .map(|(p, log)| (p, vec![false; log.len()]))
        .collect();
    let mut out = Vec::new();
    for t in txns {
        let mut partitions = Vec::new();
        let mut fates_all: Vec<&'static str> = Vec::new();
        for (place, sent) in &t.writes {
            let log = logs.get(place).map(Vec::as_slice).unwrap_or_default();
            let used = taken.entry(place).or_default();
            used.resize(log.len(), false);
            let mut fates: Vec<&'static str> = Vec::new();
            for (key, value) in sent {
                let found = (0..log.len())
                    .find(|&i| !used[i] && log[i].key == *key && log[i].value == *value);
                let fate = match found {
                    Some(i) => {
                        used[i] = true;
                        log[i].fate.word()
                    }
                    None => "gone",
                };
                if !fates.contains(&fate) {
                    fates.push(fate);
                }
            }
            fates_all.extend(fates.iter().copied());
            partitions.push(PartitionRead {
                partition: format!("{}-{}", place.0, place.1),
                leader: placement.leaders.get(place).copied(),
                records: sent.len(),
                reads: fates.join("+"),
            });
        }
        let any = |w: &str| fates_all.contains(&w);
        let verdict = match t.ended {
            "committed" if any("aborted") || any("gone") => ReadVerdict::CommittedLost,
            "aborted" if any("committed") => ReadVerdict::AbortedVisible,
            _ if any("open") || t.ended == "open" => ReadVerdict::Open,
            "committed" => ReadVerdict::CommittedVisible,
            _ => ReadVerdict::AbortedHidden,
        };
        let coordinator = placement.coordinators.get(&t.transactional_id).copied();
        let words = words(t, verdict, &partitions, coordinator);
        out.push(TxnRead {
            name: t.name.clone(),
            transactional_id: t.transactional_id.clone(),
            ended: t.ended.to_owned(),
            verdict,
            partitions,
            coordinator,
            words,
        });
    }
    out
}

/// The verdict in a cause line's words: `t2 committed, its records LOST: ${topic}-1 reads
/// aborted (1 record), led by broker 2; its coordinator is broker 0`.
fn words(
    t: &ScenarioTxn,
    verdict: ReadVerdict,
    partitions: &[PartitionRead],
    coordinator: Option<i32>,
) -> String {
    // The partitions that show the verdict: where a committed one's records are not
    // committed, an aborted one's are committed, an open one's have no marker.
    let shows = |p: &&PartitionRead| match verdict {
        ReadVerdict::CommittedLost => p.reads.contains("aborted") || p.reads.contains("gone"),
        ReadVerdict::AbortedVisible => p.reads.contains("committed"),
        ReadVerdict::Open => p.reads.contains("open") || t.ended == "open",
        _ => true,
    };
    let at: Vec<String> = partitions
        .iter()
        .filter(shows)
        .map(|p| {
            let led = p
                .leader
                .map_or(String::new(), |l| format!(", led by broker {l}"));
            let n = match p.records {
                1 => "1 record".to_owned(),
                n => format!("{n} records"),
            };
            format!("{} reads {} ({n}){led}", p.partition, p.reads)
        })
        .collect();
    let what = match verdict {
        ReadVerdict::CommittedLost => "its records LOST",
        ReadVerdict::AbortedVisible => "its records READ",
        ReadVerdict::Open if t.ended == "open" => "never ended",
        ReadVerdict::Open => "its records still open",
        ReadVerdict::CommittedVisible => "visible",
        ReadVerdict::AbortedHidden => "not visible",
    };
    let coordinator = coordinator.map_or(String::new(), |c| {
        format!("; its coordinator is broker {c}")
    });
    format!(
        "{} {}, {what}: {}{coordinator}",
        t.name,
        t.ended,
        at.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn step(name: &str, api: &str, request: Value, answer: Value) -> StepRecord {
        StepRecord {
            step: name.into(),
            api: api.into(),
            version: Some(3),
            request,
            outcome: Outcome::Response(answer),
            encoding: Vec::new(),
        }
    }

    fn produce(name: &str, partition: i64, key: &str, code: &str) -> StepRecord {
        step(
            name,
            "Produce",
            json!({ "transactional_id": "${txn}", "transactional": true, "topic": "${topic}",
                    "partition": partition, "records": [{ "key": key, "value": "v" }] }),
            json!({ "responses": [{ "partitions": [{ "error_code": code }] }] }),
        )
    }

    fn end(name: &str, committed: bool) -> StepRecord {
        step(
            name,
            "EndTxn",
            json!({ "transactional_id": "${txn}", "committed": committed }),
            json!({ "error_code": "0 NONE" }),
        )
    }

    /// abort (t1), commit (t2), abort (t3), each on partitions 0 and 1.
    fn abort_commit_abort() -> Vec<StepRecord> {
        let mut out = Vec::new();
        for (t, commit) in [(1, false), (2, true), (3, false)] {
            out.push(produce("p0", 0, &format!("t{t}-p0"), "0 NONE"));
            out.push(produce("p1", 1, &format!("t{t}-p1"), "0 NONE"));
            out.push(end("end", commit));
        }
        out
    }

    fn data(key: &str) -> Entry {
        Entry::Data {
            producer_id: 7,
            transactional: true,
            key: Some(key.into()),
            value: Some("v".into()),
        }
    }

    fn marker(commit: bool) -> Entry {
        Entry::Marker {
            producer_id: 7,
            commit,
        }
    }

    fn placement() -> Placement {
        Placement {
            leaders: BTreeMap::from([(("${topic}".into(), 0), 0), (("${topic}".into(), 1), 2)]),
            coordinators: BTreeMap::from([("${txn}".into(), 0)]),
        }
    }

    #[test]
    fn a_scenarios_transactions_are_its_produces_between_its_end_txns() {
        let mut records = abort_commit_abort();
        // A Produce refused adds nothing; the last transaction never ends.
        records.push(produce("p0", 0, "refused", "47 INVALID_PRODUCER_EPOCH"));
        records.push(produce("p0", 0, "t4-p0", "0 NONE"));
        let txns = transactions(&records);
        let ended: Vec<(&str, &str)> = txns.iter().map(|t| (t.name.as_str(), t.ended)).collect();
        assert_eq!(
            ended,
            [
                ("t1", "aborted"),
                ("t2", "committed"),
                ("t3", "aborted"),
                ("t4", "open")
            ]
        );
        assert_eq!(txns[1].writes.len(), 2);
        assert_eq!(
            txns[3].writes[&("${topic}".into(), 0)],
            [(Some("t4-p0".into()), Some("v".into()))]
        );
    }

    #[test]
    fn each_record_reads_as_its_producers_next_marker_says() {
        let log = [
            data("a"),
            data("b"),
            marker(false),
            data("c"),
            marker(true),
            data("d"),
        ];
        let fates: Vec<Fate> = decide(&log).iter().map(|r| r.fate).collect();
        assert_eq!(
            fates,
            [Fate::Aborted, Fate::Aborted, Fate::Committed, Fate::Open]
        );
    }

    #[test]
    fn a_correct_log_gives_each_transaction_its_own_end() {
        let txns = transactions(&abort_commit_abort());
        let log = |p: u8| {
            let k = |t: u8| data(&format!("t{t}-p{p}"));
            decide(&[k(1), marker(false), k(2), marker(true), k(3), marker(false)])
        };
        let logs = BTreeMap::from([
            (("${topic}".into(), 0), log(0)),
            (("${topic}".into(), 1), log(1)),
        ]);
        let verdicts: Vec<ReadVerdict> = judge(&txns, &logs, &placement())
            .iter()
            .map(|t| t.verdict)
            .collect();
        assert_eq!(
            verdicts,
            [
                ReadVerdict::AbortedHidden,
                ReadVerdict::CommittedVisible,
                ReadVerdict::AbortedHidden
            ]
        );
    }

    /// Real kaas's overwritten peer marker: partition 1 (led apart from the coordinator) got
    /// the last ABORT only, which ends all three transactions there.
    #[test]
    fn a_commit_whose_peer_marker_was_written_over_is_committed_lost_and_named() {
        let txns = transactions(&abort_commit_abort());
        let p0 = decide(&[
            data("t1-p0"),
            marker(false),
            data("t2-p0"),
            marker(true),
            data("t3-p0"),
            marker(false),
        ]);
        let p1 = decide(&[data("t1-p1"), data("t2-p1"), data("t3-p1"), marker(false)]);
        let logs = BTreeMap::from([(("${topic}".into(), 0), p0), (("${topic}".into(), 1), p1)]);
        let read = judge(&txns, &logs, &placement());
        assert_eq!(read[1].verdict, ReadVerdict::CommittedLost);
        assert_eq!(
            read[1].words,
            "t2 committed, its records LOST: ${topic}-1 reads aborted (1 record), led by broker 2; its coordinator is broker 0"
        );
        assert_eq!(read[1].partitions[0].reads, "committed");
        // The aborted ones are as they should be there.
        assert_eq!(read[0].verdict, ReadVerdict::AbortedHidden);
        // The other way round (commit, abort, commit): the aborted one is read.
        let p1 = decide(&[data("t1-p1"), data("t2-p1"), data("t3-p1"), marker(true)]);
        let logs = BTreeMap::from([(("${topic}".into(), 1), p1)]);
        let mut flipped = txns.clone();
        flipped.iter_mut().for_each(|t| {
            t.writes.retain(|(_, p), _| *p == 1);
            t.ended = if t.ended == "committed" {
                "aborted"
            } else {
                "committed"
            };
        });
        let read = judge(&flipped, &logs, &Placement::default());
        assert_eq!(read[1].verdict, ReadVerdict::AbortedVisible);
        assert_eq!(
            read[1].words,
            "t2 aborted, its records READ: ${topic}-1 reads committed (1 record)"
        );
        // A record with no marker after it: open; one missing: gone, and lost.
        let logs = BTreeMap::from([(("${topic}".into(), 1), decide(&[data("t1-p1")]))]);
        let read = judge(&flipped, &logs, &Placement::default());
        assert_eq!(read[0].verdict, ReadVerdict::Open);
        assert_eq!(read[2].verdict, ReadVerdict::CommittedLost);
        assert_eq!(read[2].partitions[0].reads, "gone");
    }
}
