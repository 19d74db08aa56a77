//! `kconform coverage`: the (API, version, error code) cells the scenarios reach on each kind of
//! target, and the codes no scenario reached. With no target named, every shape of scenario runs
//! on its own pair (one broker, clusters, secured), and what only kaas can run on kaas-ref
//! alone, so the table is the whole suite's.

use std::process::ExitCode;

use kconform::api::coverage::Coverage;
use kconform::run::plan;
use kconform::scenario::Scenario;
use kconform::TargetSpec;

use crate::args::{CoverageArgs, TargetArgs};
use crate::output::paint;

/// Runs `kconform coverage`.
pub async fn run(a: CoverageArgs) -> anyhow::Result<ExitCode> {
    super::check_outputs(a.markdown.iter().map(|p| (p, "--markdown")))?;
    let source = a.scenarios.source();
    let all = Scenario::load_all(&source)?;
    // An unknown name is refused whatever the shapes.
    let picked = plan::pick(&all, &a.names, &source)?;
    let shapes = match (a.on.targets.is_empty(), a.on.brokers, a.on.sasl) {
        (true, None, false) => plan::shapes(&picked),
        (_, brokers, sasl) => vec![(brokers, sasl)],
    };
    let mut runs = pair_runs(&a, &all, &shapes);
    if a.on.targets.is_empty() {
        runs.extend(kaas_alone_runs(&a, &picked, &shapes));
    }
    let mut coverage = Coverage::default();
    let mut reports = Vec::new();
    for (on, names) in runs {
        let (report, transcripts, _) = super::session::compare(
            &a.scenarios,
            &on,
            &names,
            a.include_slow,
            a.jobs as usize,
            None,
        )
        .await?;
        transcripts
            .iter()
            .flatten()
            .for_each(|t| coverage.add(t, TargetSpec::answers_as_named(&t.target)));
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

/// Each shape's run (every shape of the scenarios picked with no target or shape named, else
/// the one named): on its own pair with no target named (or on the targets named), with the
/// names asked for of that shape (none: all of it). What only kaas can run is not asked of a
/// pair with Apache.
fn pair_runs(
    a: &CoverageArgs,
    all: &[Scenario],
    shapes: &[(Option<u64>, bool)],
) -> Vec<(TargetArgs, Vec<String>)> {
    shapes
        .iter()
        .copied()
        .filter_map(|(brokers, sasl)| {
            let size = brokers.map_or(1, |n| n as usize);
            let named: Vec<String> = a
                .names
                .iter()
                .filter(|n| {
                    all.iter().any(|s| {
                        &s.name == *n
                            && s.brokers == size
                            && s.secured() == sasl
                            && !(s.kaas_only() && a.on.targets.is_empty())
                    })
                })
                .cloned()
                .collect();
            if !a.names.is_empty() && named.is_empty() {
                return None;
            }
            let on = TargetArgs {
                brokers,
                sasl,
                ..a.on.clone()
            };
            Some((on, named))
        })
        .collect()
}

/// What only kaas can run (a disk filled), left out of the pairs with Apache: in each of
/// `shapes`, on kaas-ref alone, so the table with no target named is still the whole suite's.
fn kaas_alone_runs(
    a: &CoverageArgs,
    picked: &[&Scenario],
    shapes: &[(Option<u64>, bool)],
) -> Vec<(TargetArgs, Vec<String>)> {
    let kaas_only: Vec<&Scenario> = picked.iter().copied().filter(|s| s.kaas_only()).collect();
    shapes
        .iter()
        .filter_map(|&(brokers, sasl)| {
            let size = brokers.map_or(1, |n| n as usize);
            let names: Vec<String> = kconform::run::session::sized(&kaas_only, size, sasl)
                .iter()
                .map(|s| s.name.clone())
                .collect();
            if names.is_empty() {
                return None;
            }
            let ours =
                kconform::targets::choice::defaults(brokers, sasl, a.on.apache_backend.into()).0;
            // The target names its shape itself (ref:3, ref+sasl).
            let on = TargetArgs {
                targets: vec![ours.arg()],
                brokers: None,
                sasl: false,
                ..a.on.clone()
            };
            Some((on, names))
        })
        .collect()
}
