//! A kaas build as a cluster on one machine (`--target build:N=PATH`, `kconform kaas up`): N
//! processes of the binary at PATH, each on a loopback address of its own and one port (a kaas
//! Metadata answer gives each peer the port the request came in on), sharing one data volume,
//! configured by kaas's own variables, and made one cluster by the Kubernetes API kconform
//! serves beside them ([`super::kube_api`]). kconform kills, restarts, pauses and resumes the
//! processes as a scenario or chaos asks.

mod env;
pub mod hosts;
mod process;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::faults::BrokerAct;
use super::kube_api::{KubeApi, LeaseHolder, Seat};
pub use hosts::{HostsOutcome, HOSTS_FILE};
use process::Broker;

/// The namespace the brokers are told they run in, before the port that makes it the
/// cluster's own (`kconform-40123`): kaas advertises `kaas-N.<svc>.<namespace>.svc.cluster.local`,
/// so two clusters on one machine (the lanes of `kconform run`) need names that do not meet in
/// the one hosts file.
pub const NAMESPACE_PREFIX: &str = "kconform";
/// Their headless Service.
pub const SERVICE: &str = "kaas";

/// How long a cluster may take for every broker's endpoint to be ready.
pub const READY_DEADLINE: Duration = Duration::from_secs(60);

/// Why a build cluster could not start or do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The binary cannot be run.
    #[error("{0}: {1}")]
    Binary(PathBuf, String),
    /// No ports or addresses for the brokers.
    #[error("no addresses for the brokers: {0}")]
    Addresses(String),
    /// The stand-in API, or a file of the cluster's, could not be made.
    #[error("{0}")]
    Setup(String),
    /// A broker did not become ready in time.
    #[error("{0}")]
    NotReady(String),
    /// No broker of that id, or one that cannot take the act.
    #[error("{0}")]
    Broker(String),
}

/// Why a build's brokers cannot take `act`, when they cannot: no disk is filled (a release
/// binary has no switch), and markers are held only on kaas-ref's binary (by its signals).
/// `kaas_ref` is asked only where it matters (asking a kaas build takes seconds). The one
/// answer the plan, a target's acts and the acts themselves give.
pub fn refusal(act: BrokerAct, kaas_ref: impl FnOnce() -> bool) -> Option<&'static str> {
    if act.needs_a_disk_switch() {
        return Some("a build's processes: a release binary has no disk switch");
    }
    let holds = matches!(act, BrokerAct::HoldMarkers | BrokerAct::ReleaseMarkers);
    (holds && !kaas_ref()).then_some("a kaas build: no signal holds its markers")
}

/// How long the binary may take to say its version before it counts as a kaas build.
const VERSION_DEADLINE: Duration = Duration::from_secs(3);

/// How long a kaas-ref process may take to log that it took a hold or release signal.
const MARKER_ACK_DEADLINE: Duration = Duration::from_secs(5);

/// Whether the binary is kaas-ref (it says so when asked its version), which takes flags a
/// kaas build does not: the settings kconform runs its kaas-ref with. A kaas build reads no
/// flags and starts serving instead: it is given throwaway addresses and killed after
/// [`VERSION_DEADLINE`].
pub fn is_kaas_ref(bin: &Path) -> Result<bool, BuildError> {
    use std::io::Read;
    let mut command = std::process::Command::new(bin);
    reference_broker::child::dies_with_its_thread(&mut command);
    let mut child = command
        .arg("--version")
        .env(
            "KAAS_LISTENERS",
            r#"[{"name":"probe","addr":"127.0.0.1:0"}]"#,
        )
        .env("KAAS_HEALTH_ADDR", "127.0.0.1:0")
        .env("KAAS_CONTROLLER_HEARTBEAT_ADDR", "127.0.0.1:0")
        .env_remove("MY_POD_NAME")
        .env_remove("KAAS_DATA_DIR")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| BuildError::Binary(bin.into(), format!("cannot be run: {e}")))?;
    let started = Instant::now();
    let exited = loop {
        match child.try_wait() {
            Ok(Some(_)) => break true,
            Ok(None) if started.elapsed() < VERSION_DEADLINE => {
                std::thread::sleep(Duration::from_millis(20))
            }
            _ => break false,
        }
    };
    if !exited {
        let _ = child.kill();
        let _ = child.wait();
        return Ok(false);
    }
    let mut out = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        let _ = stdout.read_to_string(&mut out);
    }
    Ok(out.starts_with("kaas-ref"))
}

/// What a build cluster says when kconform's own environment names a Kubernetes cluster
/// (`KUBECONFIG`): its brokers are local processes, no pods of it, so they are given the
/// stand-in's kubeconfig all the same, and the user is told. `None` when none is named.
pub fn kubeconfig_note() -> Option<String> {
    let named = std::env::var("KUBECONFIG").ok().filter(|k| !k.is_empty())?;
    Some(format!(
        "KUBECONFIG ({named}) is not given to the brokers: they are processes on this machine, no pods of that cluster, so they read kconform's stand-in API (run kaas in that cluster and name it with --target external:N=HOST:PORT to judge it there)"
    ))
}

/// [`is_kaas_ref`], asked once a binary for the process's life (a kaas build takes
/// [`VERSION_DEADLINE`] to answer it); a binary that cannot be run counts as no kaas-ref.
pub fn is_kaas_ref_once(bin: &Path) -> bool {
    static SEEN: std::sync::Mutex<Vec<(PathBuf, bool)>> = std::sync::Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, is)) = seen.iter().find(|(b, _)| b == bin) {
        return *is;
    }
    let is = is_kaas_ref(bin).unwrap_or(false);
    seen.push((bin.to_owned(), is));
    is
}

/// A running build cluster.
#[derive(Debug)]
pub struct BuildCluster {
    api: KubeApi,
    brokers: Vec<Broker>,
    /// The cluster's folder: the volume (`data/`), the kubeconfig, each broker's log.
    dir: PathBuf,
    bin: PathBuf,
    kaas_ref: bool,
    /// What became of the names a kaas build advertises ([`BuildCluster::resolve_names`]);
    /// none for kaas-ref, which advertises addresses.
    names_note: Option<String>,
    /// The namespace its brokers are told ([`NAMESPACE_PREFIX`] and the Kafka port).
    namespace: String,
}

impl BuildCluster {
    /// Starts `n` brokers of `bin`, each told kaas's variables and the topics of
    /// `topics_json` (else kconform's own `KAAS_TOPICS`, else none), with `kaas_ref_args` where
    /// the binary is kaas-ref's (flags a kaas build does not take); makes the names a kaas
    /// build advertises resolve; and returns once every endpoint is ready ([`READY_DEADLINE`]).
    pub async fn start(
        bin: &Path,
        n: usize,
        topics_json: Option<&str>,
        kaas_ref_args: Vec<String>,
    ) -> Result<BuildCluster, BuildError> {
        let kaas_ref = is_kaas_ref_once(bin);
        let extra_args = match kaas_ref {
            true => kaas_ref_args,
            false => Vec::new(),
        };
        let topics_json = match topics_json {
            Some(topics) => topics.to_owned(),
            None => std::env::var("KAAS_TOPICS").unwrap_or_else(|_| "[]".into()),
        };
        let (ips, ports) = env::addresses(n).map_err(BuildError::Addresses)?;
        let seats: Vec<Seat> = ips
            .iter()
            .enumerate()
            .map(|(i, ip)| Seat {
                pod: format!("kaas-{i}"),
                kafka: SocketAddr::new(IpAddr::V4(*ip), ports.kafka),
                health: SocketAddr::new(IpAddr::V4(*ip), ports.health),
            })
            .collect();
        let dir = std::env::temp_dir().join(format!(
            "kconform-build-{}-{}",
            std::process::id(),
            ports.kafka
        ));
        let setup = |what: &str, e: std::io::Error| {
            BuildError::Setup(format!("{what} in {}: {e}", dir.display()))
        };
        std::fs::create_dir_all(dir.join("data")).map_err(|e| setup("the volume", e))?;
        let namespace = format!("{NAMESPACE_PREFIX}-{}", ports.kafka);
        let api = KubeApi::start(&namespace, SERVICE, seats.clone())
            .await
            .map_err(|e| BuildError::Setup(e.to_string()))?;
        api.write_kubeconfig(&dir.join("kubeconfig"))
            .map_err(|e| setup("the kubeconfig", e))?;
        let mut brokers = Vec::with_capacity(n);
        for (i, seat) in seats.iter().enumerate() {
            let env = env::broker_env(i, seat, &ports, &dir, &namespace, &topics_json);
            brokers.push(Broker::new(
                bin,
                env,
                extra_args.clone(),
                dir.join(format!("kaas-{i}.log")),
            ));
        }
        let mut cluster = BuildCluster {
            api,
            brokers,
            dir,
            bin: bin.into(),
            kaas_ref,
            names_note: None,
            namespace,
        };
        if !kaas_ref {
            cluster.names_note = Some(cluster.resolve_names());
        }
        for broker in &mut cluster.brokers {
            broker
                .spawn()
                .map_err(|e| BuildError::Binary(bin.into(), e))?;
        }
        cluster.await_ready(None).await?;
        Ok(cluster)
    }

    /// Every broker's Kafka address, by id.
    pub fn addrs(&self) -> Vec<SocketAddr> {
        self.brokers.iter().map(|b| b.kafka()).collect()
    }

    /// The names kaas advertises for its brokers (`kaas-0.kaas.kconform-40123.svc.cluster.local`)
    /// with the address each must resolve to.
    pub fn names(&self) -> Vec<(String, IpAddr)> {
        self.brokers
            .iter()
            .enumerate()
            .map(|(i, b)| {
                (
                    format!("kaas-{i}.{SERVICE}.{}.svc.cluster.local", self.namespace),
                    b.kafka().ip(),
                )
            })
            .collect()
    }

    /// What became of the names a kaas build advertises, in one line; none for kaas-ref.
    pub fn names_note(&self) -> Option<&str> {
        self.names_note.as_deref()
    }

    /// Makes the names kaas advertises resolve ([`hosts::ensure`] on [`HOSTS_FILE`]), and says
    /// what became of them in one line.
    fn resolve_names(&self) -> String {
        match hosts::ensure(&self.names(), std::path::Path::new(HOSTS_FILE)) {
            HostsOutcome::Resolved => "its brokers' names resolve".into(),
            HostsOutcome::Written(lines) => format!("{} line(s) added to {HOSTS_FILE} for its brokers' names", lines.len()),
            HostsOutcome::Refused { command, why } => format!(
                "its brokers' names do not resolve and {HOSTS_FILE} could not be written ({why}): run {command}"
            ),
        }
    }

    /// Whether the binary is kaas-ref.
    pub fn is_kaas_ref(&self) -> bool {
        self.kaas_ref
    }

    /// The binary.
    pub fn bin(&self) -> &Path {
        &self.bin
    }

    /// The cluster's folder (the volume, the kubeconfig, the brokers' logs).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The Kubernetes API the brokers read.
    pub fn api(&self) -> &KubeApi {
        &self.api
    }

    /// The controller Lease's holder and epoch.
    pub fn controller(&self) -> Option<LeaseHolder> {
        self.api.controller()
    }

    fn broker(&mut self, id: i32) -> Result<&mut Broker, BuildError> {
        let count = self.brokers.len();
        usize::try_from(id)
            .ok()
            .and_then(|i| self.brokers.get_mut(i))
            .ok_or_else(|| {
                BuildError::Broker(format!("no broker {id} (the cluster has 0..{count})"))
            })
    }

    /// Kills broker `id` (SIGKILL); its pod is made anew, as a StatefulSet would.
    pub async fn kill(&mut self, id: i32) -> Result<(), BuildError> {
        self.broker(id)?.kill().await;
        self.api.pod_replaced(&format!("kaas-{id}"));
        Ok(())
    }

    /// Starts broker `id` again, and returns once its endpoint is ready.
    pub async fn restart(&mut self, id: i32) -> Result<(), BuildError> {
        let bin = self.bin.clone();
        self.broker(id)?
            .spawn()
            .map_err(|e| BuildError::Binary(bin, e))?;
        self.await_ready(Some(id)).await
    }

    /// Pauses (SIGSTOP) or resumes (SIGCONT) broker `id`.
    pub fn signal(&mut self, id: i32, pause: bool) -> Result<(), BuildError> {
        let signal = if pause { libc::SIGSTOP } else { libc::SIGCONT };
        self.broker(id)?.signal(signal)
    }

    /// Why its brokers cannot take `act` ([`refusal`]), when they cannot.
    pub fn refusal(&self, act: BrokerAct) -> Option<&'static str> {
        refusal(act, || self.kaas_ref)
    }

    /// Holds (SIGUSR1) or lets through (SIGUSR2) the markers peers queue for broker `id`:
    /// kaas-ref's signals; a kaas build has none, and is refused.
    ///
    /// kaas-ref takes each of the two signals on a task of its own, so two that reach it
    /// before either task runs are taken in either order: a hold and the release a scenario
    /// sends a few steps later (5 ms apart in `cluster-markers-held-rejoin`) could leave the
    /// markers held for good on a loaded machine, which a fresh-machine CI run showed once.
    /// So each signal is waited for, as the broker's log line says, before the next step;
    /// a log without that line (its level lowered) is waited for [`MARKER_ACK_DEADLINE`].
    pub async fn hold_markers(&mut self, id: i32, held: bool) -> Result<(), BuildError> {
        if let Some(why) = self.refusal(BrokerAct::HoldMarkers) {
            return Err(BuildError::Broker(why.into()));
        }
        let signal = if held { libc::SIGUSR1 } else { libc::SIGUSR2 };
        let broker = self.broker(id)?;
        let (before, _) = broker.marker_acks();
        broker.signal(signal)?;
        let deadline = Instant::now() + MARKER_ACK_DEADLINE;
        loop {
            let (now, last) = broker.marker_acks();
            if now > before && last == Some(held) {
                return Ok(());
            }
            if Instant::now() > deadline {
                tracing::warn!(id, held, "no log line took the marker signal; going on");
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Waits until the endpoints of every running broker (or of broker `only`) are ready,
    /// naming the last lines of the log of one that is not, or that exited.
    async fn await_ready(&mut self, only: Option<i32>) -> Result<(), BuildError> {
        let started = Instant::now();
        loop {
            let ready = self.api.ready();
            let waiting: Vec<usize> = (0..self.brokers.len())
                .filter(|i| only.is_none_or(|o| o as usize == *i))
                .filter(|i| self.brokers[*i].running() && !ready.get(*i).copied().unwrap_or(false))
                .collect();
            if waiting.is_empty() {
                return Ok(());
            }
            for i in &waiting {
                if let Some(status) = self.brokers[*i].exited() {
                    return Err(BuildError::NotReady(format!(
                        "broker {i} exited ({status}); its log ({}) ends:\n{}",
                        self.brokers[*i].log().display(),
                        self.brokers[*i].log_tail(20)
                    )));
                }
            }
            if started.elapsed() > READY_DEADLINE {
                let i = waiting[0];
                return Err(BuildError::NotReady(format!(
                    "broker(s) {waiting:?} not ready after {READY_DEADLINE:?} (Kafka port, /readyz and the pod's kaas.rs/PartitionsReady condition); broker {i}'s log ({}) ends:\n{}",
                    self.brokers[i].log().display(),
                    self.brokers[i].log_tail(20)
                )));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The brokers that exited on their own (not killed by kconform), with how and the end
    /// of each one's log: why the cluster may have stopped answering.
    pub fn post_mortem(&mut self) -> Option<String> {
        let dead: Vec<String> = self
            .brokers
            .iter_mut()
            .enumerate()
            .filter_map(|(i, b)| {
                let status = b.exited()?;
                Some(format!(
                    "broker {i} exited ({status}); its log ({}) ends:\n{}",
                    b.log().display(),
                    b.log_tail(20)
                ))
            })
            .collect();
        (!dead.is_empty()).then(|| dead.join("\n"))
    }

    /// Stops every broker and removes the volume; the logs and kubeconfig stay.
    pub async fn stop(mut self) {
        for broker in &mut self.brokers {
            broker.kill().await;
        }
        if !self.kaas_ref {
            hosts::remove(&self.names(), Path::new(HOSTS_FILE));
        }
        let _ = std::fs::remove_dir_all(self.dir.join("data"));
    }
}

/// The loopback addresses a cluster's brokers take: `127.77.<k>.<i+1>`, a third octet per
/// cluster so that two on one machine do not meet.
fn loopback(k: u8, i: usize) -> Ipv4Addr {
    Ipv4Addr::new(127, 77, k, (i + 1) as u8)
}
