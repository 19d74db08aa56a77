//! The cluster as a scenario sees it: its brokers (asked of the target's Metadata once), the
//! roles earlier steps bound (`coordinator` → node 2), and the brokers the scenario killed;
//! where a request goes, and the `kill` and `restart` steps.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;

use super::{Outcome, Run};
use crate::scenario::{BrokerRef, Request};

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
}

impl Cluster {
    /// The lowest node id up, once the cluster's brokers are known.
    pub(super) fn any_up(&self) -> Option<i32> {
        self.nodes
            .as_ref()?
            .keys()
            .copied()
            .find(|n| !self.down.contains(n))
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
        let nodes =
            crate::targets::brokers::of(self.target.addr, self.deadline, self.target.secured)
                .await?;
        for (node, addr) in &nodes {
            self.normaliser
                .learn_port(i64::from(addr.port()), i64::from(*node));
        }
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

    /// The node a step's broker reference names now: among the brokers up, or (`down`, to
    /// restart one) among those this scenario killed.
    async fn resolve(&mut self, broker: &BrokerRef, down: bool) -> Result<i32, String> {
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
                        .find(|n| *n != holder && cluster.down.contains(n) == down)
                        .ok_or_else(|| match down {
                            false => format!("no broker up but the {role}"),
                            true => format!("no broker down but the {role}"),
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
            Some(broker) => self.resolve(broker, false).await?,
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

    /// A `kill` (or, `kill` false, `restart`) step: acts on the broker it names, and records
    /// what it did.
    pub(super) async fn act(&mut self, name: &str, broker: &BrokerRef, kill: bool) {
        let node = match self.resolve(broker, !kill).await {
            Ok(node) => node,
            Err(e) => return self.log.stop(name, format!("cannot find {broker}: {e}")),
        };
        let done = match kill {
            true => self.target.kill(node).await,
            false => self.target.restart(node).await,
        };
        if let Err(e) = done {
            return self.log.stop(name, e);
        }
        self.connections.drop_routed_to(node);
        match kill {
            true => self.cluster.down.insert(node),
            false => self.cluster.down.remove(&node),
        };
        let done = if kill { "killed" } else { "restarted" };
        self.log
            .action(name, Outcome::Broker(format!("{done} {broker}")));
    }
}
