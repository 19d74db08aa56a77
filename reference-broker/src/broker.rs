//! Starting and stopping a reference broker: the library API the harness and the `kaas-ref`
//! binary share. Here the broker is assembled: its state opened, the listener bound, and the
//! background loops (group timers, the transaction reaper) started beside the server.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::auth::{AllowAll, Authorizer};
use crate::config::BrokerConfig;
pub use crate::state::{open_in_dir, open_state, StartError, State};

/// A running broker.
#[derive(Debug)]
pub struct BrokerHandle {
    state: Arc<State>,
    shutdown: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl BrokerHandle {
    /// The address the broker listens on.
    pub fn addr(&self) -> SocketAddr {
        self.state.advertised
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.state.data_dir
    }

    /// The shared state (for in-process tests and the frame fuzzer).
    pub fn state(&self) -> &Arc<State> {
        &self.state
    }

    /// Pauses the broker as SIGSTOP pauses a process (`crate::freeze`); `false` when it was
    /// paused already.
    pub fn pause(&self) -> bool {
        self.state.freeze.pause()
    }

    /// Lets a paused broker go on, as SIGCONT does; `false` when it was not paused.
    pub fn resume(&self) -> bool {
        self.state.freeze.resume()
    }

    /// Holds (`true`) or lets go (`false`) the markers its peers queue for it: its
    /// MarkerWatcher skips its passes while held, so a transaction's markers on the partitions
    /// it leads wait, as they do behind a slow poll or a slow network, with the broker
    /// otherwise serving. The harness's `hold_markers` step; `false` when it was so already.
    pub fn hold_markers(&self, held: bool) -> bool {
        self.state
            .markers_held
            .swap(held, std::sync::atomic::Ordering::SeqCst)
            != held
    }

    /// Stops accepting, closes every connection, and returns once the broker is down.
    pub async fn shutdown(self) {
        let _ = self.shutdown.send(true);
        let _ = self.task.await;
    }
}

/// The reference broker.
pub struct Broker;

impl Broker {
    /// Opens the data directory, binds the listener and starts serving.
    pub async fn start(config: BrokerConfig) -> Result<BrokerHandle, StartError> {
        Self::start_with(config, Arc::new(AllowAll)).await
    }

    /// As [`Broker::start`], with an authorizer.
    pub async fn start_with(
        config: BrokerConfig,
        authorizer: Arc<dyn Authorizer>,
    ) -> Result<BrokerHandle, StartError> {
        let listener =
            TcpListener::bind(config.listen)
                .await
                .map_err(|source| StartError::Bind {
                    addr: config.listen,
                    source,
                })?;
        let bound = listener.local_addr().map_err(|source| StartError::Bind {
            addr: config.listen,
            source,
        })?;
        let advertised = config.advertise.unwrap_or(bound);
        let state = Arc::new(open_state(config, advertised, authorizer)?);
        let (shutdown, shutdown_rx) = watch::channel(false);
        tokio::spawn(run_group_timers(state.clone(), shutdown_rx.clone()));
        tokio::spawn(run_reaper(state.clone(), shutdown_rx.clone()));
        if !state.membership.alone() {
            if state
                .config
                .planted
                .has(crate::planted::Bug::MarkerDroppedOnRestart)
            {
                let cluster = crate::storage::cluster_dir(&state.data_dir);
                let inbox = crate::peer_files::inbox(&cluster, state.membership.me());
                for (path, _) in crate::peer_files::queued(&inbox).unwrap_or_default() {
                    let _ = std::fs::remove_file(path);
                }
            }
            // Alive to the peers before the first request is served.
            let s = state.clone();
            let stamped = tokio::task::spawn_blocking(move || s.membership.stamp()).await;
            if let Ok(Err(e)) = stamped {
                tracing::warn!(error = %e, "could not stamp this broker alive");
            }
            tokio::spawn(run_member_stamps(state.clone(), shutdown_rx.clone()));
            tokio::spawn(run_peer_watchers(state.clone(), shutdown_rx.clone()));
        }
        let task = tokio::spawn(crate::server::serve(listener, state.clone(), shutdown_rx));
        tracing::info!(addr = %advertised, data_dir = %state.data_dir.display(), "kaas-ref started");
        Ok(BrokerHandle {
            state,
            shutdown,
            task,
        })
    }
}

/// The group coordinator's timers (session expiry, rebalance deadlines), every 100 ms until
/// shutdown.
async fn run_group_timers(state: Arc<State>, mut shutdown: watch::Receiver<bool>) {
    let mut interval = tokio::time::interval(Duration::from_millis(100));
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while next_tick(&mut interval, &state, &mut shutdown).await {
        state.groups.tick();
    }
}

/// Waits for `interval`'s next tick, and then for the broker to be thawed (`crate::freeze`):
/// `false` at shutdown. A frozen broker's loops stop as a stopped process's do.
async fn next_tick(
    interval: &mut tokio::time::Interval,
    state: &State,
    shutdown: &mut watch::Receiver<bool>,
) -> bool {
    tokio::select! {
        _ = async {
            interval.tick().await;
            state.freeze.thawed().await;
        } => true,
        _ = shutdown.changed() => false,
    }
}

/// Stamps this broker alive on the shared volume at once, then every second, until shutdown
/// (`crate::cluster`): a broker that stops stamping counts as down to its peers.
async fn run_member_stamps(state: Arc<State>, mut shutdown: watch::Receiver<bool>) {
    let mut interval = tokio::time::interval(Duration::from_secs(1));
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while next_tick(&mut interval, &state, &mut shutdown).await {
        let s = state.clone();
        let stamped = tokio::task::spawn_blocking(move || s.membership.stamp()).await;
        if let Ok(Err(e)) = stamped {
            tracing::warn!(error = %e, "could not stamp this broker alive");
        }
    }
}

/// The MarkerWatcher and FenceWatcher (`crate::watchers`): at once, then every
/// `peer_poll`, until shutdown. A failed pass is logged and tried again at the next tick.
async fn run_peer_watchers(state: Arc<State>, mut shutdown: watch::Receiver<bool>) {
    let mut interval = tokio::time::interval(state.config.peer_poll);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let cache = Arc::new(std::sync::Mutex::new(crate::watchers::FenceCache::default()));
    while next_tick(&mut interval, &state, &mut shutdown).await {
        let (s, cache) = (state.clone(), cache.clone());
        let _ = tokio::task::spawn_blocking(move || {
            let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
            if let Err(e) = crate::watchers::apply_fences(&s, &mut cache) {
                tracing::warn!(error = %e, "fence watcher pass failed");
            }
            if s.markers_held.load(std::sync::atomic::Ordering::SeqCst) {
                tracing::debug!("marker watcher held: its inbox waits");
            } else if let Err(e) = crate::watchers::apply_markers(&s) {
                tracing::warn!(error = %e, "marker watcher pass failed");
            }
        })
        .await;
    }
}

/// The transaction reaper: ticks at once, then every `txn_reaper_interval`, until shutdown.
async fn run_reaper(state: Arc<State>, mut shutdown: watch::Receiver<bool>) {
    let mut interval = tokio::time::interval(state.config.txn_reaper_interval);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while next_tick(&mut interval, &state, &mut shutdown).await {
        let s = state.clone();
        let _ = tokio::task::spawn_blocking(move || {
            // The reconcile writes markers: to topics peers may have created since the
            // last request.
            s.sync_topics();
            s.txn.tick(&*s)
        })
        .await;
    }
}
