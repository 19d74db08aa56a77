//! A broker paused as SIGSTOP pauses a process, for a broker that runs in process (the
//! harness's `ref:N` target, tests) where a signal would stop every broker at once.
//!
//! While frozen, the broker reads no request, writes no answer and runs none of its background
//! loops (stamps, watchers, reaper, group timers): its peers count it down once its stamp is
//! old, its clients' requests wait in their connections, and its memory stays as it was. Once
//! thawed, it goes on from where it stopped, with whatever its peers did meanwhile on the
//! shared volume, as a process does after SIGCONT. New connections are still accepted (as the
//! kernel completes a stopped process's handshakes); what they send waits like the rest. Work
//! already inside a handler finishes first: the freeze takes hold between requests and ticks.

use tokio::sync::watch;

/// Whether the broker is frozen, and a way to wait until it is not.
#[derive(Debug)]
pub struct Freeze {
    frozen: watch::Sender<bool>,
}

impl Default for Freeze {
    fn default() -> Self {
        Freeze {
            frozen: watch::channel(false).0,
        }
    }
}

impl Freeze {
    /// Freezes the broker; `false` when it was frozen already.
    pub fn pause(&self) -> bool {
        self.frozen
            .send_if_modified(|frozen| !std::mem::replace(frozen, true))
    }

    /// Thaws the broker; `false` when it was not frozen.
    pub fn resume(&self) -> bool {
        self.frozen
            .send_if_modified(|frozen| std::mem::replace(frozen, false))
    }

    /// Whether the broker is frozen now.
    pub fn is_frozen(&self) -> bool {
        *self.frozen.borrow()
    }

    /// Returns at once when the broker is not frozen, else once it is thawed.
    pub async fn thawed(&self) {
        let mut frozen = self.frozen.subscribe();
        // The sender lives as long as `self`: the wait cannot fail while borrowed.
        let _ = frozen.wait_for(|frozen| !frozen).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_wait_ends_only_when_thawed() {
        let freeze = std::sync::Arc::new(Freeze::default());
        // Not frozen: no wait.
        tokio::time::timeout(Duration::from_millis(100), freeze.thawed())
            .await
            .expect("not frozen");
        assert!(freeze.pause());
        assert!(!freeze.pause(), "frozen already");
        let waiting = tokio::spawn({
            let freeze = freeze.clone();
            async move { freeze.thawed().await }
        });
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!waiting.is_finished(), "a frozen broker's wait goes on");
        assert!(freeze.resume());
        tokio::time::timeout(Duration::from_secs(1), waiting)
            .await
            .expect("thawed")
            .unwrap();
        assert!(!freeze.resume(), "not frozen any more");
        assert!(!freeze.is_frozen());
    }
}
