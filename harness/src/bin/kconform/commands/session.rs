//! What `run`, `coverage` and `repro` share: the scenarios planned for the targets chosen, run
//! as one session with bars on stderr.

use std::sync::Arc;
use std::time::Duration;

use kconform::data::Source;
use kconform::report::gate::Judge;
use kconform::report::Report;
use kconform::run::plan;
use kconform::scenario::Scenario;
use kconform::transcript::Transcript;

use crate::args::{ScenarioArgs, TargetArgs};
use crate::progress::Bars;

/// The scenarios named (all when none; slow ones only when asked or named, the others said to
/// be left out) on the targets `on` gives (exactly `targets` of them when said), the first two
/// compared.
pub async fn compare(
    scenarios: &ScenarioArgs,
    on: &TargetArgs,
    names: &[String],
    include_slow: bool,
    jobs: usize,
    targets: Option<usize>,
) -> anyhow::Result<(Report, Vec<Vec<Transcript>>, Judge)> {
    // An unknown name is refused before any target is looked at.
    let source = scenarios.source();
    plan::pick(&Scenario::load_all(&source)?, names, &source)?;
    let specs = super::targets(&on.targets, on.apache_backend.into(), on.brokers, on.sasl)?;
    if let Some(n) = targets {
        plan::exactly(n, &specs)?;
    }
    let (report, transcripts) =
        compare_on(scenarios, on, &specs, names, include_slow, jobs).await?;
    Ok((report, transcripts, judge_of(&specs)))
}

/// The judge the scenarios on `specs` are: those of one broker, or of a cluster.
pub fn judge_of(specs: &[kconform::TargetSpec]) -> Judge {
    match specs.first().is_some_and(|s| s.brokers > 1) {
        true => Judge::ClusterScenarios,
        false => Judge::Scenarios,
    }
}

/// As [`compare`], on the targets `specs` (chosen by the caller).
pub async fn compare_on(
    scenarios: &ScenarioArgs,
    on: &TargetArgs,
    specs: &[kconform::TargetSpec],
    names: &[String],
    include_slow: bool,
    jobs: usize,
) -> anyhow::Result<(Report, Vec<Vec<Transcript>>)> {
    let source = scenarios.source();
    let all = Scenario::load_all(&source)?;
    let picked = plan::pick(&all, names, &source)?;
    let specs = specs.to_vec();
    let faults = kconform::targets::faults::FaultCommands::parse(&on.fault_cmds)
        .map_err(anyhow::Error::msg)?;
    let mut planned = plan::plan(picked, names, &specs, include_slow)?;
    leave_out_other_releases(&mut planned, &specs, names)?;
    let left_out = planned.leave_out_missing_faults(&specs, &faults);
    if !left_out.is_empty() {
        let each: Vec<String> = left_out
            .iter()
            .map(|(name, acts)| format!("{name} ({})", acts.join(", ")))
            .collect();
        note!(
            "kconform: skipping {} scenario(s) that do to a broker what a target cannot ({}): {}",
            left_out.len(),
            plan::why_left_out(&specs, &faults, &left_out),
            each.join(", ")
        );
        if planned.chosen.is_empty() {
            anyhow::bail!(
                "no scenario left to run: each does to a broker what a target cannot (an external cluster needs a --fault-cmd for each act: {}; a kaas-only scenario runs without Apache: --target ref:3)",
                kconform::targets::faults::BrokerAct::keys()
            );
        }
    }
    if !planned.slow_left_out.is_empty() {
        note!(
            "kconform: skipping {} slow scenario(s) ({}): add --include-slow to run them",
            planned.slow_left_out.len(),
            planned.slow_left_out.join(", ")
        );
    }
    let snapshots = Source::snapshots(on.snapshots.as_deref());
    let session = kconform::run::session::Session {
        scenarios: &source,
        snapshots: &snapshots,
        deadline: Duration::from_millis(on.deadline_ms),
        provisioned_topics: on.provisioned_topics,
        strict_encoding: on.strict_encoding,
        faults: &faults,
        stop_at_malformed: on.stop_at_malformed,
        lanes: on.lanes as usize,
    };
    let (mut report, transcripts) = session
        .run(&planned.chosen, &specs, jobs, Arc::new(Bars::default()))
        .await?;
    report.repro_flags = on.repro_flags(scenarios);
    Ok((report, transcripts))
}

/// Leaves out the scenarios written for Apache releases the run has none of, saying which; one
/// named on the command line is refused instead.
fn leave_out_other_releases(
    planned: &mut plan::Plan<'_>,
    specs: &[kconform::TargetSpec],
    names: &[String],
) -> anyhow::Result<()> {
    let other_releases = planned.leave_out_other_releases(specs);
    if let Some((name, releases)) = other_releases.iter().find(|(n, _)| names.contains(n)) {
        anyhow::bail!(
            "scenario {name} is written for Apache {releases}, and an Apache of this run is not one of them: name such a release (--target apache@RELEASE)"
        );
    }
    if !other_releases.is_empty() {
        note!(
            "kconform: skipping {} scenario(s) written for other Apache releases: {}",
            other_releases.len(),
            other_releases
                .iter()
                .map(|(name, releases)| format!("{name} ({releases})"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    for (target, release, names) in planned.expectations_not_held(specs) {
        note!(
            "kconform: {target} answers as Apache {} does: {} scenario(s) written for other releases are compared on it, their expectations not held: {}",
            release.version(),
            names.len(),
            names.join(", ")
        );
    }
    Ok(())
}
