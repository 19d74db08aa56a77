//! What brokers of a kaas-ref cluster pass each other through the shared volume: producer
//! fences (an epoch bump on the coordinator reaches the partitions its peers lead within their
//! FenceWatcher's poll) and the marker queue (a producer cannot open its next transaction
//! while a peer still owes a marker of its last: the queue file of the next would overwrite
//! it).

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use kafka_protocol::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::*;
use reference_broker::broker::State;
use reference_broker::local_cluster::LocalCluster;
use reference_broker::storage::batch;
use reference_broker::BrokerConfig;

use common::wire::{call, init_request, s};

const INVALID_PRODUCER_EPOCH: i16 = 47;
const CONCURRENT_TRANSACTIONS: i16 = 51;

async fn cluster(dir: &std::path::Path, peer_poll: Duration) -> (LocalCluster, Vec<Arc<State>>) {
    let cluster = LocalCluster::start(
        3,
        BrokerConfig {
            data_dir: Some(dir.to_owned()),
            member_timeout: Duration::from_millis(1500),
            peer_poll,
            ..BrokerConfig::for_tests()
        },
    )
    .await
    .unwrap();
    let states = (0..3)
        .map(|id| cluster.broker(id).unwrap().state().clone())
        .collect();
    (cluster, states)
}

/// The broker (index) leading each partition of `topic`, from broker 0's Metadata.
async fn leaders(state: &Arc<State>, topic: &str) -> Vec<usize> {
    let m: MetadataResponse = call(
        state,
        ApiKey::Metadata,
        12,
        &MetadataRequest::default().with_topics(Some(vec![
            metadata_request::MetadataRequestTopic::default().with_name(Some(TopicName(s(topic)))),
        ])),
    )
    .await;
    let mut partitions = m.topics[0].partitions.clone();
    partitions.sort_by_key(|p| p.partition_index);
    partitions.iter().map(|p| p.leader_id.0 as usize).collect()
}

async fn create(state: &Arc<State>, topic: &str, partitions: i32) {
    let r: CreateTopicsResponse = call(
        state,
        ApiKey::CreateTopics,
        7,
        &CreateTopicsRequest::default()
            .with_topics(vec![create_topics_request::CreatableTopic::default()
                .with_name(TopicName(s(topic)))
                .with_num_partitions(partitions)
                .with_replication_factor(1)])
            .with_timeout_ms(5000),
    )
    .await;
    assert_eq!(r.topics[0].error_code, 0);
}

/// An idempotent (not transactional) batch of producer `pid` at `epoch`, sequence `seq`.
async fn produce(
    state: &Arc<State>,
    topic: &str,
    partition: i32,
    pid: i64,
    epoch: i16,
    seq: i32,
) -> i16 {
    let records = [batch::record(0, 0, Some(b"k"), Some(b"v"))];
    let payload = batch::build(0, 0, 1, 1, pid, epoch, seq, &records);
    let r: ProduceResponse = call(
        state,
        ApiKey::Produce,
        9,
        &ProduceRequest::default()
            .with_acks(-1)
            .with_timeout_ms(5000)
            .with_topic_data(vec![TopicProduceData::default()
                .with_name(TopicName(s(topic)))
                .with_partition_data(vec![PartitionProduceData::default()
                    .with_index(partition)
                    .with_records(Some(Bytes::from(payload)))])]),
    )
    .await;
    r.responses[0].partition_responses[0].error_code
}

async fn coordinator_of(state: &Arc<State>, id: &str) -> usize {
    let r: FindCoordinatorResponse = call(
        state,
        ApiKey::FindCoordinator,
        3,
        &FindCoordinatorRequest::default()
            .with_key(s(id))
            .with_key_type(1),
    )
    .await;
    assert_eq!(r.error_code, 0);
    r.node_id.0 as usize
}

/// AddPartitionsToTxn v3 of partitions 0, 1 and 2 of `topic` to `id`'s transaction.
fn add_every_partition(
    id: &str,
    init: &InitProducerIdResponse,
    topic: &str,
) -> AddPartitionsToTxnRequest {
    AddPartitionsToTxnRequest::default()
        .with_v3_and_below_transactional_id(TransactionalId(s(id)))
        .with_v3_and_below_producer_id(init.producer_id)
        .with_v3_and_below_producer_epoch(init.producer_epoch)
        .with_v3_and_below_topics(vec![AddPartitionsToTxnTopic::default()
            .with_name(TopicName(s(topic)))
            .with_partitions(vec![0, 1, 2])])
}

/// EndTxn(commit) of `id`'s transaction at its coordinator `c`: the error code.
async fn commit(c: &Arc<State>, id: &str, init: &InitProducerIdResponse) -> i16 {
    let end: EndTxnResponse = call(
        c,
        ApiKey::EndTxn,
        3,
        &EndTxnRequest::default()
            .with_transactional_id(TransactionalId(s(id)))
            .with_producer_id(init.producer_id)
            .with_producer_epoch(init.producer_epoch)
            .with_committed(true),
    )
    .await;
    end.error_code
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_epoch_bump_fences_the_partitions_peers_lead_within_their_poll() {
    let dir = tempfile::tempdir().unwrap();
    let (cluster, states) = cluster(dir.path(), Duration::from_millis(200)).await;
    let topic = "fenced";
    create(&states[0], topic, 3).await;
    let leaders = leaders(&states[0], topic).await;
    let id = "tx-fence";
    let coordinator = coordinator_of(&states[0], id).await;
    let first: InitProducerIdResponse = call(
        &states[coordinator],
        ApiKey::InitProducerId,
        4,
        &init_request(id),
    )
    .await;
    assert_eq!(first.error_code, 0);
    // The producer writes to every partition at epoch 0: each leader knows it.
    for (p, leader) in leaders.iter().enumerate() {
        assert_eq!(
            produce(&states[*leader], topic, p as i32, first.producer_id.0, 0, 0).await,
            0
        );
    }
    // A new instance rejoins: epoch 1, appended to the coordinator's fence file.
    let second: InitProducerIdResponse = call(
        &states[coordinator],
        ApiKey::InitProducerId,
        4,
        &init_request(id),
    )
    .await;
    assert_eq!(second.producer_epoch, 1);
    // Past a poll, the old epoch is refused by every leader, peers included.
    tokio::time::sleep(Duration::from_millis(600)).await;
    for (p, leader) in leaders.iter().enumerate() {
        assert_eq!(
            produce(&states[*leader], topic, p as i32, first.producer_id.0, 0, 1).await,
            INVALID_PRODUCER_EPOCH,
            "partition {p}, led by broker {leader} (coordinator {coordinator})"
        );
    }
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_transaction_waits_for_the_markers_peers_owe() {
    let dir = tempfile::tempdir().unwrap();
    // A poll long enough that the queued markers wait for it.
    let (cluster, states) = cluster(dir.path(), Duration::from_secs(3)).await;
    let topic = "queued";
    create(&states[0], topic, 3).await;
    let id = "tx-queue";
    let coordinator = coordinator_of(&states[0], id).await;
    let c = &states[coordinator];
    let init: InitProducerIdResponse = call(c, ApiKey::InitProducerId, 4, &init_request(id)).await;
    let add = add_every_partition(id, &init, topic);
    let codes = |r: &AddPartitionsToTxnResponse| -> Vec<i16> {
        r.results_by_topic_v3_and_below[0]
            .results_by_partition
            .iter()
            .map(|p| p.partition_error_code)
            .collect()
    };
    let added: AddPartitionsToTxnResponse = call(c, ApiKey::AddPartitionsToTxn, 3, &add).await;
    assert_eq!(codes(&added), [0, 0, 0]);
    assert_eq!(commit(c, id, &init).await, 0);
    // Two of the three partitions are led by peers: their markers are queued, so the next
    // transaction must wait.
    let again: AddPartitionsToTxnResponse = call(c, ApiKey::AddPartitionsToTxn, 3, &add).await;
    assert_eq!(codes(&again), [CONCURRENT_TRANSACTIONS; 3]);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let r: AddPartitionsToTxnResponse = call(c, ApiKey::AddPartitionsToTxn, 3, &add).await;
        if codes(&r) == [0, 0, 0] {
            break;
        }
        assert_eq!(codes(&r), [CONCURRENT_TRANSACTIONS; 3]);
        assert!(
            tokio::time::Instant::now() < deadline,
            "the markers never drained"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn markers_held_wait_in_the_inbox_until_let_go() {
    let dir = tempfile::tempdir().unwrap();
    // A quick poll: without the hold, the queued markers would be applied within 100 ms.
    let (mut cluster, states) = cluster(dir.path(), Duration::from_millis(100)).await;
    let topic = "held";
    create(&states[0], topic, 3).await;
    let id = "tx-held";
    let c = &states[coordinator_of(&states[0], id).await];
    for broker in 0..3 {
        assert!(cluster.hold_markers(broker, true).unwrap());
    }
    assert!(
        !cluster.hold_markers(0, true).unwrap(),
        "held already: nothing changed"
    );
    let init: InitProducerIdResponse = call(c, ApiKey::InitProducerId, 4, &init_request(id)).await;
    let add = add_every_partition(id, &init, topic);
    let first = |r: &AddPartitionsToTxnResponse| {
        r.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code
    };
    let added: AddPartitionsToTxnResponse = call(c, ApiKey::AddPartitionsToTxn, 3, &add).await;
    assert_eq!(first(&added), 0);
    assert_eq!(commit(c, id, &init).await, 0);
    // Ten polls later the peers' markers still wait: the next transaction is refused.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let held: AddPartitionsToTxnResponse = call(c, ApiKey::AddPartitionsToTxn, 3, &add).await;
    assert_eq!(first(&held), CONCURRENT_TRANSACTIONS);
    // Held across a restart, as an Apache broker's gate stays closed across its restart.
    cluster.kill(2).await.unwrap();
    cluster.restart(2).await.unwrap();
    assert!(cluster
        .broker(2)
        .unwrap()
        .state()
        .markers_held
        .load(std::sync::atomic::Ordering::SeqCst));
    for broker in 0..3 {
        assert!(cluster.hold_markers(broker, false).unwrap());
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let r: AddPartitionsToTxnResponse = call(c, ApiKey::AddPartitionsToTxn, 3, &add).await;
        if first(&r) == 0 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the markers let go never drained"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    cluster.shutdown().await;
}

/// A broker whose peers a Kubernetes API names (`--membership kube`) shares its data directory
/// as one given `--peers` does: a partition directory no topic file names yet is a peer's
/// creation in progress, and is left alone at start. Opened as a lone broker's, it was removed,
/// and three kaas-ref processes started at once with the same topics failed to start.
#[tokio::test]
async fn a_broker_with_watched_peers_leaves_a_peers_creation_in_progress_alone() {
    let dir = tempfile::tempdir().unwrap();
    let in_progress = dir.path().join("logs").join("made-by-a-peer-0");
    for watched in [true, false] {
        std::fs::create_dir_all(&in_progress).unwrap();
        let config = BrokerConfig {
            data_dir: Some(dir.path().to_owned()),
            watched: watched.then(|| Arc::new(reference_broker::cluster::Watched::default())),
            ..BrokerConfig::for_tests()
        };
        let broker = reference_broker::Broker::start(config).await.unwrap();
        assert_eq!(in_progress.exists(), watched, "watched peers: {watched}");
        broker.shutdown().await;
    }
}
