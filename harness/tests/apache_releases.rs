//! An Apache release other than 3.7.2 runs as a target: Apache Kafka 4.4.0 from its own jars
//! (Log4j 2, which logs the readiness line kconform waits for only with the binding kconform
//! adds), its KRaft storage formatted with the transaction version asked for, which the broker
//! then reports as finalized (ApiVersions v3), and it serves the versions 4.4 added (EndTxn v5),
//! which kconform writes and reads by Apache's definitions (kafka-protocol 0.15 stops short of
//! them): the scenarios written for 4.x hold every expectation on both transaction versions.
//! Skipped, saying why, where the jvm backend cannot run.

use std::time::Duration;

use std::sync::Arc;

use kafka_protocol::messages::ApiKey;
use kconform::targets::apache::{features, ApacheJvm, Release};
use kconform::targets::TargetSpec;
use kconform::wire::client::Connection;

use crate::util;

/// The scenarios of what 4.x changed that kafka-protocol 0.15 cannot send or read (EndTxn v5,
/// TxnOffsetCommit v5 and v6, by topic id and by a KIP-848 member's epoch, WriteTxnMarkers v2;
/// Produce v12, sent as the v11 it is the same as), and a removed version sent anyway
/// (WriteTxnMarkers v0, which 4.x closes on).
const WRITTEN_BY_DEFINITIONS: [&str; 7] = [
    "end-txn-v5-epoch-bump",
    "txn-offset-commit-v5-without-add-offsets",
    "txn-offset-commit-v6-topic-ids",
    "txn-offset-commit-v6-member-epochs",
    "write-txn-markers-v2-transaction-version",
    "removed-versions-sent-anyway",
    "produce-v12-implicit-add",
];

/// The finalized `transaction.version` (ApiVersions v3) and EndTxn's highest version.
async fn transaction_version_and_end_txn_max(jvm: &ApacheJvm) -> (i16, i16) {
    let mut c = Connection::connect(jvm.addr, Duration::from_secs(10))
        .await
        .expect("connects");
    let tv = features::transaction_version(&mut c)
        .await
        .expect("ApiVersions answers");
    let end_txn = c
        .api_versions()
        .await
        .expect("ApiVersions answers")
        .into_iter()
        .find(|(key, ..)| *key == ApiKey::EndTxn as i16)
        .map(|(.., max)| max)
        .expect("EndTxn served");
    (tv, end_txn)
}

#[tokio::test(flavor = "multi_thread")]
async fn apache_4_4_runs_with_the_transaction_version_it_was_formatted_with() {
    if let Err(why) = kconform::targets::apache::available() {
        println!("SKIPPED: the jvm backend cannot run here: {why}");
        return;
    }
    let start = |label: &'static str| {
        tokio::task::spawn_blocking(move || {
            let release = Release::parse(label).unwrap();
            ApacheJvm::start_with(false, &release).expect("Apache 4.4.0 starts")
        })
    };
    let (tv1, tv2) = (start("4.4"), start("4.4+tv2"));
    let (tv1, tv2) = (tv1.await.unwrap(), tv2.await.unwrap());
    println!(
        "apache 4.4.0: started in {:.1} s (tv1) and {:.1} s (tv2)",
        tv1.start_time.as_secs_f64(),
        tv2.start_time.as_secs_f64()
    );
    assert_eq!(transaction_version_and_end_txn_max(&tv1).await, (1, 5));
    assert_eq!(transaction_version_and_end_txn_max(&tv2).await, (2, 5));

    let all = util::scenarios();
    let chosen: Vec<_> = all
        .iter()
        .filter(|s| WRITTEN_BY_DEFINITIONS.contains(&s.name.as_str()))
        .collect();
    assert_eq!(chosen.len(), WRITTEN_BY_DEFINITIONS.len());
    // Each answering as the release it is, so the scenarios' expectations hold it (an
    // external broker without a release answers as 3.7.2, and would only be compared).
    let targets = [
        TargetSpec::external(tv1.addr).claiming(Release::parse("4.4").unwrap()),
        TargetSpec::external(tv2.addr).claiming(Release::parse("4.4+tv2").unwrap()),
    ];
    for (s, t) in chosen.iter().zip(targets.iter().cycle()) {
        assert!(kconform::run::holds_expectations(s, t.answers_as()));
    }
    let (report, transcripts) =
        util::run_in_repository(&chosen, &targets, 2, Duration::from_secs(30))
            .await
            .expect("the run reports");
    for t in transcripts.iter().flatten() {
        assert!(
            t.failed_expectations.is_empty() && t.stopped.is_none(),
            "{} on {}: {:?} {:?}",
            t.scenario,
            t.target,
            t.failed_expectations,
            t.stopped
        );
    }
    // The epoch bump follows the version asked, not the feature: tv1 and tv2 answer alike.
    assert!(report.differences.is_empty(), "{:#?}", report.differences);
    // What the container backend does to the image's own storage: the transaction version
    // set through the Admin API once the broker runs, up and back down, each seen finalized.
    let mut admin = Connection::connect(tv1.addr, Duration::from_secs(10))
        .await
        .expect("connects");
    for level in [2, 1] {
        features::set_transaction_version(&mut admin, level, Duration::from_secs(30))
            .await
            .unwrap_or_else(|e| panic!("transaction.version to {level}: {e}"));
        assert_eq!(features::transaction_version(&mut admin).await, Ok(level));
    }
    // And as recorded for `apache-recorded@4.4` (ci/record-release.sh): these scenarios, the
    // ones 4.x changed most, hold their recordings to a live 4.4.0 on every CI run.
    let dir = util::root().join("snapshots");
    for (spec, transcripts) in targets.iter().zip(&transcripts) {
        let release = spec.answers_as().unwrap();
        let label = kconform::targets::recorded::label(release);
        for (t, s) in transcripts.iter().zip(&chosen) {
            let mut live = t.clone();
            kconform::run::mask_timing(s, &mut live);
            let recorded = kconform::targets::recorded::load(&dir, &s.name, &label)
                .unwrap_or_else(|e| panic!("{e}"));
            let steps = |t: &kconform::run::Transcript| serde_json::to_value(&t.steps).unwrap();
            let (live, recorded) = (steps(&live), steps(&recorded));
            let (live, recorded) = (live.as_array().unwrap(), recorded.as_array().unwrap());
            // The first step that differs, rather than both transcripts whole.
            let differs = live.iter().zip(recorded).find(|(l, r)| l != r);
            assert!(
                differs.is_none() && live.len() == recorded.len(),
                "{} on {release}: the live answers are not the recorded ones (ci/record-release.sh): {differs:#?}",
                s.name
            );
        }
    }
}

/// Records the answers of the Apache release `KCONFORM_RECORD_RELEASE` names (`4.4`,
/// `4.4+tv2`) to every scenario written for it, of every shape (one broker and three, with
/// SASL and without: each shape its own live target, started in turn), as
/// `apache-recorded@RELEASE[:3][+sasl]` reads them: `snapshots/<scenario>__apache@<label>.snap`,
/// each carrying the digest of the scenario text it answered. `KCONFORM_RECORD_SCENARIOS=a,b`
/// records only those (the shapes they need). Run by `ci/record-release.sh`, never by CI
/// (minutes on live brokers).
#[tokio::test(flavor = "multi_thread")]
#[ignore = "records a release's answers on a live Apache: ci/record-release.sh RELEASE"]
async fn record_the_answers_of_a_release() {
    let label = std::env::var("KCONFORM_RECORD_RELEASE")
        .expect("KCONFORM_RECORD_RELEASE names the release to record (4.4, 4.4+tv2)");
    let release = Release::parse(&label).expect("a release kconform knows");
    assert_ne!(
        release,
        Release::CLAIMED,
        "3.7.2's answers are the snapshots every CI run checks (all_scenarios)"
    );
    let only: Vec<String> = std::env::var("KCONFORM_RECORD_SCENARIOS")
        .map(|v| v.split(',').map(|n| n.trim().to_owned()).collect())
        .unwrap_or_default();
    kconform::targets::apache::available().expect("the jvm backend runs here");
    let all = util::scenarios();
    let all: Vec<&kconform::scenario::Scenario> = all
        .iter()
        .filter(|s| s.apache.contains(&release) && !s.kaas_only())
        .filter(|s| only.is_empty() || only.contains(&s.name))
        .collect();
    let unknown: Vec<&String> = only
        .iter()
        .filter(|n| !all.iter().any(|s| &s.name == *n))
        .collect();
    assert!(
        unknown.is_empty(),
        "KCONFORM_RECORD_SCENARIOS names no scenario written for {release}: {unknown:?}"
    );
    let mut recorded = 0;
    for (brokers, secured) in [(1, false), (3, false), (1, true), (3, true)] {
        let chosen = kconform::run::session::sized(&all, brokers, secured);
        if chosen.is_empty() {
            continue;
        }
        let spec = TargetSpec {
            brokers,
            secured,
            ..TargetSpec::one(kconform::targets::Kind::Apache(
                kconform::targets::apache::Backend::Jvm,
                release,
            ))
        };
        recorded += record_on(&spec, &chosen).await;
    }
    println!("{recorded} scenarios recorded from {release}");
}

/// Records `chosen` on a live `spec` started for them (and stopped after), as its snapshots;
/// how many.
async fn record_on(spec: &TargetSpec, chosen: &[&kconform::scenario::Scenario]) -> usize {
    let target = Arc::new(
        kconform::targets::Running::start(spec)
            .await
            .unwrap_or_else(|e| panic!("{} starts: {e}", spec.name())),
    );
    let progress: Arc<dyn Fn(&str) + Send + Sync> =
        Arc::new(|name: &str| println!("recorded: {name}"));
    let mut transcripts = kconform::run::run_many(
        chosen,
        &target,
        &[],
        kconform::run::DEADLINE,
        4,
        None,
        true,
        progress,
    )
    .await;
    if let Ok(target) = Arc::try_unwrap(target) {
        target.stop().await;
    }
    let snapshot = kconform::targets::recorded::label_of(spec);
    for (t, s) in transcripts.iter_mut().zip(chosen) {
        assert!(
            t.failed_expectations.is_empty() && t.stopped.is_none(),
            "{} on {}: {:?} {:?}",
            t.scenario,
            t.target,
            t.failed_expectations,
            t.stopped
        );
        kconform::run::mask_timing(s, t);
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(util::root().join("snapshots"));
        settings.set_prepend_module_to_snapshot(false);
        settings.set_omit_expression(true);
        settings.set_info(&std::collections::BTreeMap::from([(
            kconform::targets::recorded::DIGEST_KEY,
            s.digest.as_str(),
        )]));
        settings.bind(|| insta::assert_yaml_snapshot!(format!("{}__{snapshot}", s.name), t));
    }
    println!("{} scenarios recorded as {snapshot}", transcripts.len());
    transcripts.len()
}

/// The report of `kconform run --target <left> --target <right>` over every scenario of their
/// shape both are written for, with the repository's scenarios, ledger and snapshots.
async fn report_of(left: &str, right: &str) -> kconform::report::Report {
    let specs = [
        TargetSpec::parse(left).unwrap(),
        TargetSpec::parse(right).unwrap(),
    ];
    let all = util::scenarios();
    let picked: Vec<_> = all.iter().collect();
    let mut plan = kconform::run::plan::plan(picked, &[], &specs, false).expect("a plan");
    plan.leave_out_other_releases(&specs);
    // As `kconform run` does: what Apache cannot do (fill a disk) is left out of a run with it.
    plan.leave_out_missing_faults(&specs, &Default::default());
    let (report, _) = util::run_in_repository(&plan.chosen, &specs, 4, Duration::from_secs(30))
        .await
        .unwrap_or_else(|e| panic!("{left} beside {right}: {e}"));
    report
}

/// Without any Apache running: kaas-ref beside 4.4.0's recorded answers (either transaction
/// version) differs only where the ledger says (kaas's claims, and the changes Apache made up
/// to 4.4), and 3.7.2's recorded answers beside 4.4.0's differ exactly by the ledger's changes,
/// none stale. So CI holds the ledger's 4.x entries on every run, and a scenario edited since
/// 4.4.0's answers were recorded fails here (refused as recorded from another text) until
/// recorded again.
#[tokio::test(flavor = "multi_thread")]
async fn the_ledger_holds_against_the_recorded_answers_of_later_releases() {
    for release in kconform::targets::recorded::RELEASES {
        let recorded = format!("apache-recorded@{release}");
        let against_ref = report_of("ref", &recorded).await;
        let against_3_7 = report_of("apache-recorded", &recorded).await;
        for (left, report) in [("ref", &against_ref), ("apache-recorded", &against_3_7)] {
            assert_all_documented(left, &recorded, report);
        }
        // Apache's changes after 3.7 show, so the comparison is not vacuous.
        assert!(
            against_3_7
                .differences
                .iter()
                .any(|d| d.apache_since.as_deref() == Some("4.0")),
            "{recorded}: no 4.0 change shows"
        );
    }
}

/// The other shapes' recordings of the later releases (clusters, SASL and ACLs), with no
/// broker running: 3.7.2's recorded answers beside 4.4.0's of the same shape differ only by
/// the ledger's changes, none stale, so a cluster or SASL scenario edited since 4.4.0's
/// answers were recorded fails here until recorded again; and kaas-ref with SASL (one broker,
/// in process: seconds) beside them differs only where the ledger says. kaas-ref's clusters
/// beside them take minutes: `kconform run --target ref:3 --target apache-recorded@4.4+tv2:3`.
#[tokio::test(flavor = "multi_thread")]
async fn the_ledger_holds_against_every_shape_recorded_of_later_releases() {
    for release in kconform::targets::recorded::RELEASES {
        for shape in [":3", "+sasl", ":3+sasl"] {
            let recorded = format!("apache-recorded@{release}{shape}");
            let mut pairs = vec![(format!("apache-recorded{shape}"), recorded.clone())];
            if shape == "+sasl" {
                pairs.push(("ref+sasl".to_owned(), recorded.clone()));
            }
            for (left, right) in pairs {
                let report = report_of(&left, &right).await;
                assert!(
                    !report.runs.is_empty(),
                    "{left} beside {right}: no scenario ran"
                );
                assert_all_documented(&left, &right, &report);
            }
        }
    }
}

/// Asserts that the report of `left` beside `right` passes (every difference documented,
/// nothing stale, every expectation held), naming each undocumented difference and showing
/// the report where it does not; prints its figures where it does.
fn assert_all_documented(left: &str, right: &str, report: &kconform::report::Report) {
    let undocumented: Vec<_> = report
        .differences
        .iter()
        .filter(|d| d.documented_by.is_none())
        .map(|d| format!("{} {} {}", d.row.scenario, d.row.step, d.row.path))
        .collect();
    assert!(
        report.passed(),
        "{left} beside {right}: undocumented {undocumented:#?}, stale {:?}, failed {}\n{}",
        report.stale,
        report.failed_runs(),
        report.terminal(false)
    );
    println!(
        "{left} beside {right}: {} scenarios, {} differences, all documented, 0 stale",
        report.runs.len() / 2,
        report.differences.len()
    );
}
