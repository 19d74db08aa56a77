//! Broker faults as scenario steps, on a kaas-ref cluster in process: a paused broker holds
//! what it is sent and comes back with it, and whatever a scenario paused is resumed when it
//! ends, however it ended (here: stopped by a failed expectation with a paused broker and an
//! answer it holds still awaited).

use std::time::Duration;

use kconform::run;
use kconform::scenario::Scenario;
use kconform::targets::{Running, TargetSpec};
use kconform::transcript::Outcome;

const STOPS_WITH_A_BROKER_PAUSED: &str = r#"
description = "pauses broker 1, sends it a request in the background, and stops with both still so"
brokers = 3

[[step]]
name = "pause-1"
pause = 1

[[step]]
name = "held"
api = "Metadata"
broker = 1
connection = "held"
background = true
request = { topics = [] }

[[step]]
name = "fails"
api = "ApiVersions"
broker = 0
expect = { error_code = 99 }
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scenario_that_stops_with_a_broker_paused_leaves_it_resumed() {
    let scenario = crate::util::scenario_from("stops-paused", STOPS_WITH_A_BROKER_PAUSED);
    let spec = TargetSpec::parse("ref:3").unwrap();
    let target = Running::start(&spec).await.unwrap();

    let t = run::run(&scenario, &target, Duration::from_secs(20)).await;
    let stopped = t.stopped.clone().unwrap_or_default();
    assert!(
        stopped.contains("fails"),
        "stopped at the failing step: {stopped:?}"
    );
    let outcome = |name: &str| {
        t.steps
            .iter()
            .find(|s| s.step == name)
            .map(|s| s.outcome.clone())
            .unwrap_or_else(|| panic!("no record of {name}: {t:?}"))
    };
    assert!(
        matches!(outcome("pause-1"), Outcome::Broker(ref did) if did == "paused broker 1"),
        "{:?}",
        outcome("pause-1")
    );
    // Resumed before the held answer was awaited: it came, instead of the deadline.
    assert!(
        matches!(outcome("held"), Outcome::Response(_)),
        "the held request: {:?}",
        outcome("held")
    );
    // The failed expectations are the planted one (and the stop it caused): undoing the
    // pause added none.
    assert!(
        t.failed_expectations
            .iter()
            .all(|f| f.contains("expected 99")),
        "{:?}",
        t.failed_expectations
    );
    // And broker 1 answers a new connection at once.
    let addr = target.bootstrap[1];
    let mut conn = kconform::wire::client::Connection::connect(addr, Duration::from_secs(3))
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(3), conn.api_versions())
        .await
        .expect("broker 1 answers: it was resumed")
        .unwrap();
    target.stop().await;
}

const PAUSES_AND_RESUMES_BROKER_1: &str = r#"
description = "pauses broker 1 and resumes it"
brokers = 3

[[step]]
name = "pause-1"
pause = 1

[[step]]
name = "resume-1"
resume = 1
"#;

/// A cluster kconform did not start (`external:3`) gets its faults from the commands the user
/// gave: each run through `sh -c` with `{node}` and `{addr}` filled in, in step order; an act
/// given no command is refused with the flag that would give it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_external_cluster_is_faulted_by_the_users_commands() {
    use kconform::targets::faults::FaultCommands;
    use reference_broker::local_cluster::LocalCluster;

    let cluster = LocalCluster::start(
        3,
        reference_broker::BrokerConfig {
            member_timeout: Duration::from_millis(1500),
            ..reference_broker::BrokerConfig::for_tests()
        },
    )
    .await
    .unwrap();
    let addrs = cluster.addrs();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("faults.log");
    let faults = FaultCommands::parse(&[
        format!("pause=echo pause {{node}} {{addr}} >> {}", log.display()),
        format!("resume=echo resume {{node}} >> {}", log.display()),
    ])
    .unwrap();
    let spec = TargetSpec::parse(&format!("external:3={}", addrs[2])).unwrap();
    let target = Running::start(&spec).await.unwrap().with_faults(faults);
    assert_eq!(target.bootstrap, addrs, "the brokers, from its Metadata");

    let scenario = crate::util::scenario_from("pause-resume", PAUSES_AND_RESUMES_BROKER_1);
    let t = run::run(&scenario, &target, Duration::from_secs(20)).await;
    assert!(t.stopped.is_none(), "{:?}", t.stopped);
    let done = std::fs::read_to_string(&log).unwrap();
    assert_eq!(done, format!("pause 1 {}\nresume 1\n", addrs[1]));

    let e = target.kill(1).await.unwrap_err().to_string();
    assert!(e.contains("no --fault-cmd kill=COMMAND"), "{e}");
    target.stop().await;
    cluster.shutdown().await;
}

const STOPS_WITH_MARKERS_HELD: &str = r#"
description = "holds the markers to every broker, and stops with them still held"
brokers = 3

[[step]]
name = "hold-0"
hold_markers = 0

[[step]]
name = "hold-1"
hold_markers = 1

[[step]]
name = "hold-2"
hold_markers = 2

[[step]]
name = "fails"
api = "ApiVersions"
broker = 0
expect = { error_code = 99 }
"#;

/// Whatever a scenario held is let through when it ends, however it ended: after a scenario
/// that stopped with the markers to every broker held, a transaction committed on a partition
/// a peer of its coordinator leads is read committed within the cluster's marker poll.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scenario_that_stops_with_markers_held_leaves_them_let_through() {
    let stops = crate::util::scenario_from("stops-held", STOPS_WITH_MARKERS_HELD);
    let spec = TargetSpec::parse("ref:3").unwrap();
    let target = Running::start(&spec).await.unwrap();
    let t = run::run(&stops, &target, Duration::from_secs(20)).await;
    assert!(
        t.stopped.clone().unwrap_or_default().contains("fails"),
        "{:?}",
        t.stopped
    );
    assert!(
        t.steps.iter().any(|s| matches!(&s.outcome,
            Outcome::Broker(did) if did == "held the markers to broker 2")),
        "{:?}",
        t.steps
    );

    // The scenario that needs them through: it commits with the marker owed to a peer, reads
    // it committed (`until`, 20 s at most) and only then opens the next transaction.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let scenarios = Scenario::load_dir(&root.join("scenarios")).unwrap();
    let mut commits = scenarios
        .into_iter()
        .find(|s| s.name == "cluster-markers-held-transaction-stays-prepared")
        .unwrap();
    // Its own hold and release taken out: only what the first scenario left matters.
    commits.steps.retain(|s| !s.disrupts());
    commits
        .steps
        .retain(|s| s.name != "fetch-held" && s.name != "next-transaction-waits");
    let t = run::run(&commits, &target, Duration::from_secs(20)).await;
    assert!(t.stopped.is_none(), "{:?}", t.stopped);
    assert!(
        t.failed_expectations.is_empty(),
        "{:?}",
        t.failed_expectations
    );
    target.stop().await;
}

/// A scenario of `description` on three brokers: a transactional id's coordinator found (the
/// role `coordinator`), then `steps`. Both disk scenarios below begin so.
fn on_its_coordinator(description: &str, steps: &str) -> String {
    format!(
        r#"description = "{description}"
brokers = 3
unique = ["txn"]

[[step]]
name = "find"
api = "FindCoordinator"
version = 3
request = {{ key = "${{txn}}", key_type = 1 }}
until = {{ error_code = 0 }}
roles = {{ coordinator = "node_id" }}
{steps}"#
    )
}

const STOPS_WITH_THE_DISK_FULL: &str = r#"
[[step]]
name = "fill"
fill_disk = 0

[[step]]
name = "refused"
api = "InitProducerId"
broker = "coordinator"
request = { transactional_id = "${txn}", transaction_timeout_ms = 60000 }
expect = { error_code = 99 }
"#;

const WRITES: &str = r#"
[[step]]
name = "init"
api = "InitProducerId"
broker = "coordinator"
request = { transactional_id = "${txn}", transaction_timeout_ms = 60000 }
until = { error_code = 0 }
within_ms = 5000
"#;

/// A scenario that fills kaas-ref's disk and stops before freeing it leaves it freed: the
/// next scenario on the same cluster writes. A write on the full disk was refused, not lost
/// in silence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scenario_that_stops_with_the_disk_full_leaves_it_freed() {
    let full = on_its_coordinator(
        "fills the disk of kaas-ref's brokers and stops with it full",
        STOPS_WITH_THE_DISK_FULL,
    );
    let writes = on_its_coordinator(
        "a write after: a transactional id initialised (its slot file written)",
        WRITES,
    );
    let target = Running::start(&TargetSpec::parse("ref:3").unwrap())
        .await
        .unwrap();
    let t = run::run(
        &crate::util::scenario_from("full", &full),
        &target,
        Duration::from_secs(20),
    )
    .await;
    let refused = t.steps.iter().find(|s| s.step == "refused").unwrap();
    let Outcome::Response(answer) = &refused.outcome else {
        panic!("{:?}", refused.outcome)
    };
    assert_eq!(
        answer["error_code"], "15 COORDINATOR_NOT_AVAILABLE",
        "a write on a full disk: {answer}"
    );
    assert!(
        t.failed_expectations
            .iter()
            .all(|f| f.contains("expected 99")),
        "freeing the disk added no failure: {:?}",
        t.failed_expectations
    );
    let after = run::run(
        &crate::util::scenario_from("writes", &writes),
        &target,
        Duration::from_secs(20),
    )
    .await;
    assert!(
        after.failed_expectations.is_empty(),
        "the disk was freed: {:?}",
        after.failed_expectations
    );
    target.stop().await;
}

/// `end-txn-commit-cut-before-answer` finds a broker that drops a request whose client has
/// gone (the bug planted in kaas-ref: a handler cancelled with its connection), where the
/// same broker without it passes: the cut is a fault kconform does to its own connection,
/// and the scenario's read from another connection is what tells the two apart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_whose_connection_is_cut_is_still_carried_out() {
    use reference_broker::planted::{Bug, Planted};
    use reference_broker::{Broker, BrokerConfig};
    let all = crate::util::scenarios();
    let scenario = all
        .iter()
        .find(|s| s.name == "end-txn-commit-cut-before-answer")
        .expect("the scenario is in the repository");
    let run_on = |planted: Planted| async move {
        let broker = Broker::start(BrokerConfig {
            planted,
            ..BrokerConfig::for_tests()
        })
        .await
        .unwrap();
        let target = Running::start(&TargetSpec::external(broker.addr()))
            .await
            .unwrap();
        run::run(scenario, &target, Duration::from_secs(20)).await
    };
    let clean = run_on(Planted::default()).await;
    assert!(
        clean.stopped.is_none() && clean.failed_expectations.is_empty(),
        "the clean broker carries the cut commit out: {:?} {:?}",
        clean.stopped,
        clean.failed_expectations
    );
    let cut = clean.steps.iter().find(|s| s.step == "commit-cut").unwrap();
    assert!(matches!(cut.outcome, Outcome::Cut(_)), "{:?}", cut.outcome);

    let buggy = run_on(Planted::default().with(Bug::RequestDroppedWithItsConnection)).await;
    let stopped = buggy.stopped.unwrap_or_default();
    assert!(
        stopped.contains("commit-carried-out")
            && stopped.contains("last_stable_offset is 0, expected 3"),
        "the dropped commit is found where the scenario looks: {stopped:?}"
    );
}
