//! One test per bound of `reference_broker::limits`: the request over it is refused with the
//! code Apache uses for that class of refusal, nothing is created or kept, and the broker
//! still answers. Requests go in as wire frames built with kafka-protocol (not kaas-ref's own
//! codecs), through the in-process dispatcher, except for the connection bounds, which need TCP.

use crate::common;

use bytes::{Bytes, BytesMut};
use common::wire::{broker, s};
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::txn_offset_commit_request::{
    TxnOffsetCommitRequestPartition, TxnOffsetCommitRequestTopic,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::Encodable;
use reference_broker::limits::Limits;
use reference_broker::BrokerConfig;

const POLICY_VIOLATION: i16 = 44;
const INVALID_PARTITIONS: i16 = 37;

#[tokio::test]
async fn partitions_per_topic() {
    let b = broker(Limits {
        max_partitions_per_topic: 4,
        ..Limits::default()
    });
    let answer = b.create(&[("wide", 5)], &[]).await;
    assert_eq!(answer[0].0, INVALID_PARTITIONS, "{answer:?}");
    assert!(
        answer[0].1.contains("--max-partitions-per-topic"),
        "{answer:?}"
    );
    assert_eq!(b.topics_and_dirs(), (vec![], vec![]));
    assert_eq!(b.create(&[("wide", 4)], &[]).await[0].0, 0);
    b.still_answers().await;
}

/// The fuzzer's 33-byte CreateTopics (one topic, 67,108,866 partitions) under the default
/// bounds: refused before a single directory is made.
#[tokio::test]
async fn the_fuzzers_67_million_partitions_are_refused_at_once() {
    let b = broker(Limits::default());
    let answer = b.create(&[("t", 67_108_866)], &[]).await;
    assert_eq!(answer[0].0, POLICY_VIOLATION, "{answer:?}");
    assert!(
        answer[0]
            .1
            .starts_with(reference_broker::limits::TOO_MANY_PARTITIONS),
        "{answer:?}"
    );
    assert_eq!(b.topics_and_dirs(), (vec![], vec![]));
    b.still_answers().await;
}

#[tokio::test]
async fn partitions_per_request() {
    let b = broker(Limits {
        max_partitions_per_request: 5,
        ..Limits::default()
    });
    let answer = b.create(&[("a", 3), ("b", 3)], &[]).await;
    assert_eq!(
        answer.iter().map(|a| a.0).collect::<Vec<_>>(),
        [POLICY_VIOLATION; 2],
        "every topic of the request refused: {answer:?}"
    );
    assert_eq!(b.topics_and_dirs(), (vec![], vec![]));
    assert_eq!(b.create(&[("a", 3), ("b", 2)], &[]).await[1].0, 0);
    b.still_answers().await;
}

#[tokio::test]
async fn topics_per_request_in_create_delete_and_metadata() {
    let b = broker(Limits {
        max_topics_per_request: 2,
        ..Limits::default()
    });
    let answer = b.create(&[("a", 1), ("b", 1), ("c", 1)], &[]).await;
    assert!(answer.iter().all(|a| a.0 == POLICY_VIOLATION), "{answer:?}");
    assert!(
        answer[0].1.contains("--max-topics-per-request"),
        "{answer:?}"
    );
    assert_eq!(b.topics_and_dirs(), (vec![], vec![]));

    assert!(b
        .create(&[("a", 1), ("b", 1)], &[])
        .await
        .iter()
        .all(|a| a.0 == 0));
    let deleted: DeleteTopicsResponse = b
        .call(
            ApiKey::DeleteTopics,
            5,
            &DeleteTopicsRequest::default()
                .with_topic_names(["a", "b", "c"].map(|n| TopicName(s(n))).to_vec())
                .with_timeout_ms(5000),
        )
        .await;
    assert!(deleted
        .responses
        .iter()
        .all(|r| r.error_code == POLICY_VIOLATION));
    assert_eq!(b.topics_and_dirs().0, ["a", "b"], "nothing deleted");

    // Metadata auto-creates at most two of three unknown topics; the third stays unknown.
    let r: MetadataResponse = b
        .call(
            ApiKey::Metadata,
            12,
            &MetadataRequest::default()
                .with_allow_auto_topic_creation(true)
                .with_topics(Some(
                    ["x", "y", "z"]
                        .map(|n| MetadataRequestTopic::default().with_name(Some(TopicName(s(n)))))
                        .to_vec(),
                )),
        )
        .await;
    let codes: Vec<i16> = r.topics.iter().map(|t| t.error_code).collect();
    assert_eq!(
        codes,
        [5, 5, 3],
        "LEADER_NOT_AVAILABLE twice, then UNKNOWN_TOPIC_OR_PARTITION"
    );
    assert_eq!(b.topics_and_dirs().0, ["a", "b", "x", "y"]);
    b.still_answers().await;
}

#[tokio::test]
async fn replication_factor() {
    let b = broker(Limits::default());
    let request = CreateTopicsRequest::default().with_topics(vec![CreatableTopic::default()
        .with_name(TopicName(s("r")))
        .with_num_partitions(1)
        .with_replication_factor(i16::MAX)]);
    let r: CreateTopicsResponse = b.call(ApiKey::CreateTopics, 7, &request).await;
    assert_eq!(r.topics[0].error_code, 38, "INVALID_REPLICATION_FACTOR");
    assert_eq!(b.topics_and_dirs(), (vec![], vec![]));
    b.still_answers().await;
}

#[tokio::test]
async fn configs_per_topic_and_their_size() {
    let b = broker(Limits {
        max_configs_per_topic: 2,
        max_config_value_bytes: 16,
        ..Limits::default()
    });
    let three = [
        ("retention.ms", "1000"),
        ("segment.ms", "1000"),
        ("flush.ms", "1000"),
    ];
    let answer = b.create(&[("c", 1)], &three).await;
    assert_eq!(answer[0].0, POLICY_VIOLATION, "{answer:?}");
    let long = "1".repeat(17);
    let answer = b.create(&[("c", 1)], &[("retention.ms", &long)]).await;
    assert_eq!(answer[0].0, 40, "INVALID_CONFIG: {answer:?}");
    assert!(
        answer[0].1.contains("--max-config-value-bytes"),
        "{answer:?}"
    );
    assert_eq!(b.topics_and_dirs(), (vec![], vec![]));
    assert_eq!(b.create(&[("c", 1)], &three[..2]).await[0].0, 0);
    b.still_answers().await;
}

#[tokio::test]
async fn partitions_per_transaction() {
    let b = broker(Limits {
        max_partitions_per_txn: 2,
        ..Limits::default()
    });
    b.create(&[("t", 3)], &[]).await;
    let (pid, epoch) = b.init_txn("tx").await;
    let codes = b
        .add_partitions("tx", pid, epoch, &[("t", 0), ("t", 1), ("t", 2)])
        .await;
    assert_eq!(codes, [POLICY_VIOLATION; 3]);
    let entry = b.state.txn.entry("tx").unwrap().unwrap();
    assert!(entry.partitions.is_empty(), "nothing added: {entry:?}");
    assert_eq!(
        b.add_partitions("tx", pid, epoch, &[("t", 0), ("t", 1)])
            .await,
        [0, 0]
    );
    // Re-adding held partitions costs nothing; a third does.
    assert_eq!(b.add_partitions("tx", pid, epoch, &[("t", 1)]).await, [0]);
    assert_eq!(
        b.add_partitions("tx", pid, epoch, &[("t", 2)]).await,
        [POLICY_VIOLATION]
    );
    b.still_answers().await;
}

#[tokio::test]
async fn groups_per_transaction() {
    let b = broker(Limits {
        max_groups_per_txn: 1,
        ..Limits::default()
    });
    let (pid, epoch) = b.init_txn("tx").await;
    assert_eq!(b.add_offsets("tx", pid, epoch, "g1").await, 0);
    assert_eq!(
        b.add_offsets("tx", pid, epoch, "g1").await,
        0,
        "held already"
    );
    assert_eq!(
        b.add_offsets("tx", pid, epoch, "g2").await,
        POLICY_VIOLATION
    );
    let entry = b.state.txn.entry("tx").unwrap().unwrap();
    assert_eq!(entry.groups, ["g1"]);
    b.still_answers().await;
}

#[tokio::test]
async fn staged_offsets_per_transaction() {
    let b = broker(Limits {
        max_staged_offsets_per_txn: 2,
        ..Limits::default()
    });
    b.create(&[("t", 3)], &[]).await;
    let (pid, epoch) = b.init_txn("tx").await;
    assert_eq!(b.add_offsets("tx", pid, epoch, "g").await, 0);
    let commit = |partitions: &[i32]| {
        TxnOffsetCommitRequest::default()
            .with_transactional_id(TransactionalId(s("tx")))
            .with_group_id(GroupId(s("g")))
            .with_producer_id(ProducerId(pid))
            .with_producer_epoch(epoch)
            .with_topics(vec![TxnOffsetCommitRequestTopic::default()
                .with_name(TopicName(s("t")))
                .with_partitions(
                    partitions
                        .iter()
                        .map(|p| {
                            TxnOffsetCommitRequestPartition::default()
                                .with_partition_index(*p)
                                .with_committed_offset(1)
                        })
                        .collect(),
                )])
    };
    let codes = |r: TxnOffsetCommitResponse| -> Vec<i16> {
        r.topics[0]
            .partitions
            .iter()
            .map(|p| p.error_code)
            .collect()
    };
    let r = b
        .call(ApiKey::TxnOffsetCommit, 3, &commit(&[0, 1, 2]))
        .await;
    assert_eq!(codes(r), [POLICY_VIOLATION; 3]);
    assert!(
        !b.state.offsets.lock().has_staged("g", "t", 0),
        "nothing staged"
    );
    let r = b.call(ApiKey::TxnOffsetCommit, 3, &commit(&[0, 1])).await;
    assert_eq!(codes(r), [0, 0]);
    let r = b.call(ApiKey::TxnOffsetCommit, 3, &commit(&[1])).await;
    assert_eq!(codes(r), [0], "re-staging a held partition");
    let r = b.call(ApiKey::TxnOffsetCommit, 3, &commit(&[2])).await;
    assert_eq!(codes(r), [POLICY_VIOLATION]);
    b.still_answers().await;
}

#[tokio::test]
async fn members_per_group() {
    let b = broker(Limits {
        max_group_members: 1,
        ..Limits::default()
    });
    let join = JoinGroupRequest::default()
        .with_group_id(GroupId(s("g")))
        .with_session_timeout_ms(10_000)
        .with_rebalance_timeout_ms(10_000)
        .with_protocol_type(s("consumer"))
        .with_protocols(vec![JoinGroupRequestProtocol::default()
            .with_name(s("range"))
            .with_metadata(Bytes::from_static(b"m"))]);
    let first: JoinGroupResponse = b.call(ApiKey::JoinGroup, 3, &join).await;
    assert_eq!(first.error_code, 0);
    // Refused at once; a second member let in would wait for a rebalance that never ends here.
    let second: JoinGroupResponse = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        b.call(ApiKey::JoinGroup, 3, &join),
    )
    .await
    .expect("refused at once, not held for a rebalance");
    assert_eq!(second.error_code, 81, "GROUP_MAX_SIZE_REACHED");
    // The member already in rejoins freely.
    let again: JoinGroupResponse = b
        .call(
            ApiKey::JoinGroup,
            3,
            &join.clone().with_member_id(first.member_id),
        )
        .await;
    assert_eq!(again.error_code, 0);
    b.still_answers().await;
}

#[tokio::test]
async fn producers_per_partition() {
    let b = broker(Limits {
        max_producers_per_partition: 1,
        ..Limits::default()
    });
    b.create(&[("t", 1)], &[]).await;
    assert_eq!(b.produce("t", 1000).await, 0);
    assert_eq!(b.produce("t", 2000).await, POLICY_VIOLATION);
    assert_eq!(
        b.produce("t", -1).await,
        0,
        "no producer id, no producer state"
    );
    let log = b.state.partition("t", 0).unwrap();
    assert_eq!(log.lock().producer_count(), 1);
    assert!(log.lock().producer(2000).is_none());
    b.still_answers().await;
}

/// Over `max_connections` a connection is closed as it is accepted; the ones open keep
/// working, and a place freed is taken again. Requests pipelined past
/// `max_in_flight_per_connection` wait (the broker stops reading) and are all answered, in
/// order.
#[tokio::test]
async fn connections_and_requests_in_flight() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    let broker = reference_broker::Broker::start(BrokerConfig {
        limits: Limits {
            max_connections: 1,
            max_in_flight_per_connection: 1,
            ..Limits::default()
        },
        ..BrokerConfig::for_tests()
    })
    .await
    .unwrap();
    let versions = |correlation: i32| {
        let mut buf = BytesMut::new();
        RequestHeader::default()
            .with_request_api_key(ApiKey::ApiVersions as i16)
            .with_request_api_version(0)
            .with_correlation_id(correlation)
            .encode(&mut buf, 1)
            .unwrap();
        let mut framed = (buf.len() as i32).to_be_bytes().to_vec();
        framed.extend_from_slice(&buf);
        framed
    };
    async fn answer(conn: &mut TcpStream) -> Option<i32> {
        let wait = std::time::Duration::from_secs(10);
        let mut size = [0u8; 4];
        tokio::time::timeout(wait, conn.read_exact(&mut size))
            .await
            .expect("an answer or a close within 10 s")
            .ok()?;
        let mut body = vec![0u8; i32::from_be_bytes(size) as usize];
        conn.read_exact(&mut body).await.ok()?;
        Some(i32::from_be_bytes(body[..4].try_into().unwrap()))
    }
    let mut first = TcpStream::connect(broker.addr()).await.unwrap();
    // Five requests at once on a connection that may have one in flight.
    let mut five = Vec::new();
    for c in 1..=5 {
        five.extend(versions(c));
    }
    first.write_all(&five).await.unwrap();
    for c in 1..=5 {
        assert_eq!(answer(&mut first).await, Some(c));
    }
    let mut second = TcpStream::connect(broker.addr()).await.unwrap();
    let _ = second.write_all(&versions(9)).await;
    assert_eq!(answer(&mut second).await, None, "closed at accept");
    first.write_all(&versions(6)).await.unwrap();
    assert_eq!(
        answer(&mut first).await,
        Some(6),
        "the open one keeps working"
    );
    drop(first);
    // The place is free again once the broker has seen the close.
    let mut third = None;
    for _ in 0..50 {
        let mut conn = TcpStream::connect(broker.addr()).await.unwrap();
        let _ = conn.write_all(&versions(10)).await;
        if answer(&mut conn).await == Some(10) {
            third = Some(conn);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(third.is_some(), "a freed place is taken again");
    broker.shutdown().await;
}
