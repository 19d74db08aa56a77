//! The transaction coordinator: the kaas slot-file state store and the logic of the
//! transaction APIs on it.

pub mod coordinator;
pub mod slots;

pub use coordinator::TxnCoordinator;

use std::sync::Arc;

use crate::lock_order::OrderedMutex;
use crate::storage::offsets::OffsetStore;
use crate::storage::partition::PartitionLog;

/// Where a partition's COMMIT/ABORT marker is written.
pub enum MarkerTarget {
    /// This broker leads the partition: appended here, now.
    Local(Arc<OrderedMutex<PartitionLog>>),
    /// Peer `id` leads it: queued for its marker watcher.
    Peer(i32),
    /// The topic or partition no longer exists: nothing to mark.
    Gone,
    /// No broker that could lead it is alive: dispatch fails, and is retried.
    NoLeader,
}

/// What the transaction coordinator needs from the rest of the broker, and no more: producer
/// ids, the partition logs it leads (to fence old epochs and append markers), the peer queues for the rest, a wake-up for fetches
/// waiting on new records, and the group offsets that transactions stage and complete. The
/// broker's state implements it; the coordinator never sees the whole state.
pub trait Host {
    /// A producer id from this broker's block.
    fn allocate_pid(&self) -> std::io::Result<i64>;
    /// Every partition log this broker leads.
    fn partition_logs(&self) -> Vec<Arc<OrderedMutex<PartitionLog>>>;
    /// Where the marker of one partition goes: its log when this broker leads it, else the
    /// peer that does.
    fn marker_target(&self, topic: &str, partition: i32) -> MarkerTarget;
    /// Queues a marker for the partitions peer `to` leads (durable on return).
    fn enqueue(&self, to: i32, marker: &crate::peer_files::QueuedMarker) -> std::io::Result<()>;
    /// Wakes the fetches waiting for records (after markers are appended).
    fn appended(&self);
    /// Committed and staged group offsets.
    fn offsets(&self) -> &OrderedMutex<OffsetStore>;
    /// Whether this broker coordinates the transactional id now (its reaper and reconcile
    /// walk only those).
    fn coordinates(&self, transactional_id: &str) -> bool;
}
