//! `kconform`: a thin binary over the `kconform` library. It sets up (the allocator, logs,
//! Ctrl-C), hands the command to its module (`commands`), and turns the outcome into an exit
//! code.
//!
//! Exit codes: 0 when every expectation held and every difference is documented; 1 for an
//! undocumented difference, a stale ledger entry, a failed expectation or a scenario that
//! stopped on a target (no answer, a malformed one, a set-up step that failed), always with
//! the full report (snapshot drift is what `cargo insta test --check` reports); 2 when the run
//! could not happen at all (a broker did not start or does not answer ApiVersions, a scenario
//! file does not load), with the reason on one line.

#[macro_use]
mod output;
mod args;
mod commands;
mod logs;
mod progress;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};

/// kaas-ref runs in this process (`--target ref`), and a hostile element count in a frame
/// (what `kconform fuzz --mode frames` sends) must reserve address space, not abort the
/// process: the allocator the `kaas-ref` binary installs (see `reference_broker::alloc`).
#[global_allocator]
static ALLOCATOR: reference_broker::alloc::ReservingAllocator =
    reference_broker::alloc::ReservingAllocator;

fn main() -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => return refusal(&anyhow::anyhow!("cannot start the async runtime: {e}")),
    };
    let code = runtime.block_on(run());
    // A client thread stuck in librdkafka past its own timeout (`kconform chaos` gives such a
    // worker up and reports it) must not keep kconform from exiting.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    code
}

async fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage(e),
    };
    logs::init(cli.quiet);
    progress::set_quiet(cli.quiet);
    // Ctrl-C drops the run, and with it the brokers it started (the JVM is stopped, the
    // container removed) before exiting; `fuzz` instead ends its run and prints the summary.
    let outcome = match cli.command {
        command @ Command::Fuzz(_) => commands::dispatch(command).await,
        command => tokio::select! {
            outcome = commands::dispatch(command) => outcome,
            _ = tokio::signal::ctrl_c() => {
                eprintln!("kconform: interrupted");
                return ExitCode::from(130);
            }
        },
    };
    outcome.unwrap_or_else(|e| refusal(&e))
}

/// What clap says of the command line: help and the version as clap prints them (exit 0);
/// a usage error as every other refusal, on one line (clap's first, its "did you mean" kept),
/// with where to read more: exit 2.
fn usage(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return match e.kind() {
            ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => ExitCode::from(2),
            _ => ExitCode::SUCCESS,
        };
    }
    let text = e.render().to_string();
    let first = text
        .lines()
        .next()
        .unwrap_or("a command line kconform cannot read");
    let mut reason = first.strip_prefix("error: ").unwrap_or(first).to_owned();
    // A reason that lists (`the following required arguments were not provided:` and the
    // arguments below it, indented): the list on the same line.
    if reason.ends_with(':') {
        let listed: Vec<&str> = text
            .lines()
            .skip(1)
            .take_while(|l| l.starts_with(' '))
            .map(str::trim)
            .collect();
        reason = format!("{reason} {}", listed.join(", "));
    }
    let tip = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("tip: "))
        .map(|t| format!(" ({})", t.trim_start_matches("tip: ")))
        .unwrap_or_default();
    eprintln!("kconform: could not run: {reason}{tip}; --help says what each command takes");
    ExitCode::from(2)
}

/// The reason on one line, a dead broker's log (when there is one) below it: exit 2.
fn refusal(e: &anyhow::Error) -> ExitCode {
    let text = format!("{e:#}");
    let (reason, details) = text.split_once('\n').unwrap_or((&text, ""));
    eprintln!("kconform: could not run: {reason}");
    if !details.is_empty() {
        eprintln!("{details}");
    }
    ExitCode::from(2)
}
