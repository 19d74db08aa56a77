//! One test for every "Verified by" line of the kaas transaction-API spec that one broker can
//! show, driven through the in-process dispatcher with wire frames.

use std::sync::Arc;

use reference_broker::broker::{open_in_dir, State};
use reference_broker::codec::add_partitions_to_txn::AddPartitionsToTxnTopic;
use reference_broker::codec::header::{decode_response, encode_request};
use reference_broker::codec::txn_offset_commit::{
    TxnOffsetCommitRequestPartition, TxnOffsetCommitRequestTopic,
};
use reference_broker::codec::write_txn_markers::{WritableTxnMarker, WritableTxnMarkerTopic};
use reference_broker::codec::*;
use reference_broker::dispatch;
use reference_broker::txn::slots::{slot_of, SlotStore, TxnState};

struct Broker {
    state: Arc<State>,
    _dir: tempfile::TempDir,
}

impl Broker {
    fn new() -> Broker {
        let dir = tempfile::tempdir().unwrap();
        let state = open_in_dir(dir.path()).unwrap();
        {
            let mut topics = state.topics.write();
            topics.create("t", 2).unwrap();
            topics.create("u", 1).unwrap();
        }
        Broker {
            state: Arc::new(state),
            _dir: dir,
        }
    }

    async fn call(&self, request: Request, version: i16) -> Response {
        let header = RequestHeader {
            api_key: request.api().key(),
            api_version: version,
            correlation_id: 11,
            client_id: Some("spec".into()),
            unknown_tagged_fields: TaggedFields::new(),
        };
        let frame = encode_request(&header, &request).unwrap();
        let response = dispatch::handle(&self.state, frame.into())
            .await
            .unwrap()
            .expect("a response");
        let (h, body) = decode_response(request.api(), version, &response).unwrap();
        assert_eq!(h.correlation_id, 11);
        body
    }

    async fn init(&self, id: Option<&str>) -> (i16, i64, i16) {
        let r = self
            .call(
                Request::InitProducerId(InitProducerIdRequest {
                    transactional_id: id.map(Into::into),
                    transaction_timeout_ms: 60_000,
                    ..Default::default()
                }),
                4,
            )
            .await;
        let Response::InitProducerId(r) = r else {
            panic!()
        };
        (r.error_code, r.producer_id, r.producer_epoch)
    }

    async fn add_partitions(
        &self,
        id: &str,
        pid: i64,
        epoch: i16,
        parts: &[(&str, i32)],
    ) -> Vec<i16> {
        let mut topics: Vec<AddPartitionsToTxnTopic> = Vec::new();
        for (t, p) in parts {
            match topics.iter_mut().find(|x| x.name == *t) {
                Some(x) => x.partitions.push(*p),
                None => topics.push(AddPartitionsToTxnTopic {
                    name: (*t).into(),
                    partitions: vec![*p],
                    ..Default::default()
                }),
            }
        }
        let r = self
            .call(
                Request::AddPartitionsToTxn(AddPartitionsToTxnRequest {
                    transactional_id: id.into(),
                    producer_id: pid,
                    producer_epoch: epoch,
                    topics,
                    ..Default::default()
                }),
                3,
            )
            .await;
        let Response::AddPartitionsToTxn(r) = r else {
            panic!()
        };
        r.results
            .iter()
            .flat_map(|t| t.results.iter().map(|p| p.partition_error_code))
            .collect()
    }

    async fn add_offsets(&self, id: &str, pid: i64, epoch: i16, group: &str) -> i16 {
        let r = self
            .call(
                Request::AddOffsetsToTxn(AddOffsetsToTxnRequest {
                    transactional_id: id.into(),
                    producer_id: pid,
                    producer_epoch: epoch,
                    group_id: group.into(),
                    ..Default::default()
                }),
                3,
            )
            .await;
        let Response::AddOffsetsToTxn(r) = r else {
            panic!()
        };
        r.error_code
    }

    async fn end(&self, id: &str, pid: i64, epoch: i16, commit: bool) -> i16 {
        let r = self
            .call(
                Request::EndTxn(EndTxnRequest {
                    transactional_id: id.into(),
                    producer_id: pid,
                    producer_epoch: epoch,
                    committed: commit,
                    ..Default::default()
                }),
                3,
            )
            .await;
        let Response::EndTxn(r) = r else { panic!() };
        r.error_code
    }

    async fn txn_offset_commit(&self, id: &str, pid: i64, group: &str, offset: i64) -> i16 {
        let r = self
            .call(
                Request::TxnOffsetCommit(TxnOffsetCommitRequest {
                    transactional_id: id.into(),
                    group_id: group.into(),
                    producer_id: pid,
                    producer_epoch: 0,
                    topics: vec![TxnOffsetCommitRequestTopic {
                        name: "u".into(),
                        partitions: vec![TxnOffsetCommitRequestPartition {
                            partition_index: 0,
                            committed_offset: offset,
                            ..Default::default()
                        }],
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
                3,
            )
            .await;
        let Response::TxnOffsetCommit(r) = r else {
            panic!()
        };
        r.topics[0].partitions[0].error_code
    }

    fn hwm(&self, topic: &str, p: i32) -> i64 {
        self.state
            .partition(topic, p)
            .unwrap()
            .lock()
            .high_watermark()
    }

    fn committed_offset(&self, group: &str) -> Option<i64> {
        self.state
            .offsets
            .lock()
            .get(group, "u", 0)
            .unwrap()
            .map(|c| c.offset)
    }

    fn slots(&self) -> SlotStore {
        SlotStore::new(&self.state.data_dir.join("__cluster"))
    }
}

#[tokio::test]
async fn init_first_call_allocates_epoch_zero_and_rejoin_bumps_the_same_pid() {
    let b = Broker::new();
    let (e, pid, epoch) = b.init(Some("tx-a")).await;
    assert_eq!((e, epoch), (0, 0));
    assert_eq!(pid, 1 << 40, "broker 0's first PID");
    assert_eq!(b.init(Some("tx-a")).await, (0, pid, 1));
    assert_eq!(b.init(Some("tx-a")).await, (0, pid, 2));
}

#[tokio::test]
async fn init_rejoin_appends_the_fence_log() {
    let b = Broker::new();
    let (_, pid, _) = b.init(Some("tx-f")).await;
    b.init(Some("tx-f")).await;
    let file = b
        .state
        .data_dir
        .join("__cluster/producer_fences/from-kaas-0.json");
    assert_eq!(
        std::fs::read_to_string(file).unwrap(),
        format!(r#"{{"{pid}":1}}"#)
    );
}

#[tokio::test]
async fn init_empty_string_id_is_treated_as_non_transactional() {
    let b = Broker::new();
    let (e, pid, epoch) = b.init(Some("")).await;
    assert_eq!((e, epoch), (0, 0));
    let (_, pid2, epoch2) = b.init(Some("")).await;
    assert_eq!(
        (pid2, epoch2),
        (pid + 1, 0),
        "a fresh PID each time, nothing stored"
    );
    assert!(b.slots().all().unwrap().is_empty());
}

#[tokio::test]
async fn init_epoch_overflow_rotates_to_a_fresh_pid() {
    let b = Broker::new();
    let (_, pid, _) = b.init(Some("tx-o")).await;
    b.slots()
        .update("tx-o", |e| {
            e.as_mut().unwrap().epoch = i16::MAX - 2;
            ((), true)
        })
        .unwrap();
    // As Apache 3.7: the epoch climbs to i16::MAX - 1, and the rejoin after that rotates.
    assert_eq!(b.init(Some("tx-o")).await, (0, pid, i16::MAX - 1));
    let (err, new_pid, epoch) = b.init(Some("tx-o")).await;
    assert_eq!((err, epoch), (0, 0));
    assert_ne!(new_pid, pid);
}

#[tokio::test]
async fn add_partitions_happy_path_then_idempotent_without_a_slot_rewrite() {
    let b = Broker::new();
    let (_, pid, ep) = b.init(Some("tx-1")).await;
    assert_eq!(
        b.add_partitions("tx-1", pid, ep, &[("t", 0), ("t", 1)])
            .await,
        vec![0, 0]
    );
    let path = b
        .state
        .data_dir
        .join(format!("__cluster/txn_state/slot-{}.json", slot_of("tx-1")));
    let before = std::fs::metadata(&path).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_eq!(
        b.add_partitions("tx-1", pid, ep, &[("t", 1)]).await,
        vec![0]
    );
    assert_eq!(
        std::fs::metadata(&path).unwrap().modified().unwrap(),
        before
    );
    let entry = b.slots().get("tx-1").unwrap().unwrap();
    assert_eq!(entry.state, TxnState::Ongoing);
    assert!(entry.ongoing_since_ms > 0);
}

#[tokio::test]
async fn add_partitions_unions_across_calls() {
    let b = Broker::new();
    let (_, pid, ep) = b.init(Some("tx-u")).await;
    b.add_partitions("tx-u", pid, ep, &[("t", 1)]).await;
    b.add_partitions("tx-u", pid, ep, &[("u", 0), ("t", 0)])
        .await;
    let e = b.slots().get("tx-u").unwrap().unwrap();
    let flat: Vec<(String, Vec<i32>)> = e
        .partitions
        .into_iter()
        .map(|t| (t.topic, t.partitions))
        .collect();
    assert_eq!(flat, vec![("t".into(), vec![1, 0]), ("u".into(), vec![0])]);
}

#[tokio::test]
async fn add_partitions_fans_errors_out_and_checks_in_apaches_order() {
    let b = Broker::new();
    assert_eq!(
        b.add_partitions("nobody", 5, 0, &[("t", 0), ("t", 1)])
            .await,
        vec![49, 49]
    );
    let (_, pid, ep) = b.init(Some("tx-e")).await;
    assert_eq!(
        b.add_partitions("tx-e", pid + 1, ep, &[("t", 0)]).await,
        vec![49]
    );
    assert_eq!(
        b.add_partitions("tx-e", pid, ep + 1, &[("t", 0)]).await,
        vec![90],
        "epoch mismatch fences"
    );
    assert_eq!(
        b.add_partitions("tx-e", pid, ep, &[("t", 0), ("missing", 0)])
            .await,
        vec![55, 3],
        "an unknown partition gets 3 and the rest 55"
    );
    assert_eq!(b.add_partitions("", pid, ep, &[("t", 0)]).await, vec![42]);
    b.slots()
        .update("tx-e", |e| {
            e.as_mut().unwrap().state = TxnState::PrepareCommit;
            ((), true)
        })
        .unwrap();
    assert_eq!(
        b.add_partitions("tx-e", pid, ep, &[("t", 0)]).await,
        vec![51],
        "concurrent transition"
    );
}

#[tokio::test]
async fn add_offsets_records_the_group_and_rejects_unknown_producers() {
    let b = Broker::new();
    assert_eq!(b.add_offsets("nobody", 1, 0, "g").await, 49);
    let (_, pid, ep) = b.init(Some("tx-g")).await;
    assert_eq!(b.add_offsets("tx-g", pid, ep, "g").await, 0);
    assert_eq!(b.add_offsets("tx-g", pid, ep, "g").await, 0);
    let e = b.slots().get("tx-g").unwrap().unwrap();
    assert_eq!(
        (e.groups, e.state),
        (vec!["g".to_string()], TxnState::Ongoing)
    );
    assert_eq!(
        b.add_offsets("tx-g", pid, ep, "").await,
        50,
        "empty group: the wire-50 wart"
    );
}

#[tokio::test]
async fn end_txn_commit_appends_a_marker_clears_partitions_and_fires_the_hook() {
    let b = Broker::new();
    let (_, pid, ep) = b.init(Some("tx-c")).await;
    b.add_partitions("tx-c", pid, ep, &[("t", 0)]).await;
    assert_eq!(b.add_offsets("tx-c", pid, ep, "g").await, 0);
    assert_eq!(b.txn_offset_commit("tx-c", pid, "g", 42).await, 0);
    assert_eq!(
        b.committed_offset("g"),
        None,
        "staged offsets are invisible before the commit"
    );
    assert_eq!(b.hwm("t", 0), 0);
    assert_eq!(b.end("tx-c", pid, ep, true).await, 0);
    assert_eq!(b.hwm("t", 0), 1, "a COMMIT marker was appended");
    assert_eq!(
        b.committed_offset("g"),
        Some(42),
        "the hook made the offsets visible"
    );
    let e = b.slots().get("tx-c").unwrap().unwrap();
    assert_eq!(e.state, TxnState::CompleteCommit);
    assert!(e.partitions.is_empty() && e.groups.is_empty() && e.ongoing_since_ms == 0);
    // An idempotent retry: 0, and no second marker.
    assert_eq!(b.end("tx-c", pid, ep, true).await, 0);
    assert_eq!(b.hwm("t", 0), 1);
    // The opposite direction after the commit is an invalid transition: wire 50.
    assert_eq!(b.end("tx-c", pid, ep, false).await, 50);
}

#[tokio::test]
async fn staged_offsets_are_unstable_to_a_require_stable_offset_fetch() {
    use kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestTopic;
    use kafka_protocol::messages::{
        ApiKey as Kp, GroupId, OffsetFetchRequest, OffsetFetchResponse, RequestHeader as KpHeader,
        TopicName,
    };
    use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
    let b = Broker::new();
    let (_, pid, ep) = b.init(Some("tx-s")).await;
    b.add_offsets("tx-s", pid, ep, "gs").await;
    assert_eq!(b.txn_offset_commit("tx-s", pid, "gs", 3).await, 0);
    let fetch = |stable: bool| {
        let mut out = bytes::BytesMut::new();
        KpHeader::default()
            .with_request_api_key(Kp::OffsetFetch as i16)
            .with_request_api_version(7)
            .encode(&mut out, Kp::OffsetFetch.request_header_version(7))
            .unwrap();
        OffsetFetchRequest::default()
            .with_group_id(GroupId(StrBytes::from_static_str("gs")))
            .with_require_stable(stable)
            .with_topics(Some(vec![OffsetFetchRequestTopic::default()
                .with_name(TopicName(StrBytes::from_static_str("u")))
                .with_partition_indexes(vec![0])]))
            .encode(&mut out, 7)
            .unwrap();
        out.freeze()
    };
    for (stable, expected) in [(true, 88), (false, 0)] {
        let resp = dispatch::handle(&b.state, fetch(stable))
            .await
            .unwrap()
            .unwrap();
        let mut body = bytes::Bytes::from(resp).slice(5..); // v7 response header: id + tags
        let r = OffsetFetchResponse::decode(&mut body, 7).unwrap();
        assert_eq!(
            r.topics[0].partitions[0].error_code, expected,
            "require_stable={stable}"
        );
    }
}

#[tokio::test]
async fn end_txn_abort_discards_staged_offsets() {
    let b = Broker::new();
    let (_, pid, ep) = b.init(Some("tx-d")).await;
    b.add_offsets("tx-d", pid, ep, "g2").await;
    assert_eq!(b.txn_offset_commit("tx-d", pid, "g2", 7).await, 0);
    assert_eq!(b.end("tx-d", pid, ep, false).await, 0);
    assert_eq!(b.committed_offset("g2"), None);
    assert_eq!(
        b.slots().get("tx-d").unwrap().unwrap().state,
        TxnState::CompleteAbort
    );
}

#[tokio::test]
async fn end_txn_against_empty_is_invalid_and_epoch_mismatch_is_fenced() {
    let b = Broker::new();
    let (_, pid, ep) = b.init(Some("tx-x")).await;
    assert_eq!(
        b.end("tx-x", pid, ep, true).await,
        50,
        "Empty: the wire-50 wart (Apache: 48)"
    );
    b.add_partitions("tx-x", pid, ep, &[("t", 0)]).await;
    assert_eq!(b.end("tx-x", pid, ep + 1, true).await, 90);
    assert_eq!(b.end("tx-x", pid + 9, ep, true).await, 49);
    assert_eq!(b.end("", pid, ep, true).await, 42);
}

#[tokio::test]
async fn write_txn_markers_appends_per_partition_and_an_empty_list_is_an_empty_response() {
    let b = Broker::new();
    let r = b
        .call(
            Request::WriteTxnMarkers(WriteTxnMarkersRequest::default()),
            1,
        )
        .await;
    let Response::WriteTxnMarkers(r) = r else {
        panic!()
    };
    assert!(r.markers.is_empty());
    let marker = WritableTxnMarker {
        producer_id: 77,
        producer_epoch: 0,
        transaction_result: true,
        topics: vec![WritableTxnMarkerTopic {
            name: "t".into(),
            partition_indexes: vec![0, 1, 9],
            ..Default::default()
        }],
        coordinator_epoch: 3,
        ..Default::default()
    };
    let r = b
        .call(
            Request::WriteTxnMarkers(WriteTxnMarkersRequest {
                markers: vec![marker],
                ..Default::default()
            }),
            1,
        )
        .await;
    let Response::WriteTxnMarkers(r) = r else {
        panic!()
    };
    let codes: Vec<i16> = r.markers[0].topics[0]
        .partitions
        .iter()
        .map(|p| p.error_code)
        .collect();
    assert_eq!(codes, vec![0, 0, 3]);
    assert_eq!((b.hwm("t", 0), b.hwm("t", 1)), (1, 1));
}

#[tokio::test]
async fn txn_offset_commit_needs_the_group_in_the_transaction() {
    let b = Broker::new();
    let (_, pid, _) = b.init(Some("tx-o")).await;
    assert_eq!(b.txn_offset_commit("tx-o", pid, "g", 1).await, 48);
    assert_eq!(b.txn_offset_commit("tx-o", pid + 1, "g", 1).await, 49);
}

#[tokio::test]
async fn api_versions_advertises_the_transaction_apis_at_the_documented_ranges() {
    use kafka_protocol::messages::{
        ApiKey as Kp, ApiVersionsRequest, ApiVersionsResponse, RequestHeader as KpHeader,
    };
    use kafka_protocol::protocol::{Decodable, Encodable};
    let b = Broker::new();
    let mut frame = bytes::BytesMut::new();
    KpHeader::default()
        .with_request_api_key(Kp::ApiVersions as i16)
        .with_request_api_version(3)
        .encode(&mut frame, Kp::ApiVersions.request_header_version(3))
        .unwrap();
    ApiVersionsRequest::default().encode(&mut frame, 3).unwrap();
    let resp = dispatch::handle(&b.state, frame.freeze())
        .await
        .unwrap()
        .unwrap();
    // ApiVersions answers with response header v0 (correlation id only), whatever its version.
    let mut body = bytes::Bytes::from(resp).slice(4..);
    let r = ApiVersionsResponse::decode(&mut body, 3).unwrap();
    let range = |key: i16| {
        r.api_keys
            .iter()
            .find(|k| k.api_key == key)
            .map(|k| (k.min_version, k.max_version))
    };
    assert_eq!(range(22), Some((0, 4)), "InitProducerId v0-v4");
    assert_eq!(
        range(24),
        Some((0, 3)),
        "AddPartitionsToTxn v0-v3 (Apache: v4)"
    );
    assert_eq!(range(25), Some((0, 3)), "AddOffsetsToTxn v0-v3");
    assert_eq!(range(26), Some((0, 3)), "EndTxn v0-v3");
    assert_eq!(range(27), Some((0, 1)), "WriteTxnMarkers v0-v1");
    assert_eq!(range(28), Some((0, 3)), "TxnOffsetCommit v0-v3");
    assert_eq!(range(10), Some((0, 4)), "FindCoordinator v0-v4");
}
