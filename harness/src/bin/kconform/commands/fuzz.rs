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
    let (mode, oracle) = mode_and_oracle(&a)?;
    let start = campaign::start(&a.findings, a.resume, a.seed, a.shard)?;
    let baseline = super::before_work(&a.gate, &a.files, a.html.as_ref())?;
    let named: Vec<String> = std::iter::once(a.target.clone()).chain(oracle).collect();
    let mut specs = super::targets(&named, a.apache_backend.into(), None, false)?;
    let build = build_of(&a, &specs[0])?;
    let (mut keeper, mut beside) = match &build {
        Some(bin) => build_keepers(&a, bin),
        None => (keeper(&a, &specs[0])?, beside(&a, &specs[0])?),
    };
    say_seed(&a, &start);
    let deadline = Duration::from_millis(a.deadline_ms);
    let options = options(&a, &start, deadline);
    let source = a.scenarios.source();
    let fuzzing = Campaign::new(mode, options, start.first_frame, &source)?;
    let names: Vec<String> = specs.iter().map(|s| s.name()).collect();
    if a.broker_cmd.is_some() || build.is_some() {
        start_brokers(a.brokers, &mut keeper, &mut beside).await?;
    }
    if build.is_some() {
        addressed(&mut specs[0], &keeper, &mut beside);
    }
    let spinner = progress::starting(&names.join(" and "));
    let started = campaign::start_all(&specs, deadline).await;
    let others = match started.is_ok() {
        true => reach(&beside).await,
        false => Ok(Vec::new()),
    };
    spinner.finish_and_clear();
    let (running, others) = (started?, others?);
    let instances = others
        .iter()
        .zip(beside.iter_mut())
        .map(|(target, (_, keeper))| kconform::fuzz::wire::Instance { target, keeper })
        .collect();
    let bar = progress::fuzzing(a.duration);
    let line = Arc::new(Bars::with_counters(bar.clone(), a.duration));
    let interrupted = stop_on_ctrl_c();
    let report = fuzzing
        .run(
            &running[0],
            running.get(1),
            &mut keeper,
            instances,
            line,
            interrupted.clone(),
        )
        .await;
    bar.finish_and_clear();
    stop_all(running.into_iter().chain(others), &mut keeper, &mut beside).await;
    let code = write(&a, &report?, baseline.as_ref())?;
    Ok(interrupted_or(&interrupted, code))
}

/// Interrupted: the summary and the files are written, and the exit says so (130, as a
/// shell's for Ctrl-C), whatever was found; else `code`.
fn interrupted_or(interrupted: &AtomicBool, code: ExitCode) -> ExitCode {
    match interrupted.load(Ordering::SeqCst) {
        true => ExitCode::from(130),
        false => code,
    }
}

/// The mode and the oracle asked for, refused where they do not go together.
fn mode_and_oracle(a: &FuzzArgs) -> anyhow::Result<(Mode, Option<String>)> {
    let mode: Mode = a.mode.into();
    if a.brokers > 1 && !mode.frames() {
        anyhow::bail!("--instances spreads the frames' connections over instances; --mode sequences sends no frames");
    }
    let oracle = (a.oracle != "none").then_some(a.oracle.clone());
    campaign::check_oracle(mode, oracle.is_some())?;
    Ok((mode, oracle))
}

/// Stops the targets and every broker kconform owns.
async fn stop_all(
    running: impl Iterator<Item = kconform::targets::Running>,
    keeper: &mut Keeper,
    beside: &mut [(std::net::SocketAddr, Keeper)],
) {
    for t in running {
        t.stop().await;
    }
    keeper.stop().await;
    for (_, k) in beside {
        k.stop().await;
    }
}

/// The seed (and shard) the run draws from, so that it can be repeated.
fn say_seed(a: &FuzzArgs, start: &campaign::Start) {
    match a.shard.whole() {
        true => note!("kconform: fuzzing with --seed {}", start.seed),
        false => note!(
            "kconform: fuzzing with --seed {} --shard {}",
            start.seed,
            a.shard
        ),
    }
}

/// The report on the terminal and in the files asked for; exit 1 when it wrote new findings.
fn write(
    a: &FuzzArgs,
    report: &kconform::fuzz::report::FuzzReport,
    baseline: Option<&kconform::report::baseline::Baseline>,
) -> anyhow::Result<ExitCode> {
    out!("{}", report.terminal());
    a.files.files().write(report)?;
    if let Some(path) = &a.html {
        let page = kconform::fuzz::html::page(report);
        std::fs::write(path, page).with_context(|| format!("writing {}", path.display()))?;
    }
    let passed = super::hold(
        &a.gate,
        baseline,
        kconform::report::gate::Judge::Fuzz,
        &report.gated(),
        report.new_findings() == 0,
    )?;
    Ok(super::verdict(passed))
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

/// The kaas build `--target build=PATH` names, which kconform starts and restarts itself;
/// refused in one line with another way to restart it, or as a cluster (its frames go to one
/// broker: `--instances N` runs instances beside each other).
fn build_of(
    a: &FuzzArgs,
    target: &kconform::targets::TargetSpec,
) -> anyhow::Result<Option<std::path::PathBuf>> {
    let kconform::targets::Kind::Build(bin) = &target.kind else {
        return Ok(None);
    };
    if target.brokers > 1 {
        anyhow::bail!("--target {}: the frames go to one broker; fuzz --target build={} --instances {} runs that many instances of it beside each other", a.target, bin.display(), target.brokers);
    }
    if a.broker_cmd.is_some() || a.restart_cmd.is_some() {
        anyhow::bail!("--target build=PATH: kconform starts and restarts the build itself; --broker-cmd and --restart-cmd are for a broker it does not start");
    }
    Ok(Some(bin.to_path_buf()))
}

/// The build listens where it was started: judged there as a broker of that address, each
/// instance beside it at its own.
fn addressed(
    target: &mut kconform::targets::TargetSpec,
    keeper: &Keeper,
    beside: &mut [(std::net::SocketAddr, Keeper)],
) {
    *target = kconform::targets::TargetSpec::external(keeper.addr());
    for (addr, k) in beside.iter_mut() {
        *addr = k.addr();
    }
}

/// Keepers of the build's instances (each a cluster of one kconform starts, restarts and
/// keeps the log of), their addresses known once started.
fn build_keepers(
    a: &FuzzArgs,
    bin: &std::path::Path,
) -> (Keeper, Vec<(std::net::SocketAddr, Keeper)>) {
    let unknown: std::net::SocketAddr = ([127, 0, 0, 1], 0).into();
    let keeper = || Keeper::new(Revive::Build(bin.into()), unknown, None, a.restart_wait);
    let beside = (1..a.brokers).map(|_| (unknown, keeper())).collect();
    (keeper(), beside)
}

/// Starts the broker kconform owns and the instances beside it, behind a spinner.
async fn start_brokers(
    brokers: u16,
    keeper: &mut Keeper,
    beside: &mut [(std::net::SocketAddr, Keeper)],
) -> anyhow::Result<()> {
    let what = match brokers {
        1 => "the broker".to_owned(),
        n => format!("{n} instances of the broker (--instances {n})"),
    };
    let spinner = progress::starting(&what);
    let mut started = keeper.start().await;
    for (_, k) in beside.iter_mut() {
        if started.is_ok() {
            started = k.start().await;
        }
    }
    spinner.finish_and_clear();
    Ok(started?)
}

/// The instances beside the first, as targets (each answered ApiVersions).
async fn reach(
    beside: &[(std::net::SocketAddr, Keeper)],
) -> anyhow::Result<Vec<kconform::targets::Running>> {
    let mut others = Vec::new();
    for (addr, _) in beside {
        let spec = kconform::targets::TargetSpec::external(*addr);
        others.push(kconform::targets::Running::start(&spec).await?);
    }
    Ok(others)
}

/// The instances of --broker-cmd past the first (--instances N): each one's address and its
/// keeper, refused in one line where the command cannot be told where to listen.
fn beside(
    a: &FuzzArgs,
    target: &kconform::targets::TargetSpec,
) -> anyhow::Result<Vec<(std::net::SocketAddr, Keeper)>> {
    if a.brokers == 1 {
        return Ok(Vec::new());
    }
    let Some(cmd) = &a.broker_cmd else {
        anyhow::bail!("--instances {} starts instances of --broker-cmd, which was not given (a broker kconform does not start cannot be run beside itself)", a.brokers);
    };
    if !cmd.contains("{port}") {
        anyhow::bail!("--instances {}: --broker-cmd must hold {{port}} (and {{data_dir}} for its files), or every instance would listen on one port", a.brokers);
    }
    let Some(first) = target.external_addr() else {
        anyhow::bail!("--instances needs --target external=HOST:PORT (the first instance's port)");
    };
    (1..a.brokers)
        .map(|i| {
            let port = first.port().checked_add(i).ok_or_else(|| {
                anyhow::anyhow!(
                    "--instances {}: port {} + {i} is past 65535",
                    a.brokers,
                    first.port()
                )
            })?;
            let addr = std::net::SocketAddr::new(first.ip(), port);
            let log = a.findings.join(format!("broker-{i}.log"));
            let how = Revive::Own(instance_cmd(a, cmd, i, port)?);
            Ok((addr, Keeper::new(how, addr, Some(log), a.restart_wait)))
        })
        .collect()
}

/// --broker-cmd for instance `i`, listening on `port`: its placeholders replaced, its data
/// folder (DIR/broker-<i>) made.
fn instance_cmd(a: &FuzzArgs, cmd: &str, i: u16, port: u16) -> anyhow::Result<String> {
    let data = a.findings.join(format!("broker-{i}"));
    if cmd.contains("{data_dir}") {
        std::fs::create_dir_all(&data).with_context(|| format!("creating {}", data.display()))?;
    }
    let data = std::path::absolute(&data).unwrap_or(data);
    Ok(cmd
        .replace("{instance}", &i.to_string())
        .replace("{port}", &port.to_string())
        .replace("{data_dir}", &data.display().to_string()))
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
            let log = match a.brokers {
                1 => "broker.log",
                _ => "broker-0.log",
            };
            Keeper::new(
                Revive::Own(instance_cmd(a, cmd, 0, addr.port())?),
                addr,
                Some(a.findings.join(log)),
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
            note!("kconform: interrupted; finishing with the summary");
            on_ctrl_c.store(true, Ordering::SeqCst);
        }
    });
    stop
}
