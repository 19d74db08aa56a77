//! Every scenario against the bundled reference broker and, where Java and Maven are present,
//! a live Apache Kafka 3.7 launched as a JVM: each transcript is checked against its committed
//! insta snapshot (`snapshots/<scenario>__<target>.snap`). Review changes with
//! `cargo insta review`. Slow scenarios run here too: CI is where every scenario must pass.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use kconform::ledger::{Ledger, Verdict};
use kconform::runner::{self, Transcript};
use kconform::scenario::Scenario;
use kconform::target::{Running, TargetSpec};

async fn run_all(spec: &TargetSpec, scenarios: &[Scenario]) -> Vec<Transcript> {
    let target = Arc::new(Running::start(spec).await.expect("target starts"));
    let chosen: Vec<&Scenario> = scenarios.iter().collect();
    let hidden = indicatif::ProgressBar::hidden();
    let transcripts = runner::run_many(&chosen, &target, Duration::from_secs(10), 4, &hidden)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    for t in &transcripts {
        assert!(
            t.failed_expectations.is_empty(),
            "{} on {}: {:?}",
            t.scenario,
            t.target,
            t.failed_expectations
        );
    }
    if let Ok(target) = Arc::try_unwrap(target) {
        target.stop().await;
    }
    transcripts
}

/// Every live difference between kaas-ref and Apache is in the ledger, and every ledger entry
/// shows in each scenario it names.
fn check_ledger(root: &Path, scenarios: &[Scenario], kaas: &[Transcript], apache: &[Transcript]) {
    let ledger = Ledger::load(&root.join("scenarios/deviations.toml")).expect("ledger loads");
    let mut rows = Vec::new();
    for (k, a) in kaas.iter().zip(apache) {
        for row in runner::diff(k, a) {
            let verdict = ledger.classify(&row);
            rows.push((row, verdict));
        }
    }
    let undocumented: Vec<_> = rows
        .iter()
        .filter(|(_, v)| matches!(v, Verdict::Undocumented { .. }))
        .map(|(r, _)| {
            format!(
                "{} {} {}: kaas {} | apache {}",
                r.scenario, r.step, r.path, r.left, r.right
            )
        })
        .collect();
    assert!(
        undocumented.is_empty(),
        "UNDOCUMENTED differences:\n{}",
        undocumented.join("\n")
    );
    let ran: Vec<String> = scenarios.iter().map(|s| s.name.clone()).collect();
    let stale = ledger.stale(&ran, &rows);
    assert!(stale.is_empty(), "STALE ledger entries: {stale:?}");
    println!("{} differences, all documented", rows.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scenario_matches_its_snapshots() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let scenarios = Scenario::load_dir(&root.join("scenarios")).expect("scenarios load");
    assert!(scenarios.len() >= 10, "only {} scenarios", scenarios.len());
    let mut transcripts = run_all(&TargetSpec::Ref, &scenarios).await;
    match kconform::apache::available() {
        Ok(()) => {
            let apache = run_all(
                &TargetSpec::Apache(kconform::apache::Backend::Jvm),
                &scenarios,
            )
            .await;
            check_ledger(&root, &scenarios, &transcripts, &apache);
            transcripts.extend(apache);
        }
        Err(why) => println!("SKIPPED the Apache snapshots and the ledger check: {why}"),
    }
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(root.join("snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| {
        for t in &transcripts {
            insta::assert_yaml_snapshot!(format!("{}__{}", t.scenario, t.target), t);
        }
    });
}
