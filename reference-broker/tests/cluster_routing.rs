//! Three kaas-ref brokers on one shared data directory route coordinators as kaas does: every
//! broker names the same coordinator for a key, the others answer NOT_COORDINATOR to the
//! transaction APIs, Metadata lists the brokers up, and when a coordinator stops stamping the
//! shared volume its ids move to a broker alive, which takes the transaction state over from the
//! same slot files.

mod common;

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kafka_protocol::messages::*;
use reference_broker::broker::State;
use reference_broker::cluster::Peer;
use reference_broker::{Broker, BrokerConfig, BrokerHandle};

use common::wire::{call, init_request, s};

const NOT_COORDINATOR: i16 = 16;

async fn cluster(dir: &std::path::Path, count: usize) -> Vec<BrokerHandle> {
    let peers: Vec<Peer> = (0..count)
        .map(|id| {
            let port = TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            Peer {
                id: id as i32,
                addr: SocketAddr::from(([127, 0, 0, 1], port)),
            }
        })
        .collect();
    let mut brokers = Vec::new();
    for peer in &peers {
        brokers.push(
            Broker::start(BrokerConfig {
                listen: peer.addr,
                broker_id: peer.id,
                data_dir: Some(dir.to_owned()),
                peers: peers.clone(),
                member_timeout: Duration::from_millis(1500),
                ..BrokerConfig::for_tests()
            })
            .await
            .unwrap(),
        );
    }
    brokers
}

async fn coordinator(state: &Arc<State>, key: &str, key_type: i8) -> (i16, i32) {
    let r: FindCoordinatorResponse = call(
        state,
        ApiKey::FindCoordinator,
        3,
        &FindCoordinatorRequest::default()
            .with_key(s(key))
            .with_key_type(key_type),
    )
    .await;
    (r.error_code, r.node_id.0)
}

async fn init(state: &Arc<State>, id: &str) -> InitProducerIdResponse {
    call(state, ApiKey::InitProducerId, 4, &init_request(id)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coordinators_route_by_hash_and_move_when_a_broker_stops() {
    let dir = tempfile::tempdir().unwrap();
    let brokers = cluster(dir.path(), 3).await;
    let states: Vec<Arc<State>> = brokers.iter().map(|b| b.state().clone()).collect();

    for state in &states {
        let m: MetadataResponse = call(
            state,
            ApiKey::Metadata,
            12,
            &MetadataRequest::default().with_topics(Some(vec![])),
        )
        .await;
        let ids: Vec<i32> = m.brokers.iter().map(|b| b.node_id.0).collect();
        assert_eq!(ids, [0, 1, 2]);
    }

    // Ids spread over the brokers; every broker names the same coordinator.
    let ids: Vec<String> = (0..12).map(|i| format!("tx-{i}")).collect();
    let mut owners = std::collections::BTreeSet::new();
    for id in &ids {
        let (code, owner) = coordinator(&states[0], id, 1).await;
        assert_eq!(code, 0);
        for state in &states[1..] {
            assert_eq!(coordinator(state, id, 1).await, (0, owner), "{id}");
        }
        owners.insert(owner);
        for (i, state) in states.iter().enumerate() {
            let r = init(state, id).await;
            match i as i32 == owner {
                true => assert_eq!(r.error_code, 0, "{id} on its coordinator {i}"),
                false => assert_eq!(r.error_code, NOT_COORDINATOR, "{id} on {i}"),
            }
        }
    }
    assert_eq!(
        owners.len(),
        3,
        "twelve ids land on every broker: {owners:?}"
    );

    // Every transaction API answers NOT_COORDINATOR from a broker that does not coordinate.
    let id = &ids[0];
    let (_, owner) = coordinator(&states[0], id, 1).await;
    let other = &states[((owner + 1) % 3) as usize];
    let add: AddOffsetsToTxnResponse = call(
        other,
        ApiKey::AddOffsetsToTxn,
        3,
        &AddOffsetsToTxnRequest::default()
            .with_transactional_id(TransactionalId(s(id)))
            .with_producer_id(ProducerId(1))
            .with_group_id(GroupId(s("g"))),
    )
    .await;
    assert_eq!(add.error_code, NOT_COORDINATOR);
    let end: EndTxnResponse = call(
        other,
        ApiKey::EndTxn,
        3,
        &EndTxnRequest::default()
            .with_transactional_id(TransactionalId(s(id)))
            .with_producer_id(ProducerId(1)),
    )
    .await;
    assert_eq!(end.error_code, NOT_COORDINATOR);

    // The coordinator of ids[0] stops; once its stamp is stale, another broker takes its ids
    // and the state with them: the same producer id, the epoch bumped.
    let before = init(&states[owner as usize], id).await;
    let survivors: Vec<usize> = (0..3).filter(|i| *i != owner as usize).collect();
    let mut brokers: Vec<Option<BrokerHandle>> = brokers.into_iter().map(Some).collect();
    brokers[owner as usize].take().unwrap().shutdown().await;
    let deadline = Instant::now() + Duration::from_secs(10);
    let new_owner = loop {
        let (code, node) = coordinator(&states[survivors[0]], id, 1).await;
        if code == 0 && node != owner {
            break node;
        }
        assert!(Instant::now() < deadline, "the coordinator never moved");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(survivors.contains(&(new_owner as usize)));
    let after = init(&states[new_owner as usize], id).await;
    assert_eq!(after.error_code, 0);
    assert_eq!(
        after.producer_id, before.producer_id,
        "the same slot file, read over"
    );
    assert_eq!(after.producer_epoch, before.producer_epoch + 1);
    for b in brokers.into_iter().flatten() {
        b.shutdown().await;
    }
}

/// The group APIs answer NOT_COORDINATOR from a broker that does not coordinate the group, and
/// are served by the one that does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_apis_answer_not_coordinator_away_from_the_group_s_coordinator() {
    let dir = tempfile::tempdir().unwrap();
    let brokers = cluster(dir.path(), 3).await;
    let states: Vec<Arc<State>> = brokers.iter().map(|b| b.state().clone()).collect();
    let group = "g-routing";
    let (code, owner) = coordinator(&states[0], group, 0).await;
    assert_eq!(code, 0);
    let join = JoinGroupRequest::default()
        .with_group_id(GroupId(s(group)))
        .with_session_timeout_ms(10_000)
        .with_rebalance_timeout_ms(10_000)
        .with_protocol_type(s("consumer"))
        .with_protocols(vec![join_group_request::JoinGroupRequestProtocol::default(
        )
        .with_name(s("range"))
        .with_metadata(bytes::Bytes::from_static(b"m"))]);
    for (i, state) in states.iter().enumerate() {
        let joined: JoinGroupResponse = call(state, ApiKey::JoinGroup, 3, &join).await;
        let heartbeat: HeartbeatResponse = call(
            state,
            ApiKey::Heartbeat,
            3,
            &HeartbeatRequest::default()
                .with_group_id(GroupId(s(group)))
                .with_member_id(joined.member_id.clone())
                .with_generation_id(joined.generation_id),
        )
        .await;
        let fetched: OffsetFetchResponse = call(
            state,
            ApiKey::OffsetFetch,
            7,
            &OffsetFetchRequest::default()
                .with_group_id(GroupId(s(group)))
                .with_topics(None),
        )
        .await;
        let codes = (joined.error_code, heartbeat.error_code, fetched.error_code);
        match i as i32 == owner {
            true => assert_eq!(codes, (0, 0, 0), "on the coordinator {i}"),
            false => assert_eq!(
                codes,
                (NOT_COORDINATOR, NOT_COORDINATOR, NOT_COORDINATOR),
                "on {i}"
            ),
        }
    }
    for b in brokers {
        b.shutdown().await;
    }
}
