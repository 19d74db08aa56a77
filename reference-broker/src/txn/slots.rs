//! The kaas transaction state store: `__cluster/txn_state/slot-N.json`, N =
//! fnv1a32(transactional.id) % 50, each a JSON object of transactional id → entry. Every
//! mutation re-reads its slot and writes it back atomically, so a slot file written by kaas reads
//! here and the reverse (kaas-internals §1).

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::storage::atomic::{read_if_present, write_atomic};

/// Slots, as Apache's `transaction.state.log.num.partitions` default.
pub const NUM_SLOTS: u32 = 50;

use crate::hash::fnv1a32;

/// The slot of a transactional id.
pub fn slot_of(transactional_id: &str) -> u32 {
    fnv1a32(transactional_id.as_bytes()) % NUM_SLOTS
}

/// Transaction states as kaas writes them (Empty is `""`, and omitted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum TxnState {
    /// No transaction open.
    #[default]
    #[serde(rename = "")]
    Empty,
    /// A transaction is open.
    Ongoing,
    /// Committing: markers may still be owed.
    PrepareCommit,
    /// Aborting: markers may still be owed.
    PrepareAbort,
    /// Committed.
    CompleteCommit,
    /// Aborted.
    CompleteAbort,
}

impl TxnState {
    fn is_empty(&self) -> bool {
        *self == TxnState::Empty
    }
}

/// One topic's partitions in an entry, in the order they were added.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopicPartitions {
    /// Topic.
    pub topic: String,
    /// Partitions, in the order added.
    pub partitions: Vec<i32>,
}

/// One transactional id's state, in kaas's serialization order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnEntry {
    /// Producer id.
    pub pid: i64,
    /// Producer epoch.
    pub epoch: i16,
    /// Partitions in the transaction (the markers a Prepare* state still owes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<TopicPartitions>,
    /// When the transaction went Ongoing (the reaper's clock), 0 when not Ongoing.
    #[serde(
        rename = "ongoingSinceMs",
        default,
        skip_serializing_if = "is_zero_i64"
    )]
    pub ongoing_since_ms: i64,
    /// The producer's transaction timeout.
    #[serde(
        rename = "transactionTimeoutMs",
        default,
        skip_serializing_if = "is_zero_i32"
    )]
    pub transaction_timeout_ms: i32,
    /// State.
    #[serde(default, skip_serializing_if = "TxnState::is_empty")]
    pub state: TxnState,
    /// Consumer groups whose offsets the transaction commits.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// A partition refused one of the transaction's markers (it has seen a newer epoch of the
    /// producer): the coordinator gives up on the transaction as Apache's does, leaving it
    /// prepared, never completed (every later EndTxn and InitProducerId of the id answer
    /// CONCURRENT_TRANSACTIONS, and the partition's last stable offset stays where the
    /// transaction began).
    #[serde(rename = "markersRefused", default, skip_serializing_if = "is_false")]
    pub markers_refused: bool,
}

fn is_false(v: &bool) -> bool {
    !*v
}

fn is_zero_i64(v: &i64) -> bool {
    *v == 0
}
fn is_zero_i32(v: &i32) -> bool {
    *v == 0
}

impl TxnEntry {
    /// Whether (topic, partition) is in the transaction.
    pub fn contains(&self, topic: &str, partition: i32) -> bool {
        self.partitions
            .iter()
            .any(|t| t.topic == topic && t.partitions.contains(&partition))
    }

    /// Adds (topic, partition); false when it was already there.
    pub fn add(&mut self, topic: &str, partition: i32) -> bool {
        match self.partitions.iter_mut().find(|t| t.topic == topic) {
            Some(t) if t.partitions.contains(&partition) => false,
            Some(t) => {
                t.partitions.push(partition);
                true
            }
            None => {
                self.partitions.push(TopicPartitions {
                    topic: topic.to_owned(),
                    partitions: vec![partition],
                });
                true
            }
        }
    }
}

/// One slot file's contents.
pub type Slot = BTreeMap<String, TxnEntry>;

/// Reads and writes slot files.
#[derive(Debug)]
pub struct SlotStore {
    dir: PathBuf,
}

impl SlotStore {
    /// The store under `cluster_dir`.
    pub fn new(cluster_dir: &Path) -> SlotStore {
        SlotStore {
            dir: cluster_dir.join("txn_state"),
        }
    }

    fn path(&self, slot: u32) -> PathBuf {
        self.dir.join(format!("slot-{slot}.json"))
    }

    /// Reads a slot (missing or empty file: an empty map).
    pub fn read(&self, slot: u32) -> io::Result<Slot> {
        match read_if_present(&self.path(slot))? {
            None => Ok(Slot::new()),
            Some(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e)),
        }
    }

    /// Writes a slot atomically (compact JSON, no trailing newline).
    pub fn write(&self, slot: u32, contents: &Slot) -> io::Result<()> {
        write_atomic(
            &self.path(slot),
            &serde_json::to_vec(contents).expect("serialisable"),
        )
    }

    /// The entry of a transactional id.
    pub fn get(&self, transactional_id: &str) -> io::Result<Option<TxnEntry>> {
        Ok(self
            .read(slot_of(transactional_id))?
            .remove(transactional_id))
    }

    /// Re-reads the id's slot, applies `f` to its entry, and writes the slot back when `f`
    /// says it changed something.
    pub fn update<R>(
        &self,
        transactional_id: &str,
        f: impl FnOnce(&mut Option<TxnEntry>) -> (R, bool),
    ) -> io::Result<R> {
        let slot = slot_of(transactional_id);
        // Peers on the shared volume change the same slot files: one at a time.
        let _lock = crate::storage::file_lock::FileLock::exclusive(
            &self.path(slot).with_extension("lock"),
        )?;
        let mut contents = self.read(slot)?;
        let mut entry = contents.remove(transactional_id);
        let (result, changed) = f(&mut entry);
        if changed {
            if let Some(e) = entry {
                contents.insert(transactional_id.to_owned(), e);
            }
            self.write(slot, &contents)?;
        }
        Ok(result)
    }

    /// Every (transactional id, entry) in every slot.
    pub fn all(&self) -> io::Result<Vec<(String, TxnEntry)>> {
        let mut out = Vec::new();
        for slot in 0..NUM_SLOTS {
            out.extend(self.read(slot)?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_hash_vectors_from_kaas() {
        for (id, slot) in [
            ("tx-commit", 9),
            ("tx-ongoing", 25),
            ("tx-bare", 40),
            ("tx-abort", 48),
            ("tx-1", 19),
            ("my-txn", 18),
        ] {
            assert_eq!(slot_of(id), slot, "{id}");
        }
    }

    #[test]
    fn kaas_fixture_reads_and_writes_back_byte_for_byte() {
        let fixture = r#"{"tx-commit":{"pid":100,"epoch":1,"transactionTimeoutMs":60000,"state":"CompleteCommit"}}"#;
        let slot: Slot = serde_json::from_str(fixture).unwrap();
        let e = &slot["tx-commit"];
        assert_eq!(
            (e.pid, e.epoch, e.state),
            (100, 1, TxnState::CompleteCommit)
        );
        assert_eq!(serde_json::to_string(&slot).unwrap(), fixture);
        let full = r#"{"t":{"pid":1,"epoch":2,"partitions":[{"topic":"a","partitions":[3,1]}],"ongoingSinceMs":5,"transactionTimeoutMs":9,"state":"Ongoing","groups":["g"]}}"#;
        let slot: Slot = serde_json::from_str(full).unwrap();
        assert_eq!(serde_json::to_string(&slot).unwrap(), full);
        let empty = r#"{"t":{"pid":1,"epoch":0}}"#;
        let slot: Slot = serde_json::from_str(empty).unwrap();
        assert_eq!(slot["t"].state, TxnState::Empty);
        assert_eq!(serde_json::to_string(&slot).unwrap(), empty);
    }

    #[test]
    fn updates_reread_and_write_the_slot() {
        let dir = tempfile::tempdir().unwrap();
        let store = SlotStore::new(dir.path());
        store
            .update("tx-1", |e| {
                *e = Some(TxnEntry {
                    pid: 7,
                    epoch: 0,
                    partitions: vec![],
                    markers_refused: false,
                    ongoing_since_ms: 0,
                    transaction_timeout_ms: 100,
                    state: TxnState::Empty,
                    groups: vec![],
                });
                ((), true)
            })
            .unwrap();
        let text = std::fs::read_to_string(dir.path().join("txn_state/slot-19.json")).unwrap();
        assert_eq!(
            text,
            r#"{"tx-1":{"pid":7,"epoch":0,"transactionTimeoutMs":100}}"#
        );
        assert_eq!(store.get("tx-1").unwrap().unwrap().pid, 7);
        assert_eq!(store.all().unwrap().len(), 1);
    }
}
