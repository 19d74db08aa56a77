//! Exactly-once verdicts that name the loss: a transactional scenario that stops is read back,
//! and each transaction's records are judged against how its producer ended it. Held on a
//! kaas-ref cluster with real kaas's cluster defect planted (a peer's queued marker written
//! over by the same producer's next one), beside Apache's recorded answers: the cause line says
//! which transaction was committed and lost, on which partition, led by which broker, with its
//! coordinator; the clean cluster passes the same scenarios.

use crate::util;

use std::time::Duration;

use kconform::compare::causes::Notice;
use kconform::report::Report;
use kconform::scenario::Scenario;
use kconform::targets::TargetSpec;
use kconform::transcript::ReadVerdict;
use reference_broker::planted::{Bug, Planted};

/// Three quick transactions of one producer over partitions led by two brokers: abort,
/// commit, abort, and commit, abort, commit.
const CHOSEN: [&str; 2] = [
    "cluster-quick-transactions-abort-first",
    "cluster-quick-transactions",
];

async fn judged(planted: Planted) -> (Report, Vec<Vec<kconform::transcript::Transcript>>) {
    let all = util::scenarios();
    let chosen: Vec<&Scenario> = CHOSEN
        .iter()
        .map(|name| all.iter().find(|s| s.name == *name).expect("the scenario"))
        .collect();
    let ours = TargetSpec {
        planted,
        ..TargetSpec::REF.cluster(3)
    };
    let (report, transcripts) = util::run_in_repository(
        &chosen,
        &[ours, TargetSpec::RECORDED.cluster(3)],
        2,
        Duration::from_secs(10),
    )
    .await
    .expect("the run reports");
    println!("{}", report.terminal(true));
    (report, transcripts)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_commit_lost_to_an_overwritten_peer_marker_is_named_and_heads_the_report() {
    let (report, transcripts) = judged(Planted::default().with(Bug::PeerMarkerOverwritten)).await;
    assert!(!report.passed());
    let first = &report.causes[0];
    assert_eq!(
        first.notice,
        Notice::ExactlyOnce,
        "{}",
        report.terminal(false)
    );
    assert_eq!(first.documented_by, None);
    // abort, commit, abort: the commit's records on the peer-led partition end with the last
    // ABORT; named with the partition's leader and the transaction's coordinator.
    let lost = transcripts[0]
        .iter()
        .find(|t| t.scenario == CHOSEN[0])
        .expect("the abort-first run");
    let t2 = lost
        .readback
        .iter()
        .find(|t| t.name == "t2")
        .expect("t2 read back");
    assert_eq!(t2.verdict, ReadVerdict::CommittedLost, "{t2:#?}");
    assert!(
        t2.words
            .starts_with("t2 committed, its records LOST: ${topic}-"),
        "{}",
        t2.words
    );
    assert!(
        t2.words
            .contains("reads aborted (1 record), led by broker "),
        "{}",
        t2.words
    );
    assert!(
        t2.words.contains("; its coordinator is broker "),
        "{}",
        t2.words
    );
    let led_apart = t2
        .partitions
        .iter()
        .filter(|p| p.reads == "aborted")
        .all(|p| p.leader.is_some() && p.leader != t2.coordinator);
    assert!(led_apart, "{t2:#?}");
    let terminal = report.terminal(false);
    assert!(
        terminal.contains("UNDOCUMENTED exactly-once t2 committed, its records LOST: "),
        "{terminal}"
    );
    // The scenarios' stops, and any steps they left unsent, fold under the verdicts: no cause
    // of the bare stop is left.
    assert!(
        report
            .causes
            .iter()
            .all(|c| !c.signature.starts_with("stopped:")),
        "{}",
        report.terminal(false)
    );
    // commit, abort, commit: an aborted transaction read (where the peer was slower than the
    // scenario), or the same loss; either breaks exactly-once.
    let other = transcripts[0]
        .iter()
        .find(|t| t.scenario == CHOSEN[1])
        .expect("the commit-first run");
    assert!(
        other
            .readback
            .iter()
            .any(|t| t.verdict.breaks_exactly_once()),
        "{:#?}",
        other.readback
    );
    util::assert_follows_schema(
        include_str!("../report.schema.json"),
        &serde_json::from_str(&report.json()).unwrap(),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_clean_cluster_passes_the_same_scenarios_and_reads_nothing_back() {
    let (report, transcripts) = judged(Planted::NONE).await;
    assert!(report.passed(), "{}", report.terminal(true));
    assert!(transcripts[0].iter().all(|t| t.readback.is_empty()));
}
