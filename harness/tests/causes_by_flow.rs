//! A cause hides nothing: a later difference is a consequence of an earlier one only where the
//! earlier differing value flowed into it. Held on kaas-ref behind a proxy that mutates one
//! answer of every scenario's first step (a text field, as a real kaas build wrote no error
//! message where Apache writes "NONE"), with a behavioural defect planted in a later step of a
//! few: the defect is a cause of its own and the text cause takes no consequence. And the
//! reverse: a mutated producer epoch still carries what the scenarios send with it.

use crate::util;

use std::time::Duration;

use kafka_protocol::messages::ApiKey;
use kconform::compare::causes::Cause;
use kconform::mutation::{Mutant, Mutation, Proxy, Scope};
use kconform::report::Report;
use kconform::scenario::Scenario;
use reference_broker::planted::{Bug, Planted};
use reference_broker::{Broker, BrokerConfig};

/// Scenarios that start at FindCoordinator v3 and go on to InitProducerId, two of them to a
/// TxnOffsetCommit that Apache refuses with 48 (where the planted defect answers 0).
const CHOSEN: [&str; 8] = [
    "txn-offset-commit-without-add-offsets",
    "state-complete-abort-txn-offset-commit",
    "txn-offset-commit-after-add-offsets",
    "add-partitions-happy-path",
    "add-partitions-wrong-epoch",
    "end-txn-abort-and-retry",
    "end-txn-commit-and-retry",
    "init-producer-id-rejoin",
];

/// The chosen scenarios run on kaas-ref (`planted`) behind a proxy mutating `mutant`, beside
/// Apache's recorded answers.
async fn judged(planted: Planted, mutant: Mutant) -> Report {
    let all = util::scenarios();
    let chosen: Vec<&Scenario> = CHOSEN
        .iter()
        .map(|name| {
            all.iter()
                .find(|s| s.name == *name)
                .unwrap_or_else(|| panic!("no scenario {name}"))
        })
        .collect();
    let broker = Broker::start(BrokerConfig {
        planted,
        ..BrokerConfig::for_tests()
    })
    .await
    .expect("kaas-ref starts");
    let proxy = Proxy::start(
        "127.0.0.1:0".parse().unwrap(),
        broker.addr(),
        Scope::One(mutant),
    )
    .await
    .expect("the proxy starts");
    let (report, _) = util::beside_recorded(proxy.addr, &chosen, 4, Duration::from_secs(10)).await;
    println!("{}", report.terminal(true));
    report
}

fn cause<'r>(report: &'r Report, needle: &str) -> &'r Cause {
    report
        .causes
        .iter()
        .find(|c| c.signature.contains(needle))
        .unwrap_or_else(|| panic!("no cause with '{needle}':\n{}", report.terminal(true)))
}

/// The text cause of every first step folds nothing under it; the defect planted later is an
/// undocumented cause of its own, in the scenarios where it shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_defect_after_a_text_difference_is_a_cause_of_its_own() {
    let report = judged(
        Planted::default().with(Bug::OffsetsOutsideTransaction),
        Mutant {
            api: ApiKey::FindCoordinator,
            version: 3,
            mutation: Mutation::NullText("error_message".into()),
        },
    )
    .await;
    assert!(!report.passed());
    let text = cause(&report, "FindCoordinator error_message: null | text");
    assert_eq!(text.consequences, 0, "{text:#?}");
    assert_eq!(text.scenarios.len(), CHOSEN.len(), "{text:#?}");
    let planted = cause(
        &report,
        "TxnOffsetCommit topics[].partitions[].error_code: 0 NONE | 48 INVALID_TXN_STATE",
    );
    assert_eq!(planted.documented_by, None);
    assert!(planted.differences >= 2, "{planted:#?}");
    assert!(
        planted
            .scenarios
            .contains(&"txn-offset-commit-without-add-offsets".to_owned()),
        "{planted:#?}"
    );
    // State comes before logged on the first screen.
    let at = |c: &Cause| report.causes.iter().position(|x| x == c).unwrap();
    assert!(at(planted) < at(text), "{}", report.terminal(false));
    // Every row of the flat list is in exactly one cause.
    let rows: usize = report.causes.iter().map(Cause::rows).sum();
    assert_eq!(rows, report.differences.len());
}

/// A producer epoch one higher at InitProducerId flows into every step that sends it: those
/// differences are its consequences, each with the chain that carried it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_mutated_epoch_carries_the_differences_of_the_steps_that_send_it() {
    let report = judged(
        Planted::default(),
        Mutant {
            api: ApiKey::InitProducerId,
            version: 4,
            mutation: Mutation::AddOne("producer_epoch".into()),
        },
    )
    .await;
    let epoch = cause(&report, "InitProducerId producer_epoch:");
    assert!(epoch.consequences > 0, "{epoch:#?}");
    assert!(
        epoch
            .consequence_chains
            .iter()
            .all(|c| c.follows[0].contains(".producer_epoch as ${")),
        "{epoch:#?}"
    );
    let text = report.terminal(true);
    assert!(
        text.contains("  then: ") && text.contains("(follows from 'init'.producer_epoch"),
        "{text}"
    );
}
