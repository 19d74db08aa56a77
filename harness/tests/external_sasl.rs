//! A secured broker already running, judged as `external+sasl=HOST:PORT`: the security
//! scenarios log in as kconform's users and set up their ACLs as the super user, as on
//! `ref+sasl`. A broker whose users differ stops each scenario with the login that failed.

use std::sync::Arc;
use std::time::Duration;

use kconform::run;
use kconform::scenario::Scenario;
use kconform::targets::{Running, TargetSpec};
use reference_broker::{Broker, BrokerConfig};

async fn judged(security: reference_broker::Security) -> Vec<kconform::transcript::Transcript> {
    let broker = Broker::start(BrokerConfig {
        security: Some(security),
        group_initial_rebalance_delay: Duration::ZERO,
        offsets_topic_partitions: 1,
        ..BrokerConfig::for_tests()
    })
    .await
    .expect("kaas-ref starts");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let scenarios = Scenario::load_dir(&root.join("scenarios")).expect("scenarios load");
    let secured: Vec<&Scenario> = scenarios
        .iter()
        .filter(|s| s.secured() && s.brokers == 1)
        .collect();
    assert!(secured.len() >= 10, "{} security scenarios", secured.len());
    let target = Arc::new(
        Running::start(&TargetSpec::external(broker.addr()).sasl())
            .await
            .expect("an external target is only named"),
    );
    let transcripts = run::run_many(
        &secured,
        &target,
        &[],
        Duration::from_secs(10),
        4,
        None,
        true,
        Arc::new(|_: &str| {}),
    )
    .await;
    broker.shutdown().await;
    transcripts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secured_broker_with_kconforms_users_is_judged_by_the_security_scenarios() {
    for t in judged(kconform::security::ref_security()).await {
        assert!(
            t.failed_expectations.is_empty(),
            "{}: {:?}",
            t.scenario,
            t.failed_expectations
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secured_broker_with_other_passwords_stops_each_scenario_at_the_login() {
    let mut security = kconform::security::ref_security();
    for user in &mut security.users {
        user.password = format!("not-{}", user.password);
    }
    for t in judged(security).await {
        let why = t.stopped.unwrap_or_default();
        assert!(
            why.contains("authentication as") && why.contains("failed"),
            "{}: {why}",
            t.scenario
        );
    }
}
