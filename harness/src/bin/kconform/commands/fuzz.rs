//! `kconform fuzz`: stateful differential sequences and live-wire frames against a target. The
//! run itself is the library's (`kconform::fuzz::campaign`); this starts the targets behind a
//! spinner, turns Ctrl-C into an orderly end with the summary, and prints the report.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use kconform::fuzz::campaign::{self, Campaign, Mode};
use kconform::fuzz::wire::keeper::{Keeper, Revive};
use kconform::fuzz::FuzzOptions;

use crate::args::{FuzzArgs, FuzzCommand};
use crate::progress::{self, Bars};

/// `kconform fuzz merge` and `kconform fuzz init-decoders`.
fn subcommand(then: &FuzzCommand) -> anyhow::Result<ExitCode> {
    match then {
        FuzzCommand::Merge(m) => {
            let merged = kconform::fuzz::merge::merge(&m.into, &m.dirs)?;
            out!("{}", merged.summary(&m.into));
        }
        FuzzCommand::InitDecoders(i) => {
            let written = kconform::fuzz::decoders::init(&i.krate, i.wire_dep.clone(), i.force)?;
            outln!("{}", written.summary());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `kconform fuzz`: exit 1 when it wrote new findings.
pub async fn run(a: FuzzArgs) -> anyhow::Result<ExitCode> {
    if let Some(then) = &a.then {
        return subcommand(then);
    }
    let mode: Mode = a.mode.into();
    let oracle = (a.oracle != "none").then_some(a.oracle.clone());
    campaign::check_oracle(mode, oracle.is_some())?;
    let start = campaign::start(&a.findings, a.resume, a.seed, a.shard)?;
    let named: Vec<String> = std::iter::once(a.target.clone()).chain(oracle).collect();
    let specs = super::targets(&named, a.apache_backend.into(), None, false)?;
    let mut keeper = keeper(&a, &specs[0])?;
    match a.shard.whole() {
        true => eprintln!("kconform: fuzzing with --seed {}", start.seed),
        false => eprintln!(
            "kconform: fuzzing with --seed {} --shard {}",
            start.seed, a.shard
        ),
    }
    let deadline = Duration::from_millis(a.deadline_ms);
    let options = options(&a, &start, deadline);
    let source = a.scenarios.source();
    let fuzzing = Campaign::new(mode, options, start.first_frame, &source)?;
    let names: Vec<String> = specs.iter().map(|s| s.name()).collect();
    if a.broker_cmd.is_some() {
        let spinner = progress::starting("the broker (--broker-cmd)");
        let started = keeper.start().await;
        spinner.finish_and_clear();
        started?;
    }
    let spinner = progress::starting(&names.join(" and "));
    let started = campaign::start_all(&specs, deadline).await;
    spinner.finish_and_clear();
    let running = started?;
    let bar = progress::starting("fuzzing");
    let line = Arc::new(Bars::with_counters(bar.clone()));
    let report = fuzzing
        .run(
            &running[0],
            running.get(1),
            &mut keeper,
            line,
            stop_on_ctrl_c(),
        )
        .await;
    bar.finish_and_clear();
    for t in running {
        t.stop().await;
    }
    keeper.stop().await;
    let report = report?;
    out!("{}", report.terminal());
    a.files.files().write(&report)?;
    if let Some(path) = &a.html {
        let page = kconform::fuzz::html::page(&report);
        std::fs::write(path, page).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(super::verdict(report.new_findings() == 0))
}

/// The run's options, from the arguments and where it starts.
fn options(a: &FuzzArgs, start: &campaign::Start, deadline: Duration) -> FuzzOptions {
    FuzzOptions {
        duration: a.duration,
        seed: start.seed,
        max_actions: a.max_actions as usize,
        findings: a.findings.clone(),
        deadline,
        shrink_runs: a.shrink_runs,
        jobs: a.jobs as usize,
        stop_after_findings: a.stop_after_findings,
        first_sequence: start.first_sequence,
        shard: a.shard,
        sequences: a.sequences,
    }
}

/// What brings the target back after a crash: the broker kconform owns (--broker-cmd), the
/// restart command, or nothing.
fn keeper(a: &FuzzArgs, target: &kconform::targets::TargetSpec) -> anyhow::Result<Keeper> {
    let addr = match (&a.broker_cmd, &a.restart_cmd, target.external_addr()) {
        (None, None, Some(addr)) => return Ok(Keeper::cannot(addr)),
        (None, None, None) => return Ok(Keeper::cannot(([127, 0, 0, 1], 0).into())),
        (_, _, Some(addr)) => addr,
        (_, _, None) => anyhow::bail!(
            "--broker-cmd and --restart-cmd need --target external=HOST:PORT (the address the broker listens on); {} is not one",
            a.target
        ),
    };
    Ok(match (&a.broker_cmd, &a.restart_cmd) {
        (Some(cmd), _) => {
            std::fs::create_dir_all(&a.findings)
                .with_context(|| format!("creating {}", a.findings.display()))?;
            Keeper::new(
                Revive::Own(cmd.clone()),
                addr,
                Some(a.findings.join("broker.log")),
                a.restart_wait,
            )
        }
        (None, Some(cmd)) => Keeper::new(
            Revive::Command(cmd.clone()),
            addr,
            a.broker_log.clone(),
            a.restart_wait,
        ),
        (None, None) => Keeper::cannot(addr),
    })
}

/// A flag Ctrl-C sets: the fuzzers then finish and the summary is printed.
fn stop_on_ctrl_c() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let on_ctrl_c = stop.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("kconform: interrupted; finishing with the summary");
            on_ctrl_c.store(true, Ordering::SeqCst);
        }
    });
    stop
}
