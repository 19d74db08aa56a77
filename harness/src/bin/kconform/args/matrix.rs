//! The arguments of `kconform matrix`.

use std::path::PathBuf;
use std::time::Duration;

use super::{parse_duration, BackendArg};

/// `kconform matrix --help`: what the command does, its cells, its exit codes and an entry.
pub const LONG_ABOUT: &str = "Certify every broker of a brokers file against Apache, side by side, as a static site.

Each entry of the brokers file (`--brokers`, one `[[broker]]` each) is installed by its `install` command, started by its `command` on a port kconform gives it (`{port}`, its data in `{data_dir}`) or is a target kconform starts itself (`target = \"ref\"`, `\"apache@4.4\"`), and certified by `kconform certify` against each `--against`, judged by its own ledger (`ledger = \"FILE\"`; `\"built-in\"` for kaas's; none: every difference is undocumented). A broker whose documentation claims no transactions must advertise none (`transactions = \"none\"`): one that does is named for it. Each row's cells are one word each (identical, held, documented, wrong, informational, not served, could not start or run), by judge and by what users meet (exactly-once, read_committed, fencing, error codes); `informs = \"WHY\"` makes another Apache release's differences informational. Every run is kept under the site's `runs/`; a broker's page shows what changed between runs of one kconform version. Exit 0: no row with a failing cell; 1: one or more; 2: nothing ran, or an input was refused.

An entry:

    [[broker]]
    name = \"nafka\"
    version = \"0.1\"
    install = \"sh {brokers_dir}/install/nafka.sh\"
    command = \"{install_dir}/venv3.12/bin/python -m nafka --port {port}\"
    transactions = \"none\"";

/// The arguments of `kconform matrix`.
#[derive(Debug, clap::Args)]
pub struct MatrixArgs {
    /// The brokers file: one `[[broker]]` entry per broker (name, version, a `target` or a
    /// `command` with `{port}` and `{data_dir}`, `install`, `ledger`, `transactions`). The
    /// repository's is `matrix/brokers.toml`; `kconform matrix --help` and the book's Matrix
    /// chapter show an entry.
    #[arg(long, value_name = "FILE", default_value = "brokers.toml")]
    pub brokers: PathBuf,
    /// Only these brokers of the file (repeat, or comma-separated). Default: every one.
    #[arg(long = "broker", value_name = "NAME", value_delimiter = ',')]
    pub only: Vec<String>,
    /// What each broker is judged against (repeat): `apache` (3.7.2, the default),
    /// `apache@RELEASE`, or `apache-recorded` (3.7.2's recorded answers: the scenarios alone),
    /// each a row of its own per broker.
    #[arg(long = "against", value_name = "TARGET")]
    pub against: Vec<String>,
    /// The folder of the site: `index.html`, a page per broker, `matrix.json`, and every run
    /// kept under `runs/` (new runs are added; earlier ones stay, for the history).
    #[arg(long, value_name = "DIR", default_value = "kconform-matrix")]
    pub site: PathBuf,
    /// The time each broker's certification may take (certify's `--budget`), e.g. 5m.
    /// Default: certify's own (workloads 120 s, chaos and fuzz 60 s each).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub budget: Option<Duration>,
    /// Only these judges, comma-separated (certify's `--judge`).
    #[arg(long = "judge", value_delimiter = ',', value_parser = kconform::report::gate::Judge::parse)]
    pub judges: Vec<kconform::report::gate::Judge>,
    /// Leave these judges out, comma-separated (certify's `--skip`).
    #[arg(long, value_delimiter = ',', value_parser = kconform::report::gate::Judge::parse)]
    pub skip: Vec<kconform::report::gate::Judge>,
    /// Build the site from the runs kept under the site's `runs/`, running nothing.
    #[arg(long)]
    pub site_only: bool,
    /// How `apache` is launched (see `kconform run --help`).
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub apache_backend: BackendArg,
}
