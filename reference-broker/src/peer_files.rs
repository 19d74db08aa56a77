//! What brokers of a kaas cluster tell each other through the shared volume, in kaas's file
//! formats (kaas-internals §1): producer fences (`producer_fences/from-kaas-<n>.json`, each
//! broker appending the epochs it bumped) and the marker queue
//! (`marker_queue/to-kaas-<n>/<pid>-<epoch>.json`, the COMMIT/ABORT markers a coordinator owes
//! partitions a peer leads). Reading and writing only; the watchers that poll them live in
//! `crate::watchers`.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::cluster::broker_name;
use crate::storage::atomic::{read_if_present, write_atomic};
use crate::storage::file_lock::FileLock;

/// The `*.json` files of a directory, sorted by name; none when it does not exist.
fn json_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// The fence files of every broker: producer id → the highest epoch any broker fenced to.
pub fn all_fences(cluster_dir: &Path) -> io::Result<BTreeMap<i64, i16>> {
    let mut out = BTreeMap::new();
    for path in json_files(&cluster_dir.join("producer_fences"))? {
        for (pid, epoch) in read_fence_file(&path)? {
            let e = out.entry(pid).or_insert(epoch);
            *e = (*e).max(epoch);
        }
    }
    Ok(out)
}

/// One broker's fence file (`{"<pid>": epoch, ...}`); an undecodable one reads as empty (a
/// peer's torn write is not this broker's failure).
pub fn read_fence_file(path: &Path) -> io::Result<Vec<(i64, i16)>> {
    let Some(bytes) = read_if_present(path)? else {
        return Ok(Vec::new());
    };
    let map: BTreeMap<String, i16> = serde_json::from_slice(&bytes).unwrap_or_default();
    Ok(map
        .into_iter()
        .filter_map(|(pid, epoch)| Some((pid.parse().ok()?, epoch)))
        .collect())
}

/// The fence files of the peers of broker `me`.
pub fn peer_fence_files(cluster_dir: &Path, me: i32) -> io::Result<Vec<PathBuf>> {
    let own = format!("from-{}.json", broker_name(me));
    Ok(json_files(&cluster_dir.join("producer_fences"))?
        .into_iter()
        .filter(|path| {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            name.starts_with("from-") && name != own
        })
        .collect())
}

/// The partitions of one topic in a queued marker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueuedTopic {
    /// Topic name.
    pub topic: String,
    /// Partition indexes.
    pub partitions: Vec<i32>,
}

/// A marker a coordinator owes the partitions a peer leads: kaas's queue entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueuedMarker {
    /// The transaction's id.
    pub transactional_id: String,
    /// Producer id.
    pub producer_id: i64,
    /// Producer epoch.
    pub producer_epoch: i16,
    /// COMMIT (true) or ABORT.
    pub commit: bool,
    /// Always 0 in kaas (the spec's deviation).
    pub coordinator_epoch: i32,
    /// The partitions, by topic.
    pub partitions: Vec<QueuedTopic>,
}

/// The inbox of broker `to`.
pub fn inbox(cluster_dir: &Path, to: i32) -> PathBuf {
    cluster_dir
        .join("marker_queue")
        .join(format!("to-{}", broker_name(to)))
}

/// Queues `marker` for broker `to`, durably (the file name makes a retry overwrite).
pub fn enqueue(cluster_dir: &Path, to: i32, marker: &QueuedMarker) -> io::Result<()> {
    let path = inbox(cluster_dir, to).join(format!(
        "{}-{}.json",
        marker.producer_id, marker.producer_epoch
    ));
    write_atomic(
        &path,
        &serde_json::to_vec(marker).map_err(io::Error::other)?,
    )
}

/// Sends on to broker `to` the `partitions` of a marker read from `source` (a file of broker
/// `from`'s inbox) that `to` leads now: a file of its own, named after its source
/// (`<pid>-<epoch>.from-kaas-<from>.json`), never merged into an entry `to` already holds.
/// `to`'s watcher may be applying that entry and about to remove it, so a read-merge-write
/// would lose these partitions, or bring back ones already applied; a file of its own is
/// simply the next pass's work. The name is the same each time the same source is forwarded,
/// so a pass retried after a crash rewrites it rather than queueing the marker twice, and it
/// begins `<pid>-` as kaas's names do, so [`queued_for`] still sees the transaction's debt.
pub fn forward(
    cluster_dir: &Path,
    from: i32,
    source: &Path,
    to: i32,
    marker: &QueuedMarker,
) -> io::Result<()> {
    let stem = source
        .file_stem()
        .and_then(|s| s.to_str())
        .ok_or_else(|| io::Error::other(format!("queue file {} has no name", source.display())))?;
    let path = inbox(cluster_dir, to).join(format!("{stem}.from-{}.json", broker_name(from)));
    write_atomic(
        &path,
        &serde_json::to_vec(marker).map_err(io::Error::other)?,
    )
}

/// The lock a watcher holds while it goes through `owner`'s inbox, `None` when another broker
/// holds it (the owner itself and the lowest broker alive, covering for an owner it counts
/// down, may both reach for the same inbox): whoever holds it applies each entry once, the
/// other passes and looks again next time rather than waiting on a holder that may be paused.
pub fn try_lock_inbox(cluster_dir: &Path, owner: i32) -> io::Result<Option<FileLock>> {
    FileLock::try_exclusive(&inbox(cluster_dir, owner).join("pass.lock"))
}

/// The queued markers of an inbox, oldest name first: each file with what it holds, `None`
/// for an empty or undecodable one (left in place, as kaas's watcher leaves it).
pub fn queued(inbox: &Path) -> io::Result<Vec<(PathBuf, Option<QueuedMarker>)>> {
    let mut out = Vec::new();
    for path in json_files(inbox)? {
        let marker = match read_if_present(&path)? {
            Some(bytes) => serde_json::from_slice(&bytes).ok(),
            // Applied and removed since it was listed.
            None => continue,
        };
        out.push((path, marker));
    }
    Ok(out)
}

/// Whether any broker's inbox still holds a marker of producer `pid`: a transaction of the
/// producer whose peer markers are not all written yet.
pub fn queued_for(cluster_dir: &Path, pid: i64) -> io::Result<bool> {
    let root = cluster_dir.join("marker_queue");
    let inboxes = match std::fs::read_dir(&root) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    let prefix = format!("{pid}-");
    for inbox in inboxes {
        let found = json_files(&inbox?.path())?.iter().any(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix))
        });
        if found {
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker(partitions: &[i32]) -> QueuedMarker {
        QueuedMarker {
            transactional_id: "tx".into(),
            producer_id: 7,
            producer_epoch: 2,
            commit: true,
            coordinator_epoch: 0,
            partitions: vec![QueuedTopic {
                topic: "t".into(),
                partitions: partitions.to_vec(),
            }],
        }
    }

    #[test]
    fn a_forward_survives_the_removal_of_the_entry_its_inbox_was_applying() {
        let dir = tempfile::tempdir().unwrap();
        // Broker 3's own entry for the transaction; its watcher reads it to apply it.
        enqueue(dir.path(), 3, &marker(&[0])).unwrap();
        let read = queued(&inbox(dir.path(), 3)).unwrap();
        // Meanwhile broker 1 sends on partition 1 of the same transaction, which 3 leads now.
        enqueue(dir.path(), 1, &marker(&[1])).unwrap();
        let source = inbox(dir.path(), 1).join("7-2.json");
        forward(dir.path(), 1, &source, 3, &marker(&[1])).unwrap();
        // Broker 3 has applied partition 0 and removes what it read.
        std::fs::remove_file(&read[0].0).unwrap();
        let left = queued(&inbox(dir.path(), 3)).unwrap();
        assert_eq!(left.len(), 1, "{left:?}");
        assert!(left[0].0.ends_with("7-2.from-kaas-1.json"));
        assert_eq!(
            left[0].1.as_ref(),
            Some(&marker(&[1])),
            "partition 1 still owed, partition 0 not again"
        );
        assert!(queued_for(dir.path(), 7).unwrap(), "the debt is seen");
        // Forwarded again (a pass retried after a crash): rewritten, not queued twice; and on.
        forward(dir.path(), 1, &source, 3, &marker(&[1])).unwrap();
        assert_eq!(queued(&inbox(dir.path(), 3)).unwrap().len(), 1);
        forward(dir.path(), 3, &left[0].0, 4, &marker(&[1])).unwrap();
        assert!(inbox(dir.path(), 4)
            .join("7-2.from-kaas-1.from-kaas-3.json")
            .exists());
    }

    #[test]
    fn one_watcher_at_a_time_goes_through_an_inbox() {
        let dir = tempfile::tempdir().unwrap();
        let held = try_lock_inbox(dir.path(), 2).unwrap().expect("free");
        assert!(try_lock_inbox(dir.path(), 2).unwrap().is_none());
        assert!(
            try_lock_inbox(dir.path(), 3).unwrap().is_some(),
            "per inbox"
        );
        enqueue(dir.path(), 2, &marker(&[0])).unwrap();
        assert_eq!(
            queued(&inbox(dir.path(), 2)).unwrap().len(),
            1,
            "not listed"
        );
        drop(held);
        assert!(try_lock_inbox(dir.path(), 2).unwrap().is_some());
    }

    #[test]
    fn queued_markers_round_trip_and_a_retry_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let mut marker = marker(&[0, 1]);
        enqueue(dir.path(), 1, &marker).unwrap();
        marker.commit = false;
        enqueue(dir.path(), 1, &marker).unwrap();
        let inbox = inbox(dir.path(), 1);
        assert!(inbox.ends_with("marker_queue/to-kaas-1"));
        assert!(queued_for(dir.path(), 7).unwrap());
        assert!(
            !queued_for(dir.path(), 77).unwrap(),
            "7 is not a prefix of 77-"
        );
        std::fs::write(inbox.join("9-0.json"), b"{torn").unwrap();
        let q = queued(&inbox).unwrap();
        assert_eq!(q.len(), 2);
        assert!(q[0].0.ends_with("7-2.json"));
        assert_eq!(q[0].1.as_ref(), Some(&marker), "the retry overwrote");
        assert_eq!(q[1].1, None, "undecodable: left for a later poll");
        // kaas's field names.
        let text = std::fs::read_to_string(&q[0].0).unwrap();
        assert!(
            text.contains("\"transactionalId\":\"tx\"") && text.contains("\"coordinatorEpoch\":0")
        );
    }

    #[test]
    fn fences_read_the_highest_epoch_of_every_broker() {
        let dir = tempfile::tempdir().unwrap();
        let fences = dir.path().join("producer_fences");
        std::fs::create_dir_all(&fences).unwrap();
        std::fs::write(fences.join("from-kaas-0.json"), br#"{"7":3,"8":1}"#).unwrap();
        std::fs::write(fences.join("from-kaas-1.json"), br#"{"7":5}"#).unwrap();
        std::fs::write(fences.join("from-kaas-2.json"), b"torn").unwrap();
        let all = all_fences(dir.path()).unwrap();
        assert_eq!(all.into_iter().collect::<Vec<_>>(), [(7, 5), (8, 1)]);
        let peers = peer_fence_files(dir.path(), 0).unwrap();
        assert_eq!(peers.len(), 2);
        assert!(peers.iter().all(|p| !p.ends_with("from-kaas-0.json")));
    }
}
