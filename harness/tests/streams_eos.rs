//! `kconform streams-eos` judges what it is for: Apache's own Streams exactly-once test
//! passes on a clean kaas-ref, and fails on one with a bug planted that loses records only a
//! killed processor's aborted transaction can show. Each run starts five JVMs for a minute or
//! more, so they are `#[ignore]`d here: `ci/streams-eos.sh` runs them (and the run against
//! Apache, which must pass first).

use std::sync::Arc;
use std::time::Duration;

use kconform::clients::streams_eos::report::RunVerdict;
use kconform::clients::streams_eos::schedule::{Deadlines, Verdict};
use kconform::clients::streams_eos::{self, StreamsEosOptions};
use kconform::targets::TargetSpec;
use kconform::Quiet;
use reference_broker::planted::{Bug, Planted};

fn on_ref(planted: Planted, name: &str) -> streams_eos::report::StreamsEosReport {
    let spec = TargetSpec {
        planted,
        ..TargetSpec::REF
    };
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&out);
    let options = StreamsEosOptions {
        deadlines: Deadlines {
            step: Duration::from_secs(90),
            verify: Duration::from_secs(180),
        },
        out,
    };
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let report = runtime
        .block_on(streams_eos::run(&[spec], &options, Arc::new(Quiet)))
        .expect("the run starts");
    eprintln!("{}", report.terminal());
    report
}

#[test]
#[ignore = "a minute of five JVMs: ci/streams-eos.sh runs it"]
fn a_clean_ref_passes_apaches_streams_eos_test() {
    let report = on_ref(Planted::NONE, "streams-eos-clean");
    assert_eq!(report.verdict, RunVerdict::Passed);
    let t = &report.targets[0];
    assert_eq!(t.outcome.verdict, Verdict::Pass);
    assert_eq!(t.outcome.stages.len(), 9, "{:?}", t.outcome.stages);
    assert!(t.outcome.produced.is_some_and(|n| n > 0));
}

/// A transaction past its timeout ended with COMMIT markers: what a SIGKILLed processor wrote
/// in its open transaction becomes visible, and its successor writes it again. (An abort that
/// keeps its staged offsets, planted first, passed: Streams stages its offsets just before it
/// commits, so a kill seldom leaves any staged.)
#[test]
#[ignore = "a minute of five JVMs: ci/streams-eos.sh runs it"]
fn a_timeout_that_commits_fails_apaches_streams_eos_test() {
    let planted = Planted::default().with(Bug::TimeoutCommits);
    let report = on_ref(planted, "streams-eos-planted");
    assert_eq!(report.verdict, RunVerdict::Failed, "{}", report.terminal());
    match &report.targets[0].outcome.verdict {
        Verdict::Fail { stage, .. } => assert_eq!(stage, "verify"),
        other => panic!("not a failed verification: {other:?}"),
    }
}

/// A target that cannot be reached is NOT RUN, said in one line, and the run is
/// inconclusive rather than passed (no JVM starts: cheap, so it runs in CI).
#[test]
fn an_unreachable_target_is_not_run() {
    let spec = TargetSpec::parse("external=127.0.0.1:1").expect("a target");
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("streams-eos-unreachable");
    let options = StreamsEosOptions {
        deadlines: Deadlines {
            step: Duration::from_secs(5),
            verify: Duration::from_secs(5),
        },
        out,
    };
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let report = runtime
        .block_on(streams_eos::run(&[spec], &options, Arc::new(Quiet)))
        .expect("the run starts");
    assert!(matches!(
        report.targets[0].outcome.verdict,
        Verdict::NotRun { .. }
    ));
    assert_ne!(report.verdict, RunVerdict::Passed);
    assert!(
        report.terminal().contains("NOT RUN: "),
        "{}",
        report.terminal()
    );
}
