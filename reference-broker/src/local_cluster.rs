//! A kaas-ref cluster in one process: N brokers (ids 0..N-1) on one data directory, as kaas
//! pods share a volume, each with its own listener, state and background loops. A broker can
//! be killed (its listener and connections close, its memory goes, it stops stamping the
//! shared volume, so its peers count it down after the member timeout) and restarted on the
//! same address from what the volume holds, or paused and resumed as SIGSTOP and SIGCONT would
//! (`crate::freeze`). Tests and the harness's `ref:N` target use it;
//! separate processes come from `kaas-ref --peers`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use crate::cluster::Peer;
use crate::{Broker, BrokerConfig, BrokerHandle, StartError};

/// Why a broker of the cluster could not be killed or restarted.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// No broker of that id.
    #[error("the cluster has no broker {0} (its brokers are 0..{1})")]
    NoSuchBroker(i32, usize),
    /// Killing a broker that is down, or restarting one that is up.
    #[error("broker {0} is already {1}")]
    Already(i32, &'static str),
    /// The broker did not start.
    #[error(transparent)]
    Start(#[from] StartError),
    /// No free port for a broker.
    #[error("no free port for a broker: {0}")]
    Port(std::io::Error),
}

/// N brokers sharing a data directory, in process.
#[derive(Debug)]
pub struct LocalCluster {
    config: BrokerConfig,
    peers: Vec<Peer>,
    brokers: Vec<Option<BrokerHandle>>,
    data_dir: PathBuf,
    /// The brokers whose markers are held ([`LocalCluster::hold_markers`]).
    markers_held: std::collections::BTreeSet<i32>,
}

impl LocalCluster {
    /// Starts `count` brokers from `config` (its listen address and broker id are replaced by
    /// each broker's; its data directory, or a fresh one, is shared).
    pub async fn start(count: usize, config: BrokerConfig) -> Result<LocalCluster, ClusterError> {
        let host = config.listen.ip();
        let peers = (0..count)
            .map(|id| {
                // A free port now, fixed for the broker's life: peers and clients find it
                // there after a restart too. Below the ephemeral range, where no outbound
                // connection takes it before the broker listens (`crate::ports`).
                let port = crate::ports::free_port(host).map_err(ClusterError::Port)?;
                Ok(Peer {
                    id: id as i32,
                    addr: SocketAddr::new(host, port),
                })
            })
            .collect::<Result<Vec<_>, ClusterError>>()?;
        let data_dir = config.data_dir.clone().unwrap_or_else(|| {
            std::env::temp_dir().join(format!("kaas-ref-cluster-{}", uuid::Uuid::new_v4()))
        });
        let mut cluster = LocalCluster {
            config: BrokerConfig {
                data_dir: Some(data_dir.clone()),
                peers: peers.clone(),
                ..config
            },
            peers,
            brokers: (0..count).map(|_| None).collect(),
            data_dir,
            markers_held: Default::default(),
        };
        for id in 0..count as i32 {
            cluster.restart(id).await?;
        }
        cluster.whole().await;
        Ok(cluster)
    }

    /// Waits (a member timeout at most) until every broker up counts every other broker up
    /// as alive: a broker reads its peers' stamps at most every `ALIVE_REFRESH`, so one that
    /// looked before a peer's first stamp would route without it for a moment.
    pub async fn whole(&self) {
        let up: Vec<i32> = (0..self.brokers.len() as i32)
            .filter(|id| self.broker(*id).is_some())
            .collect();
        let deadline = tokio::time::Instant::now() + self.config.member_timeout;
        while tokio::time::Instant::now() < deadline {
            let agreed = up.iter().all(|id| {
                let alive = self.broker(*id).expect("up").state().membership.alive();
                up.iter().all(|peer| alive.contains(peer))
            });
            if agreed {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// Every broker's address, by id (a killed broker's too: it comes back there).
    pub fn addrs(&self) -> Vec<SocketAddr> {
        self.peers.iter().map(|p| p.addr).collect()
    }

    /// The shared data directory.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The broker of that id, while it is up.
    pub fn broker(&self, id: i32) -> Option<&BrokerHandle> {
        usize::try_from(id)
            .ok()
            .and_then(|i| self.brokers.get(i))
            .and_then(Option::as_ref)
    }

    fn slot(&mut self, id: i32) -> Result<&mut Option<BrokerHandle>, ClusterError> {
        let count = self.brokers.len();
        usize::try_from(id)
            .ok()
            .and_then(|i| self.brokers.get_mut(i))
            .ok_or(ClusterError::NoSuchBroker(id, count))
    }

    /// Stops broker `id` at once: its connections close and what it held in memory is gone,
    /// as when its process is killed.
    pub async fn kill(&mut self, id: i32) -> Result<(), ClusterError> {
        let broker = self
            .slot(id)?
            .take()
            .ok_or(ClusterError::Already(id, "down"))?;
        broker.shutdown().await;
        Ok(())
    }

    /// Pauses broker `id` as SIGSTOP pauses a process (`crate::freeze`): it keeps its
    /// connections and memory but reads, answers and stamps nothing, so its peers count it
    /// down after the member timeout.
    pub fn pause(&mut self, id: i32) -> Result<(), ClusterError> {
        let broker = self
            .slot(id)?
            .as_ref()
            .ok_or(ClusterError::Already(id, "down"))?;
        match broker.pause() {
            true => Ok(()),
            false => Err(ClusterError::Already(id, "paused")),
        }
    }

    /// Lets a paused broker `id` go on, as SIGCONT does, and waits (a member timeout at most)
    /// until its peers count it alive again.
    pub async fn resume(&mut self, id: i32) -> Result<(), ClusterError> {
        let broker = self
            .slot(id)?
            .as_ref()
            .ok_or(ClusterError::Already(id, "down"))?;
        if !broker.resume() {
            return Err(ClusterError::Already(id, "running"));
        }
        self.whole().await;
        Ok(())
    }

    /// Holds (`true`) or lets go the markers queued for broker `id`
    /// (`BrokerHandle::hold_markers`), up or down: a broker restarted holds them still, as
    /// an Apache broker's gate stays closed across its restart. `false` when they were so
    /// already.
    pub fn hold_markers(&mut self, id: i32, held: bool) -> Result<bool, ClusterError> {
        self.slot(id)?;
        let changed = match held {
            true => self.markers_held.insert(id),
            false => self.markers_held.remove(&id),
        };
        if let Some(broker) = self.broker(id) {
            broker.hold_markers(held);
        }
        Ok(changed)
    }

    /// Starts broker `id` again on its address, from what the shared volume holds.
    pub async fn restart(&mut self, id: i32) -> Result<(), ClusterError> {
        if self.slot(id)?.is_some() {
            return Err(ClusterError::Already(id, "up"));
        }
        let peer = self.peers[id as usize];
        let config = BrokerConfig {
            listen: peer.addr,
            broker_id: peer.id,
            ..self.config.clone()
        };
        let broker = Broker::start(config).await?;
        broker.hold_markers(self.markers_held.contains(&id));
        *self.slot(id)? = Some(broker);
        self.whole().await;
        Ok(())
    }

    /// Stops every broker; the data directory stays (the caller's to remove).
    pub async fn shutdown(mut self) {
        for broker in self.brokers.iter_mut().filter_map(Option::take) {
            broker.shutdown().await;
        }
    }
}
