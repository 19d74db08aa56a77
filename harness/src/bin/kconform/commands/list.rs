//! `kconform list`: the scenarios, each with the targets it is written for.

use std::process::ExitCode;

use kconform::scenario::Scenario;

use crate::args::ListArgs;

/// Runs `kconform list`.
pub fn run(a: ListArgs) -> anyhow::Result<ExitCode> {
    for s in Scenario::load_all(&a.scenarios.source())? {
        match s.brokers {
            _ if s.secured() => outln!("{:45} (--sasl) {}", s.name, s.description),
            1 => outln!("{:45} {}", s.name, s.description),
            n => outln!("{:45} ({n} brokers) {}", s.name, s.description),
        }
    }
    Ok(ExitCode::SUCCESS)
}
