//! `kconform list`: the scenarios, each with the targets it is written for (and, for a
//! cluster, what it does to brokers: the `--fault-cmd` an external cluster needs).

use std::process::ExitCode;

use kconform::scenario::Scenario;

use crate::args::ListArgs;

/// Runs `kconform list`.
pub fn run(a: ListArgs) -> anyhow::Result<ExitCode> {
    for s in Scenario::load_all(&a.scenarios.source())? {
        // What it does to brokers: the --fault-cmd an external cluster needs to run it.
        let acts: Vec<&str> = s.broker_acts().into_iter().map(|a| a.key()).collect();
        let acts = match acts.is_empty() {
            true => String::new(),
            false => format!("; {}", acts.join(", ")),
        };
        // The Apache releases it is written for, when not every one.
        let releases = match s.apache.is_all() {
            true => String::new(),
            false => format!("(Apache {}) ", s.apache),
        };
        match s.brokers {
            _ if s.secured() => outln!("{:45} (--sasl) {releases}{}", s.name, s.description),
            1 => outln!("{:45} {releases}{}", s.name, s.description),
            n => outln!(
                "{:45} ({n} brokers{acts}) {releases}{}",
                s.name,
                s.description
            ),
        }
    }
    Ok(ExitCode::SUCCESS)
}
