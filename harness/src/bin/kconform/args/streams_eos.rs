//! The arguments of `kconform streams-eos`.

use std::path::PathBuf;
use std::time::Duration;

use super::{parse_duration, BackendArg};

/// The arguments of `kconform streams-eos`.
#[derive(Debug, clap::Args)]
pub struct StreamsEosArgs {
    /// Targets: ref, ref:N, apache, apache:N, build=PATH, build:N=PATH or
    /// external:N=HOST:PORT (a fresh cluster: the programs' topics and group have fixed names).
    /// Default: ref and apache, Apache being the control.
    #[arg(long = "target", value_name = "TARGET")]
    pub targets: Vec<String>,
    /// The folder every program's properties and output go in, a folder per target (default:
    /// kconform-streams-eos-PID in the system's temporary folder). Printed at the end.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// How long each step may take: a program started or stopped, every processor RUNNING and
    /// processing again after one joined or was killed. Past it the run HANGs at that step.
    #[arg(long, default_value = "90s", value_parser = parse_duration, value_name = "DURATION")]
    pub step_deadline: Duration,
    /// How long the verifier may take (its own waits are ten minutes each).
    #[arg(long, default_value = "180s", value_parser = parse_duration, value_name = "DURATION")]
    pub verify_deadline: Duration,
    /// How `--target apache` launches Apache (see `kconform run --help`).
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub apache_backend: BackendArg,
    /// Write the report as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}
