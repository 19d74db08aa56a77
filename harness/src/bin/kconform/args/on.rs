//! Where a command runs: the scenarios it reads (built in, or a folder of one's own over
//! them) and the targets it runs them on, with how it reaches them.

use std::path::PathBuf;

use kconform::data::Source;

use super::BackendArg;

/// Where the scenarios come from.
#[derive(Debug, Clone, clap::Args)]
pub struct ScenarioArgs {
    /// A directory of scenarios of one's own, added to those built into kconform: a scenario
    /// file there joins the suite (one of a built-in name stands for it), and a
    /// deviations.toml, field-classes.toml, peers-allowlist.toml or fragments/FILE there
    /// stands for the built-in one; what it lacks is the built-in one's. Default: the built-in
    /// suite alone, so kconform works from any directory.
    #[arg(long, value_name = "DIR")]
    pub scenarios: Option<PathBuf>,
    /// The scenarios of --scenarios DIR alone, and its files alone (each must be there):
    /// the built-in suite left out.
    #[arg(long, requires = "scenarios")]
    pub no_built_in_scenarios: bool,
}

impl TargetArgs {
    /// The flags of `scenarios` and these that change what a scenario finds, as a shell
    /// takes them, for the `kconform repro` a report prints (the targets are the report's).
    pub fn repro_flags(&self, scenarios: &ScenarioArgs) -> Vec<String> {
        let quoted = |s: &str| match s
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-=:@+".contains(&b))
        {
            true => s.to_owned(),
            false => format!("'{}'", s.replace('\'', "'\\''")),
        };
        let mut flags = Vec::new();
        if let Some(dir) = &scenarios.scenarios {
            flags.push(format!(
                "--scenarios {}",
                quoted(&dir.display().to_string())
            ));
        }
        if scenarios.no_built_in_scenarios {
            flags.push("--no-built-in-scenarios".into());
        }
        if let Some(dir) = &self.snapshots {
            flags.push(format!(
                "--snapshots {}",
                quoted(&dir.display().to_string())
            ));
        }
        for cmd in &self.fault_cmds {
            flags.push(format!("--fault-cmd {}", quoted(cmd)));
        }
        let switches = [
            (self.provisioned_topics, "--provisioned-topics"),
            (self.strict_encoding, "--strict-encoding"),
            (self.stop_at_malformed, "--stop-at-malformed"),
        ];
        flags.extend(
            switches
                .iter()
                .filter(|(on, _)| *on)
                .map(|(_, f)| f.to_string()),
        );
        if self.deadline_ms != kconform::run::DEADLINE.as_millis() as u64 {
            flags.push(format!("--deadline-ms {}", self.deadline_ms));
        }
        flags
    }
}

impl ScenarioArgs {
    /// The scenarios' source: the directory given, else those built in.
    pub fn source(&self) -> Source {
        match (&self.scenarios, self.no_built_in_scenarios) {
            (Some(dir), true) => Source::Dir(dir.clone()),
            (dir, _) => Source::scenarios(dir.as_deref()),
        }
    }
}

/// The brokers a command runs on, and how it reaches them.
#[derive(Debug, Clone, clap::Args)]
pub struct TargetArgs {
    /// A target: `ref` (the bundled kaas-ref, in process), `apache` (a real Apache Kafka 3.7.2,
    /// the release kaas claims parity with: the one `kconform apache up` keeps, else one
    /// launched by --apache-backend), `apache@RELEASE` (another Apache, 3.7 to 4.4:
    /// `apache@4.4`, `apache@3.8.0`, `apache@4.4+tv2` for transaction.version 2),
    /// `apache-recorded` (Apache 3.7.2's recorded answers; `apache-recorded@4.4` and
    /// `apache-recorded@4.4+tv2` for 4.4.0's) or `external=HOST:PORT` (any running
    /// broker); `external:3=HOST:PORT` for a running cluster of three (any broker's address;
    /// the others are read from its Metadata), with --fault-cmd for the scenarios that do
    /// something to its brokers; `build:3=PATH` for the kaas binary at PATH run as a cluster
    /// of three processes with the Kubernetes API its cluster mode reads served by kconform
    /// (`kconform kaas up` runs one by hand). Repeat for several, each once. Default: ref and
    /// apache, or ref and apache-recorded where Apache cannot run (said so).
    #[arg(long = "target", value_name = "TARGET")]
    pub targets: Vec<String>,
    /// How to do a fault to a broker of an external cluster, as ACT=COMMAND (ACT: kill,
    /// restart, pause, resume, hold_markers or release_markers: the transaction markers sent
    /// to the broker held back while it serves on, then let through; fill_disk or free_disk:
    /// its disk full, every write failing, then freed), run with `sh -c` after
    /// `{node}` (the broker's node id) and `{addr}` (its HOST:PORT) are filled in: e.g.
    /// `pause='kubectl exec kaas-{node} -- kill -STOP 1'`. Repeat for each act. A restart or
    /// resume then waits until the broker is back in sync. The cluster scenarios that need an act given no command are left out, and
    /// said to be.
    #[arg(long = "fault-cmd", value_name = "ACT=COMMAND")]
    pub fault_cmds: Vec<String>,
    /// Directory of Apache's recorded answers, `<scenario>__apache.snap` (another release's:
    /// `<scenario>__apache@4.4.0-tv2.snap`) (default: the ones built into this kconform).
    #[arg(long, value_name = "DIR")]
    pub snapshots: Option<PathBuf>,
    /// Run the scenarios written for a cluster of N brokers, on ref:N and apache:N (or
    /// apache-recorded:N) unless --target names others. Default: one broker.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(2..=9))]
    pub brokers: Option<u64>,
    /// Run the security scenarios (SASL logins and ACLs) on ref+sasl and apache+sasl (or
    /// apache-recorded+sasl) unless --target names others.
    #[arg(long)]
    pub sasl: bool,
    /// Deadline for every network wait, in milliseconds (Apache's request.timeout.ms, 30 s,
    /// and 5 s more: Apache may hold an answer back that long).
    #[arg(long, default_value_t = kconform::run::DEADLINE.as_millis() as u64, value_parser = clap::value_parser!(u64).range(1..))]
    pub deadline_ms: u64,
    /// Use provisioned topics on every live target (the topics `kconform topics` lists, created
    /// beforehand) instead of creating them; a target that refuses CreateTopics gets them
    /// anyway. Offsets are then read relative to where each scenario began, so records earlier
    /// runs left change no verdict.
    #[arg(long)]
    pub provisioned_topics: bool,
    /// Fail on answers that Apache's parser reads but no canonical encoder writes (a tagged
    /// field at its default, an unknown tag, a varint longer than it needs): reported as
    /// "non-canonical encoding", never as malformed. Off, they are encoding notes, shown by
    /// --show and repro and kept in the JSON transcripts.
    #[arg(long)]
    pub strict_encoding: bool,
    /// Stop a scenario at an answer whose only defect is its response header's version (v1
    /// where v0 is due, or the other way), as at any malformed answer. By default such an
    /// answer is recorded as malformed, read under the other version, and the scenario goes on,
    /// its later steps judged as usual: one framing defect hides no transaction behaviour.
    #[arg(long)]
    pub stop_at_malformed: bool,
    /// Clusters kconform starts (ref:N, build:N; a build's start one after another) to share
    /// the scenarios that kill or pause brokers out over, each copy running its share one after
    /// the other: their waits pass side by side. Default 1: one cluster.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=8))]
    pub lanes: u64,
    /// How `--target apache` launches Apache when `kconform apache up` is not running one:
    /// `container` (the apache/kafka image; needs Docker), `jvm` (needs java and mvn), or
    /// `auto` (the container when a Docker engine answers, else the JVM).
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub apache_backend: BackendArg,
}
