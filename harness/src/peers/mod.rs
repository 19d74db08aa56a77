//! `kconform peers`: a peer's test suite — franz-go's `kgo` integration tests, written by
//! people who did not write kaas-ref — as an outside judge of any target. Each target runs the
//! same tests; every test that passes on the baseline (Apache) and fails, hangs, skips or takes
//! more than twice as long on another target is a finding, documented by the reviewed
//! allowlist (`scenarios/peers-allowlist.toml`) or not.

mod gate;
pub mod judge;
pub mod report;
pub mod suite;

use std::collections::BTreeMap;

use crate::targets::{Running, TargetError, TargetSpec};
use judge::Allowlist;
use report::{Judged, PeersReport, Stale, TargetRun};
use suite::{Outcome, RunOptions, Suite, SuiteError, SuiteRun};

/// Why `peers` could not give a verdict.
#[derive(Debug, thiserror::Error)]
pub enum PeersError {
    /// The suite could not be built or run.
    #[error(transparent)]
    Suite(#[from] SuiteError),
    /// A target did not start.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// No test matches the filter.
    #[error("no test of the suite matches '{0}'")]
    NoTests(String),
    /// Recorded answers cannot run a test suite.
    #[error("{0}: a peer's suite needs a live broker (ref, apache or external=HOST:PORT)")]
    NotLive(String),
    /// A judge that passes nothing judges nothing.
    #[error("the baseline {0} passed no test of the suite: nothing to judge the others against")]
    BaselinePassedNothing(String),
}

/// How the run is told to go.
#[derive(Debug, Clone)]
pub struct PeersOptions {
    /// The suite's run options (filter, records, timeout, parallelism).
    pub run: RunOptions,
    /// Run every target's suite at once instead of one after the other (faster; the times
    /// then share the machine, so slower-than-twice findings mean less).
    pub concurrent: bool,
    /// Seconds below which a slower test is noise (see [`judge::findings`]).
    pub floor_secs: f64,
}

/// The baseline: the first Apache target, else the last one named.
fn baseline(specs: &[TargetSpec]) -> usize {
    specs
        .iter()
        .position(|s| s.is_apache() && s.brokers == 1 && !s.secured)
        .unwrap_or(specs.len().saturating_sub(1))
}

async fn run_one(
    suite: &Suite,
    spec: &TargetSpec,
    options: &RunOptions,
    total: usize,
    progress: &std::sync::Arc<dyn crate::report::progress::Progress>,
) -> Result<(String, String, SuiteRun), PeersError> {
    let name = spec.name();
    progress.starting(&name);
    // A broker that does not answer would fail every test slowly; say so at once.
    let target = Running::start_answering(spec, std::time::Duration::from_secs(10)).await?;
    progress.running(&name, total);
    let (suite, options, seeds, who, p) = (
        suite.clone(),
        options.clone(),
        target.addr.to_string(),
        name.clone(),
        progress.clone(),
    );
    let result = tokio::task::spawn_blocking(move || {
        suite.run(&who, &seeds, &options, |test, r| {
            p.done(&who, test, &format!("{:?}", r.outcome))
        })
    })
    .await
    .map_err(|e| SuiteError::Run {
        target: name.clone(),
        reason: e.to_string(),
    });
    progress.finished(&name);
    let origin = target.origin.clone();
    target.stop().await;
    Ok((name, origin, result??))
}

/// Runs the suite on every target and judges each against the baseline.
pub async fn run(
    specs: &[TargetSpec],
    options: &PeersOptions,
    allowlist: Allowlist,
    progress: std::sync::Arc<dyn crate::report::progress::Progress>,
) -> Result<PeersReport, PeersError> {
    if let Some(s) = specs.iter().find(|s| **s == TargetSpec::RECORDED) {
        return Err(PeersError::NotLive(s.name()));
    }
    // What would stop the run is said before the suite is built (a minute of Go on a fresh
    // machine), not after: no Go, at once; a broker kconform does not start that does not
    // answer now.
    suite::available()?;
    for spec in specs.iter().filter(|s| s.external_addr().is_some()) {
        Running::start_answering(spec, std::time::Duration::from_secs(10))
            .await?
            .stop()
            .await;
    }
    let suite = {
        let p = progress.clone();
        tokio::task::spawn_blocking(move || Suite::prepare(|what| p.note(what)))
            .await
            .map_err(|e| SuiteError::Build(e.to_string()))??
    };
    let total = suite.list(&options.run.run)?.len();
    if total == 0 {
        return Err(PeersError::NoTests(options.run.run.clone()));
    }
    let mut runs = Vec::new();
    if options.concurrent {
        let all = futures::future::join_all(
            specs
                .iter()
                .map(|s| run_one(&suite, s, &options.run, total, &progress)),
        )
        .await;
        for r in all {
            runs.push(r?);
        }
    } else {
        for spec in specs {
            runs.push(run_one(&suite, spec, &options.run, total, &progress).await?);
        }
    }
    Ok(judge_runs(
        &runs,
        baseline(specs),
        &allowlist,
        options.floor_secs,
    ))
}

/// The report of finished runs: findings of every target against the baseline, classified.
pub fn judge_runs(
    runs: &[(String, String, SuiteRun)],
    baseline: usize,
    allowlist: &Allowlist,
    floor_secs: f64,
) -> PeersReport {
    let base = &runs[baseline];
    let mut found = Vec::new();
    for (i, (name, _, run)) in runs.iter().enumerate() {
        if i != baseline {
            found.extend(judge::findings(&base.2, name, run, floor_secs));
        }
    }
    let others: Vec<(&str, &SuiteRun)> = runs
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != baseline)
        .map(|(_, (n, _, r))| (n.as_str(), r))
        .collect();
    let stale = allowlist
        .stale(&others, &found)
        .into_iter()
        .map(|(entry, on)| Stale {
            entry: entry.clone(),
            on,
        })
        .collect();
    let findings = found
        .into_iter()
        .map(|f| Judged {
            ratio: f.ratio(),
            documented_by: allowlist.documents(&f).map(|a| a.reason.clone()),
            finding: f,
        })
        .collect();
    let mut tests: BTreeMap<String, BTreeMap<String, suite::TestResult>> = BTreeMap::new();
    for (name, _, run) in runs {
        for (test, result) in &run.tests {
            tests
                .entry(test.clone())
                .or_default()
                .insert(name.clone(), result.clone());
        }
    }
    let count = |run: &SuiteRun, o: Outcome| run.tests.values().filter(|r| r.outcome == o).count();
    PeersReport {
        suite: format!("{}@{} {}", suite::MODULE, suite::VERSION, suite::PACKAGE),
        baseline: base.0.clone(),
        targets: runs
            .iter()
            .map(|(name, origin, run)| TargetRun {
                name: name.clone(),
                origin: origin.clone(),
                wall_secs: run.wall.as_secs_f64(),
                passed: count(run, Outcome::Pass),
                failed: count(run, Outcome::Fail),
                skipped: count(run, Outcome::Skip),
                unfinished: count(run, Outcome::Unfinished),
            })
            .collect(),
        tests,
        findings,
        stale,
        verdict: String::new(),
    }
    .seal()
}
