//! One partition's log: a single append-only file of record batches as clients sent them, an
//! in-memory index rebuilt on open, and the idempotent-producer state derived from it.
//!
//! Recovery reads the file from the start, validating every batch's CRC, and truncates at the
//! first torn or corrupt batch: whatever was fsync'd before a crash is there after it, and
//! what was not acknowledged may be gone, never half there.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::Arc;

use super::batch::{self, BatchHeader};
use super::file_lock::HeldLock;
use super::now_ms;
use super::producers::ProducerState;
pub use super::producers::PRODUCER_WINDOW;
use crate::errors;
use crate::lock_order::{Level, OrderedMutex};

/// Where one batch sits.
#[derive(Debug, Clone, Copy)]
struct IndexEntry {
    base_offset: i64,
    last_offset: i64,
    position: u64,
    size: u32,
    max_timestamp: i64,
}

/// Why an append was refused, as a Kafka error code with a message.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AppendError {
    /// The Kafka error code to answer.
    pub code: i16,
    /// Why, for logs and error messages.
    pub message: String,
    /// Per-record refusals (record index in its batch, why), as Apache's record validation
    /// answers them: with these, `message` is the answer's error message.
    pub record_errors: Vec<(i32, String)>,
}

impl AppendError {
    /// A write or fsync of the log that failed: KAFKA_STORAGE_ERROR, with a message that says
    /// what failed but not where (the answer goes to clients; the log line keeps the path).
    fn storage(e: io::Error) -> AppendError {
        tracing::warn!(error = %e, "log write failed");
        AppendError {
            code: errors::KAFKA_STORAGE_ERROR,
            message: format!("the partition's log could not be written ({})", e.kind()),
            ..Default::default()
        }
    }
}

/// An aborted transaction on this partition: its producer, and the offsets of its first
/// record and of its ABORT marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbortedTxn {
    /// The producer.
    pub producer_id: i64,
    /// Offset of the transaction's first record here.
    pub first_offset: i64,
    /// Offset of the ABORT marker.
    pub last_offset: i64,
}

/// The fsyncs of one partition's log, shared by the appends that wait for one (group commit).
/// An acks=all Produce appends under the partition lock, releases it, then waits here until
/// its bytes are on disk: while one fsync runs, every append written before it started is
/// covered, and the appends queued behind it share the next one. Fifty producers on one
/// partition (franz-go's TestClient_Produce) then cost a handful of fsyncs, not fifty, and
/// nothing is acknowledged before it is durable.
#[derive(Debug)]
pub struct Durability {
    file: File,
    written: AtomicU64,
    synced: OrderedMutex<u64>,
}

impl Durability {
    /// Returns once every byte of the log up to `end` is on disk.
    pub fn sync_through(&self, end: u64) -> io::Result<()> {
        let mut synced = self.synced.lock();
        if *synced >= end {
            return Ok(());
        }
        // Everything written so far is covered by this fsync, not just `end`.
        let target = self.written.load(AtomicOrdering::Acquire);
        super::count_fsync();
        self.file.sync_data()?;
        *synced = target.max(end);
        Ok(())
    }
}

/// A successful append.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appended {
    /// Offset of the first record appended (or, for a duplicate, of the original).
    pub base_offset: i64,
    /// True when the batch was a retry of one already in the log and nothing was written.
    pub duplicate: bool,
    /// For a duplicate, the original batch's max timestamp, which Apache answers as the
    /// log-append time (scenario records-idempotent-duplicate-and-gap); otherwise -1.
    pub log_append_time: i64,
    /// The log's size after the append: what [`Durability::sync_through`] must cover before
    /// the append may be acknowledged (for a duplicate, everything written so far, the
    /// original among it).
    pub end: u64,
}

/// One partition's log.
#[derive(Debug)]
pub struct PartitionLog {
    path: PathBuf,
    file: File,
    /// Opened to append (a leader's log), not as a follower's view.
    writable: bool,
    durability: Arc<Durability>,
    /// The topic's `message.timestamp.type=LogAppendTime`: every batch appended, markers
    /// included, is stamped with the broker's time.
    log_append_time: bool,
    /// The topic's `cleanup.policy` includes compact: records need keys.
    compacted: bool,
    size: u64,
    index: Vec<IndexEntry>,
    log_start_offset: i64,
    next_offset: i64,
    producers: HashMap<i64, ProducerState>,
    /// Open transactions: producer id → offset of its first transactional record.
    open_txns: HashMap<i64, i64>,
    /// Apache 3.7's transaction verification state (KIP-890): producer id → (epoch, lowest
    /// sequence) of the transactional batches that asked to open a transaction here and have
    /// not been appended yet. A later batch of that producer starting above the lowest
    /// sequence is out of order. Memory only, as Apache's.
    verifying: HashMap<i64, (i16, i32)>,
    aborted: Vec<AbortedTxn>,
}

/// The log file inside a partition directory.
const LOG_FILE: &str = "00000000000000000000.log";

impl PartitionLog {
    /// Opens (creating if needed) the log in `dir`, recovering it.
    pub fn open(dir: &Path) -> io::Result<PartitionLog> {
        if !dir.exists() {
            super::faults::check(dir)?;
        }
        std::fs::create_dir_all(dir)?;
        let path = dir.join(LOG_FILE);
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)?;
        // Recovery may cut a torn tail: not while a peer is writing it.
        let _held = HeldLock::on(&file)?;
        Self::from_file(path, file, true)
    }

    /// The log in `dir` as it is on disk now, to read only: what a follower serves of a
    /// partition its peer leads on the shared volume. A batch still being written reads as the
    /// end of the log (nothing is truncated); appending to the view fails.
    pub fn view(dir: &Path) -> io::Result<PartitionLog> {
        let path = dir.join(LOG_FILE);
        let file = OpenOptions::new().read(true).open(&path)?;
        Self::from_file(path, file, false)
    }

    fn from_file(path: PathBuf, mut file: File, writable: bool) -> io::Result<PartitionLog> {
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let durability = Arc::new(Durability {
            file: file.try_clone()?,
            written: AtomicU64::new(0),
            synced: OrderedMutex::new(Level::PartitionSync, 0),
        });
        let mut log = PartitionLog {
            path,
            file,
            writable,
            durability,
            log_append_time: false,
            compacted: false,
            size: 0,
            index: Vec::new(),
            log_start_offset: 0,
            next_offset: 0,
            producers: HashMap::new(),
            open_txns: HashMap::new(),
            verifying: HashMap::new(),
            aborted: Vec::new(),
        };
        let mut at = 0usize;
        while at < bytes.len() {
            match batch::parse(&bytes[at..]) {
                Ok(h) => {
                    log.record(&h, at as u64);
                    at += h.size;
                }
                Err(e) => {
                    if writable {
                        tracing::warn!(log = %log.path.display(), at, error = %e, "truncating torn tail");
                    }
                    break;
                }
            }
        }
        if writable && (at as u64) < bytes.len() as u64 {
            log.file.set_len(at as u64)?;
            log.file.sync_all()?;
        }
        log.size = at as u64;
        log.durability
            .written
            .store(log.size, AtomicOrdering::Release);
        *log.durability.synced.lock() = log.size;
        if let Some(first) = log.index.first() {
            log.log_start_offset = first.base_offset;
        }
        Ok(log)
    }

    fn record(&mut self, h: &BatchHeader, position: u64) {
        self.index.push(IndexEntry {
            base_offset: h.base_offset,
            last_offset: h.last_offset(),
            position,
            size: h.size as u32,
            max_timestamp: h.max_timestamp,
        });
        self.next_offset = h.last_offset() + 1;
        if h.is_transactional() {
            // Data or marker, the producer's transaction here has begun or ended.
            self.verifying.remove(&h.producer_id);
        }
        if h.is_control() {
            // Any marker of the producer closes its open transaction, whatever its epoch.
            if let Some(first) = self.open_txns.remove(&h.producer_id) {
                if h.control_type == Some(batch::CONTROL_ABORT) {
                    self.aborted.push(AbortedTxn {
                        producer_id: h.producer_id,
                        first_offset: first,
                        last_offset: h.base_offset,
                    });
                }
            }
        } else if h.is_transactional() && h.producer_id >= 0 {
            self.open_txns.entry(h.producer_id).or_insert(h.base_offset);
        }
        if h.producer_id >= 0 {
            let p = self.producers.entry(h.producer_id).or_default();
            match h.is_control() {
                true => p.on_marker(h.producer_epoch, h.coordinator_epoch),
                false => p.on_batch(h),
            }
        }
    }

    /// The next offset to be written (the high watermark: one broker, so every append is
    /// committed once it is written).
    pub fn high_watermark(&self) -> i64 {
        self.next_offset
    }

    /// The last stable offset: the first offset of the oldest open transaction, or the high
    /// watermark when none is open.
    pub fn last_stable_offset(&self) -> i64 {
        self.open_txns
            .values()
            .copied()
            .min()
            .unwrap_or(self.next_offset)
    }

    /// Aborted transactions overlapping `[from, to)`, oldest first (Fetch's AbortedTransactions).
    pub fn aborted_between(&self, from: i64, to: i64) -> Vec<AbortedTxn> {
        self.aborted
            .iter()
            .filter(|a| a.last_offset >= from && a.first_offset < to)
            .copied()
            .collect()
    }

    /// Whether the producer has an open transaction here.
    pub fn has_open_txn(&self, producer_id: i64) -> bool {
        self.open_txns.contains_key(&producer_id)
    }

    /// Whole batches from `offset` on whose last offset is below `limit` (read_committed reads
    /// stop at the LSO), up to `max_bytes` but at least one batch.
    pub fn read_below(&self, offset: i64, limit: i64, max_bytes: usize) -> io::Result<Vec<u8>> {
        let bytes = self.read(offset, max_bytes)?;
        let mut at = 0;
        while at < bytes.len() {
            match batch::parse(&bytes[at..]) {
                Ok(h) if h.last_offset() < limit => at += h.size,
                _ => break,
            }
        }
        Ok(bytes[..at].to_vec())
    }

    /// The first offset still in the log.
    pub fn log_start_offset(&self) -> i64 {
        self.log_start_offset
    }

    /// Idempotence check for one batch; `Ok(Some((offset, max timestamp)))` for a duplicate
    /// of a batch already in the log.
    fn check_producer(&self, h: &BatchHeader) -> Result<Option<(i64, i64)>, AppendError> {
        if h.producer_id < 0 || h.is_control() {
            return Ok(None);
        }
        let fail = |code, message: String| {
            Err(AppendError {
                code,
                message,
                ..Default::default()
            })
        };
        if let Some(&(_, lowest)) = self.verifying.get(&h.producer_id) {
            if h.base_sequence > lowest {
                return fail(
                    errors::OUT_OF_ORDER_SEQUENCE_NUMBER,
                    format!(
                        "producer {} sequence {} is above {lowest}, the earliest seen while verifying its transaction",
                        h.producer_id, h.base_sequence
                    ),
                );
            }
        }
        let Some(p) = self.producers.get(&h.producer_id) else {
            return Ok(None);
        };
        p.check(h).or_else(|(code, message)| fail(code, message))
    }

    /// Notes that a transactional batch of `producer_id` asked to open a transaction here
    /// (before the coordinator is asked whether the partition is in it): the lowest sequence
    /// of such batches of the newest epoch is kept until one of the producer's transactional
    /// batches is appended, as Apache 3.7 keeps it (KIP-890).
    pub fn start_verification(&mut self, producer_id: i64, epoch: i16, sequence: i32) {
        let entry = self
            .verifying
            .entry(producer_id)
            .or_insert((epoch, sequence));
        if epoch > entry.0 {
            *entry = (epoch, sequence);
        } else if epoch == entry.0 && sequence < entry.1 {
            entry.1 = sequence;
        }
    }

    /// The partition directory.
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }

    /// Reads what peers wrote to the log since this broker last did, when the file says one
    /// did (one look at its length), keeping its configuration and the fences it applied: a
    /// broker that becomes the partition's leader on a shared volume takes over what the
    /// previous leader wrote, and one paused past the member timeout while a peer led serves
    /// the log as it now is.
    pub fn refresh(&mut self) -> io::Result<()> {
        if !self.writable || self.file.metadata()?.len() == self.size {
            return Ok(());
        }
        self.hold_latest().map(drop)
    }

    /// Takes the file's lock and reads what peers appended before it: what every write does
    /// first, so that it lands after them. The lock is held until the result is dropped.
    fn hold_latest(&mut self) -> io::Result<HeldLock> {
        let held = HeldLock::on(&self.file)?;
        self.catch_up()?;
        Ok(held)
    }

    /// Re-reads the log from its start when its length on disk is not the one this broker
    /// wrote it to (the caller holds the file's lock). Byte positions are the file's, so the
    /// group commit's durability carries on, and so do the fences this broker applied. The
    /// transaction verifications it held are dropped, as a new leader in Apache starts
    /// without them.
    fn catch_up(&mut self) -> io::Result<()> {
        if self.file.metadata()?.len() == self.size {
            return Ok(());
        }
        let mut file = self.file.try_clone()?;
        file.seek(SeekFrom::Start(0))?;
        let mut fresh = PartitionLog::from_file(self.path.clone(), file, self.writable)?;
        self.durability
            .written
            .fetch_max(fresh.size, AtomicOrdering::AcqRel);
        fresh.durability = self.durability.clone();
        fresh.log_append_time = self.log_append_time;
        fresh.compacted = self.compacted;
        for (pid, mine) in &self.producers {
            fresh.fence_producer(*pid, mine.epoch);
            let p = fresh.producers.entry(*pid).or_default();
            p.coordinator_epoch = p.coordinator_epoch.max(mine.coordinator_epoch);
        }
        *self = fresh;
        Ok(())
    }

    /// Applies the topic's configs that change appends: LogAppendTime stamping, and the
    /// compacted topic's refusal of records without a key.
    pub fn configure(&mut self, config: &super::topic_config::TopicConfig) {
        self.log_append_time = config.log_append_time;
        self.compacted = config.compacted;
    }

    /// Apache's record validation for a compacted topic: every record needs a key; the
    /// refusal is INVALID_RECORD with one record error per keyless record (compressed batches'
    /// records are not read here).
    fn validate_records(
        &self,
        payload: &[u8],
        batches: &[(BatchHeader, std::ops::Range<usize>)],
    ) -> Result<(), AppendError> {
        if !self.compacted {
            return Ok(());
        }
        let partition = self
            .path
            .parent()
            .and_then(|d| d.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // Batch by batch, as Apache validates: the first batch with keyless records is refused,
        // each record error naming the record's index in that batch.
        let errors: Vec<(i32, String)> = batches
            .iter()
            .filter(|(h, _)| !h.is_control())
            .map(|(_, range)| {
                batch::record_keys(&payload[range.clone()])
                    .unwrap_or_default()
                    .into_iter()
                    .enumerate()
                    .filter(|(_, has_key)| !has_key)
                    .map(|(i, _)| {
                        (
                            i as i32,
                            format!("Compacted topic cannot accept message without key in topic partition {partition}"),
                        )
                    })
                    .collect::<Vec<_>>()
            })
            .find(|errors| !errors.is_empty())
            .unwrap_or_default();
        if errors.is_empty() {
            return Ok(());
        }
        let shown: Vec<String> = errors
            .iter()
            .take(3)
            .map(|(i, m)| format!("RecordError(batchIndex={i}, message='{m}')"))
            .collect();
        Err(AppendError {
            code: errors::INVALID_RECORD,
            message: format!(
                "One or more records have been rejected due to {} record errors in total, and only showing the first three errors at most: [{}]",
                errors.len(),
                shown.join(", ")
            ),
            record_errors: errors,
        })
    }

    /// The log's group commit, for waiting on an append's durability without the log's lock.
    pub fn durability(&self) -> Arc<Durability> {
        self.durability.clone()
    }

    /// Validates and appends a Produce payload (one or more v2 batches). With `fsync`, returns
    /// only once the bytes are on disk; without, the caller waits on [`Durability`] for
    /// `Appended::end` after releasing the log (acks=all through group commit).
    pub fn append(&mut self, payload: &[u8], fsync: bool) -> Result<Appended, AppendError> {
        let appended = {
            // A peer that led the partition meanwhile may have written: append after it.
            let _held = self.hold_latest().map_err(AppendError::storage)?;
            self.append_locked(payload)?
        };
        self.synced(appended, fsync)
    }

    fn append_locked(&mut self, payload: &[u8]) -> Result<Appended, AppendError> {
        let log_append_time = self.log_append_time.then(now_ms);
        let batches = batch::split(payload).map_err(|e| AppendError {
            code: errors::CORRUPT_MESSAGE,
            message: e.to_string(),
            ..Default::default()
        })?;
        if batches.is_empty() {
            return Err(AppendError {
                code: errors::CORRUPT_MESSAGE,
                message: "no record batch".into(),
                ..Default::default()
            });
        }
        // Apache validates records before it checks the producer's sequence.
        self.validate_records(payload, &batches)?;
        if batches.len() == 1 {
            if let Some((offset, ts)) = self.check_producer(&batches[0].0)? {
                return Ok(Appended {
                    base_offset: offset,
                    duplicate: true,
                    log_append_time: ts,
                    end: self.size,
                });
            }
        } else if batches.iter().any(|(h, _)| h.producer_id >= 0) {
            return Err(AppendError {
                code: errors::INVALID_RECORD,
                message: "an idempotent produce must carry exactly one batch".into(),
                ..Default::default()
            });
        }
        let base_offset = self.next_offset;
        let mut out = Vec::with_capacity(payload.len());
        let mut headers = Vec::with_capacity(batches.len());
        let mut next = base_offset;
        for (h, range) in batches {
            let mut bytes = payload[range].to_vec();
            batch::assign(&mut bytes, next, 0);
            let mut header = BatchHeader {
                base_offset: next,
                ..h
            };
            if let Some(now) = log_append_time {
                batch::stamp_log_append_time(&mut bytes, now);
                header.attributes |= batch::ATTR_LOG_APPEND_TIME;
                header.max_timestamp = now;
            }
            next = header.last_offset() + 1;
            headers.push((header, self.size + out.len() as u64));
            out.extend(bytes);
        }
        self.write(&out).map_err(AppendError::storage)?;
        for (h, position) in headers {
            self.record(&h, position);
        }
        Ok(Appended {
            base_offset,
            duplicate: false,
            log_append_time: log_append_time.unwrap_or(-1),
            end: self.size,
        })
    }

    fn synced(&self, appended: Appended, fsync: bool) -> Result<Appended, AppendError> {
        if fsync {
            self.durability
                .sync_through(appended.end)
                .map_err(AppendError::storage)?;
        }
        Ok(appended)
    }

    /// Appends one batch the broker built itself (a control batch), assigning its offset.
    pub fn append_control(&mut self, mut batch_bytes: Vec<u8>) -> io::Result<i64> {
        let held = self.hold_latest()?;
        let offset = self.next_offset;
        batch::assign(&mut batch_bytes, offset, 0);
        if self.log_append_time {
            // Apache stamps markers too (scenario topic-config-log-append-time).
            batch::stamp_log_append_time(&mut batch_bytes, now_ms());
        }
        let h = batch::parse(&batch_bytes)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
        let position = self.size;
        self.write(&batch_bytes)?;
        self.record(&h, position);
        drop(held);
        self.durability.sync_through(self.size)?;
        Ok(offset)
    }

    /// Writes to the file (durability is [`Durability`]'s business).
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        if let Err(e) = super::faults::check(&self.path).and_then(|()| self.file.write_all(bytes)) {
            // Cut back anything half written, so the file and the index agree.
            let _ = self.file.set_len(self.size);
            return Err(e);
        }
        self.size += bytes.len() as u64;
        self.durability
            .written
            .store(self.size, AtomicOrdering::Release);
        Ok(())
    }

    /// Whole batches from the one containing `offset` on, up to `max_bytes` (but always at
    /// least one batch, as Kafka does, so a large batch is never stuck).
    pub fn read(&self, offset: i64, max_bytes: usize) -> io::Result<Vec<u8>> {
        let start = self.index.partition_point(|e| e.last_offset < offset);
        let mut end = start;
        let mut total = 0usize;
        while end < self.index.len() {
            let size = self.index[end].size as usize;
            if end > start && total + size > max_bytes {
                break;
            }
            total += size;
            end += 1;
        }
        if start == end {
            return Ok(Vec::new());
        }
        let mut out = vec![0u8; total];
        let mut f = File::open(&self.path)?;
        f.seek(SeekFrom::Start(self.index[start].position))?;
        f.read_exact(&mut out)?;
        Ok(out)
    }

    /// The first batch whose max timestamp is at least `timestamp`: (base offset, its max
    /// timestamp). Batch granularity: the records inside are not parsed.
    pub fn offset_for_timestamp(&self, timestamp: i64) -> Option<(i64, i64)> {
        self.index
            .iter()
            .find(|e| e.max_timestamp >= timestamp)
            .map(|e| (e.base_offset, e.max_timestamp))
    }

    /// The largest timestamp in the log and the offset of its batch.
    pub fn max_timestamp(&self) -> Option<(i64, i64)> {
        self.index
            .iter()
            .max_by_key(|e| e.max_timestamp)
            .map(|e| (e.base_offset, e.max_timestamp))
    }

    /// How many producers' state this partition keeps.
    pub fn producer_count(&self) -> usize {
        self.producers.len()
    }

    /// The producer's state on this partition, if it has written here.
    pub fn producer(&self, producer_id: i64) -> Option<&ProducerState> {
        self.producers.get(&producer_id)
    }

    /// Whether a transaction marker of `producer_id` at `epoch` is refused here, as Apache's log
    /// refuses it (INVALID_PRODUCER_EPOCH): the partition has seen a newer epoch of the
    /// producer (a fence, or a batch that carried one).
    pub fn refuses_marker(&self, producer_id: i64, epoch: i16) -> bool {
        self.producer(producer_id).is_some_and(|s| epoch < s.epoch)
    }

    /// Fences `producer_id` below `epoch`: later batches with an older epoch are refused and
    /// the duplicate window is cleared.
    pub fn fence_producer(&mut self, producer_id: i64, epoch: i16) {
        self.producers.entry(producer_id).or_default().fence(epoch);
    }
}

#[cfg(test)]
mod tests;
