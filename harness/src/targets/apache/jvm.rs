//! The `jvm` backend: a real Apache Kafka broker (3.7.2, or the [`Release`] a target names)
//! launched as a JVM.
//!
//! The broker's jars come from the cache [`super::jars`] fills; KRaft storage is formatted in a
//! fresh directory (with the release's transaction version), and a single combined
//! broker+controller node starts with a small heap and settings tuned for tests. Readiness is
//! the broker's own "Kafka Server started" line and then an ApiVersions answer on the client
//! port; a failed start shows the tail of the broker's log. The JVM is stopped with SIGTERM,
//! then SIGKILL, and is asked to die with the harness (PR_SET_PDEATHSIG) so none is left
//! behind.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::jars::{resolve_jars, Jars};
use super::release::{Logging, Release};
use super::{available, tail, ApacheError};

/// How long the broker may take to start.
pub const START_DEADLINE: Duration = Duration::from_secs(90);

/// A port for one of the JVM's listeners, which it binds only once started: chosen as kaas-ref
/// chooses its cluster's ports, below the ephemeral range, so that no connection the run makes
/// meanwhile takes it.
pub(crate) fn free_port() -> Result<u16, ApacheError> {
    Ok(reference_broker::ports::free_port(
        std::net::Ipv4Addr::LOCALHOST.into(),
    )?)
}

/// What one node of a KRaft cluster is: its id, its roles, its ports and the controller
/// quorum it belongs to.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    /// `node.id`.
    pub id: u32,
    /// `process.roles`: `broker,controller`, `broker` or `controller`.
    pub roles: &'static str,
    /// The client listener's port (nodes with the broker role).
    pub client_port: Option<u16>,
    /// This node's controller listener port (nodes with the controller role).
    pub controller_port: Option<u16>,
    /// Its own inter-broker listener (`INTERNAL`): the port it listens on, and the address
    /// its peers are told to reach it at, a [`super::marker_gate::MarkerGate`]'s. Without
    /// one, brokers talk to each other on the client listener.
    pub inter_broker: Option<(u16, SocketAddr)>,
    /// `controller.quorum.voters`: `id@127.0.0.1:port`, comma-separated.
    pub voters: String,
    /// The client listener requires SASL and an authorizer applies ACLs
    /// ([`crate::security`]).
    pub secured: bool,
}

/// The server.properties of one node on loopback ports, plus the settings that change answers.
pub(crate) fn node_properties(dir: &Path, node: &Node, settings: &[(&str, String)]) -> String {
    let mut listeners = Vec::new();
    let mut p = format!(
        "process.roles={roles}\nnode.id={id}\ncontroller.quorum.voters={voters}\n",
        roles = node.roles,
        id = node.id,
        voters = node.voters
    );
    let client = match node.secured {
        true => "SASL_PLAINTEXT",
        false => "PLAINTEXT",
    };
    let mut protocols = format!("{client}:{client},CONTROLLER:PLAINTEXT");
    if let Some(port) = node.client_port {
        listeners.push(format!("{client}://127.0.0.1:{port}"));
        match node.inter_broker {
            Some((internal, gate)) => {
                listeners.push(format!("INTERNAL://127.0.0.1:{internal}"));
                protocols.push_str(",INTERNAL:PLAINTEXT");
                p.push_str(&format!(
                    "advertised.listeners={client}://127.0.0.1:{port},INTERNAL://{gate}\ninter.broker.listener.name=INTERNAL\n"
                ));
            }
            None => p.push_str(&format!(
                "advertised.listeners={client}://127.0.0.1:{port}\ninter.broker.listener.name={client}\n"
            )),
        }
    }
    if node.secured {
        p.push_str(&crate::security::apache_properties());
    }
    if let Some(port) = node.controller_port {
        listeners.push(format!("CONTROLLER://127.0.0.1:{port}"));
    }
    p.push_str(&format!(
        "listeners={}
listener.security.protocol.map={protocols}
controller.listener.names=CONTROLLER
log.dirs={data}
num.network.threads=2
num.io.threads=2
background.threads=2
",
        listeners.join(","),
        data = dir.join("data").display()
    ));
    for (key, value) in settings {
        p.push_str(&format!("{key}={value}\n"));
    }
    p
}

/// The server.properties of the test node: a single combined broker and controller on
/// loopback ports, plus the settings that change answers ([`super::SETTINGS`], shared with the
/// container backend and kaas-ref's configuration).
pub fn server_properties(
    dir: &Path,
    client_port: u16,
    controller_port: u16,
    secured: bool,
) -> String {
    let node = Node {
        id: 1,
        roles: "broker,controller",
        client_port: Some(client_port),
        controller_port: Some(controller_port),
        inter_broker: None,
        voters: format!("1@127.0.0.1:{controller_port}"),
        secured,
    };
    let settings = super::settings_for(1);
    node_properties(dir, &node, &settings)
}

/// Warnings and up, and the server's INFO line that says it started ([`READY_LINE`]), in
/// each logging framework's own configuration.
const LOG4J1_CONFIG: &str = "log4j.rootLogger=WARN, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.server.KafkaRaftServer=INFO
";
const LOG4J2_CONFIG: &str = "rootLogger.level = WARN
rootLogger.appenderRef.stdout.ref = STDOUT
appender.stdout.type = Console
appender.stdout.name = STDOUT
appender.stdout.layout.type = PatternLayout
appender.stdout.layout.pattern = [%d] %p %m (%c)%n
logger.raft.name = kafka.server.KafkaRaftServer
logger.raft.level = INFO
";

/// A running Apache broker; stopped (SIGTERM, then SIGKILL) when dropped.
#[derive(Debug)]
pub struct ApacheJvm {
    /// Dropping it ends the thread that spawned the JVM, which the kernel answers with SIGKILL.
    keeper: Option<std::sync::mpsc::Sender<()>>,
    child: Mutex<Option<Child>>,
    log: Arc<Mutex<Vec<String>>>,
    /// The client address (a controller-only node's: its controller listener).
    pub addr: SocketAddr,
    /// How long it took from launch to ready.
    pub start_time: Duration,
    dir: NodeDir,
}

/// Where a node keeps its configuration and data: its own temporary directory (removed with
/// it), or one inside a cluster's, which outlives the node so that it can be restarted.
#[derive(Debug)]
pub(crate) enum NodeDir {
    /// Removed when the node is dropped.
    Owned(tempfile::TempDir),
    /// Kept by someone else.
    Shared(PathBuf),
}

impl NodeDir {
    fn path(&self) -> &Path {
        match self {
            NodeDir::Owned(dir) => dir.path(),
            NodeDir::Shared(dir) => dir,
        }
    }
}

/// Spawns `cmd` so that the kernel kills it when the harness dies (PR_SET_PDEATHSIG). The
/// "parent" the kernel watches is the spawning *thread*, so the spawn happens on a keeper
/// thread that lives until the returned sender is dropped: spawning from a pooled thread would
/// get the JVM killed when the pool retires that thread (tokio's blocking pool does so after
/// 10 s idle, which once killed Apache mid-run).
fn spawn_tied_to_harness(
    mut cmd: Command,
) -> Result<(Child, std::sync::mpsc::Sender<()>), ApacheError> {
    reference_broker::child::dies_with_its_thread(&mut cmd);
    let (child_tx, child_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    std::thread::Builder::new()
        .name("apache-keeper".into())
        .spawn(move || {
            let spawned = cmd.spawn();
            let ok = spawned.is_ok();
            let _ = child_tx.send(spawned);
            if ok {
                // Returns when the sender is dropped (the broker is stopped or dropped).
                let _ = stop_rx.recv();
            }
        })?;
    let child = child_rx
        .recv()
        .map_err(|_| std::io::Error::other("the keeper thread ended before spawning"))??;
    Ok((child, stop_tx))
}

/// Resolves the jars, writes the configuration into `dir`, formats KRaft storage there, and
/// returns the broker's command line and its client port; `secured`: SASL and ACLs
/// ([`crate::security`]).
pub(crate) fn prepare(
    dir: &Path,
    secured: bool,
    release: &Release,
) -> Result<(Command, u16), ApacheError> {
    available()?;
    let jars = resolve_jars(release)?;
    let (client, controller) = (free_port()?, free_port()?);
    let properties = server_properties(dir, client, controller, secured);
    let cmd = format_node(&jars, dir, &properties, secured)?;
    Ok((cmd, client))
}

/// The cluster id every node is formatted with.
const CLUSTER_ID: &str = "5L6g3nShT-eMCtK--X86sw";

/// Writes `properties` and the logging configuration into `dir`, formats the node's KRaft
/// storage (with every user's SCRAM credentials when `secured`, and the release's
/// transaction version), and returns the command that starts it.
pub(crate) fn format_node(
    jars: &Jars,
    dir: &Path,
    properties: &str,
    secured: bool,
) -> Result<Command, ApacheError> {
    let props = dir.join("server.properties");
    std::fs::create_dir_all(dir)?;
    std::fs::write(&props, properties)?;
    let (name, config) = logging_config(jars.release.logging());
    std::fs::write(dir.join(name), config)?;
    let format = java(jars, dir)
        .args(["kafka.tools.StorageTool", "format", "-t", CLUSTER_ID, "-c"])
        .arg(&props)
        .args(jars.release.format_args())
        .args(match secured {
            true => crate::security::scram_format_args(),
            false => Vec::new(),
        })
        .output()?;
    if !format.status.success() {
        return Err(ApacheError::Start {
            reason: "formatting KRaft storage failed".into(),
            log: tail(&String::from_utf8_lossy(&format.stderr), 30),
        });
    }
    Ok(node_command(jars, dir))
}

/// What every JVM kconform starts runs with (brokers, the storage tool, the Java clients'
/// programs, Apache's parser): the tiered compiler's first tier only, one GC thread, the JDK's
/// shared class archive. Same bytecode, same answers; what changes is CPU time, on two cores
/// shared with the tests around them. The C2 compiler's threads and G1's were most of a
/// short-lived JVM's: `kconform clients --client java` (13 workloads on kaas-ref and Apache)
/// took 36.0 s of user CPU with the programs on the JDK's defaults and 24.6 s with these.
pub const JVM_FLAGS: [&str; 3] = [
    "-XX:TieredStopAtLevel=1",
    "-XX:+UseSerialGC",
    "-Xshare:auto",
];

/// The command that starts the node whose configuration is in `dir` (formatted already).
pub(crate) fn node_command(jars: &Jars, dir: &Path) -> Command {
    let mut cmd = java(jars, dir);
    cmd.args(["-Xms64m", "-Xmx512m"])
        .arg("-Djava.awt.headless=true")
        .arg("kafka.Kafka")
        .arg(dir.join("server.properties"));
    cmd
}

/// The line the broker logs once it serves clients.
pub(crate) const READY_LINE: &str = "Kafka Server started";

/// The logging configuration's file name in a node's directory, and its text.
fn logging_config(logging: Logging) -> (&'static str, &'static str) {
    match logging {
        Logging::Log4j1 => ("log4j.properties", LOG4J1_CONFIG),
        Logging::Log4j2 => ("log4j2.properties", LOG4J2_CONFIG),
    }
}

/// `java` with the jars on the classpath and the logging configuration of the node in `dir`.
fn java(jars: &Jars, dir: &Path) -> Command {
    let logging = jars.release.logging();
    let config = dir.join(logging_config(logging).0);
    let flag = match logging {
        Logging::Log4j1 => "-Dlog4j.configuration=file:",
        Logging::Log4j2 => "-Dlog4j2.configurationFile=",
    };
    let mut c = Command::new("java");
    c.args(JVM_FLAGS)
        .arg(format!("{flag}{}", config.display()))
        .arg("-cp")
        .arg(format!("{}/*", jars.libs.display()));
    c
}

impl ApacheJvm {
    /// Resolves, formats and starts a broker of [`Release::CLAIMED`]; returns once it serves
    /// requests.
    pub fn start() -> Result<ApacheJvm, ApacheError> {
        ApacheJvm::start_with(false, &Release::CLAIMED)
    }

    /// As [`ApacheJvm::start`]; `secured`: with SASL and ACLs ([`crate::security`]);
    /// `release`: which Apache.
    pub fn start_with(secured: bool, release: &Release) -> Result<ApacheJvm, ApacheError> {
        super::retrying_lost_ports(|| {
            let dir = tempfile::Builder::new()
                .prefix("kconform-apache-")
                .tempdir()?;
            let (cmd, client) = prepare(dir.path(), secured, release)?;
            let addr = SocketAddr::from(([127, 0, 0, 1], client));
            ApacheJvm::launch(cmd, NodeDir::Owned(dir), addr, true)
        })
    }

    /// Starts the formatted node `cmd` runs; returns once it has logged that it started and,
    /// if it `serves_clients`, answers ApiVersions at `addr`.
    pub(crate) fn launch(
        mut cmd: Command,
        dir: NodeDir,
        addr: SocketAddr,
        serves_clients: bool,
    ) -> Result<ApacheJvm, ApacheError> {
        let started = Instant::now();
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let (mut child, keeper) = spawn_tied_to_harness(cmd)?;
        let log = Arc::new(Mutex::new(Vec::<String>::new()));
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        for stream in [
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
        ]
        .into_iter()
        .flatten()
        {
            let log = log.clone();
            let ready_tx = ready_tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    if line.contains(READY_LINE) {
                        let _ = ready_tx.send(());
                    }
                    let mut l = log.lock().unwrap_or_else(|e| e.into_inner());
                    l.push(line);
                    if l.len() > 400 {
                        l.drain(..200);
                    }
                }
            });
        }
        let mut jvm = ApacheJvm {
            keeper: Some(keeper),
            child: Mutex::new(Some(child)),
            log: log.clone(),
            addr,
            start_time: Duration::ZERO,
            dir,
        };
        let fail = |jvm: &mut ApacheJvm, reason: String| {
            jvm.stop();
            ApacheError::Start {
                reason,
                log: log.lock().unwrap_or_else(|e| e.into_inner()).join("\n"),
            }
        };
        let mut logged_ready = false;
        loop {
            if !logged_ready {
                logged_ready = ready_rx.recv_timeout(Duration::from_millis(200)).is_ok();
            }
            if logged_ready && !serves_clients {
                break;
            }
            if logged_ready {
                match super::answers_api_versions(jvm.addr) {
                    Ok(()) => break,
                    Err(_) => std::thread::sleep(Duration::from_millis(100)),
                }
            }
            if let Some(status) = jvm.exited() {
                return Err(fail(&mut jvm, format!("the JVM exited ({status})")));
            }
            if started.elapsed() > START_DEADLINE {
                return Err(fail(
                    &mut jvm,
                    format!("not ready within {START_DEADLINE:?}"),
                ));
            }
        }
        jvm.start_time = started.elapsed();
        tracing::info!(addr = %jvm.addr, secs = jvm.start_time.as_secs_f64(), "Apache Kafka started");
        Ok(jvm)
    }

    /// The JVM's exit status, if it has exited.
    pub fn exited(&self) -> Option<std::process::ExitStatus> {
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        child.as_mut().and_then(|c| c.try_wait().ok().flatten())
    }

    /// The last `lines` lines the broker logged.
    pub fn log_tail(&self, lines: usize) -> String {
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log[log.len().saturating_sub(lines)..].join("\n")
    }

    /// SIGTERM, then SIGKILL after 15 s.
    fn stop_child(&mut self) {
        let taken = self
            .child
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let Some(mut child) = taken else {
            return;
        };
        // SAFETY: sending signals to our own child process. A paused JVM handles no SIGTERM
        // until it goes on again.
        unsafe {
            libc::kill(child.id() as libc::pid_t, libc::SIGCONT);
            libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
        }
        let end = Instant::now() + Duration::from_secs(15);
        while Instant::now() < end {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = child.kill();
        let _ = child.wait();
    }

    /// Stops the broker (SIGTERM, then SIGKILL after 15 s) and lets its keeper thread go.
    pub fn stop(&mut self) {
        self.stop_child();
        self.keeper.take();
    }

    /// The broker's working directory (config, data).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The JVM's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        let child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        child.as_ref().map(|c| c.id())
    }

    /// SIGSTOP: the JVM stops where it is, its sockets open, until [`ApacheJvm::resume`]. `false`
    /// when it does not run.
    pub fn pause(&self) -> bool {
        self.signal(libc::SIGSTOP)
    }

    /// SIGCONT: a paused JVM goes on. `false` when it does not run.
    pub fn resume(&self) -> bool {
        self.signal(libc::SIGCONT)
    }

    fn signal(&self, signal: libc::c_int) -> bool {
        let child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        // Our own child, not waited for while we hold it (its pid is not reused); a pause
        // returns once every thread is stopped.
        child
            .as_ref()
            .is_some_and(|c| crate::targets::stop_signal::send(c.id(), signal).is_ok())
    }

    /// kill -9, as a crash: no shutdown, nothing flushed.
    pub fn kill(&mut self) {
        let taken = self
            .child
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(mut child) = taken {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.keeper.take();
    }
}

impl Drop for ApacheJvm {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_has_single_broker_transaction_settings() {
        let p = server_properties(Path::new("/d"), 1000, 1001, false);
        for needed in [
            "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1",
            "offsets.topic.replication.factor=1",
            "listeners=PLAINTEXT://127.0.0.1:1000,CONTROLLER://127.0.0.1:1001",
            "controller.quorum.voters=1@127.0.0.1:1001",
            "log.dirs=/d/data",
        ] {
            assert!(p.contains(needed), "missing {needed}");
        }
    }
}
