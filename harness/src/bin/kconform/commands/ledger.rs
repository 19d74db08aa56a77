//! `kconform ledger draft REPORT`: the ledger entries a report's undocumented causes need,
//! drafted for a person to complete.

use std::process::ExitCode;

use anyhow::Context as _;

use crate::args::{LedgerAction, LedgerArgs};

/// Runs `kconform ledger`.
pub fn run(a: LedgerArgs) -> anyhow::Result<ExitCode> {
    if let Some(out) = &a.output {
        super::check_outputs([(out, "--output")])?;
    }
    match a.action {
        LedgerAction::Draft => {
            let text = std::fs::read_to_string(&a.report)
                .with_context(|| format!("reading {}", a.report.display()))?;
            let drafted = kconform::report::draft::draft(&text)
                .with_context(|| a.report.display().to_string())?;
            match &a.output {
                Some(path) => std::fs::write(path, &drafted)
                    .with_context(|| format!("writing {}", path.display()))?,
                None => out!("{drafted}"),
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
