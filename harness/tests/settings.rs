//! The settings check before a run: a broker started with its defaults is named as configured
//! otherwise than the scenarios assume, each setting with its value; one started with the
//! settings `kconform settings` lists passes it.

use std::time::Duration;

use kconform::targets::{Running, TargetSpec};
use reference_broker::{Broker, BrokerConfig};

async fn checked(config: BrokerConfig) -> kconform::targets::settings::Checked {
    let broker = Broker::start(config).await.expect("kaas-ref starts");
    let target = Running::start(&TargetSpec::external(broker.addr()))
        .await
        .expect("an external target");
    target
        .check_settings(Duration::from_secs(10))
        .await
        .expect("the check runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_with_its_own_defaults_is_named_and_one_set_up_alike_passes() {
    // kaas-ref's defaults are kaas's: a reaper every 10 s, a 3 s initial rebalance delay, 50
    // offsets partitions.
    let defaults = checked(BrokerConfig {
        listen: std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
        ..BrokerConfig::default()
    })
    .await;
    let named: Vec<(&str, Option<&str>)> = defaults
        .differs
        .iter()
        .map(|d| (d.property.as_str(), d.found.as_deref()))
        .collect();
    assert_eq!(
        named,
        [
            ("offsets.topic.num.partitions", Some("50")),
            (
                "transaction.abort.timed.out.transaction.cleanup.interval.ms",
                Some("10000")
            ),
            ("group.initial.rebalance.delay.ms", Some("3000")),
        ],
        "{defaults:?}"
    );
    assert!(defaults.summary().contains("the scenarios assume 500"));
    let alike = checked(BrokerConfig {
        txn_reaper_interval: Duration::from_millis(500),
        offsets_topic_partitions: 1,
        ..BrokerConfig::for_tests()
    })
    .await;
    assert_eq!(alike.differs, [], "{alike:?}");
    assert_eq!(alike.read, 5);
}

/// On a broker whose offsets topic has 50 partitions, the scenario that reads its Metadata
/// (which says it depends on offsets.topic.num.partitions) differs from Apache: a
/// CONFIGURATION finding naming the setting, not undocumented behaviour. A scenario that does
/// not depend on it, run beside, is judged as always.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_difference_of_a_setting_the_broker_has_otherwise_is_its_configuration() {
    let broker = Broker::start(BrokerConfig {
        offsets_topic_partitions: 50,
        ..BrokerConfig::for_tests()
    })
    .await
    .expect("kaas-ref starts");
    let all = crate::util::scenarios();
    let chosen: Vec<&kconform::Scenario> = all
        .iter()
        .filter(|s| {
            ["metadata-consumer-offsets-internal", "end-txn-on-empty"].contains(&s.name.as_str())
        })
        .collect();
    assert_eq!(chosen.len(), 2);
    let (report, _) =
        crate::util::beside_recorded(broker.addr(), &chosen, 2, Duration::from_secs(10)).await;
    let origins: Vec<&str> = report.origins.iter().map(|o| o.origin.as_str()).collect();
    assert!(
        origins
            .iter()
            .any(|o| o.contains("offsets.topic.num.partitions is 50 (the scenarios assume 1)")),
        "{origins:?}"
    );
    let marked: Vec<_> = report
        .causes
        .iter()
        .filter(|c| c.configuration.is_some())
        .collect();
    assert_eq!(marked.len(), 1, "{:#?}", report.causes);
    assert_eq!(marked[0].scenarios, ["metadata-consumer-offsets-internal"]);
    assert!(marked[0]
        .configuration
        .as_deref()
        .is_some_and(|why| why.contains("external's offsets.topic.num.partitions is 50")));
    // The documented deviation of the other scenario is not the broker's configuration.
    assert!(report
        .causes
        .iter()
        .any(|c| c.documented_by.is_some() && c.configuration.is_none()));
    let text = report.terminal(false);
    assert!(text.contains("CONFIGURATION state Metadata"), "{text}");
}
