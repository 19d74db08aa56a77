//! The arguments of `kconform fuzz` and its subcommands.

use std::path::PathBuf;
use std::time::Duration;

use super::*;

/// `kconform fuzz --mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FuzzMode {
    /// Stateful differential fuzzing against the oracle.
    Sequences,
    /// Live-wire fuzzing of the target's decoders.
    Frames,
    /// Both at once (the sequences wait on the brokers; the frames use the cores meanwhile).
    Both,
}

/// What `kconform fuzz` does instead of a run.
#[derive(Debug, clap::Subcommand)]
pub enum FuzzCommand {
    /// Fold the findings directories of many runs (the shards of one seed, nights of
    /// fuzzing) into one: each finding kept once (by its signature), each shard's place kept
    /// (`--resume --shard K/N --findings INTO` goes on from there), the fragments and ledger
    /// the findings replay with copied along.
    Merge(MergeArgs),
    /// Write a cargo-fuzz crate into your decoder crate (`fuzz-apache/`): one target that
    /// holds your decoders of the six transaction APIs to Apache's verdict on every input
    /// (kconform-wire's check: panics, allocations past a bound, accepting what Apache's parser
    /// refuses or refusing what it reads, values that differ), and a seed corpus of a valid
    /// message of every API, direction and version. You fill in one function, `decode`; then
    /// `cargo fuzz run --fuzz-dir fuzz-apache decoders_against_apache`.
    InitDecoders(InitDecodersArgs),
}

/// The arguments of `kconform fuzz init-decoders`.
#[derive(Debug, clap::Args)]
pub struct InitDecodersArgs {
    /// The crate (the folder of its Cargo.toml) whose decoders are fuzzed.
    #[arg(long = "crate", value_name = "PATH")]
    pub krate: PathBuf,
    /// How the fuzz crate's manifest names kconform-wire, as the inside of a Cargo
    /// dependency table: `path = "../kconform/kconform-wire"` or `git = "URL"`. Default: the
    /// kconform-wire this kconform was built from, by path, when it is still there.
    #[arg(long, value_name = "SPEC")]
    pub wire_dep: Option<String>,
    /// Write over files of the skeleton that are already there (your `decode` with them).
    #[arg(long)]
    pub force: bool,
}

/// The arguments of `kconform fuzz merge`.
#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// The directory the findings are merged into (created if need be; findings already
    /// there count as found).
    #[arg(long, value_name = "DIR")]
    pub into: PathBuf,
    /// The findings directories of the runs.
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
}

/// The arguments of `kconform fuzz`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct FuzzArgs {
    /// `kconform fuzz merge`, instead of a run.
    #[command(subcommand)]
    pub then: Option<FuzzCommand>,
    /// The target under test: ref, ref:N, build=PATH (a kaas build kconform starts, restarts
    /// when it dies and keeps the log of, which signs its crashes; with --instances N, N of them
    /// beside each other), external=HOST:PORT...
    #[arg(long, default_value = "ref")]
    pub target: String,
    /// The oracle: apache (kept up by `kconform apache up`, else launched); `none` with
    /// `--mode frames` (closes on well-formed frames are then judged by the schema alone).
    #[arg(long, default_value = "apache", value_parser = parse_oracle)]
    pub oracle: String,
    /// What to fuzz: `sequences` (stateful, against the oracle), `frames` (the target's
    /// decoders, live: mutated request frames of the six APIs, each finding saved as a raw
    /// frame `frame-*.bin` that `kconform replay-frame` sends again), or `both` at once.
    #[arg(long, value_enum, default_value_t = FuzzMode::Both)]
    pub mode: FuzzMode,
    /// Go on from where the last run into the same findings directory stopped (its seed
    /// and the next sequence and frame), instead of drawing the same inputs again.
    #[arg(long)]
    pub resume: bool,
    /// Draw only the K-th of every N inputs of the seed (sequences and frames), so that N
    /// machines given the same --seed and K = 1..N together draw what one run would, none
    /// twice; `kconform fuzz merge` folds their findings into one directory.
    #[arg(long, value_name = "K/N", default_value = "1/1")]
    pub shard: kconform::fuzz::shard::Shard,
    /// Draw only the sequences numbered below N (a shard its share of them), then end: a
    /// fixed set of inputs, whatever the brokers' speed (the duration still bounds the run).
    #[arg(long, value_name = "N")]
    pub sequences: Option<u64>,
    /// How long: 90s, 10m, 8h (or seconds).
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub duration: Duration,
    /// The seed (default: from the clock, printed so the run can be repeated).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Where findings are written; findings already there are not written again.
    #[arg(long, default_value = "kconform-findings", value_name = "DIR")]
    pub findings: PathBuf,
    /// The most actions a sequence has (after the set-up).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub max_actions: u64,
    /// The most runs spent shrinking one finding.
    #[arg(long, default_value_t = 40)]
    pub shrink_runs: usize,
    /// Sequences run at once (they share the brokers, each with its own names and topic); most
    /// of a sequence's time is waiting on the brokers, so more than the cores pay (on two cores
    /// against Apache: 16, 55 sequences/s beside the frames; with --mode sequences, 32: 98).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub jobs: u64,
    /// End once this many new findings are written.
    #[arg(long, value_name = "N")]
    pub stop_after_findings: Option<usize>,
    /// Deadline for every network wait, in milliseconds.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub deadline_ms: u64,
    /// A shell command that brings the target back after it stops answering (`systemctl
    /// restart kaas`, `kubectl delete pod kaas-0`, a script): kconform runs it, waits until
    /// the broker answers ApiVersions, pins the frame that crashed it (restarting it again as
    /// it replays the suspects) and goes on. A new finding of any kind is also sent again to a
    /// broker restarted so before it is written. Without it (or --broker-cmd) the run ends at
    /// the first crash, its frames in flight saved as suspects.
    #[arg(long, value_name = "CMD", conflicts_with = "broker_cmd")]
    pub restart_cmd: Option<String>,
    /// A shell command that starts the broker under test, which kconform then owns: started
    /// before the run (with kconform's environment), its output kept as the broker's log in
    /// DIR/broker.log (DIR being --findings; rotated to broker.log.1 past 64 MiB), killed (its
    /// process group) and started again whenever it stops answering, and to verify each new
    /// finding. Needs --target external=HOST:PORT, where it listens.
    ///
    /// It may name where to listen and keep its files: `{port}`, `{data_dir}` (a folder of
    /// its own under DIR, made for it) and `{instance}` (0, 1, ...) are replaced before it
    /// runs, which --instances needs.
    #[arg(long, value_name = "CMD")]
    pub broker_cmd: Option<String>,
    /// Run N instances of --broker-cmd (or of --target build=PATH, each a kaas build kconform
    /// starts on an address of its own, restarts and keeps the log of) beside each other
    /// (instance i of --broker-cmd listening on the port of --target plus i, its log
    /// DIR/broker-<i>.log) and spread the frames' connections over them: a crash stops one
    /// instance's connections while the others go on, and its pinning restarts that instance
    /// alone. Worth it where a restart takes seconds; the machine decides N (each instance is
    /// a broker). --broker-cmd must hold {port}.
    #[arg(long = "instances", alias = "brokers", value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub brokers: u16,
    /// The broker's log (with --restart-cmd): what it said as it died (a panic, an
    /// allocation failure, an abort) signs its crashes, so that one defect is one finding.
    #[arg(long, value_name = "FILE", requires = "restart_cmd")]
    pub broker_log: Option<PathBuf>,
    /// How long to wait for a restarted broker to answer ApiVersions.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub restart_wait: Duration,
    #[command(flatten)]
    pub scenarios: ScenarioArgs,
    /// How `--oracle apache` launches Apache (see `kconform run --help`).
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub apache_backend: BackendArg,
    #[command(flatten)]
    pub gate: BaselineArgs,
    #[command(flatten)]
    pub files: ReportFiles,
    /// Write the run as one self-contained HTML page to FILE: the figures, each finding by
    /// defect with its scenario file or its frame in hex, what matters, where it was seen, the
    /// broker's last words and the replay command.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// `--oracle`: `apache` (or `apache@RELEASE`, `apache:N`...: an Apache target) or `none`;
/// anything else is refused with these two, not with every form a target may take.
fn parse_oracle(text: &str) -> Result<String, String> {
    match text == "none" || text.starts_with("apache") {
        true => Ok(text.to_owned()),
        false => Err(format!(
            "the oracle is apache (apache@RELEASE for another release) or none, not '{text}'"
        )),
    }
}
