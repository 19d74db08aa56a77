//! A topic is created whole or not at all, and deleted the same way: across a storage failure
//! part-way, and across kill -9 in the middle (restart: no half topic visible, no debris on
//! disk). And a full disk: the broker answers KAFKA_STORAGE_ERROR where a write was needed,
//! keeps serving what it can, and loses nothing it acknowledged.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::wire::{broker, partition_dirs, s};
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion};
use reference_broker::limits::Limits;
use reference_broker::storage::{batch, faults};

const KAFKA_STORAGE_ERROR: i16 = 56;

#[tokio::test]
async fn a_creation_failing_part_way_leaves_nothing() {
    let b = broker(Limits::default());
    // The fourth partition's directory cannot be made: the disk is full there.
    let fourth = b.dir.path().join("logs").join("big-3");
    faults::fill(&fourth);
    let answer = b.create(&[("big", 8)], &[]).await;
    faults::free(&fourth);
    assert_eq!(answer[0].0, KAFKA_STORAGE_ERROR, "{answer:?}");
    assert_eq!(
        b.topics_and_dirs(),
        (vec![], vec![]),
        "the three made are removed"
    );
    assert_eq!(b.create(&[("big", 8)], &[]).await[0].0, 0);
    assert_eq!(b.topics_and_dirs().1.len(), 8);
}

#[tokio::test]
async fn a_deletion_is_whole_across_a_crash() {
    use reference_broker::storage::topics::TopicRegistry;

    let dir = tempfile::tempdir().unwrap();
    let mut registry = TopicRegistry::open(dir.path()).unwrap();
    registry.create("kept", 2).unwrap();
    registry.create("going", 3).unwrap();
    drop(registry);
    // A crash just after the commit point of deleting "going": its metadata file is gone,
    // its directories are not. And a crash before a creation's commit point: directories of a
    // topic that has no metadata file, one of them beyond "kept"'s partitions.
    std::fs::remove_file(dir.path().join("topics/going.json")).unwrap();
    for stray in ["half-0", "half-1", "kept-2"] {
        std::fs::create_dir_all(dir.path().join("logs").join(stray)).unwrap();
    }
    std::fs::write(dir.path().join("topics/half.json.tmp"), b"{").unwrap();
    let registry = TopicRegistry::open(dir.path()).unwrap();
    let names: Vec<&str> = registry.iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["kept"]);
    assert_eq!(partition_dirs(dir.path()), ["kept-0", "kept-1"]);
    assert!(!dir.path().join("topics/half.json.tmp").exists());
}

/// One request on a fresh connection to a broker process, its answer decoded.
fn call<Req, Resp>(addr: &str, api: ApiKey, version: i16, request: &Req) -> std::io::Result<Resp>
where
    Req: Encodable + HeaderVersion,
    Resp: Decodable + HeaderVersion,
{
    let body = common::wire::frame(api, version, request);
    let mut conn = TcpStream::connect(addr)?;
    conn.set_read_timeout(Some(Duration::from_secs(30)))?;
    conn.write_all(&(body.len() as i32).to_be_bytes())?;
    conn.write_all(&body)?;
    let mut size = [0u8; 4];
    conn.read_exact(&mut size)?;
    let mut answer = vec![0u8; i32::from_be_bytes(size) as usize];
    conn.read_exact(&mut answer)?;
    let mut buf = Bytes::from(answer);
    ResponseHeader::decode(&mut buf, Resp::header_version(version)).unwrap();
    Ok(Resp::decode(&mut buf, version).unwrap())
}

fn create_request(name: &str, partitions: i32) -> CreateTopicsRequest {
    CreateTopicsRequest::default()
        .with_timeout_ms(60_000)
        .with_topics(vec![CreatableTopic::default()
            .with_name(TopicName(s(name)))
            .with_num_partitions(partitions)
            .with_replication_factor(1)])
}

#[test]
fn kill_9_while_creating_a_topic_leaves_no_half_topic() {
    let dir = tempfile::tempdir().unwrap();
    let raise = [
        "--max-partitions-per-topic",
        "50000",
        "--max-partitions-per-request",
        "50000",
    ];
    let broker = common::KaasRef::start(dir.path(), "127.0.0.1:0", &raise);
    let addr = broker.addr.clone();
    let creating = std::thread::spawn(move || {
        let _: std::io::Result<CreateTopicsResponse> = call(
            &addr,
            ApiKey::CreateTopics,
            7,
            &create_request("big", 50_000),
        );
    });
    // Kill it once the creation is well under way.
    let started = Instant::now();
    while partition_dirs(dir.path()).len() < 200 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "creation never started"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    broker.kill();
    let _ = creating.join();
    let left = partition_dirs(dir.path()).len();
    assert!(
        (200..50_000).contains(&left),
        "killed part-way: {left} directories"
    );

    let broker = common::KaasRef::start(dir.path(), "127.0.0.1:0", &raise);
    let metadata: MetadataResponse = call(
        &broker.addr,
        ApiKey::Metadata,
        12,
        &MetadataRequest::default().with_topics(None),
    )
    .unwrap();
    assert!(
        metadata.topics.is_empty(),
        "no half topic: {:?}",
        metadata.topics
    );
    assert_eq!(
        partition_dirs(dir.path()),
        Vec::<String>::new(),
        "no debris"
    );
    let again: CreateTopicsResponse = call(
        &broker.addr,
        ApiKey::CreateTopics,
        7,
        &create_request("big", 3),
    )
    .unwrap();
    assert_eq!(again.topics[0].error_code, 0);
    assert_eq!(partition_dirs(dir.path()), ["big-0", "big-1", "big-2"]);
}

#[tokio::test]
async fn a_full_disk_refuses_writes_keeps_serving_and_loses_nothing_acknowledged() {
    let b = broker(Limits::default());
    b.create(&[("t", 1)], &[]).await;
    let produce = |value: &'static [u8]| {
        let records = [batch::record(0, 0, None, Some(value))];
        ProduceRequest::default()
            .with_acks(-1)
            .with_timeout_ms(5000)
            .with_topic_data(vec![produce_request::TopicProduceData::default()
                .with_name(TopicName(s("t")))
                .with_partition_data(vec![
                    produce_request::PartitionProduceData::default()
                        .with_index(0)
                        .with_records(Some(Bytes::from(batch::build(
                            0, 0, 1, 1, -1, -1, -1, &records,
                        )))),
                ])])
    };
    let code = |r: ProduceResponse| r.responses[0].partition_responses[0].error_code;
    assert_eq!(code(b.call(ApiKey::Produce, 9, &produce(b"one")).await), 0);
    assert_eq!(code(b.call(ApiKey::Produce, 9, &produce(b"two")).await), 0);

    faults::fill(b.dir.path());
    assert_eq!(
        code(b.call(ApiKey::Produce, 9, &produce(b"lost")).await),
        KAFKA_STORAGE_ERROR
    );
    let created = b.create(&[("u", 2)], &[]).await;
    assert_eq!(created[0].0, KAFKA_STORAGE_ERROR, "{created:?}");
    // Reads and metadata still answer, with every acknowledged record.
    assert_eq!(values(&b, 0).await, ["one", "two"]);
    let versions: ApiVersionsResponse = b
        .call(ApiKey::ApiVersions, 3, &ApiVersionsRequest::default())
        .await;
    assert_eq!(versions.error_code, 0);
    faults::free(b.dir.path());

    assert_eq!(
        code(b.call(ApiKey::Produce, 9, &produce(b"three")).await),
        0
    );
    assert_eq!(values(&b, 0).await, ["one", "two", "three"]);
    assert_eq!(
        b.topics_and_dirs(),
        (vec!["t".to_owned()], vec!["t-0".to_owned()])
    );
    // And after a restart on the same directory.
    let reopened = reference_broker::broker::open_in_dir(b.dir.path()).unwrap();
    let log = reopened.partition("t", 0).unwrap();
    assert_eq!(log.lock().high_watermark(), 3);
}

#[tokio::test]
async fn a_transaction_ended_on_a_full_disk_is_retried_not_lost() {
    let b = broker(Limits::default());
    b.create(&[("t", 1)], &[]).await;
    let (pid, epoch) = b.init_txn("tx").await;
    assert_eq!(b.add_partitions("tx", pid, epoch, &[("t", 0)]).await, [0]);
    let end = EndTxnRequest::default()
        .with_transactional_id(TransactionalId(s("tx")))
        .with_producer_id(ProducerId(pid))
        .with_producer_epoch(epoch)
        .with_committed(true);
    faults::fill(b.dir.path());
    let r: EndTxnResponse = b.call(ApiKey::EndTxn, 3, &end).await;
    faults::free(b.dir.path());
    assert_eq!(
        r.error_code, 15,
        "COORDINATOR_NOT_AVAILABLE, which the producer retries"
    );
    let entry = b.state.txn.entry("tx").unwrap().unwrap();
    assert_eq!(format!("{:?}", entry.state), "Ongoing", "nothing half done");
    let r: EndTxnResponse = b.call(ApiKey::EndTxn, 3, &end).await;
    assert_eq!(r.error_code, 0);
    let entry = b.state.txn.entry("tx").unwrap().unwrap();
    assert_eq!(format!("{:?}", entry.state), "CompleteCommit");
    let log = b.state.partition("t", 0).unwrap();
    assert_eq!(log.lock().high_watermark(), 1, "one COMMIT marker");
}

/// The values of partition 0 of `t` from `offset` on, read with Fetch.
async fn values(b: &common::wire::Broker, offset: i64) -> Vec<String> {
    let request = FetchRequest::default()
        .with_max_wait_ms(0)
        .with_max_bytes(1 << 20)
        .with_topics(vec![FetchTopic::default()
            .with_topic(TopicName(s("t")))
            .with_partitions(vec![FetchPartition::default()
                .with_partition(0)
                .with_fetch_offset(offset)
                .with_partition_max_bytes(1 << 20)])]);
    let r: FetchResponse = b.call(ApiKey::Fetch, 11, &request).await;
    let p = &r.responses[0].partitions[0];
    assert_eq!(p.error_code, 0);
    let mut records = p.records.clone().unwrap_or_default();
    let mut out = Vec::new();
    let batches = kafka_protocol::records::RecordBatchDecoder::decode_all(&mut records).unwrap();
    for record in batches.into_iter().flat_map(|b| b.records) {
        out.push(String::from_utf8_lossy(&record.value.unwrap()).into_owned());
    }
    out
}

/// A kaas-ref process started with `--disk-full-while PATH` (the `faults` feature) fails
/// every write while PATH exists, answering as on a full disk, and writes again once it is
/// gone: how a script fills the disk of processes that share a data directory
/// (ci/kaas-ref-processes.sh). A transactional id first initialised on the full disk gets
/// the retriable 15 (its slot file cannot be written), and 0 after.
#[test]
fn a_process_fails_its_writes_while_the_marker_exists() {
    use common::wire::tcp_call;
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("disk-full");
    let ip = "127.0.0.1".parse().unwrap();
    let port = reference_broker::ports::free_port(ip).expect("a free port");
    let addr = std::net::SocketAddr::new(ip, port).to_string();
    let process = common::KaasRef::start(
        &dir.path().join("data"),
        &addr,
        &["--disk-full-while", marker.to_str().unwrap()],
    );
    let init = |id: &str| -> i16 {
        let r: InitProducerIdResponse = tcp_call(
            &process.addr,
            ApiKey::InitProducerId,
            4,
            &InitProducerIdRequest::default()
                .with_transactional_id(Some(TransactionalId(s(id))))
                .with_transaction_timeout_ms(60_000),
        );
        r.error_code
    };
    assert_eq!(init("before"), 0, "the disk is not full yet");
    std::fs::write(&marker, b"").unwrap();
    assert_eq!(init("on-full-disk"), 15, "its slot file cannot be written");
    std::fs::remove_file(&marker).unwrap();
    assert_eq!(init("on-full-disk"), 0, "written once the disk is freed");
}
