//! The arguments of `kconform kaas`.

use std::path::PathBuf;

/// The arguments of `kconform kaas`.
#[derive(Debug, clap::Args)]
pub struct KaasArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: KaasAction,
}

/// What `kconform kaas` does.
#[derive(Debug, clap::Subcommand)]
pub enum KaasAction {
    /// Run a kaas build as a cluster in the foreground: N processes of the binary, each on a
    /// loopback address of its own, sharing one volume, made one cluster by a Kubernetes API
    /// kconform serves (a Lease, the EndpointSlices of its Service, its pods' status,
    /// KafkaTopics). Prints each broker's address, each endpoint's readiness and the
    /// controller Lease's holder as they change, and, when stopped (Ctrl-C), the requests the
    /// API did not serve. The same cluster
    /// `--target build:N=PATH` starts for a run.
    Up(KaasUpArgs),
}

/// The arguments of `kconform kaas up`.
#[derive(Debug, clap::Args)]
pub struct KaasUpArgs {
    /// The kaas binary (`target/release/kaas`; kaas-ref's runs the same way).
    #[arg(long, value_name = "PATH")]
    pub bin: PathBuf,
    /// How many brokers.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(1..=9))]
    pub brokers: u8,
    /// The topics the brokers are told of (KAAS_TOPICS): JSON, a file of it or the text
    /// itself, `[{"name": "t", "partitions": 3}]` (`kconform topics --json` prints what a run
    /// needs). Default: kconform's own KAAS_TOPICS, or none.
    #[arg(long, value_name = "JSON")]
    pub topics: Option<String>,
}
