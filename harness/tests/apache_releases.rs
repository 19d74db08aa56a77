//! An Apache release other than 3.7.2 runs as a target: Apache Kafka 4.4.0 from its own jars
//! (Log4j 2, which logs the readiness line kconform waits for only with the binding kconform
//! adds), its KRaft storage formatted with the transaction version asked for, which the broker
//! then reports as finalized (ApiVersions v3), and it serves the versions 4.4 added (EndTxn v5),
//! which kconform writes and reads by Apache's definitions (kafka-protocol 0.15 stops short of
//! them): the scenarios written for 4.x hold every expectation on both transaction versions.
//! Skipped, saying why, where the jvm backend cannot run.

use std::time::Duration;

use std::sync::Arc;

use kafka_protocol::messages::{ApiKey, ApiVersionsRequest, RequestKind, ResponseKind};
use kafka_protocol::protocol::StrBytes;
use kconform::data::Source;
use kconform::report::progress::Quiet;
use kconform::run::session::Session;
use kconform::targets::apache::{ApacheJvm, Release};
use kconform::targets::TargetSpec;
use kconform::wire::client::Connection;

use crate::util;

/// The scenarios of what 4.x changed that kafka-protocol 0.15 cannot send or read (EndTxn v5,
/// TxnOffsetCommit v5, WriteTxnMarkers v2; Produce v12, sent as the v11 it is the same as),
/// and a removed version sent anyway (WriteTxnMarkers v0, which 4.x closes on).
const WRITTEN_BY_DEFINITIONS: [&str; 5] = [
    "end-txn-v5-epoch-bump",
    "txn-offset-commit-v5-without-add-offsets",
    "write-txn-markers-v2-transaction-version",
    "removed-versions-sent-anyway",
    "produce-v12-implicit-add",
];

/// The finalized `transaction.version` and EndTxn's highest version, from ApiVersions v3.
async fn transaction_version_and_end_txn_max(jvm: &ApacheJvm) -> (i16, i16) {
    let mut c = Connection::connect(jvm.addr, Duration::from_secs(10))
        .await
        .expect("connects");
    let request = ApiVersionsRequest::default()
        .with_client_software_name(StrBytes::from_static_str("kconform"))
        .with_client_software_version(StrBytes::from_static_str("test"));
    let ResponseKind::ApiVersions(r) = c
        .send(ApiKey::ApiVersions, 3, &RequestKind::ApiVersions(request))
        .await
        .expect("answers")
    else {
        panic!("an ApiVersions answer")
    };
    assert_eq!(r.error_code, 0);
    let tv = r
        .finalized_features
        .iter()
        .find(|f| f.name.as_str() == "transaction.version")
        .map(|f| f.max_version_level)
        .expect("4.4 finalizes a transaction.version");
    let end_txn = r
        .api_keys
        .iter()
        .find(|k| k.api_key == ApiKey::EndTxn as i16)
        .map(|k| k.max_version)
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
    let (scenarios, snapshots) = (
        Source::Dir(util::root().join("scenarios")),
        Source::Dir(util::root().join("snapshots")),
    );
    let session = Session {
        scenarios: &scenarios,
        snapshots: &snapshots,
        deadline: Duration::from_secs(30),
        provisioned_topics: false,
        strict_encoding: false,
        faults: &Default::default(),
    };
    // Each answering as the release it is, so the scenarios' expectations hold it (an
    // external broker without a release answers as 3.7.2, and would only be compared).
    let targets = [
        TargetSpec::external(tv1.addr).claiming(Release::parse("4.4").unwrap()),
        TargetSpec::external(tv2.addr).claiming(Release::parse("4.4+tv2").unwrap()),
    ];
    for (s, t) in chosen.iter().zip(targets.iter().cycle()) {
        assert!(kconform::run::holds_expectations(s, t.answers_as()));
    }
    let (report, transcripts) = session
        .run(&chosen, &targets, 2, Arc::new(Quiet))
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
}
