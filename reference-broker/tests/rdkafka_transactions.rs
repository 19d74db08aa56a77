//! Transactions with real clients (librdkafka): the EOS v2 consume-transform-produce loop,
//! abort, fencing by a second producer, and the reaper's timeout abort.

use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use rdkafka::TopicPartitionList;
use reference_broker::{Broker, BrokerConfig, BrokerHandle};

const T: Duration = Duration::from_secs(20);

async fn broker() -> BrokerHandle {
    Broker::start(BrokerConfig {
        txn_reaper_interval: Duration::from_millis(200),
        ..BrokerConfig::for_tests()
    })
    .await
    .expect("broker starts")
}

fn txn_producer(addr: &str, id: &str, timeout_ms: u32) -> ThreadedProducer<DefaultProducerContext> {
    let p: ThreadedProducer<DefaultProducerContext> = ClientConfig::new()
        .set("bootstrap.servers", addr)
        .set("transactional.id", id)
        .set("transaction.timeout.ms", timeout_ms.to_string())
        .set("message.timeout.ms", timeout_ms.to_string())
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
        .set("session.timeout.ms", "6000")
        .create()
        .expect("consumer")
}

/// Everything a fresh consumer reads from `topic` at `isolation` within a few quiet seconds.
fn read_all(addr: &str, topic: &str, isolation: &str) -> Vec<String> {
    let c = consumer(addr, &format!("reader-{}", uuid_like()), isolation);
    c.subscribe(&[topic]).unwrap();
    let mut out = Vec::new();
    let end = Instant::now() + Duration::from_secs(20);
    let mut assigned_at = None;
    while Instant::now() < end {
        match c.poll(Duration::from_millis(100)) {
            Some(Ok(m)) => {
                out.push(String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned())
            }
            _ => {
                if c.assignment().map(|a| a.count() > 0).unwrap_or(false) {
                    let t = *assigned_at.get_or_insert_with(Instant::now);
                    if t.elapsed() > Duration::from_secs(2) {
                        break;
                    }
                }
            }
        }
    }
    out
}

fn uuid_like() -> String {
    format!(
        "{:x}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}

fn send(p: &ThreadedProducer<DefaultProducerContext>, topic: &str, value: &str) {
    p.send(BaseRecord::<(), _>::to(topic).payload(value))
        .map_err(|(e, _)| e)
        .expect("enqueued");
}

fn committed(c: &BaseConsumer, topic: &str) -> i64 {
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition(topic, 0);
    c.committed_offsets(tpl, T).unwrap().elements()[0]
        .offset()
        .to_raw()
        .unwrap_or(-1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consume_transform_produce_commit_and_abort() {
    let broker = broker().await;
    let addr = broker.addr().to_string();
    tokio::task::spawn_blocking(move || {
        // Input: ten records.
        let plain: ThreadedProducer<DefaultProducerContext> = ClientConfig::new()
            .set("bootstrap.servers", &addr)
            .create()
            .unwrap();
        for i in 0..10 {
            send(&plain, "in", &format!("in-{i}"));
        }
        plain.flush(T).unwrap();

        let producer = txn_producer(&addr, "eos-1", 60_000);
        let input = consumer(&addr, "eos-g", "read_committed");
        input.subscribe(&["in"]).unwrap();
        let mut batch = Vec::new();
        let end = Instant::now() + T;
        while batch.len() < 5 && Instant::now() < end {
            if let Some(Ok(m)) = input.poll(Duration::from_millis(100)) {
                batch.push(String::from_utf8_lossy(m.payload().unwrap()).into_owned());
            }
        }
        assert_eq!(batch.len(), 5);
        // Committed transaction: five transformed records and the input offsets.
        producer.begin_transaction().unwrap();
        for v in &batch {
            send(&producer, "out", &v.replace("in-", "out-"));
        }
        let mut offsets = TopicPartitionList::new();
        offsets
            .add_partition_offset("in", 0, rdkafka::Offset::Offset(5))
            .unwrap();
        producer
            .send_offsets_to_transaction(&offsets, &input.group_metadata().unwrap(), T)
            .unwrap();
        producer.commit_transaction(T).unwrap();
        assert_eq!(committed(&input, "in"), 5, "offsets moved with the commit");

        // Aborted transaction: nothing visible, offsets do not move.
        producer.begin_transaction().unwrap();
        for i in 5..10 {
            send(&producer, "out", &format!("aborted-{i}"));
        }
        let mut offsets = TopicPartitionList::new();
        offsets
            .add_partition_offset("in", 0, rdkafka::Offset::Offset(10))
            .unwrap();
        producer
            .send_offsets_to_transaction(&offsets, &input.group_metadata().unwrap(), T)
            .unwrap();
        producer.flush(T).unwrap();
        producer.abort_transaction(T).unwrap();
        assert_eq!(committed(&input, "in"), 5, "an abort moves no offset");

        let committed_view = read_all(&addr, "out", "read_committed");
        assert_eq!(
            committed_view,
            (0..5).map(|i| format!("out-{i}")).collect::<Vec<_>>(),
            "read_committed sees exactly the committed records"
        );
        let uncommitted_view = read_all(&addr, "out", "read_uncommitted");
        assert_eq!(
            uncommitted_view.len(),
            10,
            "read_uncommitted also sees the aborted records"
        );
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_producer_with_the_same_id_fences_the_first() {
    let broker = broker().await;
    let addr = broker.addr().to_string();
    tokio::task::spawn_blocking(move || {
        let first = txn_producer(&addr, "fenced-id", 60_000);
        first.begin_transaction().unwrap();
        send(&first, "f", "one");
        first.commit_transaction(T).unwrap();
        let _second = txn_producer(&addr, "fenced-id", 60_000);
        // The first producer's next transaction fails as fenced.
        first.begin_transaction().unwrap();
        send(&first, "f", "two");
        let err = first.commit_transaction(T).unwrap_err();
        let fenced = match &err {
            KafkaError::Transaction(e) => {
                e.is_fatal() && format!("{e}").to_lowercase().contains("fenced")
            }
            _ => false,
        };
        assert!(fenced, "expected a fatal fenced error, got {err:?}");
        assert_eq!(read_all(&addr, "f", "read_committed"), vec!["one"]);
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reaper_aborts_a_transaction_left_open_past_its_timeout() {
    let broker = broker().await;
    let addr = broker.addr().to_string();
    let data_dir = broker.data_dir().to_owned();
    tokio::task::spawn_blocking(move || {
        let p = txn_producer(&addr, "slow-id", 1000);
        p.begin_transaction().unwrap();
        send(&p, "slow", "never-visible");
        p.flush(T).unwrap();
        // Past the 1 s timeout, with the reaper ticking every 200 ms.
        std::thread::sleep(Duration::from_secs(3));
        let slot = reference_broker::txn::slots::slot_of("slow-id");
        let file =
            std::fs::read_to_string(data_dir.join(format!("__cluster/txn_state/slot-{slot}.json")))
                .unwrap();
        assert!(
            file.contains(r#""state":"CompleteAbort""#),
            "reaped: {file}"
        );
        assert!(read_all(&addr, "slow", "read_committed").is_empty());
        // The producer's epoch was bumped: its commit fails.
        assert!(p.commit_transaction(T).is_err());
    })
    .await
    .unwrap();
    broker.shutdown().await;
}
