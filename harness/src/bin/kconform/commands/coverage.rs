//! `kconform coverage`: the (API, version, error code) cells the scenarios reach on each kind of
//! target, and the codes no scenario reached. With no target named, every shape of scenario runs
//! on its own pair (one broker, clusters, secured), so the table is the whole suite's.

use std::process::ExitCode;

use kconform::api::coverage::Coverage;
use kconform::run::plan;
use kconform::scenario::Scenario;

use crate::args::{CoverageArgs, TargetArgs};
use crate::output::paint;

/// Runs `kconform coverage`.
pub async fn run(a: CoverageArgs) -> anyhow::Result<ExitCode> {
    let source = a.scenarios.source();
    let all = Scenario::load_all(&source)?;
    // An unknown name is refused whatever the shapes.
    let picked = plan::pick(&all, &a.names, &source)?;
    let shapes = match (a.on.targets.is_empty(), a.on.brokers, a.on.sasl) {
        (true, None, false) => plan::shapes(&picked),
        (_, brokers, sasl) => vec![(brokers, sasl)],
    };
    let mut coverage = Coverage::default();
    let mut reports = Vec::new();
    for (brokers, sasl) in shapes {
        let size = brokers.map_or(1, |n| n as usize);
        let named: Vec<String> = a
            .names
            .iter()
            .filter(|n| {
                all.iter()
                    .any(|s| &s.name == *n && s.brokers == size && s.secured() == sasl)
            })
            .cloned()
            .collect();
        if !a.names.is_empty() && named.is_empty() {
            continue;
        }
        let on = TargetArgs {
            brokers,
            sasl,
            ..a.on.clone()
        };
        let (report, transcripts) = super::session::compare(
            &a.scenarios,
            &on,
            &named,
            a.include_slow,
            a.jobs as usize,
            None,
        )
        .await?;
        transcripts.iter().flatten().for_each(|t| coverage.add(t));
        reports.push(report);
    }
    let table = coverage.markdown();
    outln!("{table}");
    if let Some(path) = &a.markdown {
        std::fs::write(path, &table)
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
    }
    let mut code = ExitCode::SUCCESS;
    for report in reports.iter().filter(|r| !r.passed()) {
        out!("{}", report.terminal_painted(false, &paint));
        code = super::verdict(false);
    }
    Ok(code)
}
