//! The two pollers of a kaas cluster broker (kaas-internals §2), each a pass that the broker's
//! loops run every poll interval (2 s in kaas, `BrokerConfig::marker_poll` here):
//!
//! - the **MarkerWatcher** applies the COMMIT/ABORT markers coordinators queued for the
//!   partitions this broker leads. Where kaas skips a queued partition that its broker no
//!   longer leads, kaas-ref forwards it to the partition's leader now, and the lowest broker
//!   alive does the same for the inboxes of brokers that are down: Apache's coordinator keeps
//!   sending a marker until the partition's current leader has written it, and the spec
//!   documents only the delay of peer markers, not their loss.
//! - the **FenceWatcher** applies the producer-epoch bumps peers appended to their fence files
//!   to every partition this broker leads.

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::path::Path;

use crate::peer_files::{self, QueuedMarker, QueuedTopic};
use crate::state::State;
use crate::storage::{batch, cluster_dir, now_ms};

/// What a marker pass did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct MarkerPass {
    /// Markers appended to partitions this broker leads.
    pub applied: usize,
    /// Partitions sent on to the broker that leads them now.
    pub forwarded: usize,
}

/// One MarkerWatcher pass: this broker's inbox, and (on the lowest broker alive) the inboxes
/// of the brokers that are down.
pub fn apply_markers(state: &State) -> io::Result<MarkerPass> {
    // A topic a peer created may not be known here yet (no request has come since): a marker
    // for it must not read as one for a partition that is gone.
    state.sync_topics();
    let membership = &state.membership;
    let cluster = cluster_dir(&state.data_dir);
    let alive = membership.alive();
    let me = membership.me();
    let mut inboxes = vec![me];
    if alive.iter().min() == Some(&me) {
        inboxes.extend(
            membership
                .peers()
                .iter()
                .map(|p| p.id)
                .filter(|id| !alive.contains(id)),
        );
    }
    let mut pass = MarkerPass::default();
    let twice = state
        .config
        .planted
        .has(crate::planted::Bug::PeerMarkerAppliedTwice);
    if twice {
        again(state, &cluster, &mut pass)?;
    }
    let overwritten = state
        .config
        .planted
        .has(crate::planted::Bug::PeerMarkerOverwritten);
    for owner in inboxes {
        // Another broker is going through it: its entries are that broker's this pass.
        let Some(_pass_lock) = peer_files::try_lock_inbox(&cluster, owner)? else {
            continue;
        };
        for (path, marker) in peer_files::queued(&peer_files::inbox(&cluster, owner))? {
            // Empty or undecodable: left in place (a write in progress, or for an operator).
            let Some(marker) = marker else { continue };
            if overwritten && younger_than_a_poll(state, &path) {
                continue;
            }
            apply_one(state, &cluster, (owner, &path), &marker, &mut pass)?;
            match twice {
                true => std::fs::rename(&path, path.with_extension("again"))?,
                false => std::fs::remove_file(&path)?,
            }
        }
    }
    if pass.applied > 0 {
        state.appended.notify_waiters();
    }
    Ok(pass)
}

/// With [`crate::planted::Bug::PeerMarkerOverwritten`] planted, a queued marker waits in its
/// inbox until it is a whole `peer_poll` old: the next marker's window to write over it is
/// then at least a poll wherever the watcher's tick falls, so the tests that prove a judge
/// finds the defect do not depend on the machine being idle. An unreadable age applies.
fn younger_than_a_poll(state: &State, path: &Path) -> bool {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|queued| queued.elapsed().ok())
        .is_some_and(|age| age < state.config.peer_poll)
}

/// The planted [`crate::planted::Bug::PeerMarkerAppliedTwice`]: the markers this broker
/// applied at its last pass (kept beside its inbox as `*.again`, which no coordinator waits
/// on) are applied once more, and forgotten.
fn again(state: &State, cluster: &Path, pass: &mut MarkerPass) -> io::Result<()> {
    let inbox = peer_files::inbox(cluster, state.membership.me());
    let Ok(entries) = std::fs::read_dir(&inbox) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "again") {
            if let Ok(marker) = serde_json::from_slice::<QueuedMarker>(&std::fs::read(&path)?) {
                apply_one(
                    state,
                    cluster,
                    (state.membership.me(), &path),
                    &marker,
                    pass,
                )?;
            }
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}

/// Applies one queued marker: appended where this broker leads the partition, forwarded to the
/// leader elsewhere; an error (the file is kept, and tried again next pass) when a partition
/// has no leader alive or an append fails. `source` is the inbox's owner and the file the
/// marker was read from, which a forwarded part is named after.
fn apply_one(
    state: &State,
    cluster: &Path,
    source: (i32, &Path),
    marker: &QueuedMarker,
    pass: &mut MarkerPass,
) -> io::Result<()> {
    let mut elsewhere: BTreeMap<i32, Vec<QueuedTopic>> = BTreeMap::new();
    for t in &marker.partitions {
        for &p in &t.partitions {
            match state.led_partition(&t.topic, p) {
                Ok(log) => {
                    // No producer-epoch check here, unlike the coordinator's own partitions:
                    // the transaction completed when this file landed (kaas's peer markers are
                    // asynchronous), and a rejoin's fence may reach this broker first; refusing
                    // the marker then would leave a committed transaction unmarked
                    // (cluster-zombie-fenced-on-peer-partitions).
                    let batch = batch::control_batch(
                        marker.producer_id,
                        marker.producer_epoch,
                        marker.commit,
                        marker.coordinator_epoch,
                        now_ms(),
                    );
                    log.lock().append_control(batch)?;
                    pass.applied += 1;
                }
                Err(crate::errors::UNKNOWN_TOPIC_OR_PARTITION) => {
                    tracing::warn!(topic = %t.topic, partition = p, "queued marker skipped: partition gone");
                }
                Err(_) => {
                    let leader = state.membership.leader(&t.topic, p).ok_or_else(|| {
                        io::Error::other(format!("no broker alive leads {}-{p}", t.topic))
                    })?;
                    let topics = elsewhere.entry(leader.id).or_default();
                    match topics.iter_mut().find(|q| q.topic == t.topic) {
                        Some(q) => q.partitions.push(p),
                        None => topics.push(QueuedTopic {
                            topic: t.topic.clone(),
                            partitions: vec![p],
                        }),
                    }
                }
            }
        }
    }
    for (to, partitions) in elsewhere {
        pass.forwarded += partitions.iter().map(|t| t.partitions.len()).sum::<usize>();
        let part = QueuedMarker {
            partitions,
            ..marker.clone()
        };
        peer_files::forward(cluster, source.0, source.1, to, &part)?;
    }
    Ok(())
}

/// The FenceWatcher's memory: per peer fence file, the highest epoch applied per producer id.
#[derive(Debug, Default)]
pub struct FenceCache {
    applied: HashMap<std::path::PathBuf, HashMap<i64, i16>>,
}

/// One FenceWatcher pass: every (pid, epoch) a peer appended since the last pass is applied
/// to the partitions this broker leads. Returns how many were new.
pub fn apply_fences(state: &State, cache: &mut FenceCache) -> io::Result<usize> {
    state.sync_topics();
    let cluster = cluster_dir(&state.data_dir);
    let mut fresh = Vec::new();
    for path in peer_files::peer_fence_files(&cluster, state.membership.me())? {
        let seen = cache.applied.entry(path.clone()).or_default();
        for (pid, epoch) in peer_files::read_fence_file(&path)? {
            if seen.get(&pid).is_none_or(|e| *e < epoch) {
                seen.insert(pid, epoch);
                fresh.push((pid, epoch));
            }
        }
    }
    if !fresh.is_empty() {
        for log in crate::txn::Host::partition_logs(state) {
            let mut log = log.lock();
            for (pid, epoch) in &fresh {
                log.fence_producer(*pid, *epoch);
            }
        }
    }
    Ok(fresh.len())
}
