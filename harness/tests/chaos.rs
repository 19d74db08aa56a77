//! `kconform chaos` finds what it is for: on a clean kaas-ref cluster it finds nothing, and a
//! bug planted in kaas-ref on purpose (`planted-bugs`) is found from a fixed seed, named as the
//! anomaly it causes. The planted runs that take minutes are `#[ignore]`d here:
//! `ci/chaos-planted.sh` runs the proof among them. Two more are kept, ignored, as the
//! reproductions of an open finding: under kills the clean kaas-ref cluster itself shows a
//! stalled read_committed reader and torn transactions in some runs, so the bug planted to be
//! found under kills (a marker dropped on restart) cannot be told from it yet.

use std::sync::Arc;
use std::time::{Duration, Instant};

use kconform::clients::chaos::checker::Kind;
use kconform::clients::chaos::placement::Placement;
use kconform::clients::chaos::report::ChaosReport;
use kconform::clients::chaos::{self, ChaosOptions};
use kconform::targets::faults::{BrokerAct, FaultCommands};
use kconform::targets::TargetSpec;
use kconform::Quiet;
use reference_broker::planted::{Bug, Planted};

/// The options of a run of `secs` from `seed`, with `faults` (none: `--no-faults`).
fn options(seed: u64, secs: u64, faults: &[BrokerAct]) -> ChaosOptions {
    ChaosOptions {
        seed,
        duration: Duration::from_secs(secs),
        workers: 3,
        outputs: 3,
        placement: Placement::Together,
        faults: faults.to_vec(),
        no_faults: faults.is_empty(),
        fault_commands: FaultCommands::default(),
        replay: String::new(),
    }
}

async fn chaos_on(planted: Planted, options: &ChaosOptions) -> ChaosReport {
    let spec = TargetSpec {
        planted,
        ..TargetSpec::REF.cluster(3)
    };
    let started = Instant::now();
    let report = chaos::run(&[spec], options, Arc::new(Quiet))
        .await
        .expect("chaos runs");
    eprintln!("{}\n(in {:?})", report.terminal(), started.elapsed());
    report
}

fn kinds(report: &ChaosReport) -> Vec<Kind> {
    report.targets[0].kinds().into_iter().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_ref_cluster_shows_no_anomaly() {
    // Without faults: under kills, a kill can part a worker's transaction and group
    // coordinators for a while, and kaas documents exactly-once as broken then
    // (txn-offsets-lost-across-coordinators): seen once in five 20 s runs of seed 7, a
    // duplicate. The clean runs under kills are ci/chaos-planted.sh's control.
    let report = chaos_on(Planted::NONE, &options(7, 10, &[])).await;
    let t = &report.targets[0];
    assert_eq!(t.error, None);
    let committed: u64 = t.workers.iter().map(|w| w.committed).sum();
    assert!(committed > 0, "transactions committed");
    assert!(t.records_checked > 0);
    assert_eq!(t.anomalies, vec![]);
    assert!(report.passed);
    crate::util::assert_follows_schema(
        include_str!("../chaos-report.schema.json"),
        &serde_json::from_str(&report.json()).unwrap(),
    );
}

/// The clean broker under the kills of the planted marker-drop run (seed 1, two minutes): the
/// control that would show a finding there is the bug's. It passed once and failed once here
/// (torn-transaction, offsets-without-records, read-stalled): the open finding of issue 32.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "fails on kaas-ref in some runs today: the open finding of issue 32 (a stalled reader and torn transactions under kills and pauses)"]
async fn a_clean_ref_cluster_under_the_planted_runs_kills_shows_no_anomaly() {
    let report = chaos_on(Planted::NONE, &options(1, 120, &[BrokerAct::Kill])).await;
    assert_eq!(report.targets[0].faults.len(), 14);
    assert_eq!(report.targets[0].anomalies, vec![], "{}", report.terminal());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_commit_before_its_markers_is_found_as_offsets_without_records() {
    let planted = Planted::default().with(Bug::GroupCommitBeforeMarkers);
    let report = chaos_on(planted, &options(1, 10, &[])).await;
    assert!(!report.passed);
    assert!(
        kinds(&report).contains(&Kind::OffsetsWithoutRecords),
        "{}",
        report.terminal()
    );
    // A report with anomalies follows the schema too.
    crate::util::assert_follows_schema(
        include_str!("../chaos-report.schema.json"),
        &serde_json::from_str(&report.json()).unwrap(),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "minutes: ci/chaos-planted.sh runs it"]
async fn a_peer_marker_applied_twice_is_found_as_an_aborted_read() {
    let planted = Planted::default().with(Bug::PeerMarkerAppliedTwice);
    let report = chaos_on(planted, &options(1, 120, &[])).await;
    assert!(!report.passed);
    assert!(
        kinds(&report).contains(&Kind::AbortedRead),
        "{}",
        report.terminal()
    );
}

/// Found as torn transactions once and as aborted reads and duplicates once, with a stalled
/// reader both times; but the clean broker under the same kills shows some of those too (the
/// test above), so this is no proof until that is fixed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "no proof yet: the clean broker under the same kills shows anomalies too (issue 32)"]
async fn a_marker_dropped_on_restart_is_found_as_a_torn_transaction() {
    let planted = Planted::default().with(Bug::MarkerDroppedOnRestart);
    let report = chaos_on(planted, &options(1, 120, &[BrokerAct::Kill])).await;
    assert!(!report.passed);
    // The committed transaction's records on the partition whose marker was dropped stay
    // unmarked: the rest of it is visible, they are not.
    assert!(
        kinds(&report).contains(&Kind::TornTransaction),
        "{}",
        report.terminal()
    );
}
