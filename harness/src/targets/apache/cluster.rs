//! A real Apache Kafka 3.7 cluster of N brokers, each its own JVM so that one can be killed
//! (SIGKILL) and restarted, as kaas brokers are.
//!
//! The layout: one dedicated KRaft controller and N broker-only nodes. A kaas cluster has no
//! controller quorum to lose, only brokers; with a dedicated controller, killing any broker is
//! only that, never a lost quorum (with combined nodes, killing two of three would also stop the
//! metadata log), and a broker's death is what the cluster scenarios are about. The price is one
//! more JVM.
//!
//! Every node is formatted and launched in parallel from the cached jars; the cluster is ready
//! when every broker answers ApiVersions and the first lists all N in its Metadata. Settings are
//! [`super::cluster_settings`], the one list both clusters are configured from.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::jars::{self, Jars};
use super::jvm::{self, ApacheJvm, Node, NodeDir};
use super::marker_gate::MarkerGate;
use super::release::Release;
use super::{available, cluster_settings, ApacheError};

/// The dedicated controller's node id (brokers are 0..N-1, as kaas numbers its brokers).
pub const CONTROLLER_ID: u32 = 3000;

/// A running N-broker Apache cluster; every JVM is stopped when it is dropped.
#[derive(Debug)]
pub struct ApacheCluster {
    controller: ApacheJvm,
    brokers: Vec<Option<ApacheJvm>>,
    addrs: Vec<SocketAddr>,
    /// Each broker's gate, through which its peers reach it (its inter-broker listener is
    /// advertised there): closed, it holds the markers sent to the broker.
    gates: Vec<MarkerGate>,
    jars: Jars,
    /// Whether the brokers want a login ([`ApacheCluster::start_with`]).
    secured: bool,
    /// Launch to ready, for the whole cluster.
    pub start_time: Duration,
    dir: tempfile::TempDir,
}

fn broker_dir(root: &Path, index: usize) -> PathBuf {
    root.join(format!("broker-{index}"))
}

impl ApacheCluster {
    /// Formats and starts a controller and `brokers` brokers in parallel; returns once every
    /// broker serves and the cluster's Metadata lists them all.
    pub fn start(brokers: usize) -> Result<ApacheCluster, ApacheError> {
        ApacheCluster::start_with(brokers, false, &Release::CLAIMED)
    }

    /// As [`ApacheCluster::start`]; `secured`: the brokers' listener requires SASL, every node
    /// runs `StandardAuthorizer` ([`crate::security`]; the controller's listener stays
    /// PLAINTEXT, its peers `User:ANONYMOUS`, a super user); `release`: which Apache.
    pub fn start_with(
        brokers: usize,
        secured: bool,
        release: &Release,
    ) -> Result<ApacheCluster, ApacheError> {
        super::retrying_lost_ports(|| ApacheCluster::start_once(brokers, secured, release))
    }

    /// One try of [`ApacheCluster::start_with`], on ports picked now.
    fn start_once(
        brokers: usize,
        secured: bool,
        release: &Release,
    ) -> Result<ApacheCluster, ApacheError> {
        if brokers == 0 {
            return Err(ApacheError::Start {
                reason: "a cluster needs at least one broker".into(),
                log: String::new(),
            });
        }
        available()?;
        let jars = jars::resolve_jars(release)?;
        let dir = tempfile::Builder::new()
            .prefix("kconform-apache-cluster-")
            .tempdir()?;
        let started = Instant::now();
        let controller_port = jvm::free_port()?;
        let voters = format!("{CONTROLLER_ID}@127.0.0.1:{controller_port}");
        let settings = cluster_settings(brokers);
        let mut nodes = vec![(
            Node {
                id: CONTROLLER_ID,
                roles: "controller",
                client_port: None,
                controller_port: Some(controller_port),
                inter_broker: None,
                voters: voters.clone(),
                secured,
            },
            dir.path().join("controller"),
        )];
        let mut addrs = Vec::new();
        let mut gates = Vec::new();
        for index in 0..brokers {
            let port = jvm::free_port()?;
            addrs.push(SocketAddr::from(([127, 0, 0, 1], port)));
            let internal = jvm::free_port()?;
            let gate = MarkerGate::open(SocketAddr::from(([127, 0, 0, 1], internal)))?;
            let inter_broker = Some((internal, gate.addr()));
            gates.push(gate);
            nodes.push((
                Node {
                    id: index as u32,
                    roles: "broker",
                    client_port: Some(port),
                    controller_port: None,
                    inter_broker,
                    voters: voters.clone(),
                    secured,
                },
                broker_dir(dir.path(), index),
            ));
        }
        // Format and launch every node at once; each waits for its own readiness (a broker's
        // needs the controller, which is launched alongside).
        let launched: Vec<Result<ApacheJvm, ApacheError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = nodes
                .iter()
                .map(|(node, node_dir)| {
                    let (jars, settings) = (&jars, &settings);
                    scope.spawn(move || {
                        let props = jvm::node_properties(node_dir, node, settings);
                        let cmd = jvm::format_node(jars, node_dir, &props, node.secured)?;
                        let addr = match node.client_port {
                            Some(port) => SocketAddr::from(([127, 0, 0, 1], port)),
                            None => SocketAddr::from((
                                [127, 0, 0, 1],
                                node.controller_port.unwrap_or_default(),
                            )),
                        };
                        ApacheJvm::launch(
                            cmd,
                            NodeDir::Shared(node_dir.clone()),
                            addr,
                            node.client_port.is_some(),
                        )
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(ApacheError::Start {
                            reason: "a launcher thread panicked".into(),
                            log: String::new(),
                        })
                    })
                })
                .collect()
        });
        let mut launched = launched.into_iter();
        let controller = launched.next().expect("the controller was launched")?;
        let brokers_up = launched
            .map(|b| b.map(Some))
            .collect::<Result<Vec<_>, _>>()?;
        let mut cluster = ApacheCluster {
            controller,
            brokers: brokers_up,
            addrs,
            gates,
            jars,
            secured,
            start_time: Duration::ZERO,
            dir,
        };
        cluster.wait_for_brokers(brokers)?;
        cluster.start_time = started.elapsed();
        tracing::info!(
            brokers,
            secs = cluster.start_time.as_secs_f64(),
            "Apache Kafka cluster started"
        );
        Ok(cluster)
    }

    /// Waits until the first live broker's Metadata lists `count` brokers.
    fn wait_for_brokers(&self, count: usize) -> Result<(), ApacheError> {
        let deadline = Instant::now() + jvm::START_DEADLINE;
        let mut last = String::new();
        while Instant::now() < deadline {
            let live = self.live_addrs();
            match live.first().map(|a| metadata_brokers(*a, self.secured)) {
                Some(Ok(n)) if n == count => return Ok(()),
                Some(Ok(n)) => last = format!("Metadata lists {n} of {count} brokers"),
                Some(Err(e)) => last = e,
                None => last = "no broker is running".into(),
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Err(ApacheError::Start {
            reason: format!("the cluster did not form: {last}"),
            log: self.controller.log_tail(30),
        })
    }

    /// Each broker's client address, by index (a killed one's too).
    pub fn addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// The addresses of the brokers running now.
    pub fn live_addrs(&self) -> Vec<SocketAddr> {
        self.brokers
            .iter()
            .zip(&self.addrs)
            .filter(|(b, _)| b.as_ref().is_some_and(|b| b.exited().is_none()))
            .map(|(_, a)| *a)
            .collect()
    }

    /// The index of the broker whose node id is `node` (brokers are 0..N-1), when there is one.
    pub fn index(&self, node: i32) -> Option<usize> {
        usize::try_from(node).ok().filter(|i| *i < self.addrs.len())
    }

    /// kill -9 of broker `index`; its data stays for a restart.
    pub fn kill(&mut self, index: usize) {
        if let Some(mut broker) = self.brokers.get_mut(index).and_then(Option::take) {
            broker.kill();
        }
    }

    /// SIGSTOP (`pause`) or SIGCONT of broker `index`; `false` when it does not run.
    pub fn signal(&self, index: usize, pause: bool) -> bool {
        match self.brokers.get(index).and_then(Option::as_ref) {
            Some(broker) if pause => broker.pause(),
            Some(broker) => broker.resume(),
            None => false,
        }
    }

    /// Holds (`true`) or lets through the WriteTxnMarkers requests sent to broker `index`, at
    /// its gate ([`MarkerGate`]); `false` when it has no gate or they were so already. A
    /// killed broker's gate keeps its state: the markers wait for it after its restart too.
    pub fn hold_markers(&self, index: usize, held: bool) -> bool {
        self.gates.get(index).is_some_and(|g| g.hold(held))
    }

    /// Starts broker `index` again on its data (after [`ApacheCluster::kill`]); returns once it
    /// serves and the cluster lists every broker again.
    pub fn restart(&mut self, index: usize) -> Result<(), ApacheError> {
        if self.brokers.get(index).is_some_and(Option::is_some) {
            return Ok(());
        }
        let Some(addr) = self.addrs.get(index).copied() else {
            return Err(ApacheError::Start {
                reason: format!("no broker {index} in a cluster of {}", self.addrs.len()),
                log: String::new(),
            });
        };
        let node_dir = broker_dir(self.dir.path(), index);
        let cmd = jvm::node_command(&self.jars, &node_dir);
        let broker = ApacheJvm::launch(cmd, NodeDir::Shared(node_dir), addr, true)?;
        self.brokers[index] = Some(broker);
        self.wait_for_brokers(self.addrs.len())
    }

    /// Resident memory of every JVM of the cluster, in bytes (from `/proc`; 0 where it cannot
    /// be read).
    pub fn resident_bytes(&self) -> u64 {
        std::iter::once(&self.controller)
            .chain(self.brokers.iter().flatten())
            .filter_map(|jvm| jvm.pid())
            .map(resident_bytes_of)
            .sum()
    }
}

impl Drop for ApacheCluster {
    /// The cluster's data goes with it, so nothing needs a clean shutdown: every JVM is killed
    /// at once (a SIGTERM would have each broker wait for the others, a controller gone first).
    fn drop(&mut self) {
        for broker in self.brokers.iter_mut().flatten() {
            broker.kill();
        }
        self.controller.kill();
    }
}

/// A process's resident set size, from `/proc/<pid>/status`.
fn resident_bytes_of(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// Sends one frame on `s` (the size prefix added) and returns the answer after its correlation
/// id, which must be `correlation`.
fn exchange(
    s: &mut std::net::TcpStream,
    correlation: i32,
    frame: &[u8],
) -> Result<Vec<u8>, String> {
    use std::io::{Read, Write};
    let mut framed = (frame.len() as i32).to_be_bytes().to_vec();
    framed.extend(frame);
    s.write_all(&framed).map_err(|e| e.to_string())?;
    let mut size = [0u8; 4];
    s.read_exact(&mut size).map_err(|e| e.to_string())?;
    let size = i32::from_be_bytes(size);
    if !(6..=1 << 20).contains(&size) {
        return Err(format!("an answer of {size} bytes"));
    }
    let mut body = vec![0u8; size as usize];
    s.read_exact(&mut body).map_err(|e| e.to_string())?;
    if body[..4] != correlation.to_be_bytes() {
        return Err("an answer with another correlation id".into());
    }
    Ok(body.split_off(4))
}

/// A v1 request header (key, version, correlation id, a null client id).
fn header(key: i16, version: i16, correlation: i32) -> Vec<u8> {
    let mut h = key.to_be_bytes().to_vec();
    h.extend(version.to_be_bytes());
    h.extend(correlation.to_be_bytes());
    h.extend((-1i16).to_be_bytes());
    h
}

/// The super user's PLAIN login on `s`: SaslHandshake v1, then SaslAuthenticate v0.
fn login(s: &mut std::net::TcpStream) -> Result<(), String> {
    let mut handshake = header(17, 1, 7);
    handshake.extend(5i16.to_be_bytes());
    handshake.extend(b"PLAIN");
    let answer = exchange(s, 7, &handshake)?;
    if answer.get(..2) != Some(&[0, 0]) {
        return Err(format!("SaslHandshake answered {:?}", answer.get(..2)));
    }
    let user = crate::security::SUPER_USER;
    let token = format!(
        "\0{user}\0{}",
        crate::security::password(user).unwrap_or_default()
    );
    let mut authenticate = header(36, 0, 8);
    authenticate.extend((token.len() as i32).to_be_bytes());
    authenticate.extend(token.as_bytes());
    let answer = exchange(s, 8, &authenticate)?;
    match answer.get(..2) {
        Some([0, 0]) => Ok(()),
        other => Err(format!("SaslAuthenticate answered {other:?}")),
    }
}

/// How many brokers `addr`'s Metadata (v1, no topics) lists; `secured`: after the super
/// user's login.
fn metadata_brokers(addr: SocketAddr, secured: bool) -> Result<usize, String> {
    let deadline = Duration::from_secs(2);
    let mut s = std::net::TcpStream::connect_timeout(&addr, deadline).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(deadline))
        .and_then(|()| s.set_write_timeout(Some(deadline)))
        .map_err(|e| e.to_string())?;
    if secured {
        login(&mut s)?;
    }
    // Metadata v1: an empty topics array (v1 reads it as "no topics").
    let mut metadata = header(3, 1, 9);
    metadata.extend(0i32.to_be_bytes());
    let body = exchange(&mut s, 9, &metadata)?;
    // The brokers array's length comes first.
    let Some(&[a, b, c, d]) = body.get(..4) else {
        return Err(format!("a Metadata answer of {} bytes", body.len()));
    };
    let brokers = i32::from_be_bytes([a, b, c, d]);
    usize::try_from(brokers).map_err(|_| format!("Metadata listed {brokers} brokers"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broker_node_points_at_the_dedicated_controller_and_its_peers_at_its_gate() {
        let node = Node {
            id: 2,
            roles: "broker",
            client_port: Some(9000),
            controller_port: None,
            inter_broker: Some((9001, SocketAddr::from(([127, 0, 0, 1], 9002)))),
            voters: format!("{CONTROLLER_ID}@127.0.0.1:9100"),
            secured: false,
        };
        let p = jvm::node_properties(Path::new("/d"), &node, &cluster_settings(3));
        for needed in [
            "process.roles=broker\n",
            "node.id=2\n",
            "controller.quorum.voters=3000@127.0.0.1:9100\n",
            "listeners=PLAINTEXT://127.0.0.1:9000,INTERNAL://127.0.0.1:9001\n",
            "advertised.listeners=PLAINTEXT://127.0.0.1:9000,INTERNAL://127.0.0.1:9002\n",
            "inter.broker.listener.name=INTERNAL\n",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,INTERNAL:PLAINTEXT\n",
            "transaction.state.log.replication.factor=3\n",
            "transaction.state.log.min.isr=2\n",
            "auto.leader.rebalance.enable=false\n",
        ] {
            assert!(p.contains(needed), "missing {needed:?} in\n{p}");
        }
        assert!(
            !p.contains("CONTROLLER://"),
            "a broker has no controller listener"
        );
    }
}
