//! The broker's lock order, written down once and checked on every acquisition.
//!
//! Every lock the broker shares between requests is an [`OrderedMutex`] or [`OrderedRwLock`]
//! with a [`Level`]. A thread may only take a lock whose level is *above* every level it
//! already holds; taking one at or below is a lock-order violation and panics in debug builds
//! (every test, the stress test, the fuzzers), naming both locks. Since all acquisitions follow
//! one total order, no cycle of waits — no deadlock between these locks — can form, whatever
//! the interleaving: the class of bug franz-go's suite found (EndTxn's offset hook holding the
//! staged offsets while waiting for the offset store, OffsetFetch holding the store while
//! waiting for the staged offsets) cannot come back unnoticed, because the first test that
//! runs either path fails, with or without contention.
//!
//! The other half of the rule is where locks are taken: the request path takes them only on
//! the blocking pool (`dispatch` runs every handler's synchronous part with
//! `spawn_blocking`), so a lock held across an fsync never parks an async worker and
//! ApiVersions is answered whatever the transactions are doing. Only [`Level::Groups`], which
//! guards memory and is never held across I/O or another lock, is taken on async workers.
//!
//! Release builds keep the order but skip the bookkeeping.

use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// The levels, outermost first: a thread holding a lock may take only locks further down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// The transaction coordinator's mutation guard: a slot file's read-modify-write, the
    /// marker dispatch and the offset hook run under it.
    TxnCoordinator = 1,
    /// Consumer-group membership (memory only; async workers may take it).
    Groups = 2,
    /// Committed and staged consumer offsets, one lock so that the commit of staged offsets
    /// and OffsetFetch's require_stable check see one state.
    Offsets = 3,
    /// The topic registry.
    Topics = 4,
    /// One partition log (never two at once).
    Partition = 5,
    /// The producer-id block allocator.
    ProducerIds = 6,
    /// One partition's fsync (group commit, `storage::partition::Durability`): held across
    /// the fsync, usually with no other lock held.
    PartitionSync = 7,
}

#[cfg(debug_assertions)]
mod held {
    use super::Level;
    use std::cell::RefCell;

    thread_local! {
        static HELD: RefCell<Vec<Level>> = const { RefCell::new(Vec::new()) };
    }

    /// Records `level` as held, or panics if the order forbids taking it now.
    pub fn enter(level: Level) {
        HELD.with(|h| {
            let mut h = h.borrow_mut();
            if let Some(&top) = h.iter().max() {
                assert!(
                    level > top,
                    "lock-order violation: taking {level:?} while holding {top:?} \
                     (locks are taken in the order of lock_order::Level; held: {h:?})"
                );
            }
            h.push(level);
        });
    }

    /// Forgets one hold of `level` (guards may drop in any order).
    pub fn exit(level: Level) {
        HELD.with(|h| {
            let mut h = h.borrow_mut();
            if let Some(i) = h.iter().rposition(|l| *l == level) {
                h.remove(i);
            }
        });
    }
}

#[cfg(not(debug_assertions))]
mod held {
    use super::Level;
    #[inline(always)]
    pub fn enter(_: Level) {}
    #[inline(always)]
    pub fn exit(_: Level) {}
}

/// Holds a level for as long as the guard it is stored in lives.
#[derive(Debug)]
struct Hold(Level);

impl Hold {
    fn take(level: Level) -> Hold {
        held::enter(level);
        Hold(level)
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        held::exit(self.0);
    }
}

/// A mutex with a place in the lock order. A poisoned lock is taken anyway: one handler's
/// panic must not stop every later request.
#[derive(Debug)]
pub struct OrderedMutex<T> {
    level: Level,
    inner: Mutex<T>,
}

impl<T> OrderedMutex<T> {
    /// A mutex at `level`.
    pub fn new(level: Level, value: T) -> Self {
        OrderedMutex {
            level,
            inner: Mutex::new(value),
        }
    }

    /// Takes the lock (checking the order first, so a violation panics before it can block).
    pub fn lock(&self) -> OrderedGuard<MutexGuard<'_, T>> {
        let hold = Hold::take(self.level);
        OrderedGuard {
            guard: self.inner.lock().unwrap_or_else(|e| e.into_inner()),
            _hold: hold,
        }
    }
}

/// A reader-writer lock with a place in the lock order.
#[derive(Debug)]
pub struct OrderedRwLock<T> {
    level: Level,
    inner: RwLock<T>,
}

impl<T> OrderedRwLock<T> {
    /// A lock at `level`.
    pub fn new(level: Level, value: T) -> Self {
        OrderedRwLock {
            level,
            inner: RwLock::new(value),
        }
    }

    /// Shared access.
    pub fn read(&self) -> OrderedGuard<RwLockReadGuard<'_, T>> {
        let hold = Hold::take(self.level);
        OrderedGuard {
            guard: self.inner.read().unwrap_or_else(|e| e.into_inner()),
            _hold: hold,
        }
    }

    /// Exclusive access.
    pub fn write(&self) -> OrderedGuard<RwLockWriteGuard<'_, T>> {
        let hold = Hold::take(self.level);
        OrderedGuard {
            guard: self.inner.write().unwrap_or_else(|e| e.into_inner()),
            _hold: hold,
        }
    }
}

/// A held lock; releases its level when dropped (after the lock itself: fields drop in order).
#[derive(Debug)]
pub struct OrderedGuard<G> {
    guard: G,
    _hold: Hold,
}

impl<G: Deref> Deref for OrderedGuard<G> {
    type Target = G::Target;
    fn deref(&self) -> &G::Target {
        &self.guard
    }
}

impl<G: DerefMut> DerefMut for OrderedGuard<G> {
    fn deref_mut(&mut self) -> &mut G::Target {
        &mut self.guard
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locks_taken_down_the_order_nest() {
        let outer = OrderedMutex::new(Level::TxnCoordinator, ());
        let inner = OrderedRwLock::new(Level::Topics, ());
        let _a = outer.lock();
        let _b = inner.read();
        let partition = OrderedMutex::new(Level::Partition, ());
        let _c = partition.lock();
    }

    #[test]
    fn a_released_lock_no_longer_counts() {
        let offsets = OrderedMutex::new(Level::Offsets, ());
        let coordinator = OrderedMutex::new(Level::TxnCoordinator, ());
        drop(offsets.lock());
        let _g = coordinator.lock();
        let _h = offsets.lock();
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "lock-order violation: taking TxnCoordinator while holding Offsets")]
    fn taking_a_lock_up_the_order_panics() {
        // The shape of the deadlock franz-go found: the store held, then the coordinator's side.
        let offsets = OrderedMutex::new(Level::Offsets, ());
        let coordinator = OrderedMutex::new(Level::TxnCoordinator, ());
        let _a = offsets.lock();
        let _b = coordinator.lock();
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "taking Partition while holding Partition")]
    fn two_locks_of_one_level_panic() {
        let a = OrderedMutex::new(Level::Partition, ());
        let b = OrderedMutex::new(Level::Partition, ());
        let _a = a.lock();
        let _b = b.lock();
    }
}
