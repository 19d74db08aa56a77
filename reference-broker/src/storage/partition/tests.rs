//! The partition log's tests: appends and reopen, torn tails, the last stable offset and the
//! aborted index, producers' sequences, epochs and fences, group commit, log-append time, two
//! brokers appending to one log.

use super::*;
use crate::storage::batch::{build, record};

fn idempotent(pid: i64, epoch: i16, seq: i32, n: i32) -> Vec<u8> {
    let recs: Vec<Vec<u8>> = (0..n).map(|i| record(i, 0, None, Some(b"v"))).collect();
    build(0, n - 1, 0, 0, pid, epoch, seq, &recs)
}

#[test]
fn appends_assign_offsets_and_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = PartitionLog::open(dir.path()).unwrap();
    assert_eq!(
        log.append(&idempotent(-1, -1, -1, 3), true)
            .unwrap()
            .base_offset,
        0
    );
    assert_eq!(
        log.append(&idempotent(-1, -1, -1, 2), true)
            .unwrap()
            .base_offset,
        3
    );
    assert_eq!(log.high_watermark(), 5);
    let bytes = log.read(4, 1).unwrap();
    assert_eq!(batch::parse(&bytes).unwrap().base_offset, 3);
    drop(log);
    let log = PartitionLog::open(dir.path()).unwrap();
    assert_eq!(log.high_watermark(), 5);
    assert_eq!(log.read(0, usize::MAX).unwrap().len(), log.size as usize);
}

/// A rejoin's fence reaches a peer-led partition before the completed transaction's
/// marker of the old epoch (peer markers are asynchronous): the marker is appended, and
/// the fence stands, so the zombie's idempotent batch is refused whichever came first.
#[test]
fn an_older_marker_after_a_fence_leaves_the_fence_standing() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = PartitionLog::open(dir.path()).unwrap();
    log.append(&idempotent(7, 0, 0, 1), true).unwrap();
    log.fence_producer(7, 1);
    log.append_control(batch::control_batch(7, 0, true, 0, 0))
        .unwrap();
    let zombie = log.append(&idempotent(7, 0, 1, 1), true).unwrap_err();
    assert_eq!(
        zombie.code,
        errors::INVALID_PRODUCER_EPOCH,
        "{}",
        zombie.message
    );
    // The new session starts its sequence at 0.
    assert!(log.append(&idempotent(7, 1, 0, 1), true).is_ok());
}

#[test]
fn torn_tail_is_truncated_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = PartitionLog::open(dir.path()).unwrap();
    log.append(&idempotent(-1, -1, -1, 1), true).unwrap();
    let good = log.size;
    drop(log);
    let mut f = OpenOptions::new()
        .append(true)
        .open(dir.path().join(LOG_FILE))
        .unwrap();
    f.write_all(&idempotent(-1, -1, -1, 1)[..30]).unwrap();
    drop(f);
    let log = PartitionLog::open(dir.path()).unwrap();
    assert_eq!(log.size, good);
    assert_eq!(log.high_watermark(), 1);
}

#[test]
fn lso_and_aborted_index_follow_markers_and_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = PartitionLog::open(dir.path()).unwrap();
    let txn = |pid, seq| {
        build(
            batch::ATTR_TRANSACTIONAL,
            0,
            0,
            0,
            pid,
            0,
            seq,
            &[record(0, 0, None, Some(b"t"))],
        )
    };
    log.append(&idempotent(-1, -1, -1, 1), true).unwrap(); // 0
    log.append(&txn(5, 0), true).unwrap(); // 1
    log.append(&txn(6, 0), true).unwrap(); // 2
    assert_eq!((log.last_stable_offset(), log.high_watermark()), (1, 3));
    log.append_control(batch::control_batch(5, 0, false, 0, 0))
        .unwrap(); // 3: abort 5
    assert_eq!(log.last_stable_offset(), 2);
    log.append_control(batch::control_batch(6, 0, true, 0, 0))
        .unwrap(); // 4: commit 6
    assert_eq!(log.last_stable_offset(), 5);
    let aborted = vec![AbortedTxn {
        producer_id: 5,
        first_offset: 1,
        last_offset: 3,
    }];
    assert_eq!(log.aborted_between(0, 5), aborted);
    assert!(log.aborted_between(4, 5).is_empty());
    drop(log);
    let log = PartitionLog::open(dir.path()).unwrap();
    assert_eq!(log.last_stable_offset(), 5);
    assert_eq!(log.aborted_between(0, 5), aborted);
}

#[test]
fn duplicates_out_of_order_and_stale_epochs() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = PartitionLog::open(dir.path()).unwrap();
    assert_eq!(
        log.append(&idempotent(9, 0, 0, 2), true)
            .unwrap()
            .base_offset,
        0
    );
    assert_eq!(
        log.append(&idempotent(9, 0, 2, 2), true)
            .unwrap()
            .base_offset,
        2
    );
    let dup = log.append(&idempotent(9, 0, 0, 2), true).unwrap();
    assert_eq!((dup.base_offset, dup.duplicate), (0, true));
    assert_eq!(log.high_watermark(), 4);
    let gap = log.append(&idempotent(9, 0, 7, 1), true).unwrap_err();
    assert_eq!(gap.code, errors::OUT_OF_ORDER_SEQUENCE_NUMBER);
    log.append(&idempotent(9, 1, 0, 1), true).unwrap();
    let stale = log.append(&idempotent(9, 0, 4, 1), true).unwrap_err();
    assert_eq!(stale.code, errors::INVALID_PRODUCER_EPOCH);
    // The window survives a restart.
    drop(log);
    let mut log = PartitionLog::open(dir.path()).unwrap();
    assert!(log.append(&idempotent(9, 1, 0, 1), true).unwrap().duplicate);
}

#[test]
fn one_fsync_covers_every_append_written_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = PartitionLog::open(dir.path()).unwrap();
    let first = log.append(&idempotent(-1, -1, -1, 1), false).unwrap();
    let second = log.append(&idempotent(-1, -1, -1, 1), false).unwrap();
    assert!(second.end > first.end);
    let durability = log.durability();
    assert_eq!(*durability.synced.lock(), 0, "nothing synced before asked");
    durability.sync_through(first.end).unwrap();
    assert_eq!(
        *durability.synced.lock(),
        second.end,
        "the fsync for the first append covered the second, written before it ran"
    );
    // The second append's wait is already satisfied: no fsync runs for it.
    durability.sync_through(second.end).unwrap();
    drop(log);
    let reopened = PartitionLog::open(dir.path()).unwrap();
    assert_eq!(reopened.high_watermark(), 2);
}

#[test]
fn a_log_append_time_log_stamps_batches_and_markers_with_valid_crcs() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = PartitionLog::open(dir.path()).unwrap();
    log.configure(&super::super::topic_config::TopicConfig {
        log_append_time: true,
        ..Default::default()
    });
    let appended = log.append(&idempotent(-1, -1, -1, 1), true).unwrap();
    assert!(
        appended.log_append_time > 0,
        "the answer carries the append time"
    );
    log.append_control(batch::control_batch(7, 0, true, 0, 1))
        .unwrap();
    drop(log);
    // Reopening validates every CRC: a stamp that broke one would truncate the log.
    let log = PartitionLog::open(dir.path()).unwrap();
    assert_eq!(log.high_watermark(), 2);
    let bytes = log.read(0, 1 << 20).unwrap();
    for (h, _) in batch::split(&bytes).unwrap() {
        assert_ne!(h.attributes & batch::ATTR_LOG_APPEND_TIME, 0, "{h:?}");
        assert!(h.max_timestamp >= appended.log_append_time, "{h:?}");
    }
}

#[test]
fn two_brokers_appending_to_one_log_take_turns_at_its_end() {
    // A paused leader resumes with the log as it knew it, while a peer led the partition
    // and appended: its next append must land after the peer's, at the right offsets,
    // with the producer's sequence carried on from the peer's batches.
    let dir = tempfile::tempdir().unwrap();
    let mut stale = PartitionLog::open(dir.path()).unwrap();
    stale.append(&idempotent(7, 0, 0, 2), true).unwrap();
    let mut peer = PartitionLog::open(dir.path()).unwrap();
    assert_eq!(
        peer.append(&idempotent(7, 0, 2, 3), true)
            .unwrap()
            .base_offset,
        2
    );
    peer.append_control(batch::control_batch(8, 0, true, 0, 0))
        .unwrap();
    let fenced = idempotent(7, 0, 2, 3);
    assert!(
        stale.append(&fenced, true).unwrap().duplicate,
        "the peer's batch, retried"
    );
    assert_eq!(
        stale
            .append(&idempotent(7, 0, 5, 1), true)
            .unwrap()
            .base_offset,
        6
    );
    assert_eq!(
        peer.append(&idempotent(-1, -1, -1, 1), true)
            .unwrap()
            .base_offset,
        7
    );
    assert_eq!(
        stale
            .append_control(batch::control_batch(9, 0, true, 0, 0))
            .unwrap(),
        8
    );
    let whole = PartitionLog::open(dir.path()).unwrap();
    let offsets: Vec<(i64, i64)> = whole
        .index
        .iter()
        .map(|e| (e.base_offset, e.last_offset))
        .collect();
    assert_eq!(offsets, [(0, 1), (2, 4), (5, 5), (6, 6), (7, 7), (8, 8)]);
    assert_eq!(
        whole.size,
        std::fs::metadata(dir.path().join(LOG_FILE)).unwrap().len()
    );
    // Each sees the other's writes when asked again, as a reader of the leader would.
    peer.refresh().unwrap();
    assert_eq!((peer.high_watermark(), stale.high_watermark()), (9, 9));
}

#[test]
fn a_catch_up_keeps_the_fences_this_broker_applied() {
    let dir = tempfile::tempdir().unwrap();
    let mut stale = PartitionLog::open(dir.path()).unwrap();
    stale.append(&idempotent(7, 0, 0, 1), true).unwrap();
    stale.fence_producer(7, 3);
    let mut peer = PartitionLog::open(dir.path()).unwrap();
    peer.append(&idempotent(-1, -1, -1, 1), true).unwrap();
    let refused = stale.append(&idempotent(7, 0, 1, 1), true).unwrap_err();
    assert_eq!(refused.code, errors::INVALID_PRODUCER_EPOCH, "{refused:?}");
    assert_eq!(stale.high_watermark(), 2);
}
