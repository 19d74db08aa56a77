//! Committed consumer-group offsets: `__cluster/__consumer_offsets/<group>.json`, the kaas
//! envelope `{"offsets":{"topic/partition":offset},"metadata":{"topic/partition":"..."}}`,
//! rewritten atomically on every commit. (`leaderEpochs` is an addition of ours, for OffsetFetch
//! v5+; readers that do not know it ignore it.)
//!
//! Every broker of a cluster reads and writes these files: a group's coordinator moves when
//! brokers go down and come back (or one is paused past the member timeout), so a cached
//! group is read again whenever its file is not the one this broker last saw, and a commit
//! re-reads the file under the group's lock before it writes.

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::atomic::{read_if_present, write_atomic};
use super::file_component;
use super::file_lock::FileLock;

/// Apache's `offset.metadata.max.bytes` default: longer commit metadata is refused with
/// OFFSET_METADATA_TOO_LARGE.
pub const MAX_METADATA_BYTES: usize = 4096;

/// One committed offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Committed {
    /// The offset.
    pub offset: i64,
    /// Leader epoch the client sent, -1 for none.
    pub leader_epoch: i32,
    /// Client metadata.
    pub metadata: Option<String>,
}

impl Committed {
    /// An offset from an OffsetCommit or TxnOffsetCommit partition, or
    /// OFFSET_METADATA_TOO_LARGE when its metadata is over [`MAX_METADATA_BYTES`].
    pub fn from_commit(
        offset: i64,
        leader_epoch: i32,
        metadata: Option<&str>,
    ) -> Result<Committed, i16> {
        if metadata.is_some_and(|m| m.len() > MAX_METADATA_BYTES) {
            return Err(crate::errors::OFFSET_METADATA_TOO_LARGE);
        }
        Ok(Committed {
            offset,
            leader_epoch,
            // Apache stores a null metadata as "" and answers "" (checked live by scenario
            // end-txn-offsets-only-commit).
            metadata: Some(metadata.unwrap_or_default().to_owned()),
        })
    }
}

#[derive(Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Envelope {
    offsets: BTreeMap<String, i64>,
    #[serde(default)]
    metadata: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    leader_epochs: BTreeMap<String, i32>,
}

/// Offsets staged by TxnOffsetCommit: (group, producer id) → (topic, partition) → offset.
/// Memory only, by design: staged offsets of a transaction that dies with the broker are
/// dropped, which is what an abort would do.
type Staged = HashMap<(String, i64), BTreeMap<(String, i32), Committed>>;

/// Committed offsets of every group, cached in memory and persisted per group, and the
/// offsets transactions have staged but not yet committed. Both live here, behind the one
/// offsets lock, so that a transaction's commit moves its staged offsets into the committed
/// ones in a single step that OffsetFetch (require_stable) can never see half done.
#[derive(Debug)]
pub struct OffsetStore {
    dir: PathBuf,
    /// The groups' lock files, beside the offsets (where they would read as groups).
    locks: PathBuf,
    groups: HashMap<String, (Option<FileSeen>, GroupOffsets)>,
    staged: Staged,
}

/// One group's committed offsets, by topic and partition.
type GroupOffsets = BTreeMap<(String, i32), Committed>;

/// A group file as this broker last read or wrote it: every commit replaces the file, so a
/// peer's commit shows as another file, length or time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileSeen {
    inode: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

fn seen(path: &Path) -> io::Result<Option<FileSeen>> {
    use std::os::unix::fs::MetadataExt;
    match std::fs::metadata(path) {
        Ok(m) => Ok(Some(FileSeen {
            inode: m.ino(),
            len: m.len(),
            modified: m.modified().ok(),
        })),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

fn key(topic: &str, partition: i32) -> String {
    format!("{topic}/{partition}")
}

impl OffsetStore {
    /// Opens the store under `cluster_dir`.
    pub fn open(cluster_dir: &Path) -> io::Result<OffsetStore> {
        let dir = cluster_dir.join("__consumer_offsets");
        std::fs::create_dir_all(&dir)?;
        Ok(OffsetStore {
            dir,
            locks: cluster_dir.join("__consumer_offsets.locks"),
            groups: HashMap::new(),
            staged: HashMap::new(),
        })
    }

    fn path(&self, group: &str) -> PathBuf {
        self.dir.join(format!("{}.json", file_component(group)))
    }

    fn load(&mut self, group: &str) -> io::Result<&mut GroupOffsets> {
        let path = self.path(group);
        let now = seen(&path)?;
        if self.groups.get(group).is_none_or(|(was, _)| *was != now) {
            let mut map = BTreeMap::new();
            if let Some(bytes) = read_if_present(&path)? {
                let env: Envelope = serde_json::from_slice(&bytes)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                for (k, offset) in &env.offsets {
                    let Some((topic, p)) = k.rsplit_once('/') else {
                        continue;
                    };
                    let Ok(partition) = p.parse() else { continue };
                    map.insert(
                        (topic.to_owned(), partition),
                        Committed {
                            offset: *offset,
                            leader_epoch: env.leader_epochs.get(k).copied().unwrap_or(-1),
                            metadata: env.metadata.get(k).cloned(),
                        },
                    );
                }
            }
            self.groups.insert(group.to_owned(), (now, map));
        }
        Ok(&mut self.groups.get_mut(group).expect("just inserted").1)
    }

    /// The committed offset of one partition.
    pub fn get(
        &mut self,
        group: &str,
        topic: &str,
        partition: i32,
    ) -> io::Result<Option<Committed>> {
        Ok(self
            .load(group)?
            .get(&(topic.to_owned(), partition))
            .cloned())
    }

    /// Every committed offset of a group.
    pub fn all(&mut self, group: &str) -> io::Result<Vec<((String, i32), Committed)>> {
        Ok(self
            .load(group)?
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect())
    }

    /// Commits offsets (all or nothing: one file write).
    pub fn commit(
        &mut self,
        group: &str,
        offsets: Vec<((String, i32), Committed)>,
    ) -> io::Result<()> {
        let path = self.path(group);
        // A peer coordinating the group at the same moment commits in turn, not over this.
        let _lock = self.lock(group)?;
        let mut next = self.load(group)?.clone();
        next.extend(offsets);
        let mut env = Envelope::default();
        for ((topic, partition), c) in &next {
            let k = key(topic, *partition);
            env.offsets.insert(k.clone(), c.offset);
            if let Some(m) = &c.metadata {
                env.metadata.insert(k.clone(), m.clone());
            }
            if c.leader_epoch >= 0 {
                env.leader_epochs.insert(k, c.leader_epoch);
            }
        }
        write_atomic(&path, &serde_json::to_vec(&env).expect("serialisable"))?;
        self.groups.insert(group.to_owned(), (seen(&path)?, next));
        Ok(())
    }

    /// Stages a transaction's offsets until it ends.
    pub fn stage(
        &mut self,
        group: &str,
        producer_id: i64,
        offsets: Vec<((String, i32), Committed)>,
    ) {
        self.staged
            .entry((group.to_owned(), producer_id))
            .or_default()
            .extend(offsets);
    }

    /// How many offsets the producer's transaction would hold staged, across its groups, once
    /// `partitions` of `group` are staged too (re-staging a partition adds none).
    pub fn staged_with(
        &self,
        group: &str,
        producer_id: i64,
        partitions: &[(String, i32)],
    ) -> usize {
        let held: usize = self
            .staged
            .iter()
            .filter(|((_, pid), _)| *pid == producer_id)
            .map(|(_, offsets)| offsets.len())
            .sum();
        let mine = self.staged.get(&(group.to_owned(), producer_id));
        let new: std::collections::BTreeSet<&(String, i32)> = partitions
            .iter()
            .filter(|tp| mine.is_none_or(|m| !m.contains_key(*tp)))
            .collect();
        held + new.len()
    }

    /// Ends a transaction's offsets in `groups`: commit makes the staged ones committed,
    /// abort drops them. A group whose commit could not be written is returned with the error
    /// (its staged offsets are dropped either way, as Apache drops them when its append fails).
    pub fn complete(
        &mut self,
        groups: &[String],
        producer_id: i64,
        commit: bool,
    ) -> Vec<(String, io::Error)> {
        let mut failed = Vec::new();
        for group in groups {
            let Some(staged) = self.staged.remove(&(group.clone(), producer_id)) else {
                continue;
            };
            if commit {
                if let Err(e) = self.commit(group, staged.into_iter().collect()) {
                    failed.push((group.clone(), e));
                }
            }
        }
        failed
    }

    /// Whether any transaction has staged an offset for this partition (OffsetFetch with
    /// require_stable answers UNSTABLE_OFFSET_COMMIT for it).
    pub fn has_staged(&self, group: &str, topic: &str, partition: i32) -> bool {
        self.staged.iter().any(|((g, _), offsets)| {
            g == group && offsets.contains_key(&(topic.to_owned(), partition))
        })
    }

    /// The group's lock, held while its file is read and written: a peer coordinating the
    /// group at the same moment commits or deletes in turn.
    fn lock(&self, group: &str) -> io::Result<FileLock> {
        FileLock::exclusive(&self.locks.join(format!("{}.lock", file_component(group))))
    }

    /// Removes a group's committed offsets (DeleteGroups); whether it had any. Under the
    /// group's lock, so a peer's commit in the middle is not written back over the deletion
    /// with the offsets it read before.
    pub fn delete_group(&mut self, group: &str) -> io::Result<bool> {
        let _lock = self.lock(group)?;
        let had = self.has_offsets(group)?;
        self.groups.remove(group);
        match std::fs::remove_file(self.path(group)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        Ok(had)
    }

    /// Whether any group has offsets on disk (from an earlier run).
    pub fn has_any_group(&self) -> io::Result<bool> {
        Ok(std::fs::read_dir(&self.dir)?.next().is_some())
    }

    /// Whether the group has any committed offset.
    pub fn has_offsets(&mut self, group: &str) -> io::Result<bool> {
        Ok(!self.load(group)?.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_over_apaches_limit_is_refused() {
        let ok = "m".repeat(MAX_METADATA_BYTES);
        assert_eq!(
            Committed::from_commit(1, -1, Some(&ok))
                .unwrap()
                .metadata
                .as_deref(),
            Some(ok.as_str())
        );
        let long = "m".repeat(MAX_METADATA_BYTES + 1);
        assert_eq!(
            Committed::from_commit(1, -1, Some(&long)),
            Err(crate::errors::OFFSET_METADATA_TOO_LARGE)
        );
    }

    #[test]
    fn commits_persist_in_the_kaas_envelope() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = OffsetStore::open(dir.path()).unwrap();
        let c = |o| Committed {
            offset: o,
            leader_epoch: -1,
            metadata: Some(String::new()),
        };
        s.commit("g/1", vec![(("t".into(), 0), c(5))]).unwrap();
        s.commit("g/1", vec![(("t".into(), 1), c(7))]).unwrap();
        let file = dir.path().join("__consumer_offsets/g%2F1.json");
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            r#"{"offsets":{"t/0":5,"t/1":7},"metadata":{"t/0":"","t/1":""}}"#
        );
        let mut again = OffsetStore::open(dir.path()).unwrap();
        assert_eq!(again.get("g/1", "t", 1).unwrap(), Some(c(7)));
        assert_eq!(again.get("g/1", "t", 2).unwrap(), None);
    }

    #[test]
    fn staged_offsets_commit_or_vanish_with_their_transaction() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = OffsetStore::open(dir.path()).unwrap();
        let c = |o| Committed {
            offset: o,
            leader_epoch: -1,
            metadata: Some(String::new()),
        };
        s.stage("g", 7, vec![(("t".into(), 0), c(3))]);
        s.stage("g", 8, vec![(("t".into(), 1), c(4))]);
        assert!(s.has_staged("g", "t", 0) && s.has_staged("g", "t", 1));
        assert_eq!(s.get("g", "t", 0).unwrap(), None, "staged is not committed");
        assert!(s.complete(&["g".into()], 7, true).is_empty());
        assert!(!s.has_staged("g", "t", 0));
        assert_eq!(s.get("g", "t", 0).unwrap(), Some(c(3)));
        assert!(s.complete(&["g".into()], 8, false).is_empty());
        assert!(!s.has_staged("g", "t", 1));
        assert_eq!(
            s.get("g", "t", 1).unwrap(),
            None,
            "aborted offsets are dropped"
        );
    }

    #[test]
    fn a_group_committed_by_a_peer_reads_as_the_peer_left_it() {
        // The group's coordinator moved to a peer and back (or this broker was paused past the
        // member timeout): what this broker cached is not what the group committed.
        let dir = tempfile::tempdir().unwrap();
        let c = |o| Committed {
            offset: o,
            leader_epoch: -1,
            metadata: Some(String::new()),
        };
        let mut here = OffsetStore::open(dir.path()).unwrap();
        let mut peer = OffsetStore::open(dir.path()).unwrap();
        here.commit("g", vec![(("t".into(), 0), c(5))]).unwrap();
        assert_eq!(peer.get("g", "t", 0).unwrap(), Some(c(5)));
        peer.commit("g", vec![(("t".into(), 0), c(9))]).unwrap();
        assert_eq!(here.get("g", "t", 0).unwrap(), Some(c(9)));
        // A commit here keeps the peer's other partitions.
        peer.commit("g", vec![(("t".into(), 1), c(3))]).unwrap();
        here.commit("g", vec![(("t".into(), 2), c(1))]).unwrap();
        let all: Vec<i64> = peer
            .all("g")
            .unwrap()
            .iter()
            .map(|(_, c)| c.offset)
            .collect();
        assert_eq!(all, [9, 3, 1]);
        assert!(peer.delete_group("g").unwrap());
        assert!(!here.has_offsets("g").unwrap(), "deleted by the peer");
        assert_eq!(
            std::fs::read_dir(dir.path().join("__consumer_offsets"))
                .unwrap()
                .count(),
            0,
            "no lock file among the groups"
        );
    }

    #[test]
    fn a_deletion_waits_for_a_peers_commit_to_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = OffsetStore::open(dir.path()).unwrap();
        let c = Committed {
            offset: 4,
            leader_epoch: -1,
            metadata: None,
        };
        store.commit("g", vec![(("t".into(), 0), c)]).unwrap();
        // A peer in the middle of a commit holds the group's lock.
        let held = store.lock("g").unwrap();
        let (done, deleted) = std::sync::mpsc::channel();
        let deleting = std::thread::spawn(move || {
            let had = store.delete_group("g").unwrap();
            done.send(had).unwrap();
        });
        assert!(
            deleted
                .recv_timeout(std::time::Duration::from_millis(300))
                .is_err(),
            "deleted while a peer held the group"
        );
        drop(held);
        assert_eq!(
            deleted.recv_timeout(std::time::Duration::from_secs(10)),
            Ok(true)
        );
        deleting.join().unwrap();
    }
}
