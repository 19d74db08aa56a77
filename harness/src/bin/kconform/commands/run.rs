//! `kconform run`: the scenarios on each target, the first two compared, the report printed
//! (and written to the files asked for).

use std::process::ExitCode;

use anyhow::Context;

use crate::args::RunArgs;
use crate::output::paint;

/// Runs `kconform run`.
pub async fn run(a: RunArgs) -> anyhow::Result<ExitCode> {
    // A baseline that cannot be read is refused before any broker starts.
    let baseline = super::before_work(&a.gate, &a.files, a.html.as_ref())?;
    let (mut report, transcripts, judge) = super::session::compare(
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
    report.flat = a.flat;
    report.fail_on_consequence = a.fail_on_consequence;
    super::save_baseline(&a.gate, baseline.as_ref(), &report.gated(judge))?;
    if let Some(baseline) = &baseline {
        report.hold_to(baseline, judge);
    }
    out!("{}", report.terminal_painted(a.verbose, &paint));
    if report.targets.len() < 2 {
        outln!("(one target: nothing compared)");
    }
    a.files.files().write(&report)?;
    if let Some(path) = &a.html {
        let all: Vec<_> = transcripts.into_iter().flatten().collect();
        let page = kconform::report::html::page(&report, &all);
        std::fs::write(path, page).with_context(|| format!("writing {}", path.display()))?;
    }
    let passed = super::holds(&a.gate, baseline.as_ref(), report.passed());
    Ok(super::verdict(passed))
}
