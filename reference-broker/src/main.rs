//! `kaas-ref`: the reference kaas broker as a process. A thin wrapper over
//! [`reference_broker::Broker`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use reference_broker::alloc::ReservingAllocator;
use reference_broker::{Broker, BrokerConfig};

/// Hostile element counts reserve address space, not memory (see `reference_broker::alloc`).
#[global_allocator]
static ALLOCATOR: ReservingAllocator = ReservingAllocator;

/// The reference kaas broker: answers as Apache Kafka 3.7 does, except where the kaas
/// transaction-API documentation documents a deviation.
#[derive(Debug, Parser)]
#[command(
    name = "kaas-ref",
    version,
    after_help = "Signals: SIGUSR1 holds the transaction markers peers queue for this broker (its MarkerWatcher pauses, the broker serves on); SIGUSR2 lets them through. kconform's `hold_markers` fault on a cluster of kaas-ref processes (ci/kaas-ref-processes.sh)."
)]
struct Args {
    /// Address to listen on. Port 0 picks a free port; the bound address is printed.
    #[arg(long, default_value = "127.0.0.1:9092")]
    listen: SocketAddr,
    /// The address Metadata and FindCoordinator name for this broker, when clients reach it
    /// through a relay in front of it (`kconform proxy`, to see what clients make of changed
    /// answers). Default: the address it listens on.
    #[arg(long, value_name = "HOST:PORT")]
    advertise: Option<SocketAddr>,
    /// Data directory (partition logs, topics, and the kaas `__cluster/` files).
    /// Default: a fresh directory under the OS temp dir, printed at start and removed at exit.
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Broker id: the node id in Metadata, and the PID block (pid = (id + 1) * 2^40 + n).
    #[arg(long, default_value_t = 0)]
    broker_id: i32,
    /// Largest request frame accepted, in bytes; a larger one closes its connection.
    #[arg(long, default_value_t = 100 * 1024 * 1024)]
    max_frame_bytes: usize,
    /// Do not create unknown topics on Metadata requests (Apache's
    /// auto.create.topics.enable=false).
    #[arg(long)]
    no_auto_create_topics: bool,
    /// Partitions of auto-created topics and of CreateTopics with -1 (num.partitions).
    #[arg(long, default_value_t = 1)]
    default_partitions: i32,
    /// Replicas of CreateTopics with -1 (default.replication.factor). A factor above the
    /// brokers alive is refused with INVALID_REPLICATION_FACTOR, as Apache refuses it.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(i16).range(1..))]
    default_replication_factor: i16,
    /// group.initial.rebalance.delay.ms: wait before the first rebalance of an empty group.
    #[arg(long, default_value_t = 3000)]
    group_initial_rebalance_delay_ms: u64,
    /// How often the transaction reaper runs, in milliseconds
    /// (transaction.abort.timed.out.transaction.cleanup.interval.ms).
    #[arg(long, default_value_t = 10_000)]
    txn_reaper_interval_ms: u64,
    /// Partitions Metadata shows for the internal __consumer_offsets topic
    /// (offsets.topic.num.partitions); it appears once a group coordinator is looked up.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(i32).range(1..=1000))]
    offsets_topic_partitions: i32,
    /// Topics that exist from the start (created if missing), as JSON: a file, or the text
    /// itself when it starts with '['. The format `kconform topics --json` prints:
    /// [{"name": "t", "partitions": 2}], with "configs": {"cleanup.policy": "compact"} where a
    /// topic needs them.
    #[arg(long, value_name = "JSON")]
    topics: Option<String>,
    /// Refuse CreateTopics, and topic creation by Metadata: TOPIC_AUTHORIZATION_FAILED, as
    /// Apache answers a client without the Create permission (an operator-managed cluster).
    #[arg(long)]
    refuse_create_topics: bool,
    /// The brokers of the cluster this one belongs to, itself included, as ID=HOST:PORT
    /// separated by commas (0=127.0.0.1:9092,1=127.0.0.1:9093,2=127.0.0.1:9094); every one
    /// is started with the same list and the same --data-dir, as kaas pods share a volume.
    /// Coordinators then route by hash over the brokers as kaas does (the others answer
    /// NOT_COORDINATOR). Default: a cluster of one, which coordinates everything.
    #[arg(long, value_name = "PEERS", value_delimiter = ',')]
    peers: Vec<reference_broker::cluster::Peer>,
    /// How a cluster broker learns its peers and which are up: `files`, the stamps `--peers`
    /// write on the shared volume; `kube`, a Kubernetes API as a kaas pod has it (the
    /// EndpointSlices of `KAAS_HEADLESS_SVC`, the `kaas-controller` Lease, its pod's
    /// PartitionsReady condition), read through KUBECONFIG, with the broker configured by
    /// kaas's own variables (MY_POD_NAME, KAAS_LISTENERS, KAAS_DATA_DIR, KAAS_TOPICS,
    /// KAAS_HEALTH_ADDR, KAAS_NAMESPACE...) so it starts as a kaas build does. Default: kube
    /// where MY_POD_NAME is set, files elsewhere.
    #[arg(long, value_enum)]
    membership: Option<MembershipKind>,
    /// How long a peer may go without stamping the shared volume (every second) before it
    /// counts as down and its coordinators move, in milliseconds.
    #[arg(long, default_value_t = 6_000, value_parser = clap::value_parser!(u64).range(1_500..))]
    member_timeout_ms: u64,
    /// How often a cluster broker polls the shared volume for the markers peers queued for
    /// the partitions it leads, and for the producer fences they appended, in milliseconds
    /// (kaas: 2000). read_committed visibility on a peer-led partition trails a commit by up
    /// to this long (the documented deviation on peer markers).
    #[arg(long, default_value_t = 2_000, value_parser = clap::value_parser!(u64).range(10..))]
    peer_poll_ms: u64,
    /// Require SASL (PLAIN or SCRAM-SHA-512) on every connection, for this user, as
    /// NAME=PASSWORD; repeat for more. With it, every ACL gate of the spec asks the ACLs
    /// (managed with CreateAcls, DescribeAcls and DeleteAcls by a --super-user), and no ACL
    /// means no access, as Apache's StandardAuthorizer with allow.everyone.if.no.acl.found=false.
    #[arg(
        long = "sasl-user",
        value_name = "NAME=PASSWORD",
        help_heading = "Security"
    )]
    sasl_users: Vec<reference_broker::sasl::User>,
    /// A user who passes every ACL check (Apache's super.users); repeat for more. Needs
    /// --sasl-user.
    #[arg(
        long = "super-user",
        value_name = "NAME",
        requires = "sasl_users",
        help_heading = "Security"
    )]
    super_users: Vec<String>,
    /// Bounds on what one request can make the broker allocate, create or keep.
    #[command(flatten, next_help_heading = "Limits")]
    limits: reference_broker::limits::Limits,
    /// While this file exists, every write the broker makes fails as on a full disk (ENOSPC),
    /// reads and answers going on: kconform's `fill_disk` fault on a cluster of kaas-ref
    /// processes (`touch` it to fill, remove it to free; ci/kaas-ref-processes.sh). Only in a
    /// build with the `faults` feature.
    #[cfg(feature = "faults")]
    #[arg(long, value_name = "PATH", help_heading = "Faults")]
    disk_full_while: Option<PathBuf>,
    /// Waits this long before listening, in milliseconds: a broker that takes seconds to come
    /// back, as a real kaas build (1.5 to 3.6 s) and a JVM broker do, for measuring how a fuzz
    /// run that restarts it fares.
    #[arg(long, default_value_t = 0, value_name = "MS", help_heading = "Testing")]
    start_delay_ms: u64,
    /// Plants a bug on purpose, by name (repeatable): MarkerCountAllocates,
    /// PanicOnMinLeaderEpoch, AbortAfterArmedTimeout, HangOnEmptyGroupId, or any other of
    /// `reference_broker::planted::Bug`. For proving that kconform's fuzzers find and pin
    /// them (ci/fuzz-crashes.sh). Only in a build with the `planted-bugs` feature.
    #[cfg(feature = "planted-bugs")]
    #[arg(long = "plant", value_name = "BUG", value_parser = planted_bug, help_heading = "Testing")]
    plant: Vec<reference_broker::planted::Bug>,
}

/// Where a cluster broker's membership comes from (`--membership`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum MembershipKind {
    /// Stamps on the shared volume, among the brokers of `--peers`.
    Files,
    /// A Kubernetes API, as kaas pods have it.
    Kube,
}

/// kaas's environment where `--membership kube` (or MY_POD_NAME) asks for it: it then names
/// the broker's id, address, data directory and topics, as it does a kaas build's.
fn kaas_env(args: &Args) -> anyhow::Result<Option<reference_broker::kaas_env::KaasEnv>> {
    use reference_broker::kaas_env::KaasEnv;
    let env = KaasEnv::read(|k| std::env::var(k).ok())?;
    match (args.membership, env) {
        (Some(MembershipKind::Files), _) | (None, None) => Ok(None),
        (Some(MembershipKind::Kube), None) => anyhow::bail!(
            "--membership kube: MY_POD_NAME is not set (kaas's variables name the broker: MY_POD_NAME=kaas-N, KAAS_HEADLESS_SVC, KAAS_LISTENERS...)"
        ),
        (_, Some(env)) if !args.peers.is_empty() => anyhow::bail!(
            "--peers and membership through Kubernetes ({}) are two ways of naming the cluster: give one",
            env.pod
        ),
        (_, Some(env)) => Ok(Some(env)),
    }
}

/// A bug of `--plant`, by its name.
#[cfg(feature = "planted-bugs")]
fn planted_bug(name: &str) -> Result<reference_broker::planted::Bug, String> {
    use reference_broker::planted::Bug;
    Bug::named(name).ok_or_else(|| {
        let names: Vec<String> = Bug::ALL.iter().map(|b| format!("{b:?}")).collect();
        format!(
            "no planted bug is called {name}; there are {}",
            names.join(", ")
        )
    })
}

/// The topics of `--topics`: inline JSON or a file of it.
fn topics(arg: Option<&str>) -> anyhow::Result<Vec<reference_broker::config::TopicSpec>> {
    let Some(arg) = arg else {
        return Ok(Vec::new());
    };
    let text = match arg.trim_start().starts_with('[') {
        true => arg.to_owned(),
        false => std::fs::read_to_string(arg).with_context(|| format!("--topics {arg}"))?,
    };
    serde_json::from_str(&text).with_context(|| {
        format!("--topics: expected [{{\"name\": \"t\", \"partitions\": 2}}, ...] in {arg}")
    })
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match run().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // The reason on one line, its causes after colons; no backtrace.
            eprintln!("kaas-ref: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}

async fn run() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    #[cfg(feature = "faults")]
    if let Some(marker) = &args.disk_full_while {
        reference_broker::storage::faults::fill_while(marker);
    }
    reference_broker::cluster::check_peers(args.broker_id, &args.peers)
        .map_err(|e| anyhow::anyhow!("--peers: {e}"))?;
    if let Some(me) = args.peers.iter().find(|p| p.id == args.broker_id) {
        if me.addr != args.listen {
            anyhow::bail!(
                "--peers names broker {} at {}, but it listens on {} (--listen)",
                me.id,
                me.addr,
                args.listen
            );
        }
    }
    #[cfg(feature = "planted-bugs")]
    let planted = args
        .plant
        .iter()
        .fold(reference_broker::planted::Planted::default(), |p, b| {
            p.with(*b)
        });
    #[cfg(not(feature = "planted-bugs"))]
    let planted = reference_broker::planted::Planted::default();
    let kaas = kaas_env(&args)?;
    let watched = kaas
        .as_ref()
        .map(|_| std::sync::Arc::new(reference_broker::cluster::Watched::default()));
    let mut config = BrokerConfig {
        planted,
        listen: args.listen,
        advertise: args.advertise,
        data_dir: args.data_dir,
        broker_id: args.broker_id,
        max_frame_bytes: args.max_frame_bytes,
        auto_create_topics: !args.no_auto_create_topics,
        default_partitions: args.default_partitions,
        default_replication_factor: args.default_replication_factor,
        group_initial_rebalance_delay: Duration::from_millis(args.group_initial_rebalance_delay_ms),
        txn_reaper_interval: Duration::from_millis(args.txn_reaper_interval_ms),
        offsets_topic_partitions: args.offsets_topic_partitions,
        topics: topics(args.topics.as_deref())?,
        refuse_create_topics: args.refuse_create_topics,
        limits: args.limits,
        peers: args.peers,
        watched: watched.clone(),
        member_timeout: Duration::from_millis(args.member_timeout_ms),
        peer_poll: Duration::from_millis(args.peer_poll_ms),
        security: (!args.sasl_users.is_empty()).then(|| reference_broker::Security {
            users: args.sasl_users,
            super_users: args
                .super_users
                .iter()
                .map(|u| format!("User:{u}"))
                .collect(),
        }),
    };
    if let Some(kaas) = &kaas {
        config.broker_id = kaas.broker_id;
        config.listen = kaas.listen;
        config.data_dir = kaas.data_dir.clone().or(config.data_dir);
        config.topics.extend(kaas.topics.iter().cloned());
    }
    let client = match &kaas {
        Some(_) => Some(reference_broker::kube_membership::client().await?),
        None => None,
    };
    // Listened for before the broker listens: a script that signals it once it listens must
    // not find the signal's default action (the process ends) still in place.
    #[cfg(unix)]
    let signals = marker_signals().context("listening for SIGUSR1/SIGUSR2")?;
    if args.start_delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(args.start_delay_ms)).await;
    }
    let broker = Broker::start(config).await.context("could not start")?;
    // A closed stdout (a parent that read the address and went away) must not stop the broker.
    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "kaas-ref listening on {}", broker.addr());
        let _ = writeln!(out, "kaas-ref data dir {}", broker.data_dir().display());
        let _ = out.flush();
    }
    if let (Some(kaas), Some(client), Some(watched)) = (&kaas, client, watched) {
        let health = reference_broker::health::serve(kaas.health)
            .await
            .with_context(|| format!("KAAS_HEALTH_ADDR {}", kaas.health))?;
        tracing::info!(pod = %kaas.pod, %health, "membership through the Kubernetes API");
        reference_broker::kube_membership::spawn(client, kaas, watched);
    }
    #[cfg(unix)]
    hold_markers_on(signals, broker.state().clone());
    tokio::signal::ctrl_c()
        .await
        .context("waiting for ctrl-c")?;
    broker.shutdown().await;
    Ok(())
}

/// SIGUSR1 holds the markers queued for this broker, SIGUSR2 lets them through
/// (`BrokerHandle::hold_markers`): how a script does kconform's `hold_markers` fault to a
/// kaas-ref process. Each stream, with whether its signal holds.
#[cfg(unix)]
fn marker_signals() -> std::io::Result<Vec<(tokio::signal::unix::Signal, bool)>> {
    use tokio::signal::unix::{signal, SignalKind};
    Ok(vec![
        (signal(SignalKind::user_defined1())?, true),
        (signal(SignalKind::user_defined2())?, false),
    ])
}

/// Applies [`marker_signals`] to the broker's state as they come.
#[cfg(unix)]
fn hold_markers_on(
    signals: Vec<(tokio::signal::unix::Signal, bool)>,
    state: std::sync::Arc<reference_broker::broker::State>,
) {
    for (mut signals, held) in signals {
        let state = state.clone();
        tokio::spawn(async move {
            while signals.recv().await.is_some() {
                state
                    .markers_held
                    .store(held, std::sync::atomic::Ordering::SeqCst);
                tracing::info!(held, "markers queued for this broker");
            }
        });
    }
}
