//! Hand-checked byte strings: at least one per API, direction and version.
//!
//! Each fixture is written field by field from Apache 3.7's message schemas, with the field in
//! a comment beside its bytes. Versions whose encoding is identical share a fixture, and the
//! test runs it at each of them. Every fixture must decode to the given message, encode back to
//! the same bytes, and decode to the same fields with kafka-protocol.

use reference_broker::codec::add_partitions_to_txn::*;
use reference_broker::codec::differential::{theirs_decode, Counterpart};
use reference_broker::codec::txn_offset_commit::*;
use reference_broker::codec::write_txn_markers::*;
use reference_broker::codec::*;

/// Parses hex with whitespace and `#` comments to end of line.
fn hex(s: &str) -> Vec<u8> {
    let digits: String = s
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .flat_map(|l| l.chars().filter(|c| !c.is_whitespace()))
        .collect();
    assert!(digits.len() % 2 == 0, "odd number of hex digits");
    (0..digits.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&digits[i..i + 2], 16).expect("hex digit"))
        .collect()
}

fn check<T: Counterpart>(versions: std::ops::RangeInclusive<i16>, bytes: &str, expected: T) {
    let bytes = hex(bytes);
    for v in versions {
        let decoded = T::decode(v, &bytes).unwrap_or_else(|e| panic!("{:?} v{v}: {e}", T::API));
        assert_eq!(decoded, expected, "{:?} v{v} decode", T::API);
        assert_eq!(
            expected.encode(v).unwrap(),
            bytes,
            "{:?} v{v} encode",
            T::API
        );
        let (theirs, left) = theirs_decode::<T>(v, &bytes).unwrap();
        assert_eq!(left, 0, "{:?} v{v}: kafka-protocol left bytes", T::API);
        assert_eq!(
            theirs,
            expected.to_theirs(),
            "{:?} v{v} kafka-protocol",
            T::API
        );
    }
}

#[test]
fn init_producer_id_request() {
    let tx = InitProducerIdRequest {
        transactional_id: Some("tx".into()),
        transaction_timeout_ms: 60_000,
        ..Default::default()
    };
    check(
        0..=1,
        "0002 7478   # transactional_id: int16 length 2, 'tx'
         0000ea60    # transaction_timeout_ms: 60000",
        tx.clone(),
    );
    check(
        0..=1,
        "ffff        # transactional_id: null (idempotent producer)
         00000000    # transaction_timeout_ms: 0",
        InitProducerIdRequest::default(),
    );
    check(
        2..=2,
        "03 7478     # transactional_id: compact, varint length+1 = 3
         0000ea60    # transaction_timeout_ms
         00          # no tagged fields",
        tx.clone(),
    );
    check(
        2..=2,
        "00          # transactional_id: compact null
         00000000 00",
        InitProducerIdRequest::default(),
    );
    check(
        3..=4,
        "03 7478              # transactional_id
         0000ea60             # transaction_timeout_ms
         00000000000003e8     # producer_id: 1000 (v3+)
         0005                 # producer_epoch: 5 (v3+)
         00",
        InitProducerIdRequest {
            producer_id: 1000,
            producer_epoch: 5,
            ..tx.clone()
        },
    );
    check(
        3..=4,
        "03 7478 0000ea60
         ffffffffffffffff     # producer_id: -1, no expectation
         ffff                 # producer_epoch: -1
         01 07 02 abcd        # one tagged field: tag 7, size 2, kept as unknown",
        InitProducerIdRequest {
            unknown_tagged_fields: [(7, vec![0xab, 0xcd])].into_iter().collect(),
            ..tx
        },
    );
}

#[test]
fn init_producer_id_response() {
    let r = InitProducerIdResponse {
        throttle_time_ms: 0,
        error_code: 0,
        producer_id: 1 << 40,
        producer_epoch: 3,
        unknown_tagged_fields: TaggedFields::new(),
    };
    check(
        0..=1,
        "00000000            # throttle_time_ms
         0000                # error_code: NONE
         0000010000000000    # producer_id: 2^40, kaas broker 0's first PID
         0003                # producer_epoch",
        r.clone(),
    );
    check(
        2..=4,
        "00000000 0000 0000010000000000 0003
         00                  # tagged fields",
        r,
    );
    check(
        2..=4,
        "00000000
         0033                # error_code: 51 CONCURRENT_TRANSACTIONS
         ffffffffffffffff    # producer_id: -1
         ffff                # producer_epoch: -1
         00",
        InitProducerIdResponse {
            error_code: 51,
            producer_id: -1,
            producer_epoch: -1,
            ..Default::default()
        },
    );
}

#[test]
fn add_partitions_to_txn_request() {
    let r = AddPartitionsToTxnRequest {
        transactional_id: "tx".into(),
        producer_id: 7,
        producer_epoch: 1,
        topics: vec![AddPartitionsToTxnTopic {
            name: "t".into(),
            partitions: vec![0, 2],
            unknown_tagged_fields: TaggedFields::new(),
        }],
        unknown_tagged_fields: TaggedFields::new(),
    };
    check(
        0..=2,
        "0002 7478             # transactional_id
         0000000000000007      # producer_id
         0001                  # producer_epoch
         00000001              # topics: 1
           0001 74             #   name 't'
           00000002            #   partitions: 2
             00000000 00000002",
        r.clone(),
    );
    check(
        3..=3,
        "03 7478 0000000000000007 0001
         02                    # topics: compact count 1+1
           02 74               #   name 't'
           03 00000000 00000002 #  partitions: compact count 2+1
           00                  #   topic tagged fields
         00                    # tagged fields",
        r,
    );
}

#[test]
fn add_partitions_to_txn_response() {
    let r = AddPartitionsToTxnResponse {
        throttle_time_ms: 0,
        results: vec![AddPartitionsToTxnTopicResult {
            name: "t".into(),
            results: vec![AddPartitionsToTxnPartitionResult {
                partition_index: 0,
                partition_error_code: 49,
                unknown_tagged_fields: TaggedFields::new(),
            }],
            unknown_tagged_fields: TaggedFields::new(),
        }],
        unknown_tagged_fields: TaggedFields::new(),
    };
    check(
        0..=2,
        "00000000              # throttle_time_ms
         00000001              # results: 1 topic
           0001 74             #   name 't'
           00000001            #   results: 1 partition
             00000000 0031     #     partition 0, error 49 INVALID_PRODUCER_ID_MAPPING",
        r.clone(),
    );
    check(
        3..=3,
        "00000000
         02 02 74 02 00000000 0031 00 00
         00",
        r,
    );
}

#[test]
fn add_offsets_to_txn() {
    let req = AddOffsetsToTxnRequest {
        transactional_id: "tx".into(),
        producer_id: 7,
        producer_epoch: 1,
        group_id: "g".into(),
        unknown_tagged_fields: TaggedFields::new(),
    };
    check(
        0..=2,
        "0002 7478 0000000000000007 0001
         0001 67               # group_id 'g'",
        req.clone(),
    );
    check(3..=3, "03 7478 0000000000000007 0001 02 67 00", req);
    let resp = AddOffsetsToTxnResponse {
        throttle_time_ms: 5,
        error_code: 90,
        unknown_tagged_fields: TaggedFields::new(),
    };
    check(0..=2, "00000005 005a  # throttle 5, error 90", resp.clone());
    check(3..=3, "00000005 005a 00", resp);
}

#[test]
fn end_txn() {
    let req = EndTxnRequest {
        transactional_id: "tx".into(),
        producer_id: -1,
        producer_epoch: 0,
        committed: true,
        unknown_tagged_fields: TaggedFields::new(),
    };
    check(
        0..=2,
        "0002 7478 ffffffffffffffff 0000
         01                    # committed: true",
        req.clone(),
    );
    check(3..=3, "03 7478 ffffffffffffffff 0000 01 00", req);
    let resp = EndTxnResponse {
        throttle_time_ms: 0,
        error_code: 48,
        unknown_tagged_fields: TaggedFields::new(),
    };
    check(
        0..=2,
        "00000000 0030  # error 48 INVALID_TXN_STATE",
        resp.clone(),
    );
    check(
        3..=3,
        "00000000 0030
         02 00 00 05 05 68656c6c6f # two tagged fields: tag 0 empty; tag 5: 'hello'",
        EndTxnResponse {
            unknown_tagged_fields: [(0, vec![]), (5, b"hello".to_vec())].into_iter().collect(),
            ..resp
        },
    );
}

#[test]
fn write_txn_markers() {
    let req = WriteTxnMarkersRequest {
        markers: vec![WritableTxnMarker {
            producer_id: 9,
            producer_epoch: 2,
            transaction_result: false,
            topics: vec![WritableTxnMarkerTopic {
                name: "t".into(),
                partition_indexes: vec![1],
                unknown_tagged_fields: TaggedFields::new(),
            }],
            coordinator_epoch: 0,
            unknown_tagged_fields: TaggedFields::new(),
        }],
        unknown_tagged_fields: TaggedFields::new(),
    };
    check(
        0..=0,
        "00000001              # markers: 1
           0000000000000009    #   producer_id
           0002                #   producer_epoch
           00                  #   transaction_result: ABORT
           00000001            #   topics: 1
             0001 74           #     name 't'
             00000001 00000001 #     partition_indexes: [1]
           00000000            #   coordinator_epoch",
        req.clone(),
    );
    check(
        1..=1,
        "02 0000000000000009 0002 00
           02 02 74 02 00000001 00
           00000000 00
         00",
        req,
    );
    let resp = WriteTxnMarkersResponse {
        markers: vec![WritableTxnMarkerResult {
            producer_id: 9,
            topics: vec![WritableTxnMarkerTopicResult {
                name: "t".into(),
                partitions: vec![WritableTxnMarkerPartitionResult {
                    partition_index: 1,
                    error_code: 0,
                    unknown_tagged_fields: TaggedFields::new(),
                }],
                unknown_tagged_fields: TaggedFields::new(),
            }],
            unknown_tagged_fields: TaggedFields::new(),
        }],
        unknown_tagged_fields: TaggedFields::new(),
    };
    check(
        0..=0,
        "00000001 0000000000000009   # no throttle field in this response
           00000001 0001 74 00000001 00000001 0000",
        resp.clone(),
    );
    check(
        1..=1,
        "02 0000000000000009 02 02 74 02 00000001 0000 00 00 00 00",
        resp,
    );
}

#[test]
fn txn_offset_commit_request() {
    let partition = TxnOffsetCommitRequestPartition {
        partition_index: 0,
        committed_offset: 42,
        committed_leader_epoch: -1,
        committed_metadata: None,
        unknown_tagged_fields: TaggedFields::new(),
    };
    let base = TxnOffsetCommitRequest {
        transactional_id: "tx".into(),
        group_id: "g".into(),
        producer_id: 7,
        producer_epoch: 1,
        topics: vec![TxnOffsetCommitRequestTopic {
            name: "t".into(),
            partitions: vec![partition.clone()],
            unknown_tagged_fields: TaggedFields::new(),
        }],
        ..Default::default()
    };
    check(
        0..=1,
        "0002 7478 0001 67 0000000000000007 0001
         00000001 0001 74
           00000001
             00000000            # partition_index
             000000000000002a    # committed_offset 42
             ffff                # committed_metadata: null",
        base.clone(),
    );
    let with_epoch = TxnOffsetCommitRequest {
        topics: vec![TxnOffsetCommitRequestTopic {
            partitions: vec![TxnOffsetCommitRequestPartition {
                committed_leader_epoch: 3,
                committed_metadata: Some("m".into()),
                ..partition
            }],
            ..base.topics[0].clone()
        }],
        ..base.clone()
    };
    check(
        2..=2,
        "0002 7478 0001 67 0000000000000007 0001
         00000001 0001 74
           00000001
             00000000 000000000000002a
             00000003            # committed_leader_epoch (v2+)
             0001 6d             # committed_metadata 'm'",
        with_epoch.clone(),
    );
    check(
        3..=3,
        "03 7478 02 67 0000000000000007 0001
         00000004                # generation_id (v3+)
         03 6d31                 # member_id 'm1'
         00                      # group_instance_id: null
         02 02 74
           02 00000000 000000000000002a 00000003 02 6d 00
           00
         00",
        TxnOffsetCommitRequest {
            generation_id: 4,
            member_id: "m1".into(),
            ..with_epoch
        },
    );
}

#[test]
fn txn_offset_commit_response() {
    let r = TxnOffsetCommitResponse {
        throttle_time_ms: 0,
        topics: vec![TxnOffsetCommitResponseTopic {
            name: "t".into(),
            partitions: vec![TxnOffsetCommitResponsePartition {
                partition_index: 0,
                error_code: 48,
                unknown_tagged_fields: TaggedFields::new(),
            }],
            unknown_tagged_fields: TaggedFields::new(),
        }],
        unknown_tagged_fields: TaggedFields::new(),
    };
    check(
        0..=2,
        "00000000 00000001 0001 74 00000001 00000000 0030",
        r.clone(),
    );
    check(3..=3, "00000000 02 02 74 02 00000000 0030 00 00 00", r);
}

#[test]
fn committed_leader_epoch_is_dropped_below_v2_as_apache_drops_an_ignorable_field() {
    let mut m = TxnOffsetCommitRequest::default();
    m.topics.push(TxnOffsetCommitRequestTopic {
        name: "t".into(),
        partitions: vec![TxnOffsetCommitRequestPartition {
            committed_leader_epoch: 9,
            ..Default::default()
        }],
        unknown_tagged_fields: TaggedFields::new(),
    });
    let v1 = m.encode(1).unwrap();
    let back = TxnOffsetCommitRequest::decode(1, &v1).unwrap();
    assert_eq!(back.topics[0].partitions[0].committed_leader_epoch, -1);
}

#[test]
fn a_field_the_version_cannot_carry_is_refused_not_dropped() {
    let m = InitProducerIdRequest {
        producer_id: 5,
        ..Default::default()
    };
    assert_eq!(
        m.encode(2),
        Err(CodecError::FieldNotInVersion {
            field: "InitProducerIdRequest.producer_id",
            version: 2
        })
    );
    let m = TxnOffsetCommitRequest {
        member_id: "m".into(),
        ..Default::default()
    };
    assert!(matches!(
        m.encode(2),
        Err(CodecError::FieldNotInVersion { .. })
    ));
    let m = EndTxnRequest {
        unknown_tagged_fields: [(1, vec![])].into_iter().collect(),
        ..Default::default()
    };
    assert!(matches!(
        m.encode(2),
        Err(CodecError::FieldNotInVersion { .. })
    ));
}

#[test]
fn versions_outside_the_range_are_typed_errors() {
    for api in ApiKey::ALL {
        let (min, max) = api.versions();
        for v in [min - 1, max + 1, i16::MIN, i16::MAX] {
            let err = Request::decode(api, v, &[]).unwrap_err();
            assert_eq!(
                err,
                CodecError::UnsupportedVersion {
                    api,
                    version: v,
                    min,
                    max
                }
            );
            assert!(matches!(
                Response::decode(api, v, &[]),
                Err(CodecError::UnsupportedVersion { .. })
            ));
        }
    }
    // AddPartitionsToTxn v4 exists in Apache 3.7 but not in kaas.
    assert!(matches!(
        AddPartitionsToTxnRequest::default().encode(4),
        Err(CodecError::UnsupportedVersion { version: 4, .. })
    ));
}

#[test]
fn trailing_bytes_are_refused() {
    let mut bytes = hex("00000000 0000");
    assert!(EndTxnResponse::decode(0, &bytes).is_ok());
    bytes.push(0);
    assert_eq!(
        EndTxnResponse::decode(0, &bytes),
        Err(CodecError::TrailingBytes { count: 1 })
    );
}

#[test]
fn non_canonical_boolean_reads_as_true_and_re_encodes_canonically() {
    let bytes = hex("0002 7478 0000000000000007 0001 07");
    let d = EndTxnRequest::decode_checked(0, &bytes).unwrap();
    assert!(d.message.committed);
    assert!(d.leniency.boolean_byte);
    let re = d.message.encode(0).unwrap();
    assert_eq!(re.last(), Some(&1));
}

#[test]
fn negative_nullable_length_reads_as_null_like_apache() {
    // transactional_id length -2: Apache's generated reader treats any negative length as null.
    let bytes = hex("fffe 00000000");
    let d = InitProducerIdRequest::decode_checked(0, &bytes).unwrap();
    assert_eq!(d.message.transactional_id, None);
    assert!(d.leniency.negative_null_length);
}
