//! One module per command, each taking its arguments and giving an exit code; [`dispatch`]
//! hands each command to its module. What several share lives here: the targets chosen, and
//! the exit code of a verdict.

mod apache;
mod chaos;
mod clients;
mod coverage;
mod fuzz;
mod kaas;
mod list;
mod peers;
mod proxy;
mod replay_frame;
mod repro;
mod run;
mod session;
mod settings;
mod topics;

use std::process::ExitCode;

use kconform::targets::apache::Backend;
use kconform::targets::TargetSpec;

use crate::args::Command;

/// Runs `command`.
pub async fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Run(a) => run::run(a).await,
        Command::Repro(a) => repro::run(a).await,
        Command::Coverage(a) => coverage::run(a).await,
        Command::Peers(a) => peers::run(a).await,
        Command::Clients(a) => clients::run(a).await,
        Command::Chaos(a) => chaos::run(a).await,
        Command::Fuzz(a) => fuzz::run(a).await,
        Command::ReplayFrame(a) => replay_frame::run(a).await,
        Command::Proxy(a) => proxy::run(a).await,
        Command::Topics(a) => topics::run(a).await,
        Command::List(a) => list::run(a),
        Command::Apache(a) => apache::run(a).await,
        Command::Kaas(a) => kaas::run(a).await,
        Command::Settings(a) => settings::run(a).await,
    }
}

/// The targets named, or kaas-ref beside Apache of the shape asked for; when only Apache's
/// recorded answers can stand in for it here, says so and why.
pub fn targets(
    named: &[String],
    backend: Backend,
    brokers: Option<u64>,
    sasl: bool,
) -> anyhow::Result<Vec<TargetSpec>> {
    let choice = kconform::targets::choice::choose(named, backend, brokers, sasl)?;
    if let Some(why) = choice.recorded_because {
        eprintln!(
            "kconform: no live Apache ({why}); comparing against Apache's recorded answers instead"
        );
    }
    Ok(choice.specs)
}

/// Exit 0 when a report passed; 1 when it found an undocumented difference, a stale ledger
/// entry, a failed expectation or a finding.
pub fn verdict(passed: bool) -> ExitCode {
    match passed {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(1),
    }
}
