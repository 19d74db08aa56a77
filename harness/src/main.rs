//! `kconform`: a thin binary over the `kconform` library.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use kconform::ledger::{Ledger, Verdict};
use kconform::runner::{self, Transcript};
use kconform::scenario::Scenario;
use kconform::target::{Running, TargetSpec};

/// Conformance harness for the Kafka transaction APIs: runs scenarios against brokers and
/// shows how their answers differ.
#[derive(Debug, Parser)]
#[command(name = "kconform", version)]
struct Cli {
    /// Directory of scenario files.
    #[arg(long, default_value = "scenarios", global = true)]
    scenarios: PathBuf,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run scenarios (all, or those named) against each target.
    Run {
        /// Scenario names (file stems); all when none.
        names: Vec<String>,
        /// Target: `ref` (the bundled kaas-ref, in process), `apache` (a real Apache Kafka 3.7
        /// launched as a JVM: needs java and mvn; jars are cached) or `external=HOST:PORT`.
        /// Repeat for several; default `ref`.
        #[arg(long = "target")]
        targets: Vec<String>,
        /// Print each transcript.
        #[arg(long)]
        show: bool,
        /// Deadline for every network wait, in milliseconds.
        #[arg(long, default_value_t = 10_000)]
        deadline_ms: u64,
    },
    /// List the scenarios.
    List,
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
    match run(cli).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("kconform: could not run: {e:#}");
            ExitCode::from(2)
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let scenarios = Scenario::load_dir(&cli.scenarios)?;
    match cli.command {
        Command::List => {
            for s in &scenarios {
                println!("{:40} {}", s.name, s.description);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Run {
            names,
            targets,
            show,
            deadline_ms,
        } => {
            let chosen: Vec<&Scenario> = scenarios
                .iter()
                .filter(|s| names.is_empty() || names.contains(&s.name))
                .collect();
            if let Some(missing) = names
                .iter()
                .find(|n| !scenarios.iter().any(|s| &s.name == *n))
            {
                anyhow::bail!(
                    "no scenario named '{missing}' in {}",
                    cli.scenarios.display()
                );
            }
            let specs = match targets.is_empty() {
                true => vec![TargetSpec::Ref],
                false => targets
                    .iter()
                    .map(|t| TargetSpec::parse(t))
                    .collect::<Result<_, _>>()?,
            };
            let deadline = Duration::from_millis(deadline_ms);
            let mut failures = 0;
            let mut transcripts: Vec<Vec<Transcript>> = Vec::new();
            for spec in &specs {
                eprintln!("starting target {}", spec.name());
                let target = Running::start(spec).await?;
                let mut per_target = Vec::new();
                for s in &chosen {
                    let t = runner::run(s, &target, deadline).await?;
                    let status = match t.failed_expectations.is_empty() {
                        true => "ok".to_owned(),
                        false => {
                            failures += 1;
                            format!("FAILED: {}", t.failed_expectations.join("; "))
                        }
                    };
                    println!(
                        "{:40} {:10} {:3} steps  {status}",
                        s.name,
                        target.name,
                        t.steps.len()
                    );
                    if show {
                        println!("{}", serde_json::to_string_pretty(&t)?);
                    }
                    per_target.push(t);
                }
                target.stop().await;
                transcripts.push(per_target);
            }
            if transcripts.len() >= 2 {
                let ledger = Ledger::load(&cli.scenarios.join("deviations.toml"))?;
                let mut rows = Vec::new();
                for (a, b) in transcripts[0].iter().zip(&transcripts[1]) {
                    for row in runner::diff(a, b) {
                        let verdict = ledger.classify(&row);
                        let label = match &verdict {
                            Verdict::Documented(id) => format!("DOCUMENTED {id}"),
                            Verdict::Undocumented => {
                                failures += 1;
                                "UNDOCUMENTED".to_owned()
                            }
                        };
                        println!(
                            "{label:45} {} {} {}: {} {} | {} {}",
                            row.scenario,
                            row.step,
                            row.path,
                            a.target,
                            row.left,
                            b.target,
                            row.right
                        );
                        rows.push((row, verdict));
                    }
                }
                let ran: Vec<String> = chosen.iter().map(|s| s.name.clone()).collect();
                for (id, scenario) in ledger.stale(&ran, &rows) {
                    failures += 1;
                    println!("STALE {id}: documented in {scenario}, but it did not show");
                }
            }
            Ok(match failures {
                0 => ExitCode::SUCCESS,
                _ => ExitCode::from(1),
            })
        }
    }
}
