//! The kaas transaction coordinator for one broker (which coordinates every transactional id),
//! as the kaas spec describes it: Apache's contract with kaas's documented deviations.
//!
//! Every mutation runs under one lock and re-reads its slot file. EndTxn is two-phase: the
//! Prepare* state (with its partition and group lists, the durable dispatch set) is written
//! first, then a COMMIT/ABORT control batch goes to every partition (fsync'd), then Complete*
//! clears the lists and fires the offset hook. A dispatch failure answers 15 and leaves the
//! entry prepared for a retry or the reconcile to finish.

use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;

use super::slots::{SlotStore, TxnEntry, TxnState};
use super::{Host, MarkerTarget};
use crate::errors::{self, ErrorCode};
use crate::lock_order::{Level, OrderedGuard, OrderedMutex};
use crate::peer_files::{QueuedMarker, QueuedTopic};
use crate::planted::Bug;
use crate::storage::atomic::{read_if_present, write_atomic};
use crate::storage::batch;
use crate::storage::now_ms;

/// The epoch at which a rejoin rotates to a fresh producer id (Apache's "epoch exhausted":
/// i16::MAX stays free for the epoch bump of a timeout abort).
pub const EPOCH_EXHAUSTED: i16 = i16::MAX - 1;
use crate::storage::offsets::Committed;

/// The coordinator. Its guard is the outermost lock of the broker (`lock_order`): under it a
/// mutation may take the offsets, the topic registry, a partition log and the producer-id
/// allocator, one after the other in that order, and nothing it calls takes the guard again.
#[derive(Debug)]
pub struct TxnCoordinator {
    slots: SlotStore,
    lock: OrderedMutex<()>,
    fences_path: PathBuf,
    /// The shared cluster directory (the marker queue lives there).
    cluster_dir: PathBuf,
    limits: crate::limits::Limits,
    /// Bugs planted on purpose (none but in a `planted-bugs` build's tests).
    pub planted: crate::planted::Planted,
}

/// The wire code for an invalid transition: kaas answers 50 where Apache answers
/// INVALID_TXN_STATE (48) — the spec's "one honest wart".
pub const INVALID_TRANSITION: ErrorCode = ErrorCode(errors::INVALID_TRANSACTION_TIMEOUT);

fn io_code(e: io::Error) -> ErrorCode {
    tracing::warn!(error = %e, "transaction state store failed");
    ErrorCode(errors::COORDINATOR_NOT_AVAILABLE)
}

/// The checks AddPartitionsToTxn, AddOffsetsToTxn and EndTxn share, in Apache's order:
/// unknown id or PID mismatch → 49, epoch mismatch → 90.
fn check_producer(entry: &Option<TxnEntry>, pid: i64, epoch: i16) -> Result<&TxnEntry, ErrorCode> {
    match entry {
        None => Err(ErrorCode(errors::INVALID_PRODUCER_ID_MAPPING)),
        Some(e) if e.pid != pid => Err(ErrorCode(errors::INVALID_PRODUCER_ID_MAPPING)),
        Some(e) if e.epoch != epoch => Err(ErrorCode(errors::PRODUCER_FENCED)),
        Some(e) => Ok(e),
    }
}

impl TxnCoordinator {
    /// A coordinator on the cluster directory, holding each transaction to `limits`.
    pub fn new(
        cluster_dir: &std::path::Path,
        broker_id: i32,
        limits: crate::limits::Limits,
    ) -> TxnCoordinator {
        TxnCoordinator {
            limits,
            slots: SlotStore::new(cluster_dir),
            lock: OrderedMutex::new(Level::TxnCoordinator, ()),
            fences_path: cluster_dir
                .join("producer_fences")
                .join(format!("from-kaas-{broker_id}.json")),
            cluster_dir: cluster_dir.to_owned(),
            planted: crate::planted::Planted::default(),
        }
    }

    fn guard(&self) -> OrderedGuard<std::sync::MutexGuard<'_, ()>> {
        self.lock.lock()
    }

    /// The stored entry of a transactional id.
    pub fn entry(&self, transactional_id: &str) -> io::Result<Option<TxnEntry>> {
        self.slots.get(transactional_id)
    }

    /// InitProducerId, transactional path: first call → fresh PID at epoch 0; every rejoin →
    /// same PID, epoch + 1 (a fresh PID at epoch 0 once the epoch reaches i16::MAX - 1, as
    /// Apache 3.7 rotates: it keeps i16::MAX for the bump of an abort; checked live by
    /// scenario init-producer-id-epoch-overflow). The state is
    /// never changed by a rejoin (kaas: no abort of an Ongoing transaction); Prepare* answers
    /// 51. The timeout is recorded, not validated (kaas). Fences the old epoch after a bump.
    pub fn init_producer_id(
        &self,
        host: &dyn Host,
        transactional_id: &str,
        timeout_ms: i32,
    ) -> Result<(i64, i16), ErrorCode> {
        let _g = self.guard();
        let allocate = || host.allocate_pid();
        let result = self
            .slots
            .update(transactional_id, |entry| match entry {
                None => match allocate() {
                    Ok(pid) => {
                        *entry = Some(TxnEntry {
                            pid,
                            epoch: 0,
                            partitions: Vec::new(),
                            ongoing_since_ms: 0,
                            transaction_timeout_ms: timeout_ms,
                            state: TxnState::Empty,
                            groups: Vec::new(),
                            markers_refused: false,
                        });
                        (Ok((pid, 0)), true)
                    }
                    Err(e) => (Err(io_code(e)), false),
                },
                Some(e) if matches!(e.state, TxnState::PrepareCommit | TxnState::PrepareAbort) => {
                    (Err(ErrorCode(errors::CONCURRENT_TRANSACTIONS)), false)
                }
                Some(e) if e.epoch >= EPOCH_EXHAUSTED => match allocate() {
                    Ok(pid) => {
                        e.pid = pid;
                        e.epoch = 0;
                        e.state = TxnState::Empty;
                        e.partitions.clear();
                        e.groups.clear();
                        e.ongoing_since_ms = 0;
                        e.transaction_timeout_ms = timeout_ms;
                        (Ok((pid, 0)), true)
                    }
                    Err(err) => (Err(io_code(err)), false),
                },
                Some(e) => {
                    e.epoch += 1;
                    e.transaction_timeout_ms = timeout_ms;
                    (Ok((e.pid, e.epoch)), true)
                }
            })
            .map_err(io_code)?;
        if let Ok((pid, epoch)) = result {
            if epoch > 0 {
                self.fence(host, pid, epoch);
            }
        }
        result
    }

    /// Fences every epoch below `epoch` of `pid`: on each local partition, and in this broker's
    /// outbound fence file for peers.
    fn fence(&self, host: &dyn Host, pid: i64, epoch: i16) {
        for log in host.partition_logs() {
            log.lock().fence_producer(pid, epoch);
        }
        let result = (|| -> io::Result<()> {
            let mut fences: BTreeMap<String, i16> = match read_if_present(&self.fences_path)? {
                Some(b) => serde_json::from_slice(&b)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?,
                None => BTreeMap::new(),
            };
            let key = pid.to_string();
            if fences.get(&key).is_some_and(|stored| *stored >= epoch) {
                return Ok(());
            }
            fences.insert(key, epoch);
            write_atomic(&self.fences_path, &serde_json::to_vec(&fences)?)
        })();
        if let Err(e) = result {
            tracing::warn!(error = %e, "fence file not written");
        }
    }

    /// The shared shape of AddPartitionsToTxn and AddOffsetsToTxn: Apache's checks (unknown id
    /// or PID → 49, epoch → 90, Prepare* → 51), then `add` (told whether the transaction is
    /// already Ongoing; answers whether it changed the entry, or an error code). An entry that
    /// was not Ongoing becomes Ongoing and stamps the reaper's clock. Nothing changed, nothing
    /// written.
    fn add_to_transaction(
        &self,
        transactional_id: &str,
        pid: i64,
        epoch: i16,
        add: impl FnOnce(&mut TxnEntry, bool) -> Result<bool, ErrorCode>,
    ) -> ErrorCode {
        let _g = self.guard();
        self.slots
            .update(transactional_id, |entry| {
                if let Err(code) = check_producer(entry, pid, epoch) {
                    return (code, false);
                }
                let e = entry.as_mut().expect("checked");
                if matches!(e.state, TxnState::PrepareCommit | TxnState::PrepareAbort) {
                    return (ErrorCode(errors::CONCURRENT_TRANSACTIONS), false);
                }
                // A peer has not yet written every marker of the producer's last transaction
                // (queued under the producer's id and epoch: a second would overwrite the
                // first, and one marker would end two transactions). Apache answers 51 too
                // while its markers are in flight; here that lasts up to a marker poll.
                if !self.planted.has(Bug::PeerMarkerOverwritten)
                    && crate::peer_files::queued_for(&self.cluster_dir, pid).unwrap_or(true)
                {
                    return (ErrorCode(errors::CONCURRENT_TRANSACTIONS), false);
                }
                let ongoing = e.state == TxnState::Ongoing;
                match add(e, ongoing) {
                    Err(code) => (code, false),
                    Ok(changed) if ongoing => (ErrorCode(errors::NONE), changed),
                    Ok(_) => {
                        e.state = TxnState::Ongoing;
                        e.ongoing_since_ms = now_ms();
                        (ErrorCode(errors::NONE), true)
                    }
                }
            })
            .unwrap_or_else(io_code)
    }

    /// AddPartitionsToTxn's store step: the union of the partitions (re-adding is a no-op);
    /// POLICY_VIOLATION, nothing added, if the union would be over `max_partitions_per_txn`.
    pub fn add_partitions(
        &self,
        transactional_id: &str,
        pid: i64,
        epoch: i16,
        partitions: &[(String, i32)],
    ) -> ErrorCode {
        let max = self.limits.max_partitions_per_txn;
        self.add_to_transaction(transactional_id, pid, epoch, |e, _| {
            let new: std::collections::BTreeSet<&(String, i32)> = partitions
                .iter()
                .filter(|(t, p)| !e.contains(t, *p))
                .collect();
            let held: usize = e.partitions.iter().map(|t| t.partitions.len()).sum();
            crate::limits::check_count(
                "Partitions in one transaction",
                held + new.len(),
                max,
                "max-partitions-per-txn",
            )
            .map_err(|r| {
                tracing::info!(transactional_id, reason = %r.message, "refused");
                ErrorCode(r.code)
            })?;
            Ok(new
                .into_iter()
                .fold(false, |changed, (t, p)| e.add(t, *p) | changed))
        })
    }

    /// AddOffsetsToTxn's store step. An empty group id is an invalid transition (wire 50).
    pub fn add_offsets(
        &self,
        transactional_id: &str,
        pid: i64,
        epoch: i16,
        group: &str,
    ) -> ErrorCode {
        self.add_to_transaction(transactional_id, pid, epoch, |e, _| {
            if group.is_empty() {
                return Err(INVALID_TRANSITION);
            }
            if e.groups.iter().any(|g| g == group) {
                return Ok(false);
            }
            crate::limits::check_count(
                "Groups in one transaction",
                e.groups.len() + 1,
                self.limits.max_groups_per_txn,
                "max-groups-per-txn",
            )
            .map_err(|r| {
                tracing::info!(transactional_id, reason = %r.message, "refused");
                ErrorCode(r.code)
            })?;
            e.groups.push(group.to_owned());
            Ok(true)
        })
    }

    /// EndTxn: prepare, dispatch markers, complete.
    pub fn end_txn(
        &self,
        host: &dyn Host,
        transactional_id: &str,
        pid: i64,
        epoch: i16,
        commit: bool,
    ) -> ErrorCode {
        let _g = self.guard();
        let (prepare, complete) = match commit {
            true => (TxnState::PrepareCommit, TxnState::CompleteCommit),
            false => (TxnState::PrepareAbort, TxnState::CompleteAbort),
        };
        let planted = self.planted;
        let prepared = self.slots.update(transactional_id, |entry| {
            let epoch = match entry {
                Some(e) if planted.has(Bug::EndTxnEpochOffByOne) && e.epoch == epoch + 1 => e.epoch,
                _ => epoch,
            };
            if let Err(code) = check_producer(entry, pid, epoch) {
                return (Err(code), false);
            }
            let e = entry.as_mut().expect("checked");
            match e.state {
                TxnState::Ongoing => {
                    e.state = prepare;
                    (Ok(Some(e.clone())), true)
                }
                // A partition refused a marker: Apache's coordinator has given up on the
                // transaction, and answers as for any whose markers are in flight.
                s if s == prepare && e.markers_refused => {
                    (Err(ErrorCode(errors::CONCURRENT_TRANSACTIONS)), false)
                }
                // A retry of a prepare whose dispatch failed: finish it.
                s if s == prepare => (Ok(Some(e.clone())), false),
                // The other direction while one is prepared: Apache answers 51 whichever way
                // it is asked (scenario marker-refused-transaction-stays-prepared).
                TxnState::PrepareCommit | TxnState::PrepareAbort => {
                    (Err(ErrorCode(errors::CONCURRENT_TRANSACTIONS)), false)
                }
                // A retry of a completed EndTxn: nothing more to write.
                s if s == complete => (Ok(None), false),
                _ => (Err(INVALID_TRANSITION), false),
            }
        });
        match prepared {
            Err(e) => io_code(e),
            Ok(Err(code)) => code,
            Ok(Ok(None)) => ErrorCode(errors::NONE),
            Ok(Ok(Some(entry))) => {
                // Apache answers once the transaction is prepared, whatever its markers meet;
                // so does a dispatch that a partition refused.
                match self.dispatch_and_complete(host, transactional_id, &entry) {
                    Ok(_) => ErrorCode(errors::NONE),
                    Err(e) => {
                        tracing::warn!(transactional_id, error = %e, "marker dispatch failed; entry left prepared");
                        ErrorCode(errors::COORDINATOR_NOT_AVAILABLE)
                    }
                }
            }
        }
    }

    /// Writes the markers a prepared entry owes, then completes it (lock held by the caller);
    /// `Ok(false)` when a partition refused its marker ([`TxnEntry::markers_refused`]): the
    /// others are written, the groups' offsets settled (their markers are not refused), and
    /// the entry stays prepared for good, as Apache's coordinator leaves it.
    fn dispatch_and_complete(
        &self,
        host: &dyn Host,
        transactional_id: &str,
        entry: &TxnEntry,
    ) -> io::Result<bool> {
        let commit = entry.state == TxnState::PrepareCommit;
        let mut refused = false;
        // Self-led partitions first, appended directly; then one queue file per peer that
        // leads others (kaas's order: a crash mid-dispatch never loses the local markers).
        let mut queues: BTreeMap<i32, Vec<QueuedTopic>> = BTreeMap::new();
        for tp in &entry.partitions {
            for &p in &tp.partitions {
                match host.marker_target(&tp.topic, p) {
                    MarkerTarget::Local(log) => {
                        let mut log = log.lock();
                        // Apache's log refuses a marker older than the producer's epoch there
                        // (a batch may have carried a newer one), and its coordinator gives up
                        // on the transaction.
                        if log.refuses_marker(entry.pid, entry.epoch) {
                            tracing::warn!(transactional_id, topic = %tp.topic, partition = p, "marker refused: the partition has seen a newer producer epoch; the transaction stays prepared");
                            refused = true;
                            continue;
                        }
                        let marker =
                            batch::control_batch(entry.pid, entry.epoch, commit, 0, now_ms());
                        log.append_control(marker)?;
                    }
                    MarkerTarget::Peer(to) => {
                        let topics = queues.entry(to).or_default();
                        match topics.iter_mut().find(|t| t.topic == tp.topic) {
                            Some(t) => t.partitions.push(p),
                            None => topics.push(QueuedTopic {
                                topic: tp.topic.clone(),
                                partitions: vec![p],
                            }),
                        }
                    }
                    MarkerTarget::Gone => {
                        tracing::warn!(topic = %tp.topic, partition = p, "marker skipped: partition gone");
                    }
                    MarkerTarget::NoLeader => {
                        return Err(io::Error::other(format!(
                            "no broker alive leads {}-{p}",
                            tp.topic
                        )))
                    }
                }
            }
        }
        host.appended();
        for (to, partitions) in queues {
            host.enqueue(
                to,
                &QueuedMarker {
                    transactional_id: transactional_id.to_owned(),
                    producer_id: entry.pid,
                    producer_epoch: entry.epoch,
                    commit,
                    coordinator_epoch: 0,
                    partitions,
                },
            )?;
        }
        let groups = entry.groups.clone();
        let pid = entry.pid;
        if refused {
            self.slots.update(transactional_id, |e| match e {
                Some(e) if e.pid == pid && e.state == entry.state => {
                    e.markers_refused = true;
                    e.groups.clear();
                    ((), true)
                }
                _ => ((), false),
            })?;
            self.offset_hook(host, &groups, pid, commit);
            return Ok(false);
        }
        self.slots.update(transactional_id, |e| match e {
            Some(e) if e.pid == pid && e.state == entry.state => {
                e.state = match commit {
                    true => TxnState::CompleteCommit,
                    false => TxnState::CompleteAbort,
                };
                e.partitions.clear();
                e.groups.clear();
                e.ongoing_since_ms = 0;
                ((), true)
            }
            _ => ((), false),
        })?;
        self.offset_hook(host, &groups, pid, commit);
        Ok(true)
    }

    /// Commit makes staged offsets visible; abort drops them (one step under the offsets lock).
    fn offset_hook(&self, host: &dyn Host, groups: &[String], pid: i64, commit: bool) {
        let commit = commit || self.planted.has(Bug::AbortKeepsStagedOffsets);
        let mut offsets = host.offsets().lock();
        let mut groups = groups.to_vec();
        if commit && self.planted.has(Bug::CommitDropsSomeGroups) {
            let dropped: Vec<String>;
            (dropped, groups) = groups.into_iter().partition(|g| g.len() >= 250);
            offsets.complete(&dropped, pid, false);
        }
        for (group, e) in offsets.complete(&groups, pid, commit) {
            tracing::warn!(group = %group, error = %e, "staged offsets not committed");
        }
    }

    /// TxnOffsetCommit's store step: the transaction must exist with this PID (else 49) and be
    /// Ongoing with the group added (else INVALID_TXN_STATE, as Apache's verification answers);
    /// then `stage` is told NONE and returns the offsets to stage, or is told the error.
    /// Epoch, generation and member are not checked (kaas). The check and the staging happen
    /// under the coordinator's guard, so an EndTxn cannot complete between them and strand
    /// offsets that no transaction will ever end.
    pub fn stage_offset_commit(
        &self,
        host: &dyn Host,
        transactional_id: &str,
        pid: i64,
        group: &str,
        stage: impl FnOnce(ErrorCode) -> Vec<((String, i32), Committed)>,
    ) {
        let _g = self.guard();
        let code = match self.slots.get(transactional_id) {
            Err(e) => io_code(e),
            Ok(None) => ErrorCode(errors::INVALID_PRODUCER_ID_MAPPING),
            Ok(Some(e)) if e.pid != pid => ErrorCode(errors::INVALID_PRODUCER_ID_MAPPING),
            Ok(Some(_)) if self.planted.has(Bug::OffsetsOutsideTransaction) => {
                ErrorCode(errors::NONE)
            }
            // Apache verifies a transactional offset commit with the transaction coordinator,
            // which answers a transaction still writing its markers CONCURRENT_TRANSACTIONS
            // before it looks at what was added; the group coordinator answers that as
            // COORDINATOR_NOT_AVAILABLE (scenario txn-offset-commit-while-prepared).
            Ok(Some(e)) if matches!(e.state, TxnState::PrepareCommit | TxnState::PrepareAbort) => {
                ErrorCode(errors::COORDINATOR_NOT_AVAILABLE)
            }
            Ok(Some(e)) if e.state == TxnState::Ongoing && e.groups.iter().any(|g| g == group) => {
                ErrorCode(errors::NONE)
            }
            Ok(Some(_)) => ErrorCode(errors::INVALID_TXN_STATE),
        };
        let staged = stage(code);
        if code == ErrorCode(errors::NONE) && !staged.is_empty() {
            let mut offsets = host.offsets().lock();
            offsets.stage(group, pid, staged);
            if self.planted.has(Bug::GroupCommitBeforeMarkers) {
                offsets.complete(&[group.to_owned()], pid, true);
            }
        }
    }

    /// Produce's check for a transactional batch (Apache 3.7's partition verification): the
    /// producer's transaction must be Ongoing with this partition added. 49 → as is, epoch
    /// mismatch → INVALID_PRODUCER_EPOCH, not added → INVALID_TXN_STATE.
    pub fn check_produce(
        &self,
        transactional_id: &str,
        pid: i64,
        epoch: i16,
        topic: &str,
        partition: i32,
    ) -> ErrorCode {
        match self.slots.get(transactional_id) {
            Err(e) => io_code(e),
            Ok(None) => ErrorCode(errors::INVALID_PRODUCER_ID_MAPPING),
            Ok(Some(e)) if e.pid != pid => ErrorCode(errors::INVALID_PRODUCER_ID_MAPPING),
            Ok(Some(e)) if e.epoch != epoch => ErrorCode(errors::INVALID_PRODUCER_EPOCH),
            Ok(Some(e)) if e.state == TxnState::Ongoing && e.contains(topic, partition) => {
                ErrorCode(errors::NONE)
            }
            Ok(Some(_)) => ErrorCode(errors::INVALID_TXN_STATE),
        }
    }

    /// One reaper + reconcile tick over the transactional ids this broker coordinates:
    /// Ongoing transactions past their timeout become PrepareAbort
    /// with an epoch bump; then every Prepare* entry gets its markers (if it has partitions)
    /// and completes. Failures are retried on the next tick.
    pub fn tick(&self, host: &dyn Host) {
        let _g = self.guard();
        let now = now_ms();
        let entries = match self.slots.all() {
            Ok(e) => e,
            Err(e) => {
                tracing::warn!(error = %e, "reaper could not read the slots");
                return;
            }
        };
        for (id, e) in entries.iter().filter(|(id, _)| host.coordinates(id)) {
            let expired = e.state == TxnState::Ongoing
                && e.ongoing_since_ms != 0
                && e.transaction_timeout_ms > 0
                && e.ongoing_since_ms + i64::from(e.transaction_timeout_ms) <= now;
            if expired {
                tracing::info!(transactional_id = %id, "transaction timed out: aborting");
                let planted = self.planted;
                let _ = self.slots.update(id, |entry| match entry {
                    Some(x) if x.state == TxnState::Ongoing => {
                        x.state = match planted.has(Bug::TimeoutCommits) {
                            true => TxnState::PrepareCommit,
                            false => TxnState::PrepareAbort,
                        };
                        x.epoch = x.epoch.saturating_add(1);
                        x.ongoing_since_ms = 0;
                        ((), true)
                    }
                    _ => ((), false),
                });
            }
        }
        let entries = self.slots.all().unwrap_or_default();
        for (id, e) in entries.into_iter().filter(|(id, _)| host.coordinates(id)) {
            // One whose markers a partition refused is left prepared, as Apache leaves it.
            let prepared = matches!(e.state, TxnState::PrepareCommit | TxnState::PrepareAbort)
                && !e.markers_refused;
            // A transaction with groups and no partition (offsets only) owes no marker, but
            // completes all the same: its staged offsets are discarded and its id is free
            // again (without this its InitProducerId answered 51 for ever; found by kconform
            // fuzz, scenario reaper-aborts-offsets-only-transaction).
            if prepared {
                if let Err(err) = self.dispatch_and_complete(host, &id, &e) {
                    tracing::warn!(transactional_id = %id, error = %err, "reconcile failed; retrying next tick");
                }
            }
        }
    }
}
