//! The arguments of `kconform certify`.

use std::path::PathBuf;
use std::time::Duration;

use super::*;

/// The arguments of `kconform certify`.
#[derive(Debug, clap::Args)]
pub struct CertifyArgs {
    /// The broker to certify: `build:3=PATH` (a kaas build kconform runs as a cluster of
    /// three), `build=PATH`, `ref`, `ref:3`, `external=HOST:PORT` or `external:3=HOST:PORT`.
    #[arg(long, value_name = "TARGET")]
    pub target: String,
    /// What it is judged against: `apache` (a live Apache Kafka 3.7.2), `apache@RELEASE` or
    /// `apache-recorded` (3.7.2's recorded answers: the client workloads then cannot run).
    /// Default: a live Apache where one can run here, else its recorded answers (said so).
    #[arg(long, value_name = "TARGET")]
    pub against: Option<String>,
    /// Only these judges, comma-separated: scenarios, cluster-scenarios, clients, chaos, fuzz,
    /// peers (peers runs only when named). Default: every judge that applies to the target.
    #[arg(long = "judge", value_delimiter = ',', value_parser = kconform::report::gate::Judge::parse)]
    pub judges: Vec<kconform::report::gate::Judge>,
    /// Leave these judges out, comma-separated.
    #[arg(long, value_delimiter = ',', value_parser = kconform::report::gate::Judge::parse)]
    pub skip: Vec<kconform::report::gate::Judge>,
    /// The time the whole may take: 10m, 600s. The scenarios run whole; each client workload
    /// is given up sooner (what is left over the workloads a client runs, 60 to 120 s); chaos
    /// and fuzz get what is left after them (chaos two thirds), or their shortest run (20 and
    /// 10 s), said so, when the budget is spent. Default: no budget (workloads 120 s, chaos and fuzz 60 s each).
    #[arg(long, value_parser = parse_duration)]
    pub budget: Option<Duration>,
    #[command(flatten)]
    pub gate: super::BaselineArgs,
    /// Write the certificate as one self-contained HTML page, each judge's own page within it.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// The seed of chaos's fault schedule and of the fuzzer's frames (fixed, so that two
    /// certifications of one build draw the same).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where the fuzzer writes its findings (frames to replay): default
    /// `kconform-certify/fuzz` in the current directory.
    #[arg(long, value_name = "DIR", default_value = "kconform-certify/fuzz")]
    pub findings: PathBuf,
    #[command(flatten)]
    pub scenarios: ScenarioArgs,
    /// How `apache` is launched (see `kconform run --help`).
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub apache_backend: BackendArg,
    #[command(flatten)]
    pub files: ReportFiles,
}
