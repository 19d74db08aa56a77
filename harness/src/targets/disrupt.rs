//! What a scenario does to the brokers of a cluster target (kill, restart, pause, resume), done
//! by kconform itself on the clusters it started and by the user's commands
//! ([`super::faults::FaultCommands`]) on an external one, and the waits after: a restarted or
//! resumed broker is back in sync, as its peers see it, before the scenario goes on.

use std::net::SocketAddr;

use super::faults;
use super::{brokers, Held, Running, TargetError, SETTLE_DEADLINE};

impl Running {
    /// The same target, with commands that kill, restart, pause and resume the brokers of a
    /// cluster kconform did not start (`--fault-cmd`; a cluster it started does them itself).
    pub fn with_faults(mut self, faults: faults::FaultCommands) -> Running {
        self.faults = faults;
        self
    }

    /// The node ids of a cluster's brokers (none for one broker).
    pub fn node_ids(&self) -> Vec<i32> {
        self.nodes.iter().map(|(n, _)| *n).collect()
    }

    /// The acts that can be done to this target's brokers: every one on a cluster kconform
    /// started, those the user gave a command for on an external cluster, none on one broker.
    pub async fn acts(&self) -> Vec<faults::BrokerAct> {
        if self.brokers < 2 {
            return Vec::new();
        }
        let held = self.held.lock().await;
        match &*held {
            Held::RefCluster(_) => faults::BrokerAct::ALL.to_vec(),
            Held::ApacheCluster(_) => faults::BrokerAct::ALL
                .into_iter()
                .filter(|a| !a.needs_a_disk_switch())
                .collect(),
            // Processes: killed, started again, stopped and continued by kconform; kaas-ref's
            // markers held by its signals; no disk switch in a release binary.
            Held::Build(cluster) => faults::BrokerAct::ALL
                .into_iter()
                .filter(|a| cluster.refusal(*a).is_none())
                .collect(),
            _ => faults::BrokerAct::ALL
                .into_iter()
                .filter(|a| self.faults.has(*a))
                .collect(),
        }
    }

    /// Why an act on a broker of this target cannot be done.
    fn refused(&self, reason: String) -> TargetError {
        TargetError::Broker {
            target: self.name.clone(),
            reason,
        }
    }

    /// The node id of the cluster's broker at `addr` (as FindCoordinator or Metadata names it),
    /// when it is one of them: so a fault can be done to the broker coordinating a key.
    pub fn node_at(&self, addr: SocketAddr) -> Option<i32> {
        self.nodes.iter().find(|(_, a)| *a == addr).map(|(n, _)| *n)
    }

    /// The address of broker `node`, when it is one of a cluster's.
    fn node_addr(&self, node: i32) -> Option<SocketAddr> {
        self.nodes.iter().find(|(n, _)| *n == node).map(|(_, a)| *a)
    }

    /// Does `act` to broker `node` of an external cluster, by the command the user gave.
    async fn by_command(&self, act: faults::BrokerAct, node: i32) -> Result<(), TargetError> {
        if self.brokers < 2 {
            return Err(self.refused(format!(
                "{} is done to a cluster's brokers (this target is one broker)",
                act.key()
            )));
        }
        let addr = self
            .node_addr(node)
            .ok_or_else(|| self.refused(format!("no broker {node}")))?;
        self.faults
            .run(act, node, addr)
            .await
            .map_err(|e| self.refused(e))
    }

    /// Does `act` to broker `node`, and the waits after it (a restarted or resumed broker
    /// back in sync).
    pub async fn act(&self, act: faults::BrokerAct, node: i32) -> Result<(), TargetError> {
        match act {
            faults::BrokerAct::Kill => self.kill(node).await,
            faults::BrokerAct::Restart => self.restart(node).await,
            faults::BrokerAct::Pause => self.pause(node).await,
            faults::BrokerAct::Resume => self.resume(node).await,
            faults::BrokerAct::HoldMarkers => self.hold_markers(node, true).await,
            faults::BrokerAct::ReleaseMarkers => self.hold_markers(node, false).await,
            faults::BrokerAct::FillDisk => self.fill_disk(node, true).await,
            faults::BrokerAct::FreeDisk => self.fill_disk(node, false).await,
        }
    }

    /// Fills (`full`) or frees the disk of broker `node`: on kaas-ref, the data directory
    /// its brokers share, through its storage fault switch (every broker's writes then fail
    /// with ENOSPC, reads and answers going on); on an external cluster, by the user's command.
    /// Either way freeing returns once every broker is listed by its peers again. Apache's is
    /// refused: no small filesystem can be mounted here to fill.
    pub async fn fill_disk(&self, node: i32, full: bool) -> Result<(), TargetError> {
        let guard = self.held.lock().await;
        match &*guard {
            Held::RefCluster(cluster) => {
                let dir = cluster.data_dir();
                match full {
                    true => reference_broker::storage::faults::fill(dir),
                    false => reference_broker::storage::faults::free(dir),
                }
                drop(guard);
            }
            Held::ApacheCluster(_) => {
                return Err(self.refused(format!(
                    "{} is not done to Apache's brokers here: no small filesystem can be mounted to fill",
                    faults::BrokerAct::FillDisk.key()
                )))
            }
            Held::Build(cluster) => {
                let why = cluster
                    .refusal(faults::BrokerAct::FillDisk)
                    .unwrap_or_default();
                return Err(self.refused(format!(
                    "{} is not done to a build's brokers: {why}",
                    faults::BrokerAct::FillDisk.key()
                )));
            }
            _ => {
                drop(guard);
                let act = match full {
                    true => faults::BrokerAct::FillDisk,
                    false => faults::BrokerAct::FreeDisk,
                };
                self.by_command(act, node).await?;
            }
        }
        if !full {
            // A disk full for longer than a peer's liveness timeout left every broker
            // counting the others down (their stamps are writes too): the scenario goes on
            // once each is listed by its peers again, as after a resume.
            for (node, _) in &self.nodes {
                self.caught_up(*node).await?;
            }
        }
        Ok(())
    }

    /// Holds (`held`) or lets through the transaction markers sent to broker `node`, which
    /// otherwise serves as before: at its gate on Apache (`apache::marker_gate`), in its
    /// inbox on kaas-ref (`reference_broker::LocalCluster::hold_markers`). Holding what is held
    /// already, or letting through what is not held, does nothing; a broker killed and
    /// restarted holds them still.
    pub async fn hold_markers(&self, node: i32, held: bool) -> Result<(), TargetError> {
        let mut guard = self.held.lock().await;
        match &mut *guard {
            Held::RefCluster(cluster) => cluster
                .hold_markers(node, held)
                .map(|_| ())
                .map_err(|e| self.refused(e.to_string())),
            Held::ApacheCluster(cluster) => {
                let index = cluster
                    .index(node)
                    .ok_or_else(|| self.refused(format!("no broker {node}")))?;
                cluster.hold_markers(index, held);
                Ok(())
            }
            Held::Build(cluster) => cluster
                .hold_markers(node, held)
                .await
                .map_err(|e| self.refused(e.to_string())),
            _ => {
                let act = match held {
                    true => faults::BrokerAct::HoldMarkers,
                    false => faults::BrokerAct::ReleaseMarkers,
                };
                self.by_command(act, node).await
            }
        }
    }

    /// Kills broker `node` of a cluster at once (SIGKILL for a JVM; for kaas-ref in process,
    /// its connections close and its memory goes).
    pub async fn kill(&self, node: i32) -> Result<(), TargetError> {
        let mut held = self.held.lock().await;
        match &mut *held {
            Held::RefCluster(cluster) => cluster
                .kill(node)
                .await
                .map_err(|e| self.refused(e.to_string())),
            Held::ApacheCluster(cluster) => {
                let index = cluster
                    .index(node)
                    .ok_or_else(|| self.refused(format!("no broker {node}")))?;
                cluster.kill(index);
                Ok(())
            }
            Held::Build(cluster) => cluster
                .kill(node)
                .await
                .map_err(|e| self.refused(e.to_string())),
            _ => self.by_command(faults::BrokerAct::Kill, node).await,
        }
    }

    /// Pauses broker `node` of a cluster where it is, as SIGSTOP pauses a process (an Apache
    /// JVM gets the signal; a kaas-ref broker in process freezes, `reference_broker::freeze`):
    /// its connections stay open and what is sent to it waits.
    pub async fn pause(&self, node: i32) -> Result<(), TargetError> {
        self.signal(node, true).await
    }

    /// Lets a paused broker go on (SIGCONT), and returns once it is back in sync
    /// (`Running::caught_up`).
    pub async fn resume(&self, node: i32) -> Result<(), TargetError> {
        self.signal(node, false).await?;
        self.caught_up(node).await
    }

    /// Waits (at most [`SETTLE_DEADLINE`]) until broker `node`, resumed from a pause (or back
    /// from a disk full long enough for its peers to count it down), is listed and in the ISR
    /// of every partition it replicates, as each peer that answers sees it. Its
    /// own Metadata would not do: it answers from a cache as old as its pause (and an Apache
    /// broker resumed so names itself the leader of partitions that moved, for a moment). Not
    /// every partition whole, as after a restart: another broker may still be paused. A peer
    /// that does not answer within a second (paused, or killed) is not asked again this round.
    async fn caught_up(&self, node: i32) -> Result<(), TargetError> {
        let peers: Vec<SocketAddr> = self
            .nodes
            .iter()
            .filter(|(n, _)| *n != node)
            .map(|(_, a)| *a)
            .collect();
        let started = std::time::Instant::now();
        loop {
            let mut last = Vec::new();
            let mut answered = 0;
            for peer in &peers {
                let seen = crate::targets::brokers::lagging(
                    *peer,
                    node,
                    std::time::Duration::from_secs(1),
                    self.secured,
                )
                .await;
                if let Ok(behind) = seen {
                    answered += 1;
                    last.extend(behind);
                }
            }
            if answered > 0 && last.is_empty() {
                tracing::debug!(target = %self.name, node, waited = ?started.elapsed(), "caught up after a pause");
                return Ok(());
            }
            if started.elapsed() >= SETTLE_DEADLINE {
                let why = match answered {
                    0 => "no peer answered Metadata".to_string(),
                    _ => last.join(", "),
                };
                return Err(TargetError::Broker {
                    target: self.name.clone(),
                    reason: format!(
                        "broker {node} resumed, but after {SETTLE_DEADLINE:?} it is not back in sync: {why}"
                    ),
                });
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    }

    async fn signal(&self, node: i32, pause: bool) -> Result<(), TargetError> {
        let verb = if pause { "pause" } else { "resume" };
        let mut held = self.held.lock().await;
        match &mut *held {
            Held::RefCluster(cluster) => match pause {
                true => cluster.pause(node),
                false => cluster.resume(node).await,
            }
            .map_err(|e| self.refused(e.to_string())),
            Held::ApacheCluster(cluster) => {
                let index = cluster
                    .index(node)
                    .ok_or_else(|| self.refused(format!("no broker {node}")))?;
                match cluster.signal(index, pause) {
                    true => Ok(()),
                    false => {
                        Err(self.refused(format!("broker {node} does not run: cannot {verb} it")))
                    }
                }
            }
            Held::Build(cluster) => cluster
                .signal(node, pause)
                .map_err(|e| self.refused(format!("cannot {verb} broker {node}: {e}"))),
            _ => {
                let act = match pause {
                    true => faults::BrokerAct::Pause,
                    false => faults::BrokerAct::Resume,
                };
                self.by_command(act, node).await
            }
        }
    }

    /// Starts broker `node` of a cluster again, on its address, and returns once it serves and
    /// every partition has its replicas in sync again (`Running::settle`).
    pub async fn restart(&self, node: i32) -> Result<(), TargetError> {
        self.start_again(node).await?;
        self.settle(node).await?;
        // Its own view is whole; its peers' may not list it yet (a kaas-ref broker reads its
        // peers' stamps every 250 ms), and the next scenario's first Metadata asks a peer.
        self.caught_up(node).await
    }

    /// Waits (at most [`SETTLE_DEADLINE`]) until broker `node`, back from a restart, lists every
    /// partition with a leader and all its replicas in sync. An Apache broker serves before its
    /// followers have caught up, and until they have, a write that needs every in-sync replica
    /// (a transaction-state append: EndTxn, InitProducerId) can wait on one: the next scenario
    /// would find a cluster still healing and time out on it.
    async fn settle(&self, node: i32) -> Result<(), TargetError> {
        let Some(addr) = self.node_addr(node) else {
            return Ok(());
        };
        let started = std::time::Instant::now();
        let mut last;
        loop {
            last = match crate::targets::brokers::unsettled(
                addr,
                std::time::Duration::from_secs(5),
                self.secured,
            )
            .await
            {
                Ok(short) if short.is_empty() => {
                    tracing::debug!(target = %self.name, node, waited = ?started.elapsed(), "settled after a restart");
                    return Ok(());
                }
                Ok(short) => short.join(", "),
                Err(e) => e,
            };
            if started.elapsed() >= SETTLE_DEADLINE {
                return Err(TargetError::Broker {
                    target: self.name.clone(),
                    reason: format!(
                        "broker {node} restarted, but after {SETTLE_DEADLINE:?} the cluster is not whole: {last}"
                    ),
                });
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    }

    /// Starts broker `node` of a cluster again, on its address, and returns once it serves.
    async fn start_again(&self, node: i32) -> Result<(), TargetError> {
        let mut held = self.held.clone().lock_owned().await;
        match &mut *held {
            Held::RefCluster(cluster) => cluster
                .restart(node)
                .await
                .map_err(|e| self.refused(e.to_string())),
            Held::ApacheCluster(cluster) => {
                let index = cluster
                    .index(node)
                    .ok_or_else(|| self.refused(format!("no broker {node}")))?;
                // A JVM takes seconds to serve: waited for off the async workers.
                tokio::task::spawn_blocking(move || match &mut *held {
                    Held::ApacheCluster(cluster) => cluster.restart(index),
                    _ => unreachable!("matched above"),
                })
                .await
                .map_err(|e| self.refused(e.to_string()))?
                .map_err(|e| self.refused(e.to_string()))
            }
            Held::Build(cluster) => cluster
                .restart(node)
                .await
                .map_err(|e| self.refused(e.to_string())),
            _ => self.by_command(faults::BrokerAct::Restart, node).await,
        }
    }
}

/// How long the brokers of a cluster just started may take to list each other: a build of
/// kaas-ref's binary started beside Apache's three JVMs on two cores took more than 10 s.
const AGREE_WITHIN: std::time::Duration = std::time::Duration::from_secs(30);

/// Waits ([`AGREE_WITHIN`] at most) until every broker of an external cluster lists all of
/// `nodes` in its Metadata: brokers that were just started may not count each other alive
/// yet, and a scenario that asks two of them would find them disagreeing.
pub(super) async fn agreed(
    name: &str,
    nodes: &[(i32, SocketAddr)],
    secured: bool,
) -> Result<(), TargetError> {
    let want: Vec<i32> = nodes.iter().map(|(n, _)| *n).collect();
    let deadline = std::time::Instant::now() + AGREE_WITHIN;
    loop {
        let mut disagree = None;
        for (node, addr) in nodes {
            let seen = brokers::of(*addr, std::time::Duration::from_secs(5), secured)
                .await
                .map(|listed| listed.into_keys().collect::<Vec<_>>());
            match seen {
                Ok(listed) if listed == want => {}
                Ok(listed) => disagree = Some(format!("broker {node} lists {listed:?}")),
                Err(e) => disagree = Some(format!("broker {node}: {e}")),
            }
        }
        let Some(why) = disagree else {
            return Ok(());
        };
        if std::time::Instant::now() >= deadline {
            return Err(TargetError::Start {
                target: name.to_owned(),
                reason: format!("its brokers do not agree on who is in the cluster after {} s ({why}; the cluster lists {want:?})", AGREE_WITHIN.as_secs()),
            });
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}
