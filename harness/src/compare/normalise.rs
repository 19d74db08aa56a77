//! Turns run-specific values into symbols that keep equality, so transcripts of different runs
//! and different brokers compare: the first producer id seen is `pid#1`, the same id later is
//! `pid#1` again (so "same PID, epoch + 1" stays visible). Node ids, hosts, ports, cluster ids,
//! throttle times and member ids get the same treatment; timestamps become `ts` (two clocks
//! make their order meaningless); error codes get their Apache names;
//! the names a scenario made unique go back to their placeholders.

use std::collections::HashMap;

use serde_json::Value;

use crate::wire::error_codes;

/// Symbol tables for one transcript.
#[derive(Debug, Default)]
pub struct Normaliser {
    symbols: HashMap<(&'static str, String), usize>,
    counts: HashMap<&'static str, usize>,
    /// (actual unique name, placeholder such as `${txn}`).
    names: Vec<(String, String)>,
    /// Names too short to replace inside other strings (a one-byte group id): read back as
    /// their placeholder only where a whole string equals one.
    whole_names: HashMap<String, String>,
    /// In a cluster: node id → the role a scenario bound it to last (`coordinator`).
    roles: HashMap<i64, String>,
    /// In a cluster: port → the node id listening there.
    ports: HashMap<i64, i64>,
    /// In a cluster: (advertised host, port) → the node id there.
    addresses: HashMap<(String, i64), i64>,
    /// Whether two brokers share a port (a kaas build: each broker on an address of its own,
    /// one port): a broker is then told by its host and port together.
    shared_port: bool,
}

/// Fields that list node ids as a set.
const NODE_SETS: [&str; 3] = ["replica_nodes", "isr_nodes", "offline_replicas"];

fn kind_of(key: &str) -> Option<&'static str> {
    Some(match key {
        "producer_id" => "pid",
        "node_id" | "leader_id" | "controller_id" => "node",
        "host" => "host",
        "port" => "port",
        "cluster_id" => "cluster",
        "throttle_time_ms" => "throttle",
        "timestamp" | "log_append_time_ms" => "ts",
        "member_id" | "leader" => "member",
        _ => return None,
    })
}

impl Normaliser {
    /// A normaliser that maps each unique name back to its placeholder.
    pub fn new(mut names: Vec<(String, String)>) -> Normaliser {
        // Longer names first: `closed_group-…` is not read as `closed_` and `${group}`.
        names.sort_by_key(|(a, _)| std::cmp::Reverse(a.len()));
        Normaliser {
            names,
            ..Default::default()
        }
    }

    /// Another actual name that reads as `placeholder` (a renamed unique variable). Longer
    /// names are replaced first, so `x~1` is not read as `x` followed by `~1`.
    pub fn add_name(&mut self, actual: String, placeholder: String) {
        self.names.push((actual, placeholder));
        self.names.sort_by_key(|(a, _)| std::cmp::Reverse(a.len()));
    }

    /// A name read back as `placeholder` only where a whole string equals it.
    pub fn add_whole_name(&mut self, actual: String, placeholder: String) {
        self.whole_names.insert(actual, placeholder);
    }

    /// Node `node` holds `role` from now on: node ids (and its port) in later answers read as
    /// `node:<role>` (`port:<role>`), whatever number each cluster gave the broker.
    pub fn bind_role(&mut self, node: i64, role: &str) {
        // A role moved to another broker (a new coordinator): the old one no longer reads so.
        self.roles.retain(|_, r| r != role);
        self.roles.insert(node, role.to_owned());
    }

    /// Node `node` listens on `port` (so the port reads as the node's role, when it has one).
    pub fn learn_port(&mut self, port: i64, node: i64) {
        if self.ports.get(&port).is_some_and(|n| *n != node) {
            self.shared_port = true;
        }
        self.ports.insert(port, node);
    }

    /// Node `node` is advertised as `host`:`port`. Where every broker has a port of its own
    /// (Apache, kaas-ref in process), the port tells them apart, as [`Normaliser::learn_port`];
    /// where they share one (a kaas build), an answer's host and port read together as the
    /// broker's: the host as the one host brokers are on, the port as the broker's role or
    /// its number, so that both clusters' answers read alike.
    pub fn learn_address(&mut self, host: &str, port: i64, node: i64) {
        self.learn_port(port, node);
        self.addresses.insert((host.to_owned(), port), node);
    }

    /// A `host` and `port` pair of a cluster whose brokers share a port, read as the broker
    /// there: `None` when it is no broker's (then each field reads on its own).
    fn broker_address(&mut self, map: &serde_json::Map<String, Value>) -> Option<(Value, Value)> {
        if !self.shared_port {
            return None;
        }
        let host = map.get("host")?.as_str()?;
        let port = map.get("port")?.as_i64()?;
        let node = *self.addresses.get(&(host.to_owned(), port))?;
        let port = match self.roles.get(&node) {
            Some(role) => Value::String(format!("port:{role}")),
            None => self.symbol("port", format!("node {node}")),
        };
        Some((self.symbol("host", "a broker's host".into()), port))
    }

    /// A cluster's set of node ids (replicas, in-sync replicas): each as its role, or `node`
    /// when it has none, sorted: clusters order and number their brokers each their own way.
    fn node_set(&self, nodes: &[Value]) -> Value {
        let mut names: Vec<String> = nodes
            .iter()
            .map(|n| {
                n.as_i64()
                    .and_then(|n| self.roles.get(&n))
                    .map_or_else(|| "node".to_owned(), |role| format!("node:{role}"))
            })
            .collect();
        names.sort();
        Value::Array(names.into_iter().map(Value::String).collect())
    }

    fn symbol(&mut self, kind: &'static str, raw: String) -> Value {
        let next = self.counts.get(kind).copied().unwrap_or(0) + 1;
        let n = *self.symbols.entry((kind, raw)).or_insert_with(|| next);
        if n == next {
            self.counts.insert(kind, next);
        }
        Value::String(format!("{kind}#{n}"))
    }

    fn name(&self, s: &str) -> Value {
        if let Some(placeholder) = self.whole_names.get(s) {
            return Value::String(placeholder.clone());
        }
        let mut out = s.to_owned();
        for (actual, placeholder) in &self.names {
            out = out.replace(actual, placeholder);
        }
        Value::String(out)
    }

    /// The normalised copy of a request or response tree.
    pub fn normalise(&mut self, value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let address = self.broker_address(map);
                Value::Object(
                    map.iter()
                        .map(|(k, v)| match (&address, k.as_str()) {
                            (Some((host, _)), "host") => (k.clone(), host.clone()),
                            (Some((_, port)), "port") => (k.clone(), port.clone()),
                            _ => (k.clone(), self.field(k, v)),
                        })
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(|v| self.normalise(v)).collect()),
            Value::String(s) => self.name(s),
            other => other.clone(),
        }
    }

    fn field(&mut self, key: &str, v: &Value) -> Value {
        if key.ends_with("error_code") {
            if let Some(code) = v.as_i64() {
                return Value::String(error_codes::label(code as i16));
            }
        }
        // In a cluster, a marker's coordinator epoch counts how often the transaction-state
        // partition has changed leaders in the cluster's life, scenarios before included: what
        // compares is whether it has (`moved`) or not (0).
        if !self.ports.is_empty() && key == "coordinator_epoch" && v.as_i64().is_some_and(|n| n > 0)
        {
            return Value::String("moved".into());
        }
        if !self.ports.is_empty() && NODE_SETS.contains(&key) {
            if let Value::Array(nodes) = v {
                return self.node_set(nodes);
            }
        }
        match (kind_of(key), v) {
            // -1 and "" mean "none" on the wire: keep them as they are.
            (Some(_), Value::Number(n)) if n.as_i64() == Some(-1) => v.clone(),
            (Some(_), Value::String(s)) if s.is_empty() => v.clone(),
            // A throttle or port of 0 means none; keep it readable.
            (Some("throttle" | "port"), Value::Number(n)) if n.as_i64() == Some(0) => v.clone(),
            // Timestamps come from two clocks (the harness's for records it produces, the
            // broker's for markers and appends): only "there is one" compares.
            (Some("ts"), Value::Number(_)) => Value::String("ts".into()),
            (Some("node"), Value::Number(n))
                if n.as_i64().is_some_and(|n| self.roles.contains_key(&n)) =>
            {
                Value::String(format!(
                    "node:{}",
                    self.roles[&n.as_i64().expect("checked")]
                ))
            }
            (Some("port"), Value::Number(n))
                if n.as_i64()
                    .and_then(|p| self.ports.get(&p))
                    .is_some_and(|node| self.roles.contains_key(node)) =>
            {
                let node = self.ports[&n.as_i64().expect("checked")];
                Value::String(format!("port:{}", self.roles[&node]))
            }
            (Some(kind), Value::Number(n)) => self.symbol(kind, n.to_string()),
            (Some(kind), Value::String(s)) => self.symbol(kind, s.clone()),
            _ => self.normalise(v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_short_name_reads_back_only_as_a_whole_string() {
        let mut n = Normaliser::new(Vec::new());
        n.add_whole_name("a".into(), "${id_1}".into());
        assert_eq!(
            n.normalise(&json!({"group_id": "a", "error_message": "a bad name"})),
            json!({"group_id": "${id_1}", "error_message": "a bad name"})
        );
    }

    #[test]
    fn a_name_inside_a_longer_one_does_not_split_it() {
        let mut n = Normaliser::new(vec![
            ("group-s-1".into(), "${group}".into()),
            ("closed_group-s-1".into(), "${closed_group}".into()),
        ]);
        assert_eq!(
            n.normalise(&json!({"group_id": "closed_group-s-1", "other": "group-s-1"})),
            json!({"group_id": "${closed_group}", "other": "${group}"})
        );
    }

    #[test]
    fn symbols_keep_equality_and_codes_get_names() {
        let mut n = Normaliser::new(vec![("tx-abc123".into(), "${txn}".into())]);
        let a = n.normalise(
            &json!({"producer_id": 1099511627776i64, "producer_epoch": 0, "error_code": 0}),
        );
        let b = n.normalise(
            &json!({"producer_id": 1099511627776i64, "producer_epoch": 1, "error_code": 50}),
        );
        let c = n.normalise(
            &json!({"producer_id": 7, "error_code": 48, "name": "tx-abc123", "producer_epoch": -1}),
        );
        assert_eq!(
            a,
            json!({"producer_id": "pid#1", "producer_epoch": 0, "error_code": "0 NONE"})
        );
        assert_eq!(
            b,
            json!({"producer_id": "pid#1", "producer_epoch": 1, "error_code": "50 INVALID_TRANSACTION_TIMEOUT"})
        );
        assert_eq!(
            c,
            json!({"producer_id": "pid#2", "error_code": "48 INVALID_TXN_STATE", "name": "${txn}", "producer_epoch": -1})
        );
        let d = n.normalise(
            &json!({"producer_id": -1, "host": "127.0.0.1", "port": 9092, "throttle_time_ms": 0}),
        );
        assert_eq!(
            d,
            json!({"producer_id": -1, "host": "host#1", "port": "port#1", "throttle_time_ms": 0})
        );
    }

    #[test]
    fn a_node_with_a_role_reads_as_the_role_on_every_cluster() {
        // Two clusters where the coordinator is node 2 and node 0: the same text.
        let read = |coordinator: i64, port: i64| {
            let mut n = Normaliser::new(Vec::new());
            n.learn_port(port, coordinator);
            n.learn_port(port + 1, 7);
            n.bind_role(coordinator, "coordinator");
            n.normalise(&json!({"node_id": coordinator, "port": port, "leader_id": 7, "other": {"port": port + 1}}))
        };
        assert_eq!(read(2, 9094), read(0, 19092));
        assert_eq!(
            read(2, 9094),
            json!({"node_id": "node:coordinator", "port": "port:coordinator", "leader_id": "node#1", "other": {"port": "port#1"}})
        );
        // The latest binding wins.
        let mut n = Normaliser::new(Vec::new());
        n.bind_role(1, "coordinator");
        n.bind_role(1, "new-coordinator");
        assert_eq!(
            n.normalise(&json!({"node_id": 1})),
            json!({"node_id": "node:new-coordinator"})
        );
        // Replica sets, once the cluster's ports are known: roles, sorted.
        n.learn_port(9092, 1);
        assert_eq!(
            n.normalise(&json!({"replica_nodes": [2, 1, 0], "isr_nodes": []})),
            json!({"replica_nodes": ["node", "node", "node:new-coordinator"], "isr_nodes": []})
        );
        // A coordinator epoch above 0 in a cluster: only that it moved.
        assert_eq!(
            n.normalise(&json!({"a": {"coordinator_epoch": 3}, "b": {"coordinator_epoch": 0}})),
            json!({"a": {"coordinator_epoch": "moved"}, "b": {"coordinator_epoch": 0}})
        );
    }

    /// A kaas build's brokers share a port, each on its own address; Apache's share a host,
    /// each on its own port. The same answers of each read alike, and a host that is no
    /// broker's still reads as its own.
    #[test]
    fn brokers_told_apart_by_host_read_as_brokers_told_apart_by_port() {
        let answers = |n: &mut Normaliser, addr: &dyn Fn(i64) -> (String, i64)| {
            let found = |node| {
                let (host, port) = addr(node);
                json!({"node_id": node, "host": host, "port": port})
            };
            vec![
                n.normalise(&found(2)),
                n.normalise(&found(1)),
                n.normalise(&found(2)),
            ]
        };
        let apache = |node: i64| ("127.0.0.1".to_owned(), 9092 + node);
        let build = |node: i64| (format!("127.77.1.{}", node + 1), 40000);
        let mut read = Vec::new();
        for addr in [&apache as &dyn Fn(i64) -> (String, i64), &build] {
            let mut n = Normaliser::new(Vec::new());
            for node in 0..3 {
                let (host, port) = addr(node);
                n.learn_address(&host, port, node);
            }
            n.bind_role(2, "coordinator");
            read.push(answers(&mut n, addr));
        }
        assert_eq!(read[0], read[1]);
        assert_eq!(
            read[1][1],
            json!({"node_id": "node#1", "host": "host#1", "port": "port#1"})
        );
        assert_eq!(read[1][0]["port"], "port:coordinator");
        // Before this, a build's brokers read as three hosts on one port.
        let mut n = Normaliser::new(Vec::new());
        n.learn_address("127.77.1.1", 40000, 0);
        n.learn_address("127.77.1.2", 40000, 1);
        assert_eq!(
            n.normalise(&json!({"host": "127.77.1.9", "port": 40000})),
            json!({"host": "host#1", "port": "port#1"}),
            "no broker's address: each field on its own"
        );
    }
}
