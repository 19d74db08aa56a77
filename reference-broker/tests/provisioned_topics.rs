//! `kaas-ref --topics JSON --refuse-create-topics`: a cluster whose topics an operator
//! provisions. The listed topics exist from the start with their partitions and configs, a
//! client's CreateTopics is TOPIC_AUTHORIZATION_FAILED, Metadata creates nothing, and a
//! restart on the same data directory keeps the topics (and their records).

use crate::common;

use std::time::Duration;

use common::KaasRef;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::types::RDKafkaErrorCode;

fn admin(addr: &str) -> AdminClient<DefaultClientContext> {
    ClientConfig::new()
        .set("bootstrap.servers", addr)
        .create()
        .expect("admin client")
}

fn partitions(admin: &AdminClient<DefaultClientContext>, topic: &str) -> Option<usize> {
    let md = admin
        .inner()
        .fetch_metadata(Some(topic), Duration::from_secs(10))
        .expect("metadata");
    let t = md.topics().iter().find(|t| t.name() == topic)?;
    t.error().is_none().then(|| t.partitions().len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provisioned_topics_exist_and_creation_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let topics = r#"[{"name": "orders", "partitions": 3},
                     {"name": "state", "partitions": 1, "configs": {"cleanup.policy": "compact"}}]"#;
    let flags = ["--topics", topics, "--refuse-create-topics"];
    let broker = KaasRef::start(dir.path(), "127.0.0.1:0", &flags);
    let a = admin(&broker.addr);
    assert_eq!(partitions(&a, "orders"), Some(3));
    assert_eq!(partitions(&a, "state"), Some(1));
    // Metadata does not create an unknown topic when creation is refused.
    assert_eq!(partitions(&a, "not-provisioned"), None);
    let created = a
        .create_topics(
            &[NewTopic::new("new", 1, TopicReplication::Fixed(1))],
            &AdminOptions::new(),
        )
        .await
        .expect("CreateTopics is answered");
    assert_eq!(
        created[0].as_ref().unwrap_err().1,
        RDKafkaErrorCode::TopicAuthorizationFailed
    );
    // A restart with the same list keeps the topics (no "already exists" failure).
    drop(a);
    broker.kill();
    let broker = KaasRef::start(dir.path(), "127.0.0.1:0", &flags);
    assert_eq!(partitions(&admin(&broker.addr), "orders"), Some(3));
}

#[test]
fn a_bad_topic_list_is_refused_on_one_line() {
    for (topics, why) in [
        (
            r#"[{"name": "t", "partitions": 0}]"#,
            "topic t: number of partitions must be at least 1",
        ),
        (r#"[{"nam": "t"}]"#, "unknown field `nam`"),
        (
            r#"[{"name": "t", "partitions": 1, "configs": {"cleanup.policy": "shred"}}]"#,
            "topic t:",
        ),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kaas-ref"))
            .args(["--listen", "127.0.0.1:0", "--topics", topics])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        let line: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with("kaas-ref: "))
            .collect();
        assert_eq!(line.len(), 1, "{err}");
        assert!(line[0].contains(why), "{err}");
    }
}
