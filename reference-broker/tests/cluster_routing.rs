//! Three kaas-ref brokers on one shared data directory route coordinators as kaas does: every
//! broker names the same coordinator for a key, the others answer NOT_COORDINATOR to the
//! transaction APIs, Metadata lists the brokers up, and when a coordinator stops stamping the
//! shared volume its ids move to a broker alive, which takes the transaction state over from the
//! same slot files.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use kafka_protocol::messages::*;
use reference_broker::broker::State;
use reference_broker::local_cluster::LocalCluster;
use reference_broker::BrokerConfig;

use common::wire::{call, init_request, s};

const NOT_COORDINATOR: i16 = 16;

async fn cluster(dir: &std::path::Path, count: usize) -> LocalCluster {
    LocalCluster::start(
        count,
        BrokerConfig {
            data_dir: Some(dir.to_owned()),
            member_timeout: Duration::from_millis(1500),
            ..BrokerConfig::for_tests()
        },
    )
    .await
    .unwrap()
}

fn states(cluster: &LocalCluster) -> Vec<Arc<State>> {
    (0..cluster.addrs().len() as i32)
        .map(|id| cluster.broker(id).unwrap().state().clone())
        .collect()
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

/// Broker ids a broker's Metadata lists.
async fn listed(state: &Arc<State>) -> Vec<i32> {
    let m: MetadataResponse = call(
        state,
        ApiKey::Metadata,
        12,
        &MetadataRequest::default().with_topics(Some(vec![])),
    )
    .await;
    m.brokers.iter().map(|b| b.node_id.0).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coordinators_route_by_hash_and_move_when_a_broker_stops() {
    let dir = tempfile::tempdir().unwrap();
    let mut brokers = cluster(dir.path(), 3).await;
    let states = states(&brokers);

    for state in &states {
        assert_eq!(listed(state).await, [0, 1, 2]);
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
    brokers.kill(owner).await.unwrap();
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
    brokers.shutdown().await;
}

/// The group APIs answer NOT_COORDINATOR from a broker that does not coordinate the group, and
/// are served by the one that does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_apis_answer_not_coordinator_away_from_the_group_s_coordinator() {
    let dir = tempfile::tempdir().unwrap();
    let brokers = cluster(dir.path(), 3).await;
    let states = states(&brokers);
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
    brokers.shutdown().await;
}

/// Three `kaas-ref --peers` processes on one data directory: a topic created through one is
/// known to the others (each catches up with the shared topics before a request), a
/// non-coordinator answers NOT_COORDINATOR to AddPartitionsToTxn on it (not
/// UNKNOWN_TOPIC_OR_PARTITION), and when the coordinator's process is killed (SIGKILL) its ids
/// move to a survivor, which serves the transaction from the same slot file.
#[test]
fn kaas_ref_processes_form_a_cluster_and_survive_a_kill() {
    use common::wire::tcp_call;
    use common::KaasRef;
    let dir = tempfile::tempdir().unwrap();
    let addrs: Vec<String> = (0..3)
        .map(|_| {
            let ip = "127.0.0.1".parse().unwrap();
            let port = reference_broker::ports::free_port(ip).expect("a free port");
            std::net::SocketAddr::new(ip, port).to_string()
        })
        .collect();
    let peers: Vec<String> = addrs
        .iter()
        .enumerate()
        .map(|(i, a)| format!("{i}={a}"))
        .collect();
    let peers = peers.join(",");
    let mut processes: Vec<Option<KaasRef>> = addrs
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let id = i.to_string();
            Some(KaasRef::start(
                dir.path(),
                a,
                &[
                    "--broker-id",
                    &id,
                    "--peers",
                    &peers,
                    "--member-timeout-ms",
                    "1500",
                ],
            ))
        })
        .collect();
    let find = |addr: &str, key: &str| -> (i16, i32) {
        let r: FindCoordinatorResponse = tcp_call(
            addr,
            ApiKey::FindCoordinator,
            3,
            &FindCoordinatorRequest::default()
                .with_key(s(key))
                .with_key_type(1),
        );
        (r.error_code, r.node_id.0)
    };
    // Each process counts the others alive once it has read their first stamps.
    let deadline = Instant::now() + Duration::from_secs(5);
    for a in &addrs {
        loop {
            let m: MetadataResponse = tcp_call(
                a,
                ApiKey::Metadata,
                12,
                &MetadataRequest::default().with_topics(Some(vec![])),
            );
            if m.brokers.len() == 3 {
                break;
            }
            assert!(Instant::now() < deadline, "{a} never saw its peers");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let id = "tx-processes";
    let (code, owner) = find(&addrs[0], id);
    assert_eq!(code, 0);
    for a in &addrs[1..] {
        assert_eq!(find(a, id), (0, owner));
    }
    let other = ((owner + 1) % 3) as usize;
    // Created through broker `owner`, known to `other`.
    let created: CreateTopicsResponse = tcp_call(
        &addrs[owner as usize],
        ApiKey::CreateTopics,
        7,
        &CreateTopicsRequest::default()
            .with_topics(vec![create_topics_request::CreatableTopic::default()
                .with_name(TopicName(s("t-shared")))
                .with_num_partitions(1)
                .with_replication_factor(1)])
            .with_timeout_ms(5000),
    );
    assert_eq!(created.topics[0].error_code, 0);
    let add = AddPartitionsToTxnRequest::default()
        .with_v3_and_below_transactional_id(TransactionalId(s(id)))
        .with_v3_and_below_producer_id(ProducerId(1))
        .with_v3_and_below_topics(vec![
            add_partitions_to_txn_request::AddPartitionsToTxnTopic::default()
                .with_name(TopicName(s("t-shared")))
                .with_partitions(vec![0]),
        ]);
    let answer: AddPartitionsToTxnResponse =
        tcp_call(&addrs[other], ApiKey::AddPartitionsToTxn, 3, &add);
    assert_eq!(
        answer.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code,
        NOT_COORDINATOR
    );

    let before: InitProducerIdResponse = tcp_call(
        &addrs[owner as usize],
        ApiKey::InitProducerId,
        4,
        &init_request(id),
    );
    assert_eq!(before.error_code, 0);
    processes[owner as usize].take().unwrap().kill();
    let deadline = Instant::now() + Duration::from_secs(10);
    let moved = loop {
        let (code, node) = find(&addrs[other], id);
        if code == 0 && node != owner {
            break node;
        }
        assert!(Instant::now() < deadline, "the coordinator never moved");
        std::thread::sleep(Duration::from_millis(100));
    };
    let after: InitProducerIdResponse = tcp_call(
        &addrs[moved as usize],
        ApiKey::InitProducerId,
        4,
        &init_request(id),
    );
    assert_eq!(
        (after.error_code, after.producer_id),
        (0, before.producer_id)
    );
    assert_eq!(after.producer_epoch, before.producer_epoch + 1);
    for p in processes.iter_mut().flatten() {
        assert!(p.running(), "a survivor exited");
    }
}

/// `kaas-ref --peers` refuses, in one line, a list it cannot serve.
#[test]
fn kaas_ref_refuses_peers_it_cannot_serve() {
    for (args, why) in [
        (
            vec!["--peers", "0=127.0.0.1:1,0=127.0.0.1:2"],
            "--peers: brokers 0=127.0.0.1:1 and 0=127.0.0.1:2 share an id",
        ),
        (
            vec!["--broker-id", "2", "--peers", "0=127.0.0.1:1,1=127.0.0.1:2"],
            "--peers: broker 2 is not among the peers",
        ),
        (
            vec!["--listen", "127.0.0.1:3", "--peers", "0=127.0.0.1:1"],
            "--peers names broker 0 at 127.0.0.1:1, but it listens on 127.0.0.1:3 (--listen)",
        ),
        (vec!["--peers", "0:127.0.0.1:1"], "expected ID=HOST:PORT"),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kaas-ref"))
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(why), "{args:?}: {stderr}");
    }
}

/// A broker of an in-process cluster killed and restarted serves again on its address.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_broker_restarts_on_its_address() {
    let dir = tempfile::tempdir().unwrap();
    let mut brokers = cluster(dir.path(), 3).await;
    let addr = brokers.addrs()[0];
    for round in 0..2 {
        brokers.kill(0).await.unwrap();
        assert!(
            tokio::net::TcpStream::connect(addr).await.is_err(),
            "round {round}: still listening"
        );
        brokers.restart(0).await.unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(
            tokio::net::TcpStream::connect(addr).await.is_ok(),
            "round {round}: not listening after the restart"
        );
    }
    brokers.shutdown().await;
}

/// A paused broker (as SIGSTOP pauses a process) holds a request it was sent without answering,
/// stops stamping, so its peers list it no more, and once resumed answers the request it held
/// and is listed again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_broker_holds_its_requests_and_drops_out_until_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let mut brokers = cluster(dir.path(), 3).await;
    let addr = brokers.addrs()[0].to_string();
    let peer = brokers.broker(1).unwrap().state().clone();
    brokers.pause(0).unwrap();
    assert!(
        matches!(
            brokers.pause(0),
            Err(reference_broker::local_cluster::ClusterError::Already(
                0, "paused"
            ))
        ),
        "paused twice"
    );
    let held = tokio::task::spawn_blocking(move || {
        let r: MetadataResponse = common::wire::tcp_call(
            &addr,
            ApiKey::Metadata,
            12,
            &MetadataRequest::default().with_topics(Some(vec![])),
        );
        r.brokers.len()
    });
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(!held.is_finished(), "a paused broker answered");
    let deadline = Instant::now() + Duration::from_secs(10);
    while listed(&peer).await != [1, 2] {
        assert!(Instant::now() < deadline, "the peers never counted it down");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    brokers.resume(0).await.unwrap();
    let answered = tokio::time::timeout(Duration::from_secs(5), held)
        .await
        .expect("the held request is answered once resumed")
        .unwrap();
    assert!(answered >= 2, "it answered with the brokers it knew");
    let deadline = Instant::now() + Duration::from_secs(10);
    while listed(&peer).await != [0, 1, 2] {
        assert!(Instant::now() < deadline, "the peers never counted it back");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    brokers.shutdown().await;
}
