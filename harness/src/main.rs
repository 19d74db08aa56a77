//! `kconform`: a thin binary over the `kconform` library.
//!
//! Exit codes: 0 when every expectation held and every difference is documented; 1 for an
//! undocumented difference, a stale ledger entry, a failed expectation or a scenario that
//! stopped on a target (no answer, a malformed one, a set-up step that failed), always with
//! the full report (snapshot drift is what `cargo insta test --check` reports); 2 when the run
//! could not happen at all (a broker did not start or does not answer ApiVersions, a scenario
//! file does not load), with the reason on one line.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};

/// Writes to stdout. A reader that went away (`kconform list | head -1`) ends the program
/// quietly with success, as ripgrep does, instead of a panic.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = write!(std::io::stdout().lock(), $($arg)*) {
            stdout_failed(e);
        }
    }};
}

/// [`out!`] with a newline.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout().lock(), $($arg)*) {
            stdout_failed(e);
        }
    }};
}

/// A closed stdout ends the program quietly; any other write failure is said on stderr.
fn stdout_failed(e: std::io::Error) {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("kconform: cannot write to stdout: {e}");
    std::process::exit(2);
}
use kconform::data::Source;
use kconform::targets::apache::Backend;

#[path = "cli/progress.rs"]
mod progress;

/// kaas-ref runs in this process (`--target ref`), and a hostile element count in a frame
/// (what `kconform fuzz --mode frames` sends) must reserve address space, not abort the
/// process: the allocator the `kaas-ref` binary installs (see `reference_broker::alloc`).
#[global_allocator]
static ALLOCATOR: reference_broker::alloc::ReservingAllocator =
    reference_broker::alloc::ReservingAllocator;
use kconform::report::Report;
use kconform::scenario::Scenario;
use kconform::targets::TargetSpec;

/// Conformance harness for the Kafka transaction APIs: runs scenarios against brokers and
/// shows how their answers differ.
#[derive(Debug, Parser)]
#[command(name = "kconform", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// `kconform fuzz --mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum FuzzMode {
    /// Stateful differential fuzzing against the oracle.
    Sequences,
    /// Live-wire fuzzing of the target's decoders.
    Frames,
    /// Both at once (the sequences wait on the brokers; the frames use the cores meanwhile).
    Both,
}

/// `--apache-backend`: how to launch Apache ([`Backend`]).
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum BackendArg {
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
enum ClientArg {
    /// Java kafka-clients 3.7.2 (needs java; the jars the Apache target caches).
    Java,
    /// librdkafka (built into kconform).
    Librdkafka,
}

impl From<ClientArg> for kconform::clients::Client {
    fn from(c: ClientArg) -> Self {
        match c {
            ClientArg::Java => kconform::clients::Client::Java,
            ClientArg::Librdkafka => kconform::clients::Client::Librdkafka,
        }
    }
}

/// Where the scenarios come from.
#[derive(Debug, Clone, clap::Args)]
struct ScenarioArgs {
    /// Directory of scenario files, their fragments/, deviations.toml and
    /// peers-allowlist.toml (default: the ones built into this kconform, so it works from any
    /// directory).
    #[arg(long, value_name = "DIR")]
    scenarios: Option<PathBuf>,
}

impl ScenarioArgs {
    fn source(&self) -> Source {
        Source::scenarios(self.scenarios.as_deref())
    }
}

/// The brokers a command runs on, and how it reaches them.
#[derive(Debug, Clone, clap::Args)]
struct TargetArgs {
    /// A target: `ref` (the bundled kaas-ref, in process), `apache` (a real Apache Kafka 3.7:
    /// the one `kconform apache up` keeps, else one launched by --apache-backend),
    /// `apache-recorded` (Apache's recorded answers) or `external=HOST:PORT` (any running
    /// broker). Repeat for several, each once. Default: ref and apache, or ref and
    /// apache-recorded where Apache cannot run (said so).
    #[arg(long = "target", value_name = "TARGET")]
    targets: Vec<String>,
    /// Directory of Apache's recorded answers, `<scenario>__apache.snap` (default: the ones
    /// built into this kconform).
    #[arg(long, value_name = "DIR")]
    snapshots: Option<PathBuf>,
    /// Run the scenarios written for a cluster of N brokers, on ref:N and apache:N (or
    /// apache-recorded:N) unless --target names others. Default: one broker.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(2..=9))]
    brokers: Option<u64>,
    /// Run the security scenarios (SASL logins and ACLs) on ref+sasl and apache+sasl (or
    /// apache-recorded+sasl) unless --target names others.
    #[arg(long)]
    sasl: bool,
    /// Deadline for every network wait, in milliseconds (Apache's request.timeout.ms, 30 s,
    /// and 5 s more: Apache may hold an answer back that long).
    #[arg(long, default_value_t = kconform::run::DEADLINE.as_millis() as u64, value_parser = clap::value_parser!(u64).range(1..))]
    deadline_ms: u64,
    /// Use provisioned topics on every live target (the topics `kconform topics` lists, created
    /// beforehand) instead of creating them; a target that refuses CreateTopics gets them
    /// anyway. Offsets are then read relative to where each scenario began, so records earlier
    /// runs left change no verdict.
    #[arg(long)]
    provisioned_topics: bool,
    /// Fail on answers that Apache's parser reads but no canonical encoder writes (a tagged
    /// field at its default, an unknown tag, a varint longer than it needs): reported as
    /// "non-canonical encoding", never as malformed. Off, they are encoding notes, shown by
    /// --show and repro and kept in the JSON transcripts.
    #[arg(long)]
    strict_encoding: bool,
    /// How `--target apache` launches Apache when `kconform apache up` is not running one:
    /// `container` (the apache/kafka image; needs Docker), `jvm` (needs java and mvn), or
    /// `auto` (the container when a Docker engine answers, else the JVM).
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    apache_backend: BackendArg,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ApacheAction {
    /// Start one broker and keep it running between runs.
    Up,
    /// Stop the broker `up` started.
    Down,
    /// Say whether it runs (exit 3 when not).
    Status,
    /// Run a cluster of `--brokers` brokers and a KRaft controller, each its own JVM, in the
    /// foreground until Ctrl-C: prints each broker's address, the start time and the memory.
    Cluster,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run scenarios (all, or those named) against each target; with two targets, diff them
    /// and classify every difference against the ledger.
    Run {
        /// Scenario names (file stems); all when none.
        names: Vec<String>,
        #[command(flatten)]
        scenarios: ScenarioArgs,
        #[command(flatten)]
        on: TargetArgs,
        /// Print each transcript.
        #[arg(long)]
        show: bool,
        /// Scenarios run at once on each target (they make their names unique, so they share
        /// the broker).
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=256))]
        jobs: u64,
        /// Also run the scenarios marked slow (minutes each; epoch overflow).
        #[arg(long)]
        include_slow: bool,
        /// List every documented difference, not one line per ledger entry.
        #[arg(long, short)]
        verbose: bool,
        #[command(flatten)]
        files: ReportFiles,
    },
    /// One scenario on two targets, transcripts in full, each difference with its ledger entry
    /// or "undocumented".
    Repro {
        /// Scenario name.
        name: String,
        #[command(flatten)]
        scenarios: ScenarioArgs,
        #[command(flatten)]
        on: TargetArgs,
    },
    /// Run every scenario and print, per target, the (API, version, error code) cells the
    /// transaction APIs produced, then the codes each API can return that no scenario reached.
    Coverage {
        /// Scenario names (file stems); all when none.
        names: Vec<String>,
        #[command(flatten)]
        scenarios: ScenarioArgs,
        #[command(flatten)]
        on: TargetArgs,
        /// Also write the table to this Markdown file.
        #[arg(long, value_name = "PATH")]
        markdown: Option<PathBuf>,
        /// Also run the scenarios marked slow.
        #[arg(long)]
        include_slow: bool,
        /// Scenarios run at once on each target.
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=256))]
        jobs: u64,
    },
    /// Run a peer's test suite against each target and judge each against Apache: franz-go's
    /// kgo integration tests (github.com/twmb/franz-go v1.22.3, pkg/kgo), fetched through the
    /// Go module proxy and built once into the cache (needs `go`). A test that passes on
    /// Apache and fails, hangs, skips or takes more than twice as long on a target is a
    /// finding; reviewed reasons live in <scenarios>/peers-allowlist.toml, and an entry that no
    /// longer shows is stale. Exit 0: no undocumented finding, nothing stale; 1: otherwise;
    /// 2: the suite or a target could not run.
    Peers {
        /// Targets: ref, apache or external=HOST:PORT (default ref and apache; a live broker
        /// each, recorded answers cannot run a suite). The judge is the apache target, else
        /// the last one named.
        #[arg(long = "target")]
        targets: Vec<String>,
        /// Go test regexp: the tests to run (default all). CI runs
        /// '^(TestTxnEtl|TestGroupETL|TestGroupSimple|TestClient_Produce.*|TestConsumeRegex)$'.
        #[arg(long, default_value = ".")]
        run: String,
        /// KGO_TEST_RECORDS: records each produce/consume test moves.
        #[arg(long, default_value_t = 20_000)]
        records: u32,
        /// The suite's timeout on each target, in seconds; a binary still running 30 s later
        /// is killed and its unfinished tests reported.
        #[arg(long, default_value_t = 900, value_parser = clap::value_parser!(u64).range(10..=86_400))]
        timeout_secs: u64,
        /// Tests run at once (-test.parallel); default the suite's own (one per core).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256))]
        parallel: Option<u32>,
        /// Run every target's suite at the same time (faster; times then share the machine).
        #[arg(long)]
        concurrent: bool,
        /// A slower test is a finding only when it is also this many seconds longer.
        #[arg(long, default_value_t = 1.0)]
        floor_secs: f64,
        /// The allowlist (default: peers-allowlist.toml of the scenarios).
        #[arg(long, value_name = "PATH")]
        allowlist: Option<PathBuf>,
        #[command(flatten)]
        scenarios: ScenarioArgs,
        /// How `--target apache` launches Apache (see `kconform run --help`).
        #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
        apache_backend: BackendArg,
        #[command(flatten)]
        files: ReportFiles,
    },
    /// Run client workloads with the Java kafka-clients 3.7 and librdkafka on two targets, diff
    /// what each client saw (each call's result or exception, what consumers read, the group's
    /// offsets) and judge every difference against the ledger's client claims
    /// ([[deviation.client]] in deviations.toml): documented, UNDOCUMENTED, or a claim that did
    /// not show (STALE). Exit 0: every workload ran, nothing undocumented or stale; 1:
    /// otherwise; 2: a target or a client could not run.
    Clients {
        /// Workloads to run (all when none; --list shows them).
        names: Vec<String>,
        /// List the workloads and exit.
        #[arg(long)]
        list: bool,
        /// Targets: ref, apache, ref:N, apache:N or external=HOST:PORT (default ref and apache).
        /// The first Apache target is the one the other is judged against.
        #[arg(long = "target")]
        targets: Vec<String>,
        /// A client to run (java or librdkafka); repeat for both (the default).
        #[arg(long = "client", value_enum)]
        clients: Vec<ClientArg>,
        /// Use provisioned topics (one partition each, `kconform topics` lists them) instead
        /// of creating topics; reads start where each topic ended when the workload began.
        #[arg(long)]
        provisioned_topics: bool,
        /// Seconds one workload may take before it is killed and reported.
        #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..))]
        deadline_secs: u64,
        #[command(flatten)]
        scenarios: ScenarioArgs,
        /// How `--target apache` launches Apache (see `kconform run --help`).
        #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
        apache_backend: BackendArg,
        #[command(flatten)]
        files: ReportFiles,
    },
    /// Fuzz a broker: stateful differential sequences and live-wire frames (`--mode`).
    ///
    /// Sequences are drawn from a model of the transaction state machine (valid flows,
    /// perturbed: wrong, stale and future epochs and producer ids, empty ids and groups, every
    /// version, odd timeouts, repeated and reordered calls, sleeps past a timeout) and run on
    /// the target and on the oracle; a difference no ledger entry matches is a finding,
    /// confirmed by a second run, shrunk, and written once as a scenario file (`finding-*.toml`)
    /// that `kconform run --scenarios DIR` and `kconform repro` replay. Frames are mutated
    /// request frames of the six APIs sent to the target; an undecodable answer, a wrong
    /// correlation id, a close on a well-formed request, silence or a target that stops
    /// answering is a finding, written as a raw frame (`frame-*.bin`) that `kconform
    /// replay-frame` sends again. Ctrl-C ends the run with its summary; `--resume` goes on from
    /// there. Exit 0: no new finding; 1: new findings; 2: a target could not run.
    Fuzz {
        /// The target under test: ref, ref:N, external=HOST:PORT...
        #[arg(long, default_value = "ref")]
        target: String,
        /// The oracle: apache (kept up by `kconform apache up`, else launched); `none` with
        /// `--mode frames` (closes on well-formed frames are then judged by the schema alone).
        #[arg(long, default_value = "apache")]
        oracle: String,
        /// What to fuzz: `sequences` (stateful, against the oracle), `frames` (the target's
        /// decoders, live: mutated request frames of the six APIs, each finding saved as a raw
        /// frame `frame-*.bin` that `kconform replay-frame` sends again), or `both` at once.
        #[arg(long, value_enum, default_value_t = FuzzMode::Both)]
        mode: FuzzMode,
        /// Go on from where the last run into the same findings directory stopped (its seed
        /// and the next sequence and frame), instead of drawing the same inputs again.
        #[arg(long)]
        resume: bool,
        /// How long: 90s, 10m, 8h (or seconds).
        #[arg(long, default_value = "60s", value_parser = parse_duration)]
        duration: Duration,
        /// The seed (default: from the clock, printed so the run can be repeated).
        #[arg(long)]
        seed: Option<u64>,
        /// Where findings are written; findings already there are not written again.
        #[arg(long, default_value = "kconform-findings", value_name = "DIR")]
        findings: PathBuf,
        /// The most actions a sequence has (after the set-up).
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=64))]
        max_actions: u64,
        /// The most runs spent shrinking one finding.
        #[arg(long, default_value_t = 40)]
        shrink_runs: usize,
        /// Sequences run at once (they share the brokers, each with its own names).
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=64))]
        jobs: u64,
        /// End once this many new findings are written.
        #[arg(long, value_name = "N")]
        stop_after_findings: Option<usize>,
        /// Deadline for every network wait, in milliseconds.
        #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
        deadline_ms: u64,
        #[command(flatten)]
        scenarios: ScenarioArgs,
        /// How `--oracle apache` launches Apache (see `kconform run --help`).
        #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
        apache_backend: BackendArg,
        #[command(flatten)]
        files: ReportFiles,
    },
    /// Send raw frames that `kconform fuzz` saved to a target, and judge them as it did.
    ///
    /// Each frame file (`frame-*.bin`: a 4-byte size, then the frame) goes on a fresh
    /// connection; a close or silence is followed by an ApiVersions on another. Exit 0: no frame shows a finding; 1: some do; 2: a file or the target is unusable.
    ReplayFrame {
        /// The frame files.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// The target: ref, external=HOST:PORT...
        #[arg(long, default_value = "ref")]
        target: String,
        /// Deadline for every network wait, in milliseconds.
        #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
        deadline_ms: u64,
    },
    /// Relay to a broker, changing the answers of one API at one version: the way to see what
    /// kconform makes of a broker that answers wrongly. Prints the address to give as
    /// `--target external=ADDR` and relays until interrupted.
    Proxy {
        /// The broker to relay to: HOST:PORT, or `ref` for a kaas-ref started here.
        #[arg(long)]
        upstream: String,
        /// Where to listen.
        #[arg(long, default_value = "127.0.0.1:0")]
        listen: std::net::SocketAddr,
        /// The API whose answers change, as Apache names it (EndTxn), or `all`: every answer
        /// but ApiVersions', at every version.
        #[arg(long, requires = "mutation")]
        api: Option<String>,
        /// The version whose answers change (needed unless --api all).
        #[arg(long, requires = "api")]
        version: Option<i16>,
        /// How: insert:PATH (a byte where that field begins; insert:end after the last),
        /// drop-last-byte, cut:PATH (the frame ends inside that field), error-code:PATH
        /// (becomes 99, or CODE with error-code:PATH=CODE; error-code:* every one),
        /// add-one:PATH, correlation, close or stall; or an equivalent mutation, which
        /// changes bytes but not meaning and must change no verdict: tags-at-default (every
        /// tagged field written, at its default where the answer left it out), unknown-tag
        /// (an unknown tag in every tagged-field section), long-varints (every varint in five
        /// bytes); with --api all these change ApiVersions' answers too. PATH is a field as
        /// diagnoses name it: error_code, topics[0].partitions[0].error_code,
        /// header.correlation_id.
        #[arg(long, requires = "api")]
        mutation: Option<kconform::mutation::Mutation>,
    },
    /// Print the topics a run needs, for a broker where clients cannot create topics: name
    /// and partitions (and the topic configs a scenario needs), one per line, or with --json
    /// `[{"name": ..., "partitions": N}]` (what `kaas-ref --topics` reads). Create them once;
    /// runs against that broker then use them (see --provisioned-topics).
    Topics {
        /// Scenario names (file stems); all when none.
        names: Vec<String>,
        #[command(flatten)]
        scenarios: ScenarioArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// List the topics of the client workloads (`kconform clients --provisioned-topics`)
        /// instead of the scenarios'.
        #[arg(long, conflicts_with = "names")]
        clients: bool,
    },
    /// List the scenarios.
    List {
        #[command(flatten)]
        scenarios: ScenarioArgs,
    },
    /// Keep one Apache broker running between runs (`up`), stop it (`down`), or say whether it
    /// runs (`status`). While it is up, `--target apache` uses it instead of starting one.
    /// `cluster` runs a cluster of several brokers in the foreground.
    Apache {
        /// up, down, status or cluster.
        #[arg(value_enum)]
        action: ApacheAction,
        /// Brokers of `cluster`.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(1..=9))]
        brokers: u8,
    },
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            // librdkafka's own error lines are silenced: what a client raised is in the
            // transcript of `kconform clients`, said once.
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "warn,rdkafka=off,librdkafka=off".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    // Ctrl-C drops the run, and with it the brokers it started (the JVM is stopped, the
    // container removed) before exiting; `fuzz` instead ends its run and prints the summary.
    let outcome = match cli.command {
        Command::Fuzz { .. } => run(cli).await,
        _ => tokio::select! {
            outcome = run(cli) => outcome,
            _ = tokio::signal::ctrl_c() => {
                eprintln!("kconform: interrupted");
                return ExitCode::from(130);
            }
        },
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            // The reason on one line; a dead broker's log, when there is one, below it.
            let text = format!("{e:#}");
            let (reason, details) = text.split_once('\n').unwrap_or((&text, ""));
            eprintln!("kconform: could not run: {reason}");
            if !details.is_empty() {
                eprintln!("{details}");
            }
            ExitCode::from(2)
        }
    }
}

/// `90s`, `10m`, `8h`, `1d` or plain seconds.
fn parse_duration(text: &str) -> Result<Duration, String> {
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
    Ok(Duration::from_secs(n * secs))
}

/// Progress of `kconform fuzz`: a spinner with both fuzzers' counters, a line per finding.
struct FuzzLine {
    bar: indicatif::ProgressBar,
    last: std::sync::Mutex<(
        Option<kconform::fuzz::Stats>,
        Option<kconform::fuzz::wire::FrameStats>,
    )>,
}

impl FuzzLine {
    fn new(bar: indicatif::ProgressBar) -> FuzzLine {
        FuzzLine {
            bar,
            last: Default::default(),
        }
    }

    fn show(&self) {
        let Ok(last) = self.last.lock() else { return };
        let mut parts = Vec::new();
        let mut findings = 0;
        if let Some(s) = &last.0 {
            let per = |n: u64| n as f64 / s.secs.max(0.001);
            parts.push(format!(
                "{} sequences ({:.1}/s), {} requests ({:.0}/s)",
                s.sequences,
                per(s.sequences),
                s.requests,
                per(s.requests)
            ));
            findings += s.findings;
        }
        if let Some(f) = &last.1 {
            parts.push(format!(
                "{} frames ({:.0}/s)",
                f.frames,
                f.frames as f64 / f.secs.max(0.001)
            ));
            findings += f.findings;
        }
        parts.push(format!("{findings} findings"));
        self.bar.set_message(parts.join(", "));
    }
}

impl kconform::fuzz::Progress for FuzzLine {
    fn update(&self, s: &kconform::fuzz::Stats) {
        if let Ok(mut last) = self.last.lock() {
            last.0 = Some(s.clone());
        }
        self.show();
    }
    fn finding(&self, f: &kconform::fuzz::report::Finding) {
        self.bar
            .println(format!("kconform: FINDING {}: {}", f.file, f.signature));
    }
    fn frames(&self, s: &kconform::fuzz::wire::FrameStats) {
        if let Ok(mut last) = self.last.lock() {
            last.1 = Some(s.clone());
        }
        self.show();
    }
    fn frame_finding(&self, f: &kconform::fuzz::wire::FrameFinding) {
        self.bar
            .println(format!("kconform: FINDING {}: {}", f.file, f.signature));
    }
}

/// The targets to run: those given, or ref plus Apache: live when a broker is up or a backend
/// can start one, else its recorded answers (said so, with the reason).
fn specs(
    targets: &[String],
    backend: Backend,
    brokers: Option<u64>,
    sasl: bool,
) -> anyhow::Result<Vec<TargetSpec>> {
    let with_backend = |spec: TargetSpec| match spec {
        TargetSpec::Apache(_) => TargetSpec::Apache(backend),
        TargetSpec::ApacheSasl(_) => TargetSpec::ApacheSasl(backend),
        other => other,
    };
    if targets.is_empty() {
        let (ours, live, recorded) = match brokers {
            None if sasl => (
                TargetSpec::RefSasl,
                TargetSpec::ApacheSasl(backend),
                TargetSpec::RecordedSasl,
            ),
            None => (
                TargetSpec::Ref,
                TargetSpec::Apache(backend),
                TargetSpec::Recorded,
            ),
            Some(n) if sasl => {
                let n = n as usize;
                (
                    TargetSpec::RefClusterSasl(n),
                    TargetSpec::ApacheClusterSasl(n),
                    TargetSpec::RecordedClusterSasl(n),
                )
            }
            Some(n) => {
                let n = n as usize;
                (
                    TargetSpec::RefCluster(n),
                    TargetSpec::ApacheCluster(n),
                    TargetSpec::RecordedCluster(n),
                )
            }
        };
        let usable = match (&live, backend) {
            // A cluster runs as JVMs whatever the backend.
            (TargetSpec::ApacheCluster(_) | TargetSpec::ApacheClusterSasl(_), _) => {
                Backend::Jvm.usable()
            }
            _ => backend.usable(),
        };
        return Ok(match usable {
            Ok(()) => vec![ours, live],
            Err(why) => {
                eprintln!(
                    "kconform: no live Apache ({why}); comparing against Apache's recorded answers instead"
                );
                vec![ours, recorded]
            }
        });
    }
    if let Some(n) = brokers {
        anyhow::bail!("--brokers {n} picks the targets itself: give it without --target, or name ref:{n} and apache:{n} as targets");
    }
    if sasl {
        anyhow::bail!("--sasl picks the targets itself: give it without --target, or name ref+sasl and apache+sasl as targets");
    }
    let specs: Vec<TargetSpec> = targets
        .iter()
        .map(|t| TargetSpec::parse(t).map(with_backend))
        .collect::<Result<_, _>>()?;
    for (i, spec) in specs.iter().enumerate() {
        if specs[..i]
            .iter()
            .any(|earlier| earlier.name() == spec.name())
        {
            anyhow::bail!(
                "--target {} is given twice: a run compares different targets, each once",
                spec.name()
            );
        }
    }
    Ok(specs)
}

/// `kconform apache up|down|status|cluster`.
async fn apache_command(action: ApacheAction, brokers: u8) -> anyhow::Result<ExitCode> {
    use kconform::targets::apache::daemon;
    match action {
        ApacheAction::Cluster => {
            let spinner = progress::starting(&format!("an Apache cluster of {brokers} brokers"));
            let started = tokio::task::spawn_blocking(move || {
                kconform::targets::apache::cluster::ApacheCluster::start(usize::from(brokers))
            })
            .await;
            spinner.finish_and_clear();
            let cluster = started.map_err(|e| anyhow::anyhow!("the launcher failed: {e}"))??;
            for (i, addr) in cluster.addrs().iter().enumerate() {
                outln!("broker {i}: {addr}");
            }
            outln!(
                "Apache Kafka {} cluster: {brokers} brokers and a controller ready in {:.1} s, {} MiB resident; Ctrl-C stops it",
                kconform::targets::apache::KAFKA_VERSION,
                cluster.start_time.as_secs_f64(),
                cluster.resident_bytes() / (1024 * 1024)
            );
            tokio::signal::ctrl_c().await?;
            drop(cluster);
            Ok(ExitCode::SUCCESS)
        }
        ApacheAction::Up => {
            let spinner = progress::starting("Apache (kept up)");
            let result = daemon::up();
            spinner.finish_and_clear();
            let (d, started) = result?;
            outln!(
                "Apache Kafka {} {} at {} (pid {}); `kconform apache down` stops it",
                d.version,
                if started { "started" } else { "already up" },
                d.addr,
                d.pid
            );
            Ok(ExitCode::SUCCESS)
        }
        ApacheAction::Down => {
            match daemon::down()? {
                true => outln!("Apache stopped"),
                false => outln!("no Apache was up"),
            }
            Ok(ExitCode::SUCCESS)
        }
        ApacheAction::Status => match daemon::running() {
            Some(d) => {
                outln!(
                    "up: Apache Kafka {} at {} (pid {}, log {})",
                    d.version,
                    d.addr,
                    d.pid,
                    daemon::dir().join("broker.log").display()
                );
                Ok(ExitCode::SUCCESS)
            }
            None => {
                outln!("down");
                Ok(ExitCode::from(3))
            }
        },
    }
}

/// `kconform proxy`: relays until interrupted (Ctrl-C ends the process).
async fn proxy_command(
    upstream: &str,
    listen: std::net::SocketAddr,
    api: Option<String>,
    version: Option<i16>,
    mutation: Option<kconform::mutation::Mutation>,
) -> anyhow::Result<ExitCode> {
    use kconform::mutation::{Mutant, Proxy, Scope};
    let target = match upstream {
        "ref" => TargetSpec::Ref,
        other => TargetSpec::parse(&format!("external={other}"))
            .map_err(|_| anyhow::anyhow!("--upstream '{other}': expected HOST:PORT or ref"))?,
    };
    let running = kconform::targets::Running::start(&target).await?;
    let scope = match (api.as_deref(), version, mutation) {
        (Some("all"), None, Some(mutation)) => Scope::AllBut(mutation),
        (Some("all"), Some(_), _) => {
            anyhow::bail!("--api all changes every version: drop --version")
        }
        (Some(api), Some(version), Some(mutation)) => {
            let key = kconform::api::request::api_key(api).ok_or_else(|| {
                anyhow::anyhow!(
                    "--api '{api}': kconform knows all, {}",
                    kconform::api::names()
                )
            })?;
            Scope::One(Mutant {
                api: key,
                version,
                mutation,
            })
        }
        (Some(_), None, _) => anyhow::bail!("--api needs --version (or use --api all)"),
        _ => Scope::None,
    };
    let what = scope.to_string();
    let proxy = Proxy::start(listen, running.addr, scope)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {listen}: {e}"))?;
    outln!("{}", proxy.addr);
    eprintln!(
        "kconform: relaying {} to {} ({what}); Ctrl-C stops",
        proxy.addr, running.addr
    );
    std::future::pending::<()>().await;
    unreachable!("pending never completes")
}

/// Colours a part of the report by its tone, when stdout is a terminal (console decides).
fn paint(tone: kconform::report::Tone, text: &str) -> String {
    use kconform::report::Tone;
    let styled = console::style(text);
    match tone {
        Tone::Dim => styled.dim(),
        Tone::Bold => styled.bold(),
        Tone::Good => styled.green(),
        Tone::Warn => styled.yellow(),
        Tone::Bad => styled.red().bold(),
    }
    .to_string()
}

/// Progress of a session on stderr: a spinner while a target starts, a bar per target.
#[derive(Default)]
struct SessionBars {
    spinner: std::sync::Mutex<Option<indicatif::ProgressBar>>,
    bars: std::sync::Mutex<std::collections::HashMap<String, indicatif::ProgressBar>>,
}

impl kconform::run::session::Progress for SessionBars {
    fn starting(&self, target: &str) {
        if let Ok(mut s) = self.spinner.lock() {
            *s = Some(progress::starting(target));
        }
    }
    fn running(&self, target: &str, total: usize) {
        if let Some(s) = self.spinner.lock().ok().and_then(|mut s| s.take()) {
            s.finish_and_clear();
        }
        if let Ok(mut bars) = self.bars.lock() {
            bars.insert(target.to_owned(), progress::scenarios(target, total));
        }
    }
    fn scenario_done(&self, target: &str, scenario: &str) {
        if let Some(bar) = self.bars.lock().ok().and_then(|b| b.get(target).cloned()) {
            bar.inc(1);
            bar.set_message(scenario.to_owned());
        }
    }
    fn finished(&self, target: &str) {
        if let Some(s) = self.spinner.lock().ok().and_then(|mut s| s.take()) {
            s.finish_and_clear();
        }
        if let Some(bar) = self.bars.lock().ok().and_then(|mut b| b.remove(target)) {
            bar.finish_and_clear();
        }
    }
}

/// Exit 0 when the run passed, 1 when it found an undocumented difference, a stale ledger
/// entry or a failed expectation.
fn verdict(report: &Report) -> ExitCode {
    match report.passed() {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(1),
    }
}

/// Drops the slow scenarios unless asked for (`--include-slow`) or named, saying so.
fn without_slow<'a>(
    mut chosen: Vec<&'a Scenario>,
    named: &[String],
    include_slow: bool,
) -> Vec<&'a Scenario> {
    let skipped: Vec<String> = chosen
        .iter()
        .filter(|s| s.slow && !include_slow && !named.contains(&s.name))
        .map(|s| s.name.clone())
        .collect();
    if !skipped.is_empty() {
        eprintln!(
            "kconform: skipping {} slow scenario(s) ({}): add --include-slow to run them",
            skipped.len(),
            skipped.join(", ")
        );
    }
    chosen.retain(|s| !skipped.contains(&s.name));
    chosen
}

/// Progress of `peers`: a line for each slow step, a bar per target.
#[derive(Default)]
struct PeerBars {
    bars: std::sync::Mutex<std::collections::HashMap<String, indicatif::ProgressBar>>,
}

impl kconform::peers::Progress for PeerBars {
    fn note(&self, what: &str) {
        eprintln!("kconform: {what}");
    }
    fn start(&self, target: &str, total: usize) {
        let bar = progress::scenarios(target, total);
        if let Ok(mut bars) = self.bars.lock() {
            bars.insert(target.to_owned(), bar);
        }
    }
    fn done(&self, target: &str, test: &str, outcome: kconform::peers::suite::Outcome) {
        if let Some(bar) = self.bars.lock().ok().and_then(|b| b.get(target).cloned()) {
            bar.inc(1);
            bar.set_message(format!("{test}: {outcome:?}"));
        }
    }
    fn finish(&self, target: &str) {
        if let Some(bar) = self.bars.lock().ok().and_then(|mut b| b.remove(target)) {
            bar.finish_and_clear();
        }
    }
}

/// The report files a command that reports can write, the same flags for each.
#[derive(Debug, clap::Args)]
struct ReportFiles {
    /// Write the report as JSON.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Write the report as JUnit XML.
    #[arg(long, value_name = "PATH")]
    junit: Option<PathBuf>,
    /// Write the report as Markdown (for a pull-request comment).
    #[arg(long, value_name = "PATH")]
    markdown: Option<PathBuf>,
}

/// A report in the three forms [`ReportFiles`] writes.
trait Renders {
    fn json(&self) -> String;
    fn junit(&self) -> String;
    fn markdown(&self) -> String;
}

/// [`Renders`] for reports whose own methods have the three forms.
macro_rules! renders {
    ($($report:ty),*) => {$(
        impl Renders for $report {
            fn json(&self) -> String {
                Self::json(self)
            }
            fn junit(&self) -> String {
                Self::junit(self)
            }
            fn markdown(&self) -> String {
                Self::markdown(self)
            }
        }
    )*};
}

renders!(
    Report,
    kconform::peers::report::PeersReport,
    kconform::clients::report::ClientsReport,
    kconform::fuzz::report::FuzzReport
);

/// Progress of `kconform clients` on stderr, a line per workload run.
struct ClientLines;

impl kconform::clients::Progress for ClientLines {
    fn note(&self, what: &str) {
        eprintln!("kconform: {what}");
    }
    fn done(
        &self,
        target: &str,
        client: kconform::clients::Client,
        workload: &str,
        error: Option<&str>,
    ) {
        let how = match error {
            None => "ran".to_owned(),
            Some(e) => format!(
                "gave no transcript: {}",
                e.lines().next().unwrap_or_default()
            ),
        };
        eprintln!("kconform: {} {workload} on {target}: {how}", client.name());
    }
}

impl ReportFiles {
    /// Writes each file asked for, rendering only those.
    fn write<R: Renders>(&self, report: &R) -> anyhow::Result<()> {
        type Render<R> = fn(&R) -> String;
        let forms: [(&Option<PathBuf>, Render<R>); 3] = [
            (&self.json, R::json),
            (&self.junit, R::junit),
            (&self.markdown, R::markdown),
        ];
        for (path, render) in forms {
            if let Some(path) = path {
                std::fs::write(path, render(report))
                    .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
            }
        }
        Ok(())
    }
}

/// The scenarios named (all when none), refusing an unknown name with the nearest one.
fn pick<'a>(
    scenarios: &'a [Scenario],
    names: &[String],
    source: &Source,
) -> anyhow::Result<Vec<&'a Scenario>> {
    if let Some(missing) = names
        .iter()
        .find(|n| !scenarios.iter().any(|s| &s.name == *n))
    {
        let nearest = scenarios
            .iter()
            .map(|s| (edit_distance(missing, &s.name), &s.name))
            .min()
            .filter(|(d, _)| *d <= missing.len().max(4) / 2)
            .map(|(_, n)| format!(" (did you mean '{n}'?)"))
            .unwrap_or_default();
        anyhow::bail!(
            "no scenario named '{missing}' in {}{nearest}",
            source.describe()
        );
    }
    Ok(scenarios
        .iter()
        .filter(|s| names.is_empty() || names.contains(&s.name))
        .collect())
}

/// Levenshtein distance: how many single-character edits turn `a` into `b`.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Apache { action, brokers } => apache_command(action, brokers).await,
        Command::Proxy {
            upstream,
            listen,
            api,
            version,
            mutation,
        } => proxy_command(&upstream, listen, api, version, mutation).await,
        Command::Peers {
            targets,
            run,
            records,
            timeout_secs,
            parallel,
            concurrent,
            floor_secs,
            allowlist,
            scenarios,
            apache_backend,
            files,
        } => {
            let specs = specs(&targets, apache_backend.into(), None, false)?;
            let options = kconform::peers::PeersOptions {
                run: kconform::peers::suite::RunOptions {
                    run,
                    records,
                    timeout: Duration::from_secs(timeout_secs),
                    parallel,
                },
                concurrent,
                floor_secs,
            };
            let allowlist = match allowlist {
                Some(path) => kconform::peers::judge::Allowlist::load(&path)?,
                None => {
                    let source = scenarios.source();
                    let name = "peers-allowlist.toml";
                    kconform::peers::judge::Allowlist::parse(
                        &source.read(name)?,
                        &source.place(name),
                    )?
                }
            };
            let report = kconform::peers::run(
                &specs,
                &options,
                allowlist,
                std::sync::Arc::new(PeerBars::default()),
            )
            .await?;
            out!("{}", report.terminal());
            files.write(&report)?;
            Ok(match report.passed() {
                true => ExitCode::SUCCESS,
                false => ExitCode::from(1),
            })
        }
        Command::Fuzz {
            target,
            oracle,
            mode,
            resume,
            duration,
            seed,
            findings,
            max_actions,
            shrink_runs,
            jobs,
            stop_after_findings,
            deadline_ms,
            scenarios,
            apache_backend,
            files,
        } => {
            use kconform::fuzz::resume as saved;
            let (sequences, frames) = (mode != FuzzMode::Frames, mode != FuzzMode::Sequences);
            let with_oracle = oracle != "none";
            if sequences && !with_oracle {
                anyhow::bail!(
                    "--oracle none: sequences are judged against an oracle; use --mode frames to fuzz the decoders alone"
                );
            }
            let places = match resume {
                true => (
                    saved::load(&findings, "sequences")?,
                    saved::load(&findings, "frames")?,
                ),
                false => (None, None),
            };
            let saved_seed = places.0.or(places.1).map(|p| p.seed);
            if resume && saved_seed.is_none() {
                anyhow::bail!("--resume: no run saved its place in {}", findings.display());
            }
            let seed = match (seed, saved_seed) {
                (Some(s), Some(t)) if s != t => {
                    anyhow::bail!(
                        "--seed {s}, but the run to resume in {} has seed {t}",
                        findings.display()
                    )
                }
                (Some(s), _) | (None, Some(s)) => s,
                (None, None) => std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64),
            };
            eprintln!("kconform: fuzzing with --seed {seed}");
            let mut names = vec![target];
            if with_oracle {
                names.push(oracle);
            }
            let specs = specs(&names, apache_backend.into(), None, false)?;
            let ledger = match sequences {
                true => Some(kconform::compare::ledger::Ledger::read(
                    &scenarios.source(),
                )?),
                false => None,
            };
            let deadline = Duration::from_millis(deadline_ms);
            let names: Vec<String> = specs.iter().map(|s| s.name()).collect();
            let spinner = progress::starting(&names.join(" and "));
            let started = futures::future::join_all(
                specs
                    .iter()
                    .map(|s| kconform::targets::Running::start_answering(s, deadline)),
            )
            .await;
            spinner.finish_and_clear();
            let mut running = Vec::new();
            let mut why = Vec::new();
            for r in started {
                match r {
                    Ok(t) => running.push(t),
                    Err(e) => why.push(e.to_string()),
                }
            }
            if !why.is_empty() {
                for t in running {
                    t.stop().await;
                }
                anyhow::bail!("{}", why.join("; "));
            }
            let under_test = &running[0];
            let judge = running.get(1);
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let on_ctrl_c = stop.clone();
            tokio::spawn(async move {
                if tokio::signal::ctrl_c().await.is_ok() {
                    eprintln!("kconform: interrupted; finishing with the summary");
                    on_ctrl_c.store(true, std::sync::atomic::Ordering::SeqCst);
                }
            });
            let bar = progress::starting("fuzzing");
            let line: std::sync::Arc<FuzzLine> = std::sync::Arc::new(FuzzLine::new(bar.clone()));
            let options = kconform::fuzz::FuzzOptions {
                duration,
                seed,
                max_actions: max_actions as usize,
                findings: findings.clone(),
                deadline,
                shrink_runs,
                jobs: jobs as usize,
                stop_after_findings,
                first_sequence: places.0.map_or(0, |p| p.next),
            };
            let wire_options = kconform::fuzz::wire::WireOptions {
                duration,
                seed,
                first_frame: places.1.map_or(0, |p| p.next),
                findings,
                deadline,
                jobs: jobs as usize,
                stop_after_findings,
            };
            let clock = std::time::Instant::now();
            let source = scenarios.source();
            let sequence_run = async {
                match (sequences, judge, &ledger) {
                    (true, Some(judge), Some(ledger)) => Some(
                        kconform::fuzz::run(
                            under_test,
                            judge,
                            ledger,
                            &source,
                            &options,
                            line.clone(),
                            stop.clone(),
                        )
                        .await,
                    ),
                    _ => None,
                }
            };
            let frame_run = async {
                match frames {
                    true => Some(
                        kconform::fuzz::wire::run(
                            under_test,
                            judge,
                            &wire_options,
                            line.clone(),
                            stop.clone(),
                        )
                        .await,
                    ),
                    false => None,
                }
            };
            let (sequence_result, frame_result) = tokio::join!(sequence_run, frame_run);
            bar.finish_and_clear();
            for t in running {
                t.stop().await;
            }
            let oracle_name = names.get(1).cloned().unwrap_or_else(|| "none".into());
            let mut report = match sequence_result {
                Some(r) => r?,
                None => {
                    let mut r =
                        kconform::fuzz::report::FuzzReport::new(&names[0], &oracle_name, &options);
                    r.finish(&kconform::fuzz::Stats::default());
                    r
                }
            };
            if let Some(f) = frame_result {
                report.with_frames(f?, clock.elapsed().as_secs_f64());
            }
            out!("{}", report.terminal());
            files.write(&report)?;
            Ok(match report.new_findings() {
                0 => ExitCode::SUCCESS,
                _ => ExitCode::from(1),
            })
        }
        Command::ReplayFrame {
            files,
            target,
            deadline_ms,
        } => {
            let deadline = Duration::from_millis(deadline_ms);
            let specs = specs(&[target], Backend::Auto, None, false)?;
            let target = kconform::targets::Running::start_answering(&specs[0], deadline).await?;
            let mut shown = 0;
            let mut failure = None;
            for file in &files {
                match kconform::fuzz::wire::replay(file, &target, deadline).await {
                    Ok(r) => {
                        let verdict = match &r.finding {
                            Some(j) => {
                                shown += 1;
                                format!("FINDING {}\n  {}", j.signature, j.detail)
                            }
                            None => "no finding".into(),
                        };
                        outln!("{}: {}: {verdict}", file.display(), r.happened);
                    }
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                }
            }
            target.stop().await;
            if let Some(e) = failure {
                return Err(e.into());
            }
            Ok(match shown {
                0 => ExitCode::SUCCESS,
                _ => ExitCode::from(1),
            })
        }
        Command::Clients {
            names,
            list,
            targets,
            clients,
            provisioned_topics,
            deadline_secs,
            scenarios,
            apache_backend,
            files,
        } => {
            if list {
                for w in kconform::clients::WORKLOADS {
                    outln!("{:26} {}", w.name, w.about);
                }
                return Ok(ExitCode::SUCCESS);
            }
            let specs = specs(&targets, apache_backend.into(), None, false)?;
            let ledger = kconform::compare::ledger::Ledger::read(&scenarios.source())?;
            let clients = match clients.is_empty() {
                true => kconform::clients::Client::ALL.to_vec(),
                false => clients.into_iter().map(Into::into).collect(),
            };
            let options = kconform::clients::ClientsOptions {
                workloads: names,
                clients,
                provisioned_topics,
                deadline: Duration::from_secs(deadline_secs),
            };
            let report =
                kconform::clients::run(&specs, &options, &ledger, std::sync::Arc::new(ClientLines))
                    .await?;
            out!("{}", report.terminal());
            files.write(&report)?;
            Ok(match report.passed() {
                true => ExitCode::SUCCESS,
                false => ExitCode::from(1),
            })
        }
        Command::List { scenarios } => {
            for s in Scenario::load_all(&scenarios.source())? {
                match s.brokers {
                    _ if s.secured() => outln!("{:45} (--sasl) {}", s.name, s.description),
                    1 => outln!("{:45} {}", s.name, s.description),
                    n => outln!("{:45} ({n} brokers) {}", s.name, s.description),
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Topics {
            names,
            scenarios,
            json,
            clients,
        } => {
            let needed = match clients {
                true => kconform::clients::provisioned_topics(),
                false => {
                    let source = scenarios.source();
                    let all = Scenario::load_all(&source)?;
                    let chosen = pick(&all, &names, &source)?;
                    kconform::run::topics::needed(&chosen)
                }
            };
            match json {
                true => outln!("{}", serde_json::to_string_pretty(&needed)?),
                false => {
                    for t in &needed {
                        let configs: Vec<String> =
                            t.configs.iter().map(|(k, v)| format!("{k}={v}")).collect();
                        outln!("{} {} {}", t.name, t.partitions, configs.join(","));
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Run {
            names,
            scenarios,
            on,
            show,
            jobs,
            include_slow,
            verbose,
            files,
        } => {
            let (report, transcripts) =
                compare(&scenarios, &on, &names, include_slow, jobs as usize, None).await?;
            if show {
                for t in transcripts.iter().flatten() {
                    outln!("{}", serde_json::to_string_pretty(t)?);
                }
            }
            out!("{}", report.terminal_painted(verbose, &paint));
            if report.targets.len() < 2 {
                outln!("(one target: nothing compared)");
            }
            files.write(&report)?;
            Ok(verdict(&report))
        }
        Command::Coverage {
            names,
            scenarios,
            on,
            markdown,
            include_slow,
            jobs,
        } => {
            // Without targets named, every shape of scenario runs on its own pair of targets
            // (ref and apache, then ref:N and apache:N, then ref+sasl and apache+sasl): the
            // table is the whole suite's.
            let shapes: Vec<(Option<u64>, bool)> =
                match (on.targets.is_empty(), on.brokers, on.sasl) {
                    (true, None, false) => {
                        let all = Scenario::load_all(&scenarios.source())?;
                        let mut shapes: Vec<(usize, bool)> =
                            pick(&all, &names, &scenarios.source())?
                                .iter()
                                .map(|s| (s.brokers, s.secured()))
                                .collect();
                        shapes.sort();
                        shapes.dedup();
                        shapes
                            .into_iter()
                            .map(|(n, sasl)| ((n > 1).then_some(n as u64), sasl))
                            .collect()
                    }
                    (_, brokers, sasl) => vec![(brokers, sasl)],
                };
            // An unknown name is refused whatever the sizes.
            pick(
                &Scenario::load_all(&scenarios.source())?,
                &names,
                &scenarios.source(),
            )?;
            let mut coverage = kconform::api::coverage::Coverage::default();
            let mut reports = Vec::new();
            for (brokers, sasl) in shapes {
                let on = TargetArgs {
                    brokers,
                    sasl,
                    ..on.clone()
                };
                let all = Scenario::load_all(&scenarios.source())?;
                let size = brokers.map_or(1, |n| n as usize);
                let named: Vec<String> = names
                    .iter()
                    .filter(|n| {
                        all.iter()
                            .any(|s| &s.name == *n && s.brokers == size && s.secured() == sasl)
                    })
                    .cloned()
                    .collect();
                if !names.is_empty() && named.is_empty() {
                    continue;
                }
                let (report, transcripts) =
                    compare(&scenarios, &on, &named, include_slow, jobs as usize, None).await?;
                transcripts.iter().flatten().for_each(|t| coverage.add(t));
                reports.push(report);
            }
            let table = coverage.markdown();
            outln!("{table}");
            if let Some(path) = markdown {
                std::fs::write(&path, &table)
                    .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
            }
            let mut code = ExitCode::SUCCESS;
            for report in &reports {
                if !report.passed() {
                    out!("{}", report.terminal_painted(false, &paint));
                    code = verdict(report);
                }
            }
            Ok(code)
        }
        Command::Repro {
            name,
            scenarios,
            on,
        } => {
            let names = [name];
            let (report, transcripts) = compare(&scenarios, &on, &names, true, 1, Some(2)).await?;
            out!("{}", report.repro(&transcripts[0][0], &transcripts[1][0]));
            Ok(verdict(&report))
        }
    }
}

/// What run, coverage and repro share: the scenarios named (all when none; slow ones only when
/// asked or named) on the targets given (exactly `targets` of them when said), the first two
/// compared.
async fn compare(
    scenarios: &ScenarioArgs,
    on: &TargetArgs,
    names: &[String],
    include_slow: bool,
    jobs: usize,
    targets: Option<usize>,
) -> anyhow::Result<(Report, Vec<Vec<kconform::transcript::Transcript>>)> {
    let source = scenarios.source();
    let all = Scenario::load_all(&source)?;
    let picked = pick(&all, names, &source)?;
    let specs = specs(&on.targets, on.apache_backend.into(), on.brokers, on.sasl)?;
    let size = specs.first().map_or(1, TargetSpec::brokers);
    let secured = specs.first().is_some_and(TargetSpec::secured);
    if let Some(s) = picked
        .iter()
        .find(|s| !names.is_empty() && s.secured() != secured)
    {
        let hint = match (s.secured(), s.brokers) {
            (true, 1) => "--sasl (ref+sasl and apache+sasl)".to_owned(),
            (true, n) => format!("--brokers {n} --sasl (ref:{n}+sasl and apache:{n}+sasl)"),
            (false, _) => "targets without SASL".to_owned(),
        };
        anyhow::bail!(
            "scenario '{}' is {} security scenario: run it with {hint}",
            s.name,
            if s.secured() { "a" } else { "no" }
        );
    }
    if let Some(s) = picked
        .iter()
        .find(|s| !names.is_empty() && s.brokers != size)
    {
        let hint = match s.brokers {
            1 => "targets of one broker (ref and apache)".to_owned(),
            n => format!("--brokers {n} (ref:{n} and apache:{n})"),
        };
        anyhow::bail!(
            "scenario '{}' is written for {} broker(s), these targets have {size}: run it with {hint}",
            s.name,
            s.brokers
        );
    }
    let sized = kconform::run::session::sized(&picked, size, secured);
    if sized.is_empty() {
        match secured {
            true => anyhow::bail!("no security scenario is chosen"),
            false => anyhow::bail!("no scenario is written for {size} brokers"),
        }
    }
    let chosen = without_slow(sized, names, include_slow);
    if let Some(n) = targets.filter(|n| *n != specs.len()) {
        anyhow::bail!(
            "this command compares exactly {n} targets ({} given)",
            specs.len()
        );
    }
    let snapshots = Source::snapshots(on.snapshots.as_deref());
    let session = kconform::run::session::Session {
        scenarios: &source,
        snapshots: &snapshots,
        deadline: Duration::from_millis(on.deadline_ms),
        provisioned_topics: on.provisioned_topics,
        strict_encoding: on.strict_encoding,
    };
    Ok(session
        .run(
            &chosen,
            &specs,
            jobs,
            std::sync::Arc::new(SessionBars::default()),
        )
        .await?)
}
