//! The connections a run holds to its target, one per name a step gives (`main`, or `main@2`
//! to broker 2 of a cluster), each logged in as the scenario says on a secured target; and
//! the versions the target serves, asked once.

use std::collections::{BTreeMap, HashMap};

use kafka_protocol::messages::ApiKey;

use super::Run;
use crate::wire::client::{Body, ClientError, Connection};
use crate::wire::frame;

/// A run's connections and what it learned through them.
pub(super) struct Connections {
    /// Connection name → the connection, opened at its first use.
    open: HashMap<String, Connection>,
    /// What the target serves: API key → (min, max), from its ApiVersions.
    served: Option<HashMap<i16, (i16, i16)>>,
    /// On a secured target, who each connection logs in as: connection → (user, mechanism).
    logins: BTreeMap<String, (String, String)>,
}

impl Connections {
    /// None open yet; on a secured target, `logins` says who logs in on each.
    pub(super) fn new(logins: BTreeMap<String, (String, String)>) -> Connections {
        Connections {
            open: HashMap::new(),
            served: None,
            logins,
        }
    }

    /// Takes a connection out, for a background request to own until it is answered.
    pub(super) fn take(&mut self, name: &str) -> Option<Connection> {
        self.open.remove(name)
    }

    /// Puts a connection back (a background request's, once answered).
    pub(super) fn put(&mut self, name: &str, connection: Connection) {
        self.open.insert(name.to_owned(), connection);
    }

    /// The versions the target serves of `api`, when its ApiVersions has been read: what a
    /// sweep recorded as not sent (the scenario stopped first) would have swept.
    pub(super) fn served_if_known(&self, api: ApiKey) -> Option<(i16, i16)> {
        self.served.as_ref()?.get(&(api as i16)).copied()
    }

    /// Forgets a connection that is no longer usable; the next use opens another.
    pub(super) fn forget(&mut self, name: &str) {
        self.open.remove(name);
    }

    /// Forgets every connection routed to `node` (`name@node`): the broker went away.
    pub(super) fn drop_routed_to(&mut self, node: i32) {
        let suffix = format!("@{node}");
        self.open.retain(|key, _| !key.ends_with(&suffix));
    }
}

impl Run<'_> {
    /// The named connection, opened (and logged in) at its first use.
    pub(super) async fn connection(&mut self, name: &str) -> Result<&mut Connection, ClientError> {
        if !self.connections.open.contains_key(name) {
            let addr = self.addr_of(name);
            let mut c = Connection::connect(addr, self.deadline).await?;
            let base = name.split('@').next().unwrap_or(name);
            let login = self.connections.logins.get(base);
            if let Some((user, mechanism)) = login.filter(|_| self.target.secured) {
                if user != crate::security::NOBODY {
                    let password = crate::security::password(user).unwrap_or_default();
                    crate::wire::sasl::authenticate(&mut c, mechanism, user, password).await?;
                }
            }
            self.connections.open.insert(name.to_owned(), c);
        }
        Ok(self.connections.open.get_mut(name).expect("inserted"))
    }

    /// The connection `name`, opened (and logged in) if it is not yet, taken out of the run's
    /// connections: for a request that owns it until answered (a background step) or closes it
    /// (a cut). Its next use opens another, unless it is put back.
    pub(super) async fn take_open(&mut self, name: &str) -> Result<Connection, ClientError> {
        self.connection(name).await?;
        Ok(self.connections.take(name).expect("opened above"))
    }

    /// Where a connection goes: a routed one (`name@node`) to that broker; any other to the
    /// target's bootstrap, or in a cluster to the lowest broker up.
    fn addr_of(&self, key: &str) -> std::net::SocketAddr {
        let routed = key
            .rsplit_once('@')
            .and_then(|(_, n)| n.parse::<i32>().ok())
            .or_else(|| self.cluster.any_up());
        routed
            .and_then(|n| self.cluster.addr(n))
            .unwrap_or(self.target.addr)
    }

    /// Sends `request` on the named connection (connecting first if need be), lending the
    /// scenario's slot while the answer is long in coming.
    pub(super) async fn send_on(
        &mut self,
        connection: &str,
        api: ApiKey,
        version: i16,
        request: Body<'_>,
    ) -> Result<frame::Decoded, ClientError> {
        self.connection(connection).await?;
        let conn = self
            .connections
            .open
            .get_mut(connection)
            .expect("connected");
        self.slot.wait(conn.exchange(api, version, request)).await
    }

    /// The (min, max) versions the target serves of `api`, asking ApiVersions once per run.
    pub(super) async fn served(&mut self, api: ApiKey) -> Result<Option<(i16, i16)>, ClientError> {
        if self.connections.served.is_none() {
            if self.target.brokers > 1 {
                // In a cluster, to a broker up (the bootstrap may be the one killed).
                let _ = self.nodes().await;
            }
            self.connection("__api_versions").await?;
            let conn = self.connections.open.get_mut("__api_versions");
            let conn = conn.expect("connected");
            let versions = self.slot.wait(conn.api_versions()).await?;
            let served = versions.into_iter().map(|(k, a, b)| (k, (a, b))).collect();
            self.connections.served = Some(served);
        }
        Ok(self
            .connections
            .served
            .as_ref()
            .and_then(|served| served.get(&(api as i16)).copied()))
    }
}
