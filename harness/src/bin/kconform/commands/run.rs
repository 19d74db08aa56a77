//! `kconform run`: the scenarios on each target, the first two compared, the report printed
//! (and written to the files asked for).

use std::process::ExitCode;

use crate::args::RunArgs;
use crate::output::paint;

/// Runs `kconform run`.
pub async fn run(a: RunArgs) -> anyhow::Result<ExitCode> {
    let (report, transcripts) = super::session::compare(
        &a.scenarios,
        &a.on,
        &a.names,
        a.include_slow,
        a.jobs as usize,
        None,
    )
    .await?;
    if a.show {
        for t in transcripts.iter().flatten() {
            outln!("{}", serde_json::to_string_pretty(t)?);
        }
    }
    out!("{}", report.terminal_painted(a.verbose, &paint));
    if report.targets.len() < 2 {
        outln!("(one target: nothing compared)");
    }
    a.files.files().write(&report)?;
    Ok(super::verdict(report.passed()))
}
