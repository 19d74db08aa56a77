//! A scenario's share of `--jobs`: scenarios share a broker, and one waiting long on it lends
//! its share to another instead of holding it.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How long a request may wait before its scenario gives its `--jobs` slot to another: a
/// broker that stalls must not hold every slot for a deadline each, one after the other.
const LONG_WAIT: Duration = Duration::from_secs(1);

/// How long an `until` may keep being refused before its scenario lends its `--jobs` slot.
pub(super) const UNTIL_LENDS_AFTER: Duration = Duration::from_millis(300);

/// A scenario's share of `--jobs`: held while it works, handed back while it waits long on
/// a broker, taken again when the answer comes.
pub(super) struct Slot {
    permits: Option<Arc<Semaphore>>,
    held: Option<OwnedSemaphorePermit>,
}

impl Slot {
    /// A slot that never waits (a scenario run on its own).
    pub(super) fn unlimited() -> Slot {
        Slot {
            permits: None,
            held: None,
        }
    }

    /// Waits for `work`, releasing the slot once it has waited [`LONG_WAIT`].
    pub(super) async fn wait<F: std::future::Future>(&mut self, work: F) -> F::Output {
        let Some(permits) = self.permits.clone() else {
            return work.await;
        };
        tokio::pin!(work);
        tokio::select! {
            biased;
            out = &mut work => return out,
            _ = tokio::time::sleep(LONG_WAIT) => {}
        }
        self.held = None;
        let out = work.await;
        self.held = permits.acquire_owned().await.ok();
        out
    }

    /// Lends the slot for a wait the scenario measures itself (an `until` that keeps being
    /// refused): a broker that answers every request with a retriable error must not make the
    /// scenarios wait out their budgets one `--jobs` batch after another.
    pub(super) fn lend(&mut self) {
        if self.permits.is_some() {
            self.held = None;
        }
    }

    /// Takes the slot back after [`Slot::lend`] (at once when it was never lent).
    pub(super) async fn take_back(&mut self) {
        if let (Some(permits), None) = (&self.permits, &self.held) {
            self.held = permits.clone().acquire_owned().await.ok();
        }
    }

    /// A slot among `permits`, once one is free.
    pub(super) async fn among(permits: Arc<Semaphore>) -> Slot {
        let held = permits.clone().acquire_owned().await.ok();
        Slot {
            permits: Some(permits),
            held,
        }
    }
}
