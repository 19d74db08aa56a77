//! The command line as clap reads it: one `Args` struct per command, and the flag groups several
//! share (where the scenarios come from, which targets, which report files). Values are
//! checked here as far as a flag alone can be; what depends on several flags is the library's
//! policy (`kconform::targets::choice`, `kconform::run::plan`, `kconform::fuzz::campaign`).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};
use kconform::targets::apache::Backend;

mod certify;
mod fuzz;
mod kaas;
mod matrix;
mod on;
mod reports;
mod streams_eos;
pub use certify::CertifyArgs;
pub use fuzz::{FuzzArgs, FuzzCommand, FuzzMode};
pub use kaas::{KaasAction, KaasArgs, KaasUpArgs};
pub use matrix::MatrixArgs;
pub use on::{ScenarioArgs, TargetArgs};
pub use reports::{BaselineArgs, ReportFiles};
pub use streams_eos::StreamsEosArgs;

/// Conformance harness for the Kafka transaction APIs: runs scenarios against brokers and
/// shows how their answers differ.
#[derive(Debug, Parser)]
#[command(name = "kconform", version)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// No progress, no notes and no log lines but errors on stderr: the report (and a
    /// refusal's reason) alone.
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

/// `--apache-backend`: how to launch Apache ([`Backend`]).
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum BackendArg {
    /// The container when a Docker engine answers, else the JVM.
    Auto,
    /// The broker's jars, launched as a JVM (needs java and mvn).
    Jvm,
    /// The official apache/kafka image through testcontainers (needs Docker).
    Container,
}

impl From<BackendArg> for Backend {
    fn from(b: BackendArg) -> Backend {
        match b {
            BackendArg::Auto => Backend::Auto,
            BackendArg::Jvm => Backend::Jvm,
            BackendArg::Container => Backend::Container,
        }
    }
}

/// `--client`: a client library that runs the workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ClientArg {
    /// Java kafka-clients 3.7.2 (needs java; the jars the Apache target caches).
    Java,
    /// librdkafka (built into kconform).
    Librdkafka,
    /// KafkaJS 2.2.4 (needs node and npm; installed into kconform's cache on first use).
    Kafkajs,
    /// sarama v1.61.1 (needs go; built in kconform's cache on first use).
    Sarama,
    /// aiokafka 0.14.0 (needs python3 and pip; installed into kconform's cache on first use).
    Aiokafka,
    /// kafka-python 3.0.12 (needs python3 and pip; installed into kconform's cache on first
    /// use).
    KafkaPython,
}

impl From<ClientArg> for kconform::clients::Client {
    fn from(c: ClientArg) -> Self {
        use kconform::clients::{programs::Program, Client};
        match c {
            ClientArg::Java => kconform::clients::Client::Java,
            ClientArg::Librdkafka => kconform::clients::Client::Librdkafka,
            ClientArg::Kafkajs => Client::Program(Program::KafkaJs),
            ClientArg::Sarama => Client::Program(Program::Sarama),
            ClientArg::Aiokafka => Client::Program(Program::Aiokafka),
            ClientArg::KafkaPython => Client::Program(Program::KafkaPython),
        }
    }
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ApacheAction {
    /// Start one broker and keep it running between runs.
    Up,
    /// Stop the broker `up` started.
    Down,
    /// Say whether it runs (exit 0 when it does, 1 when not).
    Status,
    /// Run a cluster of `--brokers` brokers and a KRaft controller, each its own JVM, in the
    /// foreground until Ctrl-C: prints each broker's address, the start time and the memory.
    Cluster,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run scenarios (all, or those named) against each target; with two targets, diff them
    /// and classify every difference against the ledger.
    ///
    /// Exit 0: every expectation held and every difference is documented (with --baseline:
    /// nothing new); 1: an undocumented difference, a stale ledger entry, a failed expectation
    /// or a scenario that stopped; 2: the run could not happen (a target, a file, a refusal).
    Run(RunArgs),
    /// Certify one broker: every judge that applies to it in one run (the scenarios, and a
    /// cluster's; the client workloads; chaos under faults; a bounded live-wire fuzz; the peer
    /// suite when asked), held to one baseline, written as one certificate.
    ///
    /// Each judge's findings are keyed without addresses, generated names or drawn numbers, so
    /// `--save-baseline` on today's build and `--baseline` on a pull request's fail only on
    /// what is new in any judge, and the certificate says what was fixed. Findings are ranked
    /// worst first across judges: exactly-once broken, a crash, an unreadable answer, a state,
    /// a stale ledger entry, a field clients only log. Exit 0: certified (nothing new); 1: a
    /// judge failed, could not run or could not judge; 2: nothing could run.
    Certify(CertifyArgs),
    /// Certify every broker of a brokers file against Apache, side by side, as a static site.
    #[command(long_about = matrix::LONG_ABOUT)]
    Matrix(MatrixArgs),
    /// One scenario on two targets, transcripts in full, each difference with its ledger entry
    /// or "undocumented".
    ///
    /// Exit 0: nothing undocumented; 1: an undocumented difference or a failed expectation;
    /// 2: the scenario or a target could not run.
    Repro(ReproArgs),
    /// Run every scenario and print, per target, the (API, version, error code) cells the
    /// transaction APIs produced, then the codes each API can return that no scenario reached.
    ///
    /// Exit 0: the table was printed and every run passed; 1: a run found what fails it (its
    /// report follows the table); 2: a scenario or a target could not run.
    Coverage(CoverageArgs),
    /// Run a peer's test suite against each target and judge each against Apache: franz-go's
    /// kgo integration tests (github.com/twmb/franz-go v1.22.3, pkg/kgo), fetched through the
    /// Go module proxy and built once into the cache (needs `go`). A test that passes on
    /// Apache and fails, hangs, skips or takes more than twice as long on a target is a
    /// finding; reviewed reasons live in <scenarios>/peers-allowlist.toml, and an entry that no
    /// longer shows is stale. Exit 0: no undocumented finding, nothing stale; 1: otherwise;
    /// 2: the suite or a target could not run.
    Peers(PeersArgs),
    /// Run client workloads with the Java kafka-clients (3.7.2, or --release) and
    /// librdkafka on two targets, diff what each client saw (each call's result or exception,
    /// what consumers read, the group's offsets) and judge every difference against the
    /// ledger's client claims ([[deviation.client]] in deviations.toml): documented,
    /// UNDOCUMENTED, or a claim that did not show (STALE). Exit 0: every workload ran, nothing
    /// undocumented or stale; 1: otherwise; 2: a target or a client could not run.
    Clients(ClientsArgs),
    /// Run an exactly-once workload of real clients under faults, and check what it left.
    ///
    /// librdkafka workers consume their input partition (read_committed), write one record per
    /// input record to seeded output partitions and send their offsets in the same transaction
    /// (each worker's second, and a tenth drawn, aborted on purpose), while a schedule drawn
    /// from the seed kills and restarts, pauses and resumes one broker at a time, holds its
    /// markers, or moves a worker's transaction coordinator. Afterwards every output partition
    /// and group is read back and checked for aborted reads, lost writes, duplicates, torn
    /// transactions, records out of order, offsets committed without their records (and the
    /// reverse), and a last stable offset left pinned, each with the records and offsets that
    /// show it; and, from every poll the workers made and every offset their sends were
    /// acknowledged at, for what Jepsen's Kafka checker names (inconsistent offsets, skips and
    /// steps back in a consumer's reads, sends landing out of order, records never read, G0
    /// and G1c cycles; those Kafka allows shown as allowed, never failing). The clusters run
    /// side by side with the same seed; Apache is the control: an anomaly it shows too is
    /// reported as its own. Exit 0: no anomaly the control did not show; 1: otherwise, or a
    /// cluster's run did not finish; 2: the run could not start.
    Chaos(ChaosArgs),
    /// Run Apache's own Kafka Streams exactly-once test (StreamsEosTest 3.7.2) on each target.
    ///
    /// The test jar's driver writes input; three exactly_once_v2 processors join one by one;
    /// the second is SIGKILLed and comes back on its state folder (the broker must fence its
    /// old producer), the third on a fresh one (the broker must time its open transaction out);
    /// all stop; the verifier checks that every input record appears exactly once in every
    /// output and each running aggregate after it. Apache runs first and must PASS (else the
    /// run is INCONCLUSIVE); each target then PASSes, FAILs (the stage and the first error) or
    /// HANGs (the stage and what it waited for). Every program's output is kept. The jars come
    /// from Maven the first time. Exit 0: every target passed; 1: a target did not; 2: the run
    /// could not start, or the control did not pass.
    StreamsEos(StreamsEosArgs),
    /// Fuzz a broker: stateful differential sequences and live-wire frames (`--mode`).
    ///
    /// Sequences are drawn from a model of the transaction state machine (valid flows,
    /// perturbed: wrong, stale and future epochs and producer ids, empty ids and groups, every
    /// version, odd timeouts, repeated and reordered calls, sleeps past a timeout, ids at the
    /// edges of what Kafka allows) and run on the target and on the oracle, each ending with a
    /// read-back of what it stored (offsets, high watermarks, last stable offsets, records, a
    /// rejoin); a difference no ledger entry matches is a finding,
    /// confirmed by a second run, shrunk, and written once as a scenario file (`finding-*.toml`)
    /// that `kconform run --scenarios DIR` and `kconform repro` replay. Frames are mutated
    /// request frames of the six APIs sent to the target; an undecodable answer, a wrong
    /// correlation id, a close on a well-formed request, silence or a target that stops
    /// answering is a finding, written as a raw frame (`frame-*.bin`) that `kconform
    /// replay-frame` sends again. Ctrl-C ends the run with its summary; `--resume` goes on from
    /// there. Exit 0: no new finding; 1: new findings; 2: a target could not run.
    Fuzz(FuzzArgs),
    /// Send raw frames that `kconform fuzz` saved to a target, and judge them as it did.
    ///
    /// Each frame file (`frame-*.bin`: a 4-byte size, then the frame) goes on a fresh
    /// connection; a close or silence is followed by an ApiVersions on another. Exit 0: no frame shows a finding; 1: some do; 2: a file or the target is unusable.
    ReplayFrame(ReplayFrameArgs),
    /// Relay to a broker, changing the answers of one API at one version: the way to see what
    /// kconform makes of a broker that answers wrongly. Prints the address to give as
    /// `--target external=ADDR` and relays until interrupted.
    Proxy(ProxyArgs),
    /// Print the topics a run needs, for a broker where clients cannot create topics: name
    /// and partitions (and the topic configs a scenario needs), one per line, or with --json
    /// `[{"name": ..., "partitions": N}]` (what `kaas-ref --topics` reads). Create them once;
    /// runs against that broker then use them (see --provisioned-topics).
    Topics(TopicsArgs),
    /// List the scenarios.
    List(ListArgs),
    /// Keep one Apache broker running between runs (`up`), stop it (`down`), or say whether it
    /// runs (`status`). While it is up, `--target apache` uses it instead of starting one.
    /// `cluster` runs a cluster of several brokers in the foreground.
    Apache(ApacheArgs),
    /// Run a kaas build as a cluster on this machine (`up`), with the Kubernetes API its
    /// cluster mode needs served by kconform.
    Kaas(KaasArgs),
    /// The deviation ledger's tools: `draft` writes, for each undocumented root cause of a
    /// `kconform run --json` report, the `[[deviation]]` entry to paste into deviations.toml,
    /// filled with what the run saw and marked TODO where a person must say why.
    ///
    /// Exit 0: drafted (or nothing to draft, said); 2: the report cannot be read.
    Ledger(LedgerArgs),
    /// The broker settings the scenarios assume (Apache's property, its value, kaas-ref's flag,
    /// and why), so that a broker to judge can be started right; with --target, whether that
    /// broker has them (read with DescribeConfigs).
    Settings(SettingsArgs),
}

/// The arguments of `kconform settings`.
#[derive(Debug, clap::Args)]
pub struct SettingsArgs {
    /// Write JSON, `[{"property", "value", "kaas_ref", "why"}]`, to FILE (none or `-`: print
    /// it).
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<PathBuf>,
    /// Check a running broker's settings against them (external=HOST:PORT); exit 1 when one
    /// differs, 2 when it cannot be reached.
    #[arg(long)]
    pub target: Option<String>,
}

/// The arguments of `kconform run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Scenario names (file stems); all when none.
    pub names: Vec<String>,
    #[command(flatten)]
    pub scenarios: ScenarioArgs,
    #[command(flatten)]
    pub on: TargetArgs,
    /// Print each transcript.
    #[arg(long)]
    pub show: bool,
    /// Scenarios run at once on each target (they make their names unique, so they share
    /// the broker).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub jobs: u64,
    /// Also run the scenarios marked slow (minutes each; epoch overflow).
    #[arg(long)]
    pub include_slow: bool,
    /// List every documented root cause (with --flat: every documented difference), not one
    /// line per ledger entry.
    #[arg(long, short)]
    pub verbose: bool,
    /// Each difference on a line of its own, instead of grouped into root causes (differences
    /// with one signature: API, field, each side's value or kind of value; malformed answers by
    /// diagnosis; steps skipped after a stop folded under it).
    #[arg(long)]
    pub flat: bool,
    /// Write the report as one self-contained HTML page to FILE (no network, no server): the
    /// root causes worst first, each opening to its differences with the two answers side by
    /// side (the differing field marked), the request sent, the ledger entry and the repro
    /// command; the coverage matrix; filters for documented and undocumented causes.
    #[arg(long, value_name = "FILE")]
    pub html: Option<std::path::PathBuf>,
    /// Fail the run when a documented deviation it shows harms a client application, as the
    /// ledger's client claims state (checked by `kconform clients`): a fenced producer's
    /// records committed, a live producer fenced, duplicates, a client that stops, or an error
    /// a client does not know. For teams that gate on consequences, not on documentation.
    #[arg(long)]
    pub fail_on_consequence: bool,
    #[command(flatten)]
    pub gate: BaselineArgs,
    #[command(flatten)]
    pub files: ReportFiles,
}

/// The arguments of `kconform repro`.
#[derive(Debug, clap::Args)]
pub struct ReproArgs {
    /// Scenario name.
    pub name: String,
    #[command(flatten)]
    pub scenarios: ScenarioArgs,
    #[command(flatten)]
    pub on: TargetArgs,
}

/// The arguments of `kconform coverage`.
#[derive(Debug, clap::Args)]
pub struct CoverageArgs {
    /// Scenario names (file stems); all when none.
    pub names: Vec<String>,
    #[command(flatten)]
    pub scenarios: ScenarioArgs,
    #[command(flatten)]
    pub on: TargetArgs,
    /// Also write the table to this Markdown file.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Also run the scenarios marked slow.
    #[arg(long)]
    pub include_slow: bool,
    /// Scenarios run at once on each target.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub jobs: u64,
}

/// The arguments of `kconform peers`.
#[derive(Debug, clap::Args)]
pub struct PeersArgs {
    /// Targets: ref, apache or external=HOST:PORT (default ref and apache; a live broker
    /// each, recorded answers cannot run a suite). The judge is the apache target, else
    /// the last one named.
    #[arg(long = "target", value_name = "TARGET")]
    pub targets: Vec<String>,
    /// Go test regexp: the tests to run (default all). CI runs
    /// '^(TestTxnEtl|TestGroupETL|TestGroupSimple|TestClient_Produce.*|TestConsumeRegex)$'.
    #[arg(long, default_value = ".")]
    pub run: String,
    /// KGO_TEST_RECORDS: records each produce/consume test moves.
    #[arg(long, default_value_t = 20_000)]
    pub records: u32,
    /// The suite's deadline on each target, in milliseconds (default 15 minutes); a binary
    /// still running 30 s later is killed and its unfinished tests reported.
    #[arg(long, value_parser = clap::value_parser!(u64).range(10_000..=86_400_000))]
    pub deadline_ms: Option<u64>,
    /// The old name of --deadline-ms, in seconds.
    #[arg(long, hide = true, conflicts_with = "deadline_ms", value_parser = clap::value_parser!(u64).range(10..=86_400))]
    pub timeout_secs: Option<u64>,
    /// Tests run at once (-test.parallel); default the suite's own (one per core).
    #[arg(long, alias = "parallel", value_parser = clap::value_parser!(u32).range(1..=256))]
    pub jobs: Option<u32>,
    /// Run every target's suite at the same time (faster; times then share the machine).
    #[arg(long)]
    pub concurrent: bool,
    /// A slower test is a finding only when it is also this many seconds longer.
    #[arg(long, default_value_t = 1.0)]
    pub floor_secs: f64,
    /// The allowlist (default: peers-allowlist.toml of the scenarios).
    #[arg(long, value_name = "FILE")]
    pub allowlist: Option<PathBuf>,
    #[command(flatten)]
    pub scenarios: ScenarioArgs,
    /// How `--target apache` launches Apache (see `kconform run --help`).
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub apache_backend: BackendArg,
    #[command(flatten)]
    pub gate: BaselineArgs,
    #[command(flatten)]
    pub files: ReportFiles,
}

/// The arguments of `kconform clients`.
#[derive(Debug, clap::Args)]
pub struct ClientsArgs {
    /// Workloads to run (all when none; --list shows them).
    pub names: Vec<String>,
    /// List the workloads and exit.
    #[arg(long)]
    pub list: bool,
    /// Targets: ref, apache, ref:N, apache:N, build:N=PATH or external=HOST:PORT (default ref
    /// and apache).
    /// The first Apache target is the one the other is judged against.
    #[arg(long = "target", value_name = "TARGET")]
    pub targets: Vec<String>,
    /// A client to run; repeat for several (default: all six). kafkajs, sarama, aiokafka and
    /// kafka-python run the fencing workloads (fencing, fenced-send) and are installed into
    /// kconform's cache on first use (npm, go, pip); one that cannot be installed here is said
    /// so, and the others run.
    #[arg(long = "client", value_enum)]
    pub clients: Vec<ClientArg>,
    /// Use provisioned topics (one partition each, `kconform topics` lists them) instead
    /// of creating topics; reads start where each topic ended when the workload began.
    #[arg(long)]
    pub provisioned_topics: bool,
    /// Milliseconds one workload may take before it is killed and reported (default 120 s).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1_000..))]
    pub deadline_ms: Option<u64>,
    /// The old name of --deadline-ms, in seconds.
    #[arg(long, hide = true, conflicts_with = "deadline_ms", value_parser = clap::value_parser!(u64).range(1..))]
    pub deadline_secs: Option<u64>,
    /// On a cluster, where a workload with a group (eos, empty-group-offsets,
    /// stale-generation-offsets) puts its transaction coordinator beside its group's: names
    /// are drawn until FindCoordinator puts them on one broker (`together`) or on two
    /// (`apart`, where kaas documents exactly-once as broken); `both` runs each such workload
    /// once each way; `any` takes the first names drawn. One broker: ignored.
    #[arg(long, value_enum, default_value_t = ClientsPlacementArg::Both)]
    pub coordinators: ClientsPlacementArg,
    /// Whose Java kafka-clients run the Java workloads: 3.7.2 (what the ledger's Java claims
    /// speak of) or a later release (`4.4`: its jars fetched as for `--target apache@4.4`),
    /// to ask whether a newer application sees on kaas what it sees on Apache. Claims are then
    /// matched but none is judged stale.
    #[arg(long = "release", alias = "java-release", value_name = "RELEASE", default_value = "3.7.2", value_parser = kconform::targets::apache::Release::parse)]
    pub java_release: kconform::targets::apache::Release,
    #[command(flatten)]
    pub scenarios: ScenarioArgs,
    /// How `--target apache` launches Apache (see `kconform run --help`).
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub apache_backend: BackendArg,
    /// Write the verdict as one self-contained HTML page to FILE: the workload × client
    /// matrix, each line opening to its differences (with the ledger entry that documents
    /// each) and the two targets' transcripts side by side, the differing calls marked.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub gate: BaselineArgs,
    #[command(flatten)]
    pub files: ReportFiles,
}

impl ClientsArgs {
    /// What one workload may take: --deadline-ms, or the old --deadline-secs, else 120 s.
    pub fn deadline(&self) -> Duration {
        deadline(self.deadline_ms, self.deadline_secs, 120)
    }
}

impl PeersArgs {
    /// What the suite may take on a target: --deadline-ms, or the old --timeout-secs, else
    /// 15 minutes.
    pub fn deadline(&self) -> Duration {
        deadline(self.deadline_ms, self.timeout_secs, 900)
    }
}

/// A deadline given in milliseconds, or under its old name in seconds, or `default` seconds.
fn deadline(ms: Option<u64>, old_secs: Option<u64>, default: u64) -> Duration {
    match (ms, old_secs) {
        (Some(ms), _) => Duration::from_millis(ms),
        (None, Some(secs)) => Duration::from_secs(secs),
        (None, None) => Duration::from_secs(default),
    }
}

/// `--coordinators` of `kconform clients`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ClientsPlacementArg {
    /// Each workload with a group once together and once apart.
    Both,
    /// On the same broker.
    Together,
    /// On different brokers.
    Apart,
    /// Wherever the names fall.
    Any,
}

impl ClientsPlacementArg {
    /// The placements each workload with a group runs with.
    pub fn placements(self) -> Vec<kconform::clients::placement::Placement> {
        use kconform::clients::placement::Placement;
        match self {
            ClientsPlacementArg::Both => vec![Placement::Together, Placement::Apart],
            ClientsPlacementArg::Together => vec![Placement::Together],
            ClientsPlacementArg::Apart => vec![Placement::Apart],
            ClientsPlacementArg::Any => vec![Placement::Any],
        }
    }
}

/// A fault `kconform chaos --faults` may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FaultArg {
    /// Kill a broker, then restart it.
    Kill,
    /// Pause a broker, then resume it.
    Pause,
    /// Hold the transaction markers sent to a broker (it serves on), then let them through:
    /// the transactions they end stay prepared meanwhile (on Apache; on kaas, whose
    /// coordinator completes once they are queued, their partitions stay unstable).
    HoldMarkers,
    /// Move a worker's transaction coordinator: pause the broker FindCoordinator names for its
    /// transactional id for 5 s at least, past the 3 s after which its peers count it out and
    /// another broker takes its transactions over, then resume it.
    MoveCoordinator,
}

impl FaultArg {
    /// The fault a schedule draws.
    pub fn kind(self) -> kconform::clients::chaos::schedule::Kind {
        use kconform::clients::chaos::schedule::Kind;
        use kconform::targets::faults::BrokerAct;
        match self {
            FaultArg::Kill => Kind::Act(BrokerAct::Kill),
            FaultArg::Pause => Kind::Act(BrokerAct::Pause),
            FaultArg::HoldMarkers => Kind::Act(BrokerAct::HoldMarkers),
            FaultArg::MoveCoordinator => Kind::MoveCoordinator,
        }
    }
}

/// `--coordinators` of `kconform chaos`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum PlacementArg {
    /// On the same broker, the group named as the transactional id.
    Together,
    /// On different brokers.
    Apart,
    /// Wherever the names fall.
    Any,
}

impl PlacementArg {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        kconform::clients::placement::Placement::from(self).name()
    }
}

/// `--client` of `kconform chaos`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ChaosClientArg {
    /// librdkafka (rdkafka, vendored).
    Librdkafka,
    /// The Java kafka-clients 3.7.2 (the jars the Apache target caches; Java 17).
    Java,
}

impl From<ChaosClientArg> for kconform::clients::chaos::ChaosClient {
    fn from(c: ChaosClientArg) -> Self {
        use kconform::clients::chaos::ChaosClient;
        match c {
            ChaosClientArg::Librdkafka => ChaosClient::Librdkafka,
            ChaosClientArg::Java => ChaosClient::Java,
        }
    }
}

impl From<PlacementArg> for kconform::clients::placement::Placement {
    fn from(p: PlacementArg) -> Self {
        use kconform::clients::placement::Placement;
        match p {
            PlacementArg::Together => Placement::Together,
            PlacementArg::Apart => Placement::Apart,
            PlacementArg::Any => Placement::Any,
        }
    }
}

/// The arguments of `kconform chaos`.
#[derive(Debug, clap::Args)]
pub struct ChaosArgs {
    /// Targets: ref:N, apache:N, build:N=PATH (a kaas build as N processes) or
    /// external:N=HOST:PORT (with --fault-cmd for its faults). Default: ref:N and apache:N
    /// for --brokers N, the first Apache being the control.
    #[arg(long = "target", value_name = "TARGET")]
    pub targets: Vec<String>,
    /// Brokers of each default target.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=9))]
    pub brokers: u64,
    /// How long the workload runs under faults: 120s, 5m, or plain seconds. The read-back and
    /// check take up to a minute more on each cluster.
    #[arg(long, default_value = "120s", value_parser = parse_duration)]
    pub duration: Duration,
    /// The seed of the fault schedule and of the workers' choices (default: from the clock);
    /// the report prints the command that repeats the run.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Workers, each with its own input partition, group and transactional id.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub workers: u32,
    /// Output partitions.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(i32).range(1..=64))]
    pub outputs: i32,
    /// Where each worker's transaction coordinator sits beside its group's: on one broker
    /// (`together`: the group takes the transactional id's name, so a broker that routes both
    /// by one hash keeps them together through kills), on two (`apart`: kaas documents
    /// exactly-once as broken there, the group's transactional offsets never materialised),
    /// or wherever the names fall (`any`).
    #[arg(long, value_enum, default_value_t = PlacementArg::Together)]
    pub coordinators: PlacementArg,
    /// The clients the workers run on, comma-separated, worker w on the (w mod n)-th. Default:
    /// librdkafka and Java, or librdkafka alone (said in a note) where Java cannot run.
    #[arg(long = "client", value_enum, value_delimiter = ',')]
    pub clients: Vec<ChaosClientArg>,
    /// The faults the schedule draws from, comma-separated: `kill` (SIGKILL, then a restart),
    /// `pause` (SIGSTOP, then SIGCONT), `hold-markers` (the transaction markers sent to a
    /// broker held, then let through) and `move-coordinator` (a worker's transaction
    /// coordinator paused past the time its peers count it out, then resumed).
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [FaultArg::Kill, FaultArg::Pause])]
    pub faults: Vec<FaultArg>,
    /// No faults: the workload and the checker alone.
    #[arg(long)]
    pub no_faults: bool,
    /// Run on the provisioned topics chaos-in-kconform and chaos-out-kconform (`kconform topics
    /// --chaos` lists them; `--create` makes them where topics can be made) instead of
    /// creating two per run: for a broker that refuses CreateTopics. Each run starts where the
    /// topics ended and checks only what it wrote.
    #[arg(long)]
    pub provisioned_topics: bool,
    /// How to do a fault to a broker of an external cluster, as ACT=COMMAND (see `kconform run
    /// --help`). Without commands for kill and restart, or pause and resume, an external
    /// cluster runs without faults, and the report says so.
    #[arg(long = "fault-cmd", value_name = "ACT=COMMAND")]
    pub fault_cmds: Vec<String>,
    /// How `--target apache` launches Apache (see `kconform run --help`).
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub apache_backend: BackendArg,
    /// Write the run as one self-contained HTML page to FILE: per cluster, the timeline of
    /// faults and transactions (committed, aborted, unknown, per second), what the workers
    /// did, and each anomaly the checker found.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub gate: BaselineArgs,
    #[command(flatten)]
    pub files: ReportFiles,
}

/// The arguments of `kconform replay-frame`.
#[derive(Debug, clap::Args)]
pub struct ReplayFrameArgs {
    /// The frame files.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The target: ref, external=HOST:PORT...
    #[arg(long, default_value = "ref")]
    pub target: String,
    /// Deadline for every network wait, in milliseconds.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub deadline_ms: u64,
}

/// The arguments of `kconform proxy`.
#[derive(Debug, clap::Args)]
pub struct ProxyArgs {
    /// The broker to relay to: HOST:PORT, or `ref` for a kaas-ref started here.
    #[arg(long)]
    pub upstream: String,
    /// Where to listen.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: std::net::SocketAddr,
    /// The API whose answers change, as Apache names it (EndTxn), or `all`: every answer
    /// but ApiVersions', at every version.
    #[arg(long, requires = "mutation")]
    pub api: Option<String>,
    /// The version whose answers change (needed unless --api all).
    #[arg(long, requires = "api")]
    pub version: Option<i16>,
    /// How: insert:PATH (a byte where that field begins; insert:end after the last),
    /// drop-last-byte, cut:PATH (the frame ends inside that field), error-code:PATH
    /// (becomes 99, or CODE with error-code:PATH=CODE; error-code:* every one),
    /// add-one:PATH, null-text:PATH (a nullable string becomes null), correlation, header-version (the answer framed with the other response
    /// header version), close or stall; or an equivalent mutation, which
    /// changes bytes but not meaning and must change no verdict: tags-at-default (every
    /// tagged field written, at its default where the answer left it out), unknown-tag
    /// (an unknown tag in every tagged-field section), long-varints (every varint in five
    /// bytes); with --api all these change ApiVersions' answers too. PATH is a field as
    /// diagnoses name it: error_code, topics[0].partitions[0].error_code,
    /// header.correlation_id.
    #[arg(long, requires = "api")]
    pub mutation: Option<kconform::mutation::Mutation>,
}

/// The arguments of `kconform topics`.
#[derive(Debug, clap::Args)]
pub struct TopicsArgs {
    /// Scenario names (file stems); all when none.
    pub names: Vec<String>,
    #[command(flatten)]
    pub scenarios: ScenarioArgs,
    /// Write JSON, `[{"name", "partitions", "configs"}]`, to FILE (none or `-`: print it).
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<PathBuf>,
    /// List the topics of the client workloads (`kconform clients --provisioned-topics`)
    /// instead of the scenarios'.
    #[arg(long, conflicts_with_all = ["names", "chaos"])]
    pub clients: bool,
    /// List the topics of `kconform chaos --provisioned-topics` instead of the scenarios'.
    #[arg(long, conflicts_with = "names")]
    pub chaos: bool,
    /// Create the topics on --target (a broker that creates topics: an Apache, a kaas build
    /// that allows it), replicated as its default; those there already are counted, not
    /// changed. Prints what was done.
    #[arg(long, requires = "target")]
    pub create: bool,
    /// With --create: the broker to create them on (external=HOST:PORT, or apache for the one
    /// `kconform apache up` keeps).
    #[arg(long, requires = "create")]
    pub target: Option<String>,
}

/// The arguments of `kconform list`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub scenarios: ScenarioArgs,
}

/// The arguments of `kconform apache`.
#[derive(Debug, clap::Args)]
pub struct ApacheArgs {
    /// up, down, status or cluster.
    #[arg(value_enum)]
    pub action: ApacheAction,
    /// Brokers of `cluster`.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u8).range(1..=9))]
    pub brokers: u8,
    /// Which Apache Kafka `up` and `cluster` start: MAJOR.MINOR (its newest patch kconform
    /// knows) or MAJOR.MINOR.PATCH, 3.7 to 4.4, with +tv2 from 4.0 for transaction.version 2
    /// (KIP-890 part 2). A target of the same release (`--target apache@4.4`) uses the broker
    /// `up` keeps.
    #[arg(long, default_value = "3.7.2", value_parser = kconform::targets::apache::Release::parse)]
    pub release: kconform::targets::apache::Release,
}

impl From<FuzzMode> for kconform::fuzz::campaign::Mode {
    fn from(m: FuzzMode) -> Self {
        use kconform::fuzz::campaign::Mode;
        match m {
            FuzzMode::Sequences => Mode::Sequences,
            FuzzMode::Frames => Mode::Frames,
            FuzzMode::Both => Mode::Both,
        }
    }
}

/// `90s`, `10m`, `8h`, `1d` or plain seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (number, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()));
    let n: u64 = number
        .parse()
        .map_err(|_| format!("'{text}' is no duration (90s, 10m, 8h)"))?;
    let secs = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(format!("'{text}': the unit is s, m, h or d")),
    };
    match n {
        // Every duration here bounds work or a wait: none of them means anything at 0 (a
        // fuzz run of 0 s said PASSED and left an empty findings folder).
        0 => Err(format!("'{text}': a duration must be more than 0")),
        n => Ok(Duration::from_secs(n * secs)),
    }
}

/// The arguments of `kconform ledger`.
#[derive(Debug, clap::Args)]
pub struct LedgerArgs {
    /// What to do: `draft`.
    #[arg(value_enum)]
    pub action: LedgerAction,
    /// The report to draft from: what `kconform run --json FILE` wrote.
    #[arg(value_name = "FILE")]
    pub report: PathBuf,
    /// Write the draft to FILE instead of printing it.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `kconform ledger ACTION`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum LedgerAction {
    /// Draft an entry for each undocumented root cause of a report.
    Draft,
}
