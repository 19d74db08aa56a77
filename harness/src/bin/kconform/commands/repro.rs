//! `kconform repro`: one scenario on two targets, step by step, each difference with its ledger
//! entry or "undocumented".

use std::process::ExitCode;

use crate::args::ReproArgs;

/// Runs `kconform repro`.
pub async fn run(a: ReproArgs) -> anyhow::Result<ExitCode> {
    let names = [a.name];
    let (report, transcripts, _) =
        super::session::compare(&a.scenarios, &a.on, &names, true, 1, Some(2)).await?;
    out!("{}", report.repro(&transcripts[0][0], &transcripts[1][0]));
    Ok(super::verdict(report.passed()))
}
