//! Real clients against both brokers: the same librdkafka workload — a committed transaction,
//! an aborted one, a consume-process-produce commit with sendOffsetsToTransaction, and a
//! producer fenced by a second one with its transactional id — run on kaas-ref and on a live
//! Apache 3.7, and what the clients saw must be the same on both (and what EOS promises).

use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use rdkafka::{Offset, TopicPartitionList};

use kconform::target::{Running, TargetSpec};

const T: Duration = Duration::from_secs(30);

/// What the clients saw.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    /// Values a read_committed consumer read, in order.
    committed: Vec<String>,
    /// How many records a read_uncommitted consumer read.
    uncommitted: usize,
    /// The group's committed offset after sendOffsetsToTransaction and commit.
    group_offset: Option<i64>,
    /// The first producer's error once a second one took its transactional id.
    fenced: String,
}

fn producer(addr: &str, id: &str) -> ThreadedProducer<DefaultProducerContext> {
    let p: ThreadedProducer<DefaultProducerContext> = ClientConfig::new()
        .set("bootstrap.servers", addr)
        .set("transactional.id", id)
        .set("transaction.timeout.ms", "60000")
        .create()
        .expect("transactional producer");
    p.init_transactions(T).expect("init_transactions");
    p
}

fn consumer(addr: &str, group: &str, isolation: &str) -> BaseConsumer {
    ClientConfig::new()
        .set("bootstrap.servers", addr)
        .set("group.id", group)
        .set("isolation.level", isolation)
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .create()
        .expect("consumer")
}

fn send(p: &ThreadedProducer<DefaultProducerContext>, topic: &str, values: &[String]) {
    for v in values {
        p.send(BaseRecord::<(), _>::to(topic).payload(v).partition(0))
            .map_err(|(e, _)| e)
            .expect("send");
    }
    p.flush(T).expect("flush");
}

/// Every record a fresh consumer reads from partition 0 at `isolation` until two quiet seconds.
fn read(addr: &str, topic: &str, isolation: &str) -> Vec<String> {
    let c = consumer(addr, &format!("reader-{}", uuid::Uuid::new_v4()), isolation);
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, 0, Offset::Beginning)
        .unwrap();
    c.assign(&tpl).unwrap();
    let (mut out, mut quiet_since) = (Vec::new(), Instant::now());
    let end = Instant::now() + T;
    while Instant::now() < end && quiet_since.elapsed() < Duration::from_secs(2) {
        if let Some(Ok(m)) = c.poll(Duration::from_millis(100)) {
            out.push(String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned());
            quiet_since = Instant::now();
        }
    }
    out
}

fn values(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

/// The workload, on the broker at `addr`.
fn workload(addr: &str) -> Seen {
    let run = uuid::Uuid::new_v4().simple().to_string();
    let (topic, txn, group) = (format!("rc-{run}"), format!("tx-{run}"), format!("g-{run}"));
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", addr)
        .create()
        .expect("admin client");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(admin.create_topics(
        &[NewTopic::new(&topic, 1, TopicReplication::Fixed(1))],
        &AdminOptions::new().operation_timeout(Some(T)),
    ))
    .expect("create topic");

    let p = producer(addr, &txn);
    p.begin_transaction().unwrap();
    send(&p, &topic, &values("c", 5));
    p.commit_transaction(T).expect("commit");
    p.begin_transaction().unwrap();
    send(&p, &topic, &values("a", 5));
    p.abort_transaction(T).expect("abort");

    // Consume-process-produce: the output record and the group's offset commit together.
    let input = consumer(addr, &group, "read_committed");
    p.begin_transaction().unwrap();
    send(&p, &topic, &values("x", 1));
    let mut offsets = TopicPartitionList::new();
    offsets
        .add_partition_offset(&topic, 0, Offset::Offset(5))
        .unwrap();
    p.send_offsets_to_transaction(&offsets, &input.group_metadata().unwrap(), T)
        .expect("send_offsets_to_transaction");
    p.commit_transaction(T).expect("commit with offsets");

    // A second producer with the same id fences the first.
    let _second = producer(addr, &txn);
    let fenced = (|| {
        p.begin_transaction()?;
        send(&p, &topic, &values("z", 1));
        p.commit_transaction(T)
    })();
    let fenced = match fenced {
        Err(KafkaError::Transaction(e)) => {
            format!("{}{}", if e.is_fatal() { "fatal " } else { "" }, e.code())
        }
        other => format!("{other:?}"),
    };

    let mut tpl = TopicPartitionList::new();
    tpl.add_partition(&topic, 0);
    let group_offset = match input
        .committed_offsets(tpl, T)
        .expect("committed offsets")
        .find_partition(&topic, 0)
        .map(|e| e.offset())
    {
        Some(Offset::Offset(o)) => Some(o),
        _ => None,
    };
    Seen {
        committed: read(addr, &topic, "read_committed"),
        uncommitted: read(addr, &topic, "read_uncommitted").len(),
        group_offset,
        fenced,
    }
}

async fn seen_on(spec: TargetSpec) -> Seen {
    let target = Running::start(&spec).await.expect("target starts");
    let addr = target.addr.to_string();
    let seen = tokio::task::spawn_blocking(move || workload(&addr))
        .await
        .expect("workload");
    target.stop().await;
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn librdkafka_sees_the_same_transactions_on_both_brokers() {
    let kaas = seen_on(TargetSpec::Ref).await;
    let mut expected: Vec<String> = values("c", 5);
    expected.extend(values("x", 1));
    assert_eq!(kaas.committed, expected, "read_committed on kaas-ref");
    assert_eq!(
        kaas.uncommitted, 11,
        "read_uncommitted sees aborted records too"
    );
    assert_eq!(kaas.group_offset, Some(5));
    assert!(kaas.fenced.starts_with("fatal"), "{}", kaas.fenced);
    match kconform::apache::available() {
        Ok(()) => {
            let apache = seen_on(TargetSpec::Apache(kconform::apache::Backend::Jvm)).await;
            assert_eq!(
                kaas, apache,
                "kaas-ref (left) and Apache (right) differ for librdkafka"
            );
            println!("librdkafka saw the same on both: {kaas:?}");
        }
        Err(why) => println!("SKIPPED the Apache half: {why}"),
    }
}
