//! Property tests for every API × version × direction:
//! - encode then decode is the identity;
//! - ours and kafka-protocol encode the same fields to the same bytes, and each decodes the
//!   other's bytes to the same fields;
//! - decode then encode gives back the bytes of every canonical input that decodes, tried on
//!   mutations of valid encodings (through the same oracle the fuzzers use).

use proptest::collection::vec;
use proptest::prelude::*;
use reference_broker::codec::add_partitions_to_txn::*;
use reference_broker::codec::differential::{
    check_body, theirs_decode, theirs_encode, Counterpart, Verdict,
};
use reference_broker::codec::txn_offset_commit::*;
use reference_broker::codec::write_txn_markers::*;
use reference_broker::codec::*;

fn text() -> impl Strategy<Value = CompactString> {
    "\\PC{0,8}".prop_map(CompactString::from)
}

fn nullable_text() -> impl Strategy<Value = Option<CompactString>> {
    proptest::option::of(text())
}

/// Unknown tagged fields, ascending and unique (as the protocol requires of writers); none in
/// non-flexible versions.
fn tags(flexible: bool) -> BoxedStrategy<TaggedFields> {
    if !flexible {
        return Just(TaggedFields::new()).boxed();
    }
    proptest::collection::btree_map(0u32..300, vec(any::<u8>(), 0..6), 0..3)
        .prop_map(|m| m.into_iter().collect())
        .boxed()
}

fn small_vec<T: std::fmt::Debug>(s: impl Strategy<Value = T>) -> impl Strategy<Value = Vec<T>> {
    vec(s, 0..4)
}

fn init_producer_id_request(v: i16) -> impl Strategy<Value = InitProducerIdRequest> {
    let v3 = v >= 3;
    (
        nullable_text(),
        any::<i32>(),
        any::<i64>(),
        any::<i16>(),
        tags(v >= 2),
    )
        .prop_map(move |(id, t, pid, e, tags)| InitProducerIdRequest {
            transactional_id: id,
            transaction_timeout_ms: t,
            producer_id: if v3 { pid } else { -1 },
            producer_epoch: if v3 { e } else { -1 },
            unknown_tagged_fields: tags,
        })
}

fn init_producer_id_response(v: i16) -> impl Strategy<Value = InitProducerIdResponse> {
    (
        any::<i32>(),
        any::<i16>(),
        any::<i64>(),
        any::<i16>(),
        tags(v >= 2),
    )
        .prop_map(|(t, e, p, pe, tags)| InitProducerIdResponse {
            throttle_time_ms: t,
            error_code: e,
            producer_id: p,
            producer_epoch: pe,
            unknown_tagged_fields: tags,
        })
}

fn add_partitions_to_txn_request(v: i16) -> impl Strategy<Value = AddPartitionsToTxnRequest> {
    let f = v >= 3;
    let topic = (text(), small_vec(any::<i32>()), tags(f)).prop_map(|(name, partitions, t)| {
        AddPartitionsToTxnTopic {
            name,
            partitions,
            unknown_tagged_fields: t,
        }
    });
    (
        text(),
        any::<i64>(),
        any::<i16>(),
        small_vec(topic),
        tags(f),
    )
        .prop_map(|(id, p, e, topics, t)| AddPartitionsToTxnRequest {
            transactional_id: id,
            producer_id: p,
            producer_epoch: e,
            topics,
            unknown_tagged_fields: t,
        })
}

fn add_partitions_to_txn_response(v: i16) -> impl Strategy<Value = AddPartitionsToTxnResponse> {
    let f = v >= 3;
    let partition = (any::<i32>(), any::<i16>(), tags(f)).prop_map(|(i, e, t)| {
        AddPartitionsToTxnPartitionResult {
            partition_index: i,
            partition_error_code: e,
            unknown_tagged_fields: t,
        }
    });
    let topic = (text(), small_vec(partition), tags(f)).prop_map(|(name, results, t)| {
        AddPartitionsToTxnTopicResult {
            name,
            results,
            unknown_tagged_fields: t,
        }
    });
    (any::<i32>(), small_vec(topic), tags(f)).prop_map(|(th, results, t)| {
        AddPartitionsToTxnResponse {
            throttle_time_ms: th,
            results,
            unknown_tagged_fields: t,
        }
    })
}

fn add_offsets_to_txn_request(v: i16) -> impl Strategy<Value = AddOffsetsToTxnRequest> {
    (text(), any::<i64>(), any::<i16>(), text(), tags(v >= 3)).prop_map(|(id, p, e, g, t)| {
        AddOffsetsToTxnRequest {
            transactional_id: id,
            producer_id: p,
            producer_epoch: e,
            group_id: g,
            unknown_tagged_fields: t,
        }
    })
}

fn add_offsets_to_txn_response(v: i16) -> impl Strategy<Value = AddOffsetsToTxnResponse> {
    (any::<i32>(), any::<i16>(), tags(v >= 3)).prop_map(|(th, e, t)| AddOffsetsToTxnResponse {
        throttle_time_ms: th,
        error_code: e,
        unknown_tagged_fields: t,
    })
}

fn end_txn_request(v: i16) -> impl Strategy<Value = EndTxnRequest> {
    (
        text(),
        any::<i64>(),
        any::<i16>(),
        any::<bool>(),
        tags(v >= 3),
    )
        .prop_map(|(id, p, e, c, t)| EndTxnRequest {
            transactional_id: id,
            producer_id: p,
            producer_epoch: e,
            committed: c,
            unknown_tagged_fields: t,
        })
}

fn end_txn_response(v: i16) -> impl Strategy<Value = EndTxnResponse> {
    (any::<i32>(), any::<i16>(), tags(v >= 3)).prop_map(|(th, e, t)| EndTxnResponse {
        throttle_time_ms: th,
        error_code: e,
        unknown_tagged_fields: t,
    })
}

fn write_txn_markers_request(v: i16) -> impl Strategy<Value = WriteTxnMarkersRequest> {
    let f = v >= 1;
    let topic = (text(), small_vec(any::<i32>()), tags(f)).prop_map(|(name, p, t)| {
        WritableTxnMarkerTopic {
            name,
            partition_indexes: p,
            unknown_tagged_fields: t,
        }
    });
    let marker = (
        any::<i64>(),
        any::<i16>(),
        any::<bool>(),
        small_vec(topic),
        any::<i32>(),
        tags(f),
    )
        .prop_map(|(p, e, r, topics, ce, t)| WritableTxnMarker {
            producer_id: p,
            producer_epoch: e,
            transaction_result: r,
            topics,
            coordinator_epoch: ce,
            unknown_tagged_fields: t,
        });
    (small_vec(marker), tags(f)).prop_map(|(markers, t)| WriteTxnMarkersRequest {
        markers,
        unknown_tagged_fields: t,
    })
}

fn write_txn_markers_response(v: i16) -> impl Strategy<Value = WriteTxnMarkersResponse> {
    let f = v >= 1;
    let partition = (any::<i32>(), any::<i16>(), tags(f)).prop_map(|(i, e, t)| {
        WritableTxnMarkerPartitionResult {
            partition_index: i,
            error_code: e,
            unknown_tagged_fields: t,
        }
    });
    let topic = (text(), small_vec(partition), tags(f)).prop_map(|(name, partitions, t)| {
        WritableTxnMarkerTopicResult {
            name,
            partitions,
            unknown_tagged_fields: t,
        }
    });
    let marker = (any::<i64>(), small_vec(topic), tags(f)).prop_map(|(p, topics, t)| {
        WritableTxnMarkerResult {
            producer_id: p,
            topics,
            unknown_tagged_fields: t,
        }
    });
    (small_vec(marker), tags(f)).prop_map(|(markers, t)| WriteTxnMarkersResponse {
        markers,
        unknown_tagged_fields: t,
    })
}

fn txn_offset_commit_request(v: i16) -> impl Strategy<Value = TxnOffsetCommitRequest> {
    let f = v >= 3;
    let partition = (
        any::<i32>(),
        any::<i64>(),
        any::<i32>(),
        nullable_text(),
        tags(f),
    )
        .prop_map(move |(i, o, le, md, t)| TxnOffsetCommitRequestPartition {
            partition_index: i,
            committed_offset: o,
            committed_leader_epoch: if v >= 2 { le } else { -1 },
            committed_metadata: md,
            unknown_tagged_fields: t,
        });
    let topic = (text(), small_vec(partition), tags(f)).prop_map(|(name, partitions, t)| {
        TxnOffsetCommitRequestTopic {
            name,
            partitions,
            unknown_tagged_fields: t,
        }
    });
    (
        (text(), text(), any::<i64>(), any::<i16>()),
        (any::<i32>(), text(), nullable_text()),
        small_vec(topic),
        tags(f),
    )
        .prop_map(move |((id, g, p, e), (gen, member, inst), topics, t)| {
            TxnOffsetCommitRequest {
                transactional_id: id,
                group_id: g,
                producer_id: p,
                producer_epoch: e,
                generation_id: if f { gen } else { -1 },
                member_id: if f { member } else { CompactString::default() },
                group_instance_id: if f { inst } else { None },
                topics,
                unknown_tagged_fields: t,
            }
        })
}

fn txn_offset_commit_response(v: i16) -> impl Strategy<Value = TxnOffsetCommitResponse> {
    let f = v >= 3;
    let partition = (any::<i32>(), any::<i16>(), tags(f)).prop_map(|(i, e, t)| {
        TxnOffsetCommitResponsePartition {
            partition_index: i,
            error_code: e,
            unknown_tagged_fields: t,
        }
    });
    let topic = (text(), small_vec(partition), tags(f)).prop_map(|(name, partitions, t)| {
        TxnOffsetCommitResponseTopic {
            name,
            partitions,
            unknown_tagged_fields: t,
        }
    });
    (any::<i32>(), small_vec(topic), tags(f)).prop_map(|(th, topics, t)| TxnOffsetCommitResponse {
        throttle_time_ms: th,
        topics,
        unknown_tagged_fields: t,
    })
}

/// A way to damage valid bytes, so that decode-then-encode is tried on inputs near the valid ones.
#[derive(Debug, Clone)]
enum Mutation {
    Set(usize, u8),
    Insert(usize, u8),
    Remove(usize),
    Truncate(usize),
}

fn mutations() -> impl Strategy<Value = Vec<Mutation>> {
    vec(
        prop_oneof![
            (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Set(i, b)),
            (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
            any::<usize>().prop_map(Mutation::Remove),
            any::<usize>().prop_map(Mutation::Truncate),
        ],
        1..4,
    )
}

fn mutate(mut bytes: Vec<u8>, ms: &[Mutation]) -> Vec<u8> {
    for m in ms {
        let n = bytes.len();
        match *m {
            Mutation::Set(i, b) if n > 0 => bytes[i % n] = b,
            Mutation::Insert(i, b) => bytes.insert(i % (n + 1), b),
            Mutation::Remove(i) if n > 0 => {
                bytes.remove(i % n);
            }
            Mutation::Truncate(i) => bytes.truncate(i % (n + 1)),
            _ => {}
        }
    }
    bytes
}

/// Every property for one generated message.
fn properties<T: Counterpart>(
    version: i16,
    m: &T,
    ms: &[Mutation],
) -> std::result::Result<(), TestCaseError> {
    let ours = m
        .encode(version)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    // encode then decode is the identity, and the encoding is canonical.
    let d = T::decode_checked(version, &ours).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&d.message, m);
    prop_assert!(d.leniency.is_canonical());
    // kafka-protocol writes the same fields to the same bytes...
    let theirs = m.to_theirs();
    let their_bytes = theirs_encode(&theirs, version).map_err(TestCaseError::fail)?;
    prop_assert_eq!(&their_bytes, &ours, "the two encoders disagree");
    // ...reads our bytes to the same fields...
    let (read_by_them, left) = theirs_decode::<T>(version, &ours).map_err(TestCaseError::fail)?;
    prop_assert_eq!(left, 0);
    prop_assert_eq!(read_by_them, theirs);
    // ...and we read theirs to the same message.
    prop_assert_eq!(&T::decode(version, &their_bytes).unwrap(), m);
    // Decode-then-encode and the differential verdict on damaged bytes.
    let damaged = mutate(ours, ms);
    let verdict = check_body::<T>(version, &damaged).map_err(TestCaseError::fail)?;
    prop_assert!(verdict != Verdict::UnsupportedVersion);
    Ok(())
}

macro_rules! api_props {
    ($($name:ident: $ty:ty, $strategy:ident;)*) => {
        proptest! {
            #![proptest_config(ProptestConfig::with_cases(384))]
            $(
                #[test]
                fn $name(
                    (version, m) in {
                        let (min, max) = <$ty as Message>::API.versions();
                        (min..=max).prop_flat_map(|v| (Just(v), $strategy(v)))
                    },
                    ms in mutations(),
                ) {
                    properties::<$ty>(version, &m, &ms)?;
                }
            )*
        }
    };
}

api_props! {
    init_producer_id_request_props: InitProducerIdRequest, init_producer_id_request;
    init_producer_id_response_props: InitProducerIdResponse, init_producer_id_response;
    add_partitions_to_txn_request_props: AddPartitionsToTxnRequest, add_partitions_to_txn_request;
    add_partitions_to_txn_response_props: AddPartitionsToTxnResponse, add_partitions_to_txn_response;
    add_offsets_to_txn_request_props: AddOffsetsToTxnRequest, add_offsets_to_txn_request;
    add_offsets_to_txn_response_props: AddOffsetsToTxnResponse, add_offsets_to_txn_response;
    end_txn_request_props: EndTxnRequest, end_txn_request;
    end_txn_response_props: EndTxnResponse, end_txn_response;
    write_txn_markers_request_props: WriteTxnMarkersRequest, write_txn_markers_request;
    write_txn_markers_response_props: WriteTxnMarkersResponse, write_txn_markers_response;
    txn_offset_commit_request_props: TxnOffsetCommitRequest, txn_offset_commit_request;
    txn_offset_commit_response_props: TxnOffsetCommitResponse, txn_offset_commit_response;
}

proptest! {
    /// Arbitrary bytes at arbitrary versions: never a panic, and the oracle holds.
    #[test]
    fn arbitrary_bytes_satisfy_the_fuzz_oracle(
        api in proptest::sample::select(ApiKey::ALL.to_vec()),
        data in vec(any::<u8>(), 0..64),
    ) {
        reference_broker::codec::differential::check_fuzz_input(api, &data)
            .map_err(TestCaseError::fail)?;
    }
}
