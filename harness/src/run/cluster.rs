//! The cluster as a scenario sees it: its brokers (asked of the target's Metadata once), the
//! roles earlier steps bound (`coordinator` → node 2), and the brokers the scenario killed or
//! paused or whose markers it holds; where a request goes, and the steps that do something to
//! a broker.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;

use super::{Outcome, Run};
use crate::scenario::{BrokerAct, BrokerRef, Request};

/// What a run knows of the cluster.
#[derive(Default)]
pub(super) struct Cluster {
    /// Node id → address, from the target's Metadata (asked once, at the first step that
    /// needs it).
    nodes: Option<BTreeMap<i32, SocketAddr>>,
    /// Roles bound by `roles`: role → node id.
    pub(super) roles: BTreeMap<String, i32>,
    /// Brokers this scenario killed and has not restarted.
    pub(super) down: BTreeSet<i32>,
    /// Brokers this scenario paused and has not resumed.
    pub(super) paused: BTreeSet<i32>,
    /// Brokers whose markers this scenario holds and has not let through.
    pub(super) markers_held: BTreeSet<i32>,
    /// Brokers whose disk this scenario filled and has not freed.
    pub(super) disks_full: BTreeSet<i32>,
}

/// Which brokers a step's broker reference picks among.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Among {
    /// Those running (killed and paused ones left out).
    Up,
    /// Those this scenario killed.
    Down,
    /// Those this scenario paused.
    Paused,
    /// Those whose markers this scenario holds.
    MarkersHeld,
    /// Those whose disk this scenario filled.
    DiskFull,
}

impl Cluster {
    /// The lowest node id up (neither killed nor paused), once the cluster's brokers are
    /// known.
    pub(super) fn any_up(&self) -> Option<i32> {
        self.nodes
            .as_ref()?
            .keys()
            .copied()
            .find(|n| self.among(*n) == Among::Up)
    }

    /// Which of the sets `node` is in.
    fn among(&self, node: i32) -> Among {
        match (self.down.contains(&node), self.paused.contains(&node)) {
            (true, _) => Among::Down,
            (_, true) => Among::Paused,
            _ => Among::Up,
        }
    }

    /// Whether `node` is among those `among` names (a broker whose markers are held may also
    /// be up, paused or down).
    fn is(&self, node: i32, among: Among) -> bool {
        match among {
            Among::MarkersHeld => self.markers_held.contains(&node),
            Among::DiskFull => self.disks_full.contains(&node),
            _ => self.among(node) == among,
        }
    }

    /// The node id of the broker at `addr`, once the cluster's brokers are known.
    pub(super) fn node_at(&self, addr: SocketAddr) -> Option<i32> {
        self.nodes
            .as_ref()?
            .iter()
            .find(|(_, &a)| a == addr)
            .map(|(&n, _)| n)
    }

    /// The address of a broker, once the cluster's brokers are known.
    pub(super) fn addr(&self, node: i32) -> Option<SocketAddr> {
        self.nodes.as_ref()?.get(&node).copied()
    }
}

impl Run<'_> {
    /// The cluster's brokers, asked of the target's Metadata at the first need.
    pub(super) async fn nodes(&mut self) -> Result<(), String> {
        if self.cluster.nodes.is_some() {
            return Ok(());
        }
        let advertised = crate::targets::brokers::advertised(
            self.target.addr,
            self.deadline,
            self.target.secured,
        )
        .await?;
        for (node, (host, addr)) in &advertised {
            self.normaliser
                .learn_address(host, i64::from(addr.port()), i64::from(*node));
        }
        let nodes: std::collections::BTreeMap<i32, SocketAddr> = advertised
            .into_iter()
            .map(|(node, (_, addr))| (node, addr))
            .collect();
        if nodes.len() != self.target.brokers {
            return Err(format!(
                "the target's Metadata lists {} brokers ({:?}), the scenario needs {}",
                nodes.len(),
                nodes.keys().collect::<Vec<_>>(),
                self.target.brokers
            ));
        }
        self.cluster.nodes = Some(nodes);
        Ok(())
    }

    /// The node a step's broker reference names now: a role's holder, or (`not-<role>`) the
    /// lowest other node `among` the brokers up, killed or paused.
    async fn resolve(&mut self, broker: &BrokerRef, among: Among) -> Result<i32, String> {
        self.nodes().await?;
        let cluster = &self.cluster;
        let nodes = cluster.nodes.as_ref().expect("known");
        let node = match (broker, broker.role()) {
            (BrokerRef::Node(n), _) => *n,
            (BrokerRef::Role(_), None) => unreachable!("a role has a name"),
            (BrokerRef::Role(_), Some((role, negated))) => {
                let holder = *cluster
                    .roles
                    .get(role)
                    .ok_or_else(|| format!("the role '{role}' is not bound yet"))?;
                match negated {
                    false => holder,
                    true => nodes
                        .keys()
                        .copied()
                        .find(|n| *n != holder && cluster.is(*n, among))
                        .ok_or_else(|| match among {
                            Among::Up => format!("no broker up but the {role}"),
                            Among::Down => format!("no broker killed but the {role}"),
                            Among::Paused => format!("no broker paused but the {role}"),
                            Among::MarkersHeld => {
                                format!("no broker's markers held but the {role}'s")
                            }
                            Among::DiskFull => {
                                format!("no broker's disk filled but the {role}'s")
                            }
                        })?,
                }
            }
        };
        match nodes.contains_key(&node) {
            true => Ok(node),
            false => Err(format!(
                "{broker} is node {node}, which the cluster does not have"
            )),
        }
    }

    /// The request as sent: in a cluster, its connection named after the broker it goes to
    /// (`main@2`), so that each broker gets its own.
    pub(super) async fn routed(&mut self, request: &Request) -> Result<Request, String> {
        if self.target.brokers < 2 {
            return Ok(request.clone());
        }
        let node = match &request.broker {
            Some(broker) => self.resolve(broker, Among::Up).await?,
            None => {
                self.nodes().await?;
                self.cluster
                    .any_up()
                    .ok_or("no broker of the cluster is up")?
            }
        };
        Ok(Request {
            connection: format!("{}@{node}", request.connection),
            ..request.clone()
        })
    }

    /// A step that does something to a broker (`kill`, `restart`, `pause`, `resume`,
    /// `hold_markers`, `release_markers`): does it to the broker it names, and records what it
    /// did.
    pub(super) async fn act(&mut self, name: &str, act: BrokerAct, broker: &BrokerRef) {
        // A restart looks among the brokers this scenario killed, a resume among those it
        // paused, a release among those whose markers it holds; a kill, a pause or a hold
        // among the brokers up.
        let among = match act {
            BrokerAct::Kill | BrokerAct::Pause | BrokerAct::HoldMarkers | BrokerAct::FillDisk => {
                Among::Up
            }
            BrokerAct::Restart => Among::Down,
            BrokerAct::Resume => Among::Paused,
            BrokerAct::ReleaseMarkers => Among::MarkersHeld,
            BrokerAct::FreeDisk => Among::DiskFull,
        };
        let node = match self.resolve(broker, among).await {
            Ok(node) => node,
            Err(e) => return self.log.stop(name, format!("cannot find {broker}: {e}")),
        };
        if let Err(e) = self.target.act(act, node).await {
            return self.log.stop(name, e);
        }
        match act {
            BrokerAct::Kill => {
                self.connections.drop_routed_to(node);
                self.cluster.paused.remove(&node);
                self.cluster.down.insert(node);
            }
            BrokerAct::Restart => {
                self.connections.drop_routed_to(node);
                self.cluster.down.remove(&node);
            }
            // A paused broker keeps its connections: what a step sends it waits, as on a
            // stopped process's socket, and is answered once it is resumed.
            BrokerAct::Pause => {
                self.cluster.paused.insert(node);
            }
            BrokerAct::Resume => {
                self.cluster.paused.remove(&node);
            }
            BrokerAct::HoldMarkers => {
                self.cluster.markers_held.insert(node);
            }
            BrokerAct::ReleaseMarkers => {
                self.cluster.markers_held.remove(&node);
            }
            BrokerAct::FillDisk => {
                self.cluster.disks_full.insert(node);
            }
            BrokerAct::FreeDisk => {
                self.cluster.disks_full.remove(&node);
            }
        }
        self.log
            .action(name, Outcome::Broker(format!("{} {broker}", act.done())));
    }
}
