//! The transaction coordinator: the kaas slot-file state store and the logic of the
//! transaction APIs on it.

pub mod coordinator;
pub mod slots;

pub use coordinator::TxnCoordinator;

use std::sync::Arc;

use crate::lock_order::OrderedMutex;
use crate::storage::offsets::OffsetStore;
use crate::storage::partition::PartitionLog;

/// What the transaction coordinator needs from the rest of the broker, and no more: producer
/// ids, the partition logs (to fence old epochs and append markers), a wake-up for fetches
/// waiting on new records, and the group offsets that transactions stage and complete. The
/// broker's state implements it; the coordinator never sees the whole state.
pub trait Host {
    /// A producer id from this broker's block.
    fn allocate_pid(&self) -> std::io::Result<i64>;
    /// Every local partition log.
    fn partition_logs(&self) -> Vec<Arc<OrderedMutex<PartitionLog>>>;
    /// One partition's log, if the topic and partition exist.
    fn partition_log(&self, topic: &str, partition: i32)
        -> Option<Arc<OrderedMutex<PartitionLog>>>;
    /// Wakes the fetches waiting for records (after markers are appended).
    fn appended(&self);
    /// Committed and staged group offsets.
    fn offsets(&self) -> &OrderedMutex<OffsetStore>;
    /// Whether this broker coordinates the transactional id now (its reaper and reconcile
    /// walk only those).
    fn coordinates(&self, transactional_id: &str) -> bool;
}
