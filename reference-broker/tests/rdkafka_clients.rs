//! Real clients against an in-process reference broker: librdkafka (vendored build, through
//! rust-rdkafka) as an idempotent producer and as a consumer group that rebalances, commits,
//! and resumes from its committed offset after a broker restart.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::message::Message;
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::TopicPartitionList;
use reference_broker::{Broker, BrokerConfig, BrokerHandle};

async fn start(data_dir: &std::path::Path, listen: std::net::SocketAddr) -> BrokerHandle {
    Broker::start(BrokerConfig {
        listen,
        data_dir: Some(data_dir.to_owned()),
        ..BrokerConfig::for_tests()
    })
    .await
    .expect("broker starts")
}

fn producer(addr: &str) -> FutureProducer {
    ClientConfig::new()
        .set("bootstrap.servers", addr)
        .set("enable.idempotence", "true")
        .set("acks", "all")
        .set("message.timeout.ms", "20000")
        .create()
        .expect("producer")
}

fn consumer(addr: &str, group: &str) -> BaseConsumer {
    ClientConfig::new()
        .set("bootstrap.servers", addr)
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .set("session.timeout.ms", "6000")
        .set("heartbeat.interval.ms", "300")
        .set("partition.assignment.strategy", "range")
        .create()
        .expect("consumer")
}

async fn create_topic(addr: &str, name: &str, partitions: i32) {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", addr)
        .create()
        .expect("admin client");
    let results = admin
        .create_topics(
            &[NewTopic::new(name, partitions, TopicReplication::Fixed(1))],
            &AdminOptions::new().operation_timeout(Some(Duration::from_secs(10))),
        )
        .await
        .expect("CreateTopics answered");
    for r in results {
        r.expect("topic created");
    }
}

async fn produce(addr: &str, topic: &str, partition: i32, values: std::ops::Range<u32>) {
    let p = producer(addr);
    for i in values {
        let payload = format!("v{i}");
        p.send(
            FutureRecord::<(), _>::to(topic)
                .partition(partition)
                .payload(&payload),
            Duration::from_secs(20),
        )
        .await
        .unwrap_or_else(|(e, _)| panic!("delivery of {payload} failed: {e}"));
    }
}

/// Polls both consumers until `want` messages arrived in total or the deadline passes;
/// returns what each consumer saw, by partition.
fn poll_both(
    consumers: &[&BaseConsumer],
    want: usize,
    deadline: Duration,
) -> Vec<BTreeMap<i32, Vec<String>>> {
    let end = Instant::now() + deadline;
    let mut seen = vec![BTreeMap::<i32, Vec<String>>::new(); consumers.len()];
    while Instant::now() < end
        && seen
            .iter()
            .map(|s| s.values().map(Vec::len).sum::<usize>())
            .sum::<usize>()
            < want
    {
        for (i, c) in consumers.iter().enumerate() {
            if let Some(Ok(m)) = c.poll(Duration::from_millis(100)) {
                let v = String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned();
                seen[i].entry(m.partition()).or_default().push(v);
            }
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotent_producer_delivers_every_record_once() {
    let dir = tempfile::tempdir().unwrap();
    let broker = start(dir.path(), "127.0.0.1:0".parse().unwrap()).await;
    let addr = broker.addr().to_string();
    // Auto-created by Metadata on first use.
    produce(&addr, "idem", 0, 0..50).await;
    let c = consumer(&addr, "idem-check");
    c.subscribe(&["idem"]).unwrap();
    let seen = tokio::task::spawn_blocking(move || poll_both(&[&c], 50, Duration::from_secs(30)))
        .await
        .unwrap();
    let values: Vec<String> = seen[0].values().flatten().cloned().collect();
    let expected: Vec<String> = (0..50).map(|i| format!("v{i}")).collect();
    assert_eq!(values, expected, "every record once, in order");
    // The PID came from the persisted allocator.
    let alloc =
        std::fs::read_to_string(dir.path().join("__cluster/producer_ids/kaas-0.json")).unwrap();
    assert_eq!(alloc, r#"{"nextBlock":1000}"#);
    broker.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumer_group_rebalances_commits_and_resumes_after_restart() {
    let dir = tempfile::tempdir().unwrap();
    // A port below the ephemeral range: it is given back at the restart, and a port 0 drew
    // from the range every outbound connection takes its local port from (CI lost the race).
    let ip = "127.0.0.1".parse().unwrap();
    let port = reference_broker::ports::free_port(ip).expect("a free port");
    let broker = start(dir.path(), std::net::SocketAddr::new(ip, port)).await;
    let listen = broker.addr();
    let addr = listen.to_string();
    create_topic(&addr, "orders", 2).await;
    produce(&addr, "orders", 0, 0..10).await;
    produce(&addr, "orders", 1, 10..20).await;

    let addr2 = addr.clone();
    let (first, second) = tokio::task::spawn_blocking(move || {
        let a = consumer(&addr2, "g1");
        a.subscribe(&["orders"]).unwrap();
        // A alone gets both partitions; it reads a little.
        let before = poll_both(&[&a], 4, Duration::from_secs(30));
        // B joins: the group rebalances to one partition each.
        let b = consumer(&addr2, "g1");
        b.subscribe(&["orders"]).unwrap();
        let end = Instant::now() + Duration::from_secs(40);
        loop {
            let _ = a.poll(Duration::from_millis(100));
            let _ = b.poll(Duration::from_millis(100));
            let pa = a.assignment().unwrap().count();
            let pb = b.assignment().unwrap().count();
            if pa == 1 && pb == 1 {
                break;
            }
            assert!(
                Instant::now() < end,
                "no rebalance to 1+1 partitions (a={pa}, b={pb})"
            );
        }
        // Nothing was committed before the rebalance, so both start again from the earliest
        // offset: read all 20, commit.
        let after = poll_both(&[&a, &b], 20, Duration::from_secs(30));
        a.commit_consumer_state(CommitMode::Sync).unwrap();
        b.commit_consumer_state(CommitMode::Sync).unwrap();
        let mut committed = TopicPartitionList::new();
        committed.add_partition("orders", 0);
        committed.add_partition("orders", 1);
        let offsets = a
            .committed_offsets(committed, Duration::from_secs(10))
            .unwrap();
        (before, (after, offsets))
    })
    .await
    .unwrap();
    let (after, offsets) = second;
    let a_parts: BTreeSet<i32> = after[0].keys().copied().collect();
    let b_parts: BTreeSet<i32> = after[1].keys().copied().collect();
    assert!(
        a_parts.is_disjoint(&b_parts),
        "one partition each: {a_parts:?} {b_parts:?}"
    );
    assert!(
        !first[0].is_empty(),
        "the first member read before the rebalance"
    );
    let committed: Vec<i64> = offsets
        .elements()
        .iter()
        .map(|e| e.offset().to_raw().unwrap_or(-1))
        .collect();
    assert_eq!(
        committed,
        vec![10, 10],
        "both partitions committed at their ends"
    );
    // What was committed is in the kaas offsets file.
    let file =
        std::fs::read_to_string(dir.path().join("__cluster/__consumer_offsets/g1.json")).unwrap();
    assert!(file.starts_with(r#"{"offsets":{"orders/0":"#), "{file}");

    // Restart on the same address and data dir; add records; a new member resumes.
    broker.shutdown().await;
    let broker = start(dir.path(), listen).await;
    produce(&addr, "orders", 0, 20..23).await;
    let addr3 = addr.clone();
    let resumed = tokio::task::spawn_blocking(move || {
        let c = consumer(&addr3, "g1");
        c.subscribe(&["orders"]).unwrap();
        let seen = poll_both(&[&c], 3, Duration::from_secs(40));
        // Give it a moment to prove nothing older is redelivered.
        let extra = poll_both(&[&c], 1, Duration::from_secs(2));
        (seen, extra)
    })
    .await
    .unwrap();
    let values: Vec<String> = resumed.0[0].values().flatten().cloned().collect();
    assert_eq!(
        values,
        vec!["v20", "v21", "v22"],
        "resumed from the committed offsets"
    );
    assert!(
        resumed.1[0].is_empty(),
        "nothing redelivered: {:?}",
        resumed.1
    );
    broker.shutdown().await;
}
