//! `kconform chaos`: the exactly-once workload under faults on each cluster, checked, with
//! Apache as the control.

use std::process::ExitCode;

use anyhow::Context as _;
use std::sync::Arc;

use clap::ValueEnum;
use kconform::clients::chaos::ChaosOptions;
use kconform::targets::faults::FaultCommands;

use crate::args::ChaosArgs;
use crate::progress::Bars;

/// Runs `kconform chaos`.
pub async fn run(a: ChaosArgs) -> anyhow::Result<ExitCode> {
    let brokers = a.targets.is_empty().then_some(a.brokers);
    let chosen =
        kconform::targets::choice::choose(&a.targets, a.apache_backend.into(), brokers, false)?;
    let mut specs = chosen.specs;
    if let Some(why) = chosen.recorded_because {
        // Recorded answers run no client: the run goes on without its control.
        specs.retain(|s| !s.is_recorded());
        note!("kconform: no live Apache ({why}); chaos runs without its control");
    }
    let baseline = super::before_work(&a.gate, &a.files, a.html.as_ref())?;
    let fault_commands = FaultCommands::parse(&a.fault_cmds).map_err(anyhow::Error::msg)?;
    let seed = a.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    });
    let placement = a.coordinators.into();
    let replay = replay_line(&a, &specs, seed);
    let faults: Vec<_> = a.faults.iter().map(|f| f.kind()).collect();
    let options = ChaosOptions {
        seed,
        duration: a.duration,
        workers: a.workers,
        outputs: a.outputs,
        placement,
        faults,
        no_faults: a.no_faults,
        fault_commands,
        replay,
        provisioned_topics: a.provisioned_topics,
        clients: a.clients.iter().map(|&c| c.into()).collect(),
    };
    let report = kconform::clients::chaos::run(&specs, &options, Arc::new(Bars::default())).await?;
    out!("{}", report.terminal());
    a.files.files().write(&report)?;
    if let Some(path) = &a.html {
        let page = kconform::clients::chaos::html::page(&report);
        std::fs::write(path, page).with_context(|| format!("writing {}", path.display()))?;
    }
    let passed = super::hold(
        &a.gate,
        baseline.as_ref(),
        kconform::report::gate::Judge::Chaos,
        &report.gated(),
        report.passed,
    )?;
    // Inconclusive is a run that could not judge: exit 2, as one that could not run (unless
    // a baseline knows it so).
    Ok(match (report.verdict, baseline.is_some()) {
        (kconform::clients::chaos::report::Verdict::Inconclusive, false) => ExitCode::from(2),
        _ => super::verdict(passed),
    })
}

/// The command line that repeats the run's schedule on the same targets, as the report
/// prints it: every option spelled as the command line takes it.
fn replay_line(a: &ChaosArgs, specs: &[kconform::targets::TargetSpec], seed: u64) -> String {
    let mut replay = format!(
        "kconform chaos --seed {seed} --duration {}s --workers {} --outputs {} --coordinators {}",
        a.duration.as_secs(),
        a.workers,
        a.outputs,
        a.coordinators.name()
    );
    for s in specs {
        // An external cluster with its address, so the line runs as it stands.
        replay.push_str(&format!(" --target {}", s.arg()));
    }
    match a.no_faults {
        true => replay.push_str(" --no-faults"),
        false => {
            // As --faults takes them (`hold-markers`), not as scenario files spell them.
            let keys: Vec<String> = a
                .faults
                .iter()
                .filter_map(|f| f.to_possible_value())
                .map(|v| v.get_name().to_owned())
                .collect();
            replay.push_str(&format!(" --faults {}", keys.join(",")));
        }
    }
    if a.provisioned_topics {
        replay.push_str(" --provisioned-topics");
    }
    if !a.clients.is_empty() {
        let names: Vec<String> = a
            .clients
            .iter()
            .filter_map(|c| c.to_possible_value())
            .map(|v| v.get_name().to_owned())
            .collect();
        replay.push_str(&format!(" --client {}", names.join(",")));
    }
    if !a.fault_cmds.is_empty() {
        replay.push_str(" (and the same --fault-cmd)");
    }
    replay
}
