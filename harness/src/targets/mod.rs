//! Brokers the harness can drive. A target may take seconds to start and is shared by many
//! scenarios, so starting and stopping are separate from using it.

pub mod acls;
pub mod apache;
pub mod brokers;
pub mod choice;
mod coordinators;
mod disrupt;
pub mod faults;
pub mod kaas_build;
pub mod kube_api;
mod launch;
pub mod provision;
pub mod recorded;
pub mod settings;
mod spec;
mod stop_signal;

use std::net::SocketAddr;

use reference_broker::local_cluster::LocalCluster;
use reference_broker::{BrokerConfig, BrokerHandle};

use crate::targets::apache::{cluster::ApacheCluster, container::ApacheContainer, ApacheJvm};
pub use launch::kaas_ref_flags;
pub use spec::{Kind, TargetSpec};

/// Why a target could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// The broker did not start.
    #[error("{target}: did not start: {reason}")]
    Start {
        /// Target name.
        target: String,
        /// Why.
        reason: String,
    },
    /// The broker does not answer ApiVersions.
    #[error("{target} at {addr} cannot be reached: {reason}")]
    Unreachable {
        /// Target name.
        target: String,
        /// Its address.
        addr: SocketAddr,
        /// Why.
        reason: String,
    },
    /// A target specification that does not parse.
    #[error("unknown target '{0}' (expected ref, apache, apache@RELEASE (3.7 to 4.4, e.g. apache@4.4 or apache@4.4+tv2), apache-recorded (apache-recorded@4.4+tv2 for a release recorded too) or external=HOST:PORT; ref:N, apache:N, apache-recorded:N or external:N=HOST:PORT for a cluster of N = 2..=9 brokers; build:N=PATH for the kaas binary at PATH as a cluster of N processes; ref+sasl, apache+sasl, apache-recorded+sasl, ref:N+sasl, apache:N+sasl, external+sasl=HOST:PORT or external:N+sasl=HOST:PORT for SASL and ACLs)")]
    Unknown(String),
    /// A target of a known kind with a part that is wrong: a release kconform does not run
    /// (`apache@9.9`, [`apache::Release::parse`]), an address or a size that does not parse
    /// (`external=notahost`, `external:x=...`): said for that part, not with every form a
    /// target may take.
    #[error("target '{target}': {reason}")]
    Invalid {
        /// The target as given.
        target: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Creating the provisioned topics went wrong (not a refusal: that is reported).
    #[error("creating the provisioned topics: {0}")]
    Provision(String),
    /// Killing or restarting a broker of a target that cannot.
    #[error("{target}: {reason}")]
    Broker {
        /// Target name.
        target: String,
        /// Why.
        reason: String,
    },
}

/// Whether a CreateTopics error code says the broker will not create topics for kconform:
/// TOPIC_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED or POLICY_VIOLATION (the probe
/// before a run and the creation of provisioned topics read it alike).
pub(crate) fn refuses_creation(code: i16) -> bool {
    matches!(code, 29 | 31 | 44)
}

/// Whether the answer to the validate-only CreateTopics probed before a run says the target
/// will not create the scenarios' topics: any error but TOPIC_ALREADY_EXISTS and those a client
/// waits out. A real kaas cluster answers -1 (UNKNOWN_SERVER_ERROR) there; read as anything
/// but a refusal, 18 of 24 cluster scenarios stopped at their topic set-up until
/// `--provisioned-topics` was given by hand.
pub(crate) fn probe_refused(code: i16) -> bool {
    code != 0 && code != 36 && !crate::wire::error_codes::retriable(code)
}

/// The most brokers a cluster target has.
pub const MAX_BROKERS: usize = 9;

/// The label of a target in snapshot file names (`<scenario>__<label>.snap`): its name, a
/// cluster's `:N` as `-N` (a colon is no file-name character everywhere), `+sasl` as `-sasl`.
pub fn snapshot_label(target: &str) -> String {
    target.replace([':', '+'], "-")
}

/// kaas-ref configured as Apache is ([`apache::SETTINGS`], or [`apache::cluster_settings`]
/// for a cluster of `brokers`): the reaper interval, the offsets topic's partitions and the
/// default replication factor.
pub(crate) fn ref_config(brokers: usize) -> BrokerConfig {
    let settings = apache::settings_for(brokers);
    let setting = |key: &str| {
        settings
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.clone())
    };
    let reaper = setting("transaction.abort.timed.out.transaction.cleanup.interval.ms")
        .and_then(|ms| ms.parse().ok())
        .unwrap_or(500);
    let offsets_partitions = setting("offsets.topic.num.partitions")
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    let replication = setting("default.replication.factor")
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    BrokerConfig {
        txn_reaper_interval: std::time::Duration::from_millis(reaper),
        offsets_topic_partitions: offsets_partitions,
        default_replication_factor: replication,
        ..BrokerConfig::for_tests()
    }
}

/// How long a kaas-ref cluster's broker may go without stamping the volume before its peers
/// count it down: short, so that kill scenarios take seconds, and well above the 1 s stamp.
pub const REF_MEMBER_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(3000);

/// How long a restarted broker's cluster may take to have every partition's replicas in sync
/// again (Apache's followers catch up in a second or two here).
pub const SETTLE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(60);

/// A started target.
#[derive(Debug)]
pub struct Running {
    /// Its name.
    pub name: String,
    /// The bootstrap address.
    pub addr: SocketAddr,
    /// How the target was found or started, for the report.
    pub origin: String,
    /// How many brokers it has.
    pub brokers: usize,
    /// Whether connections log in (SASL) and ACLs apply.
    pub secured: bool,
    /// Every broker's address, as a client's bootstrap list (a cluster's all, else `addr`).
    pub bootstrap: Vec<SocketAddr>,
    /// The Apache release whose answers it gives ([`TargetSpec::answers_as`]): whose parser
    /// decides what is malformed to it. None for kaas-ref and an external broker that names no
    /// release (`external@4.4=...` names one): they answer as 3.7, the release kaas claims.
    pub answers_as: Option<apache::Release>,
    /// Every broker of a cluster by node id (launched: 0..N-1 on `bootstrap`; external: as
    /// its Metadata lists them).
    nodes: Vec<(i32, SocketAddr)>,
    /// What `--target` takes to name it again ([`TargetSpec::arg`]).
    arg: String,
    /// The commands that do those to an external cluster's brokers (`--fault-cmd`).
    faults: faults::FaultCommands,
    held: std::sync::Arc<tokio::sync::Mutex<Held>>,
}

/// What the harness holds of a target: the broker it started (to stop it), or nothing (a
/// broker that runs on its own: external, or kept up by `kconform apache up`).
#[derive(Debug, Default)]
enum Held {
    /// Borrowed: not the harness's to stop.
    #[default]
    Nothing,
    /// kaas-ref, in process.
    Ref(BrokerHandle),
    /// Apache launched as a JVM.
    Jvm(ApacheJvm),
    /// Apache in a container (boxed: the container handle is large).
    Container(Box<ApacheContainer>),
    /// A kaas-ref cluster, in process.
    RefCluster(LocalCluster),
    /// An Apache cluster of JVMs.
    ApacheCluster(ApacheCluster),
    /// A kaas build's processes and the Kubernetes API they read (boxed: it is large).
    Build(Box<kaas_build::BuildCluster>),
}

impl Running {
    /// Starts (or, for an external broker or a running `kconform apache up`, just names) a
    /// target.
    pub async fn start(spec: &TargetSpec) -> Result<Running, TargetError> {
        Running::start_with_topics(spec, None).await
    }

    /// [`Running::start`], a kaas build told of `topics` (JSON, `[{"name": "t", "partitions":
    /// 3}]`) in `KAAS_TOPICS`: a kaas build creates a topic through a KafkaTopic its operator
    /// reconciles, and kconform stands in for no operator, so a run's topics are given to it
    /// at start. Other targets ignore them.
    pub async fn start_with_topics(
        spec: &TargetSpec,
        topics: Option<&str>,
    ) -> Result<Running, TargetError> {
        let name = spec.name();
        let started = match (spec.kind, spec.brokers) {
            (Kind::Ref, 1) => launch::kaas_ref(spec).await,
            (Kind::Ref, n) => launch::kaas_ref_cluster(spec, n).await,
            (Kind::Apache(backend, release), 1) => launch::apache(spec, backend, release).await,
            (Kind::Apache(backend, release), n) => {
                launch::apache_cluster(spec, backend, release, n).await
            }
            (Kind::Recorded(_), _) => {
                Err("recorded answers are read from snapshots, not started".into())
            }
            (Kind::External(addr), _) => Ok(launch::external(spec, addr)),
            (Kind::Build(bin), n) => launch::kaas_build(spec, bin, n, topics).await,
        };
        let started = started.map_err(|reason| TargetError::Start {
            target: name.clone(),
            reason,
        })?;
        let bootstrap = match started.bootstrap.is_empty() {
            true => vec![started.addr],
            false => started.bootstrap,
        };
        // An Apache just launched (by this run or by `kconform apache up`) names coordinators
        // before it can act as one.
        let launched_apache = matches!(spec.kind, Kind::Apache(..));
        let starts_brokers =
            matches!(spec.kind, Kind::Ref | Kind::Apache(..) | Kind::Build(_)) && spec.brokers > 1;
        let mut nodes: Vec<(i32, SocketAddr)> = match starts_brokers {
            true => (0..).zip(bootstrap.iter().copied()).collect(),
            false => Vec::new(),
        };
        let mut bootstrap = bootstrap;
        if let (Kind::External(addr), true) = (spec.kind, spec.brokers > 1) {
            // An external cluster's brokers, from its Metadata: every step routes by them. A
            // cluster just started may list fewer while its brokers find each other: asked
            // again for 10 s.
            let patience = std::time::Instant::now() + std::time::Duration::from_secs(10);
            let listed = loop {
                let listed = brokers::of(addr, std::time::Duration::from_secs(10), spec.secured)
                    .await
                    .map_err(|reason| TargetError::Start {
                        target: name.clone(),
                        reason: format!(
                            "its brokers could not be read from its Metadata: {reason}"
                        ),
                    })?;
                if listed.len() >= spec.brokers || std::time::Instant::now() >= patience {
                    break listed;
                }
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            };
            if listed.len() != spec.brokers {
                return Err(TargetError::Start {
                    target: name.clone(),
                    reason: format!(
                        "its Metadata lists {} broker(s) ({:?}), and {name} says {}{}",
                        listed.len(),
                        listed.keys().collect::<Vec<_>>(),
                        spec.brokers,
                        match listed.len() < spec.brokers {
                            true => " (after 10 s of asking)",
                            false => "",
                        }
                    ),
                });
            }
            nodes = listed.into_iter().collect();
            bootstrap = nodes.iter().map(|(_, a)| *a).collect();
        }
        // Brokers that find each other through something outside kconform (an external
        // cluster's own means; a build's Kubernetes API, whose readiness each broker's watch
        // may not have heard yet) are waited for until they agree.
        if matches!(spec.kind, Kind::External(_) | Kind::Build(_)) && spec.brokers > 1 {
            disrupt::agreed(&name, &nodes, spec.secured).await?;
        }
        let running = Running {
            name,
            addr: started.addr,
            origin: started.origin,
            brokers: spec.brokers,
            secured: spec.secured,
            bootstrap,
            answers_as: spec.answers_as(),
            nodes,
            arg: spec.arg(),
            faults: faults::FaultCommands::default(),
            held: std::sync::Arc::new(started.held.into()),
        };
        if launched_apache {
            if let Err(e) = running
                .await_coordinators(coordinators::LOAD_DEADLINE)
                .await
            {
                running.stop().await;
                return Err(e);
            }
        }
        Ok(running)
    }

    /// The parser that decides which requests are well-formed to this target: its release's,
    /// or 3.7's for a broker claiming 3.7.
    pub fn parser(&self) -> crate::wire::frame::Parser {
        self.answers_as
            .map_or_else(Default::default, |r| r.parser())
    }

    /// What `--target` takes to name this target again: its name, with an external broker's
    /// address (`external=127.0.0.1:9092`): what a replay command says.
    pub fn arg(&self) -> String {
        self.arg.clone()
    }

    /// The bootstrap list a client is given: every broker, comma-separated.
    pub fn bootstrap_servers(&self) -> String {
        self.bootstrap
            .iter()
            .map(SocketAddr::to_string)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Starts `spec` and checks that it answers ApiVersions within `deadline`, stopping it
    /// when it does not: for commands whose every step would otherwise fail slowly on a target
    /// that cannot answer (a peer's suite, client workloads).
    pub async fn start_answering(
        spec: &TargetSpec,
        deadline: std::time::Duration,
    ) -> Result<Running, TargetError> {
        Running::start_answering_with_topics(spec, None, deadline).await
    }

    /// [`Running::start_answering`], a kaas build told of `topics` at start
    /// ([`Running::start_with_topics`]).
    pub async fn start_answering_with_topics(
        spec: &TargetSpec,
        topics: Option<&str>,
        deadline: std::time::Duration,
    ) -> Result<Running, TargetError> {
        let target = Running::start_with_topics(spec, topics).await?;
        match target.reachable(deadline).await {
            Ok(()) => Ok(target),
            Err(e) => {
                target.stop().await;
                Err(e)
            }
        }
    }

    /// Whether the target answers ApiVersions within `deadline`: a target that does not cannot
    /// be judged at all (the one failure that ends a run).
    pub async fn reachable(&self, deadline: std::time::Duration) -> Result<(), TargetError> {
        self.versions(deadline).await.map(|_| ())
    }

    /// The versions the target serves ((key, min, max) per API, from ApiVersions), or why it
    /// is unreachable.
    pub async fn served(
        &self,
        deadline: std::time::Duration,
    ) -> Result<Vec<(i16, i16, i16)>, TargetError> {
        self.versions(deadline).await.map(|(_, served)| served)
    }

    /// A connection to the target and the versions it serves ((key, min, max) per API), or why
    /// it is unreachable.
    async fn versions(
        &self,
        deadline: std::time::Duration,
    ) -> Result<(crate::wire::client::Connection, Vec<(i16, i16, i16)>), TargetError> {
        asked(&self.name, self.addr, self.secured, deadline).await
    }

    /// Whether a broker kconform does not start (`external=`) answers at the address given,
    /// as [`Running::reachable`] asks, before any target starts: nothing of the target is
    /// started or read (a cluster's Metadata, its agreement) that its start does again. Any
    /// other target: Ok.
    pub async fn external_reachable(
        spec: &TargetSpec,
        deadline: std::time::Duration,
    ) -> Result<(), TargetError> {
        match spec.external_addr() {
            Some(addr) => asked(&spec.name(), addr, spec.secured, deadline)
                .await
                .map(|_| ()),
            None => Ok(()),
        }
    }

    /// The version of `api` to send: the highest the target serves up to `highest`, which
    /// must be `lowest` or more; `Err` says why there is none ("it does not serve
    /// CreateTopics", "it serves CreateTopics v0-3 only").
    pub(crate) fn version_to_send(
        served: &[(i16, i16, i16)],
        api: kafka_protocol::messages::ApiKey,
        lowest: i16,
        highest: i16,
    ) -> Result<i16, String> {
        let name = crate::wire::error_codes::api_name(api as i16);
        let Some(&(_, min, max)) = served.iter().find(|(k, _, _)| *k == api as i16) else {
            return Err(format!("it does not serve {name}"));
        };
        let version = max.min(highest);
        match version >= min.max(lowest) {
            true => Ok(version),
            false => Err(format!("it serves {name} v{min}-{max} only")),
        }
    }

    /// Whether the target refuses CreateTopics, and how: asked with a validate-only CreateTopics
    /// (nothing is created) of a probe topic. `Some` when the API is not served or the answer is
    /// any error but one a client waits out or "already exists" (`probe_refused`). A target that does not answer ApiVersions first is
    /// [`TargetError::Unreachable`], as with [`Running::reachable`].
    pub async fn create_topics_refused(
        &self,
        deadline: std::time::Duration,
    ) -> Result<Option<String>, TargetError> {
        use kafka_protocol::messages::ApiKey;
        let (mut conn, served) = self.versions(deadline).await?;
        let version = match Running::version_to_send(&served, ApiKey::CreateTopics, 1, 7) {
            Ok(version) => version,
            Err(why) => return Ok(Some(why)),
        };
        let fields: toml::Table = toml::from_str(
            "validate_only = true\ntopics = [{ name = \"kconform-probe\", num_partitions = 1, replication_factor = 1 }]",
        )
        .expect("a constant table");
        let request = crate::api::request::build(ApiKey::CreateTopics, version, &fields)
            .expect("the probe builds");
        let answer = match conn.send(ApiKey::CreateTopics, version, &request).await {
            Ok(answer) => answer,
            // No usable answer says nothing of a refusal: the scenarios' own CreateTopics steps
            // will meet the same and report it.
            Err(e) => {
                tracing::warn!(target = %self.name, "a validate-only CreateTopics got {e}");
                return Ok(None);
            }
        };
        let raw = crate::api::response::to_value(&answer, version);
        let code = crate::api::response::at(&raw, "topics.0.error_code")
            .and_then(serde_json::Value::as_i64)
            .unwrap_or(0) as i16;
        Ok(probe_refused(code).then(|| {
            format!(
                "{} to a validate-only CreateTopics",
                crate::wire::error_codes::label(code)
            )
        }))
    }

    /// Why the target may have stopped answering: for a broker the harness launched that has
    /// exited, its exit status and the end of its log.
    pub fn post_mortem(&self) -> Option<String> {
        let mut held = self.held.try_lock().ok()?;
        if let Held::Build(cluster) = &mut *held {
            return cluster.post_mortem();
        }
        let Held::Jvm(jvm) = &*held else {
            return None;
        };
        let status = jvm.exited()?;
        Some(format!(
            "Apache exited ({status}); its log ends:\n{}",
            jvm.log_tail(40)
        ))
    }

    /// What a run's notes say of the target beyond its answers: for a kaas build, the requests
    /// the stand-in Kubernetes API did not serve (a kaas release reading an object kconform
    /// does not stand in for is named there, not a hang).
    pub fn notes(&self) -> Vec<String> {
        let Ok(held) = self.held.try_lock() else {
            return Vec::new();
        };
        match &*held {
            Held::Build(cluster) => cluster.api().unserved_note().into_iter().collect(),
            _ => Vec::new(),
        }
    }

    /// Why CreateTopics cannot be judged on this target though it answers a validate-only
    /// one: a kaas build (not kaas-ref's) creates topics through a KafkaTopic its operator
    /// reconciles, and no operator runs beside it here. `None` for any other target.
    pub async fn topics_by_operator(&self) -> Option<String> {
        match &*self.held.lock().await {
            Held::Build(cluster) if !cluster.is_kaas_ref() => Some(
                "a kaas build creates a topic through a KafkaTopic its operator reconciles, and none runs beside it here: the run's topics were given to it in KAAS_TOPICS".into(),
            ),
            _ => None,
        }
    }

    /// The holder of a kaas build's controller Lease and its epoch, once one holds it; `None`
    /// for any other target.
    pub async fn controller(&self) -> Option<kube_api::LeaseHolder> {
        match &*self.held.lock().await {
            Held::Build(cluster) => cluster.controller(),
            _ => None,
        }
    }

    /// Stops the target if the harness started it.
    pub async fn stop(self) {
        let held = match std::sync::Arc::try_unwrap(self.held) {
            Ok(held) => held.into_inner(),
            Err(_) => return,
        };
        match held {
            Held::Nothing => {}
            Held::RefCluster(cluster) => {
                let data_dir = cluster.data_dir().to_owned();
                cluster.shutdown().await;
                let _ = std::fs::remove_dir_all(data_dir);
            }
            Held::ApacheCluster(cluster) => {
                let _ = tokio::task::spawn_blocking(move || drop(cluster)).await;
            }
            Held::Container(c) => c.stop().await,
            Held::Build(cluster) => cluster.stop().await,
            Held::Jvm(mut jvm) => {
                let _ = tokio::task::spawn_blocking(move || jvm.stop()).await;
            }
            Held::Ref(b) => {
                let data_dir = b.data_dir().to_owned();
                b.shutdown().await;
                let _ = std::fs::remove_dir_all(data_dir);
            }
        }
    }
}

/// A connection to the broker at `addr` (of target `name`) and the versions it serves, after
/// ApiVersions and, for a `secured` one, the login; or why it is unreachable.
async fn asked(
    name: &str,
    addr: SocketAddr,
    secured: bool,
    deadline: std::time::Duration,
) -> Result<(crate::wire::client::Connection, Vec<(i16, i16, i16)>), TargetError> {
    let unreachable = |reason: String| TargetError::Unreachable {
        target: name.to_owned(),
        addr,
        reason,
    };
    let mut conn = crate::wire::client::Connection::connect(addr, deadline)
        .await
        .map_err(|e| unreachable(e.to_string()))?;
    let served = conn
        .api_versions()
        .await
        .map_err(|e| unreachable(format!("ApiVersions v0 got {e}")))?;
    if secured {
        // ApiVersions comes before the login (as clients send it); the rest after.
        let admin = crate::security::SUPER_USER;
        let password = crate::security::password(admin).unwrap_or_default();
        crate::wire::sasl::authenticate(&mut conn, crate::wire::sasl::PLAIN, admin, password)
            .await
            .map_err(|e| unreachable(e.to_string()))?;
    }
    Ok((conn, served))
}
