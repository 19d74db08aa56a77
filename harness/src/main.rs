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
use kconform::apache::Backend;
use kconform::progress;
use kconform::report::Report;
use kconform::scenario::Scenario;
use kconform::target::TargetSpec;

/// Conformance harness for the Kafka transaction APIs: runs scenarios against brokers and
/// shows how their answers differ.
#[derive(Debug, Parser)]
#[command(name = "kconform", version)]
struct Cli {
    /// Directory of scenario files (and deviations.toml).
    #[arg(long, default_value = "scenarios", global = true)]
    scenarios: PathBuf,
    /// Directory of the insta snapshots (Apache's recorded answers among them).
    #[arg(long, default_value = "snapshots", global = true)]
    snapshots: PathBuf,
    /// Deadline for every network wait, in milliseconds.
    #[arg(long, default_value_t = 10_000, global = true, value_parser = clap::value_parser!(u64).range(1..))]
    deadline_ms: u64,
    /// Use provisioned topics on every live target (the topics `kconform topics` lists, created
    /// beforehand) instead of creating them; a target that refuses CreateTopics gets them
    /// anyway. Offsets are then read relative to where each scenario began, so records earlier
    /// runs left change no verdict.
    #[arg(long, global = true)]
    provisioned_topics: bool,
    /// How `--target apache` launches Apache when `kconform apache up` is not running one:
    /// `container` (the apache/kafka image; needs Docker), `jvm` (needs java and mvn), or
    /// `auto` (the container when a Docker engine answers, else the JVM).
    #[arg(long, value_enum, default_value_t = Backend::Auto, global = true)]
    apache_backend: Backend,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ApacheAction {
    Up,
    Down,
    Status,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run scenarios (all, or those named) against each target; with two targets, diff them
    /// and classify every difference against the ledger.
    Run {
        /// Scenario names (file stems); all when none.
        names: Vec<String>,
        /// Target: `ref` (the bundled kaas-ref, in process), `apache` (a real Apache Kafka 3.7
        /// launched as a JVM: needs java and mvn; jars are cached) or `external=HOST:PORT`.
        /// Repeat for several; default `ref`, plus `apache` when Java and Maven are present.
        #[arg(long = "target")]
        targets: Vec<String>,
        /// Print each transcript.
        #[arg(long)]
        show: bool,
        /// Scenarios run at once on each target (they make their names unique, so they share
        /// the broker).
        #[arg(long, default_value_t = 4)]
        jobs: usize,
        /// Also run the scenarios marked slow (minutes each; epoch overflow).
        #[arg(long)]
        include_slow: bool,
        #[command(flatten)]
        files: ReportFiles,
    },
    /// One scenario on two targets, transcripts in full, each difference with its ledger entry
    /// or "undocumented".
    Repro {
        /// Scenario name.
        name: String,
        /// Targets (default: ref and apache).
        #[arg(long = "target")]
        targets: Vec<String>,
    },
    /// Run every scenario and print, per target, the (API, version, error code) cells the
    /// transaction APIs produced, then the codes each API can return that no scenario reached.
    Coverage {
        /// Targets (default: as for `run`).
        #[arg(long = "target")]
        targets: Vec<String>,
        /// Also write the table to this Markdown file.
        #[arg(long, value_name = "PATH")]
        markdown: Option<PathBuf>,
        /// Also run the scenarios marked slow.
        #[arg(long)]
        include_slow: bool,
        /// Scenarios run at once on each target.
        #[arg(long, default_value_t = 4)]
        jobs: usize,
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
        /// The allowlist (default <scenarios>/peers-allowlist.toml).
        #[arg(long, value_name = "PATH")]
        allowlist: Option<PathBuf>,
        #[command(flatten)]
        files: ReportFiles,
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
        /// add-one:PATH, correlation, close or stall. PATH is a field as
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
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List the scenarios.
    List,
    /// Keep one Apache broker running between runs (`up`), stop it (`down`), or say whether it
    /// runs (`status`). While it is up, `--target apache` uses it instead of starting one.
    Apache {
        /// up, down or status.
        #[arg(value_enum)]
        action: ApacheAction,
    },
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    // Ctrl-C drops the run, and with it the brokers it started (the JVM is stopped, the
    // container removed) before exiting.
    let outcome = tokio::select! {
        outcome = run(cli) => outcome,
        _ = tokio::signal::ctrl_c() => {
            eprintln!("kconform: interrupted");
            return ExitCode::from(130);
        }
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

/// The targets to run: those given, or ref plus Apache: live when a broker is up or a backend
/// can start one, else its recorded answers (said so, with the reason).
fn specs(targets: &[String], backend: Backend) -> anyhow::Result<Vec<TargetSpec>> {
    let with_backend = |spec: TargetSpec| match spec {
        TargetSpec::Apache(_) => TargetSpec::Apache(backend),
        other => other,
    };
    if targets.is_empty() {
        if kconform::apache::daemon::running().is_some() {
            return Ok(vec![TargetSpec::Ref, TargetSpec::Apache(backend)]);
        }
        return Ok(match backend.usable() {
            Ok(()) => vec![TargetSpec::Ref, TargetSpec::Apache(backend)],
            Err(why) => {
                eprintln!(
                    "kconform: no live Apache ({why}); comparing against Apache's recorded answers instead"
                );
                vec![TargetSpec::Ref, TargetSpec::Recorded]
            }
        });
    }
    Ok(targets
        .iter()
        .map(|t| TargetSpec::parse(t).map(with_backend))
        .collect::<Result<_, _>>()?)
}

/// `kconform apache up|down|status`.
fn apache_command(action: ApacheAction) -> anyhow::Result<ExitCode> {
    use kconform::apache::daemon;
    match action {
        ApacheAction::Up => {
            let spinner = progress::starting("Apache (kept up)");
            let result = daemon::up();
            spinner.finish_and_clear();
            let (d, started) = result?;
            println!(
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
                true => println!("Apache stopped"),
                false => println!("no Apache was up"),
            }
            Ok(ExitCode::SUCCESS)
        }
        ApacheAction::Status => match daemon::running() {
            Some(d) => {
                println!(
                    "up: Apache Kafka {} at {} (pid {}, log {})",
                    d.version,
                    d.addr,
                    d.pid,
                    daemon::dir().join("broker.log").display()
                );
                Ok(ExitCode::SUCCESS)
            }
            None => {
                println!("down");
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
    let running = kconform::target::Running::start(&target).await?;
    let scope = match (api.as_deref(), version, mutation) {
        (Some("all"), None, Some(mutation)) => Scope::AllBut(mutation),
        (Some("all"), Some(_), _) => {
            anyhow::bail!("--api all changes every version: drop --version")
        }
        (Some(api), Some(version), Some(mutation)) => {
            let key = kconform::request::api_key(api).ok_or_else(|| {
                anyhow::anyhow!(
                    "--api '{api}': kconform knows all, {}",
                    kconform::request::API_NAMES.join(", ")
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
    println!("{}", proxy.addr);
    eprintln!(
        "kconform: relaying {} to {} ({what}); Ctrl-C stops",
        proxy.addr, running.addr
    );
    std::future::pending::<()>().await;
    unreachable!("pending never completes")
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

impl Renders for Report {
    fn json(&self) -> String {
        Report::json(self)
    }
    fn junit(&self) -> String {
        Report::junit(self)
    }
    fn markdown(&self) -> String {
        Report::markdown(self)
    }
}

impl Renders for kconform::peers::report::PeersReport {
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

async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    if let Command::Apache { action } = cli.command {
        return apache_command(action);
    }
    if let Command::Proxy {
        upstream,
        listen,
        api,
        version,
        mutation,
    } = cli.command
    {
        return proxy_command(&upstream, listen, api, version, mutation).await;
    }
    if let Command::Peers {
        targets,
        run,
        records,
        timeout_secs,
        parallel,
        concurrent,
        floor_secs,
        allowlist,
        files,
    } = cli.command
    {
        let specs = specs(&targets, cli.apache_backend)?;
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
        let allowlist = allowlist.unwrap_or_else(|| cli.scenarios.join("peers-allowlist.toml"));
        let report = kconform::peers::run(
            &specs,
            &options,
            &allowlist,
            std::sync::Arc::new(PeerBars::default()),
        )
        .await?;
        print!("{}", report.terminal());
        files.write(&report)?;
        return Ok(match report.passed() {
            true => ExitCode::SUCCESS,
            false => ExitCode::from(1),
        });
    }
    let scenarios = Scenario::load_dir(&cli.scenarios)?;
    let session = kconform::session::Session {
        dir: &cli.scenarios,
        snapshots: &cli.snapshots,
        deadline: Duration::from_millis(cli.deadline_ms),
        provisioned_topics: cli.provisioned_topics,
    };
    let pick = |names: &[String]| -> anyhow::Result<Vec<&Scenario>> {
        if let Some(missing) = names
            .iter()
            .find(|n| !scenarios.iter().any(|s| &s.name == *n))
        {
            anyhow::bail!(
                "no scenario named '{missing}' in {}",
                cli.scenarios.display()
            );
        }
        Ok(scenarios
            .iter()
            .filter(|s| names.is_empty() || names.contains(&s.name))
            .collect())
    };
    match cli.command {
        Command::Apache { .. } | Command::Peers { .. } | Command::Proxy { .. } => {
            unreachable!("handled before the scenarios load")
        }
        Command::Topics { names, json } => {
            let chosen = pick(&names)?;
            let needed = kconform::topics::needed(&chosen);
            match json {
                true => println!("{}", serde_json::to_string_pretty(&needed)?),
                false => {
                    for t in &needed {
                        let configs: Vec<String> =
                            t.configs.iter().map(|(k, v)| format!("{k}={v}")).collect();
                        println!("{} {} {}", t.name, t.partitions, configs.join(","));
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::List => {
            for s in &scenarios {
                println!("{:45} {}", s.name, s.description);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Run {
            names,
            targets,
            show,
            files,
            jobs,
            include_slow,
        } => {
            let chosen = without_slow(pick(&names)?, &names, include_slow);
            let specs = specs(&targets, cli.apache_backend)?;
            let (report, all) = session.run(&chosen, &specs, jobs).await?;
            if show {
                for t in all.iter().flatten() {
                    println!("{}", serde_json::to_string_pretty(t)?);
                }
            }
            print!("{}", report.terminal());
            if report.targets.len() < 2 {
                println!("(one target: nothing compared)");
            }
            files.write(&report)?;
            Ok(verdict(&report))
        }
        Command::Coverage {
            targets,
            markdown,
            include_slow,
            jobs,
        } => {
            let chosen = without_slow(pick(&[])?, &[], include_slow);
            let specs = specs(&targets, cli.apache_backend)?;
            let (report, all) = session.run(&chosen, &specs, jobs).await?;
            let mut coverage = kconform::coverage::Coverage::default();
            all.iter().flatten().for_each(|t| coverage.add(t));
            let table = coverage.markdown();
            println!("{table}");
            if let Some(path) = markdown {
                std::fs::write(&path, &table)
                    .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
            }
            if !report.passed() {
                print!("{}", report.terminal());
            }
            Ok(verdict(&report))
        }
        Command::Repro { name, targets } => {
            let chosen = pick(std::slice::from_ref(&name))?;
            let specs = match targets.is_empty() {
                true => specs(&[], cli.apache_backend)?,
                false => specs(&targets, cli.apache_backend)?,
            };
            if specs.len() != 2 {
                anyhow::bail!("repro compares exactly two targets");
            }
            let (report, all) = session.run(&chosen, &specs, 1).await?;
            let (a, b) = (&all[0][0], &all[1][0]);
            for (i, l) in a.steps.iter().enumerate() {
                let r = b.steps.get(i);
                println!(
                    "── {} ({} v{})",
                    l.step,
                    l.api,
                    l.version.map_or("-".into(), |v| v.to_string())
                );
                println!("  {:8} {}", a.target, serde_json::to_string(&l.outcome)?);
                if let Some(r) = r {
                    println!("  {:8} {}", b.target, serde_json::to_string(&r.outcome)?);
                }
                for d in report.differences.iter().filter(|d| d.row.step == l.step) {
                    println!(
                        "  ≠ {}: {} | {}  → {}",
                        d.row.path,
                        d.row.left,
                        d.row.right,
                        d.documented_by.as_deref().unwrap_or("undocumented")
                    );
                }
            }
            print!("{}", report.terminal());
            Ok(verdict(&report))
        }
    }
}
