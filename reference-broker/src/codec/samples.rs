//! Valid example messages of every API, direction and version.
//!
//! Exists so that the fuzzers' seed corpora, the benchmarks and the corpus-freshness test all
//! start from the same messages: an all-defaults one and a populated one per version, with
//! unknown tagged fields in the flexible versions.

use super::add_partitions_to_txn::*;
use super::txn_offset_commit::*;
use super::write_txn_markers::*;
use super::*;

fn tags(api: ApiKey, version: i16) -> TaggedFields {
    match api.is_flexible(version) {
        true => [(0, &b""[..]), (9, &b"kconform"[..])].into_iter().collect(),
        false => TaggedFields::new(),
    }
}

fn topic_names() -> [&'static str; 2] {
    ["orders", "payments"]
}

/// A populated request of `api` valid at `version` (the caller has checked the version).
pub fn populated_request(api: ApiKey, version: i16) -> Request {
    let t = || tags(api, version);
    match api {
        ApiKey::InitProducerId => Request::InitProducerId(InitProducerIdRequest {
            transactional_id: Some("kconform-tx".into()),
            transaction_timeout_ms: 60_000,
            producer_id: if version >= 3 { 1 << 40 } else { -1 },
            producer_epoch: if version >= 3 { 4 } else { -1 },
            unknown_tagged_fields: t(),
        }),
        ApiKey::AddPartitionsToTxn => Request::AddPartitionsToTxn(AddPartitionsToTxnRequest {
            transactional_id: "kconform-tx".into(),
            producer_id: 1 << 40,
            producer_epoch: 4,
            topics: topic_names()
                .into_iter()
                .map(|name| AddPartitionsToTxnTopic {
                    name: name.into(),
                    partitions: (0..8).collect(),
                    unknown_tagged_fields: t(),
                })
                .collect(),
            unknown_tagged_fields: t(),
        }),
        ApiKey::AddOffsetsToTxn => Request::AddOffsetsToTxn(AddOffsetsToTxnRequest {
            transactional_id: "kconform-tx".into(),
            producer_id: 1 << 40,
            producer_epoch: 4,
            group_id: "kconform-group".into(),
            unknown_tagged_fields: t(),
        }),
        ApiKey::EndTxn => Request::EndTxn(EndTxnRequest {
            transactional_id: "kconform-tx".into(),
            producer_id: 1 << 40,
            producer_epoch: 4,
            committed: true,
            unknown_tagged_fields: t(),
        }),
        ApiKey::WriteTxnMarkers => Request::WriteTxnMarkers(WriteTxnMarkersRequest {
            markers: (0..2)
                .map(|i| WritableTxnMarker {
                    producer_id: (1 << 40) + i,
                    producer_epoch: 4,
                    transaction_result: i == 0,
                    topics: topic_names()
                        .into_iter()
                        .map(|name| WritableTxnMarkerTopic {
                            name: name.into(),
                            partition_indexes: (0..4).collect(),
                            unknown_tagged_fields: t(),
                        })
                        .collect(),
                    coordinator_epoch: 0,
                    unknown_tagged_fields: t(),
                })
                .collect(),
            unknown_tagged_fields: t(),
        }),
        ApiKey::TxnOffsetCommit => Request::TxnOffsetCommit(TxnOffsetCommitRequest {
            transactional_id: "kconform-tx".into(),
            group_id: "kconform-group".into(),
            producer_id: 1 << 40,
            producer_epoch: 4,
            generation_id: if version >= 3 { 2 } else { -1 },
            member_id: if version >= 3 {
                "consumer-1-0d5f".into()
            } else {
                CompactString::default()
            },
            group_instance_id: None,
            topics: topic_names()
                .into_iter()
                .map(|name| TxnOffsetCommitRequestTopic {
                    name: name.into(),
                    partitions: (0..4)
                        .map(|p| TxnOffsetCommitRequestPartition {
                            partition_index: p,
                            committed_offset: 1000 + i64::from(p),
                            committed_leader_epoch: if version >= 2 { 0 } else { -1 },
                            committed_metadata: if p == 0 { None } else { Some("m".into()) },
                            unknown_tagged_fields: t(),
                        })
                        .collect(),
                    unknown_tagged_fields: t(),
                })
                .collect(),
            unknown_tagged_fields: t(),
        }),
    }
}

/// A populated response of `api` valid at `version`.
pub fn populated_response(api: ApiKey, version: i16) -> Response {
    let t = || tags(api, version);
    match api {
        ApiKey::InitProducerId => Response::InitProducerId(InitProducerIdResponse {
            throttle_time_ms: 0,
            error_code: 0,
            producer_id: 1 << 40,
            producer_epoch: 5,
            unknown_tagged_fields: t(),
        }),
        ApiKey::AddPartitionsToTxn => Response::AddPartitionsToTxn(AddPartitionsToTxnResponse {
            throttle_time_ms: 0,
            results: topic_names()
                .into_iter()
                .map(|name| AddPartitionsToTxnTopicResult {
                    name: name.into(),
                    results: (0..8)
                        .map(|p| AddPartitionsToTxnPartitionResult {
                            partition_index: p,
                            partition_error_code: 0,
                            unknown_tagged_fields: t(),
                        })
                        .collect(),
                    unknown_tagged_fields: t(),
                })
                .collect(),
            unknown_tagged_fields: t(),
        }),
        ApiKey::AddOffsetsToTxn => Response::AddOffsetsToTxn(AddOffsetsToTxnResponse {
            throttle_time_ms: 0,
            error_code: 50,
            unknown_tagged_fields: t(),
        }),
        ApiKey::EndTxn => Response::EndTxn(EndTxnResponse {
            throttle_time_ms: 0,
            error_code: 48,
            unknown_tagged_fields: t(),
        }),
        ApiKey::WriteTxnMarkers => Response::WriteTxnMarkers(WriteTxnMarkersResponse {
            markers: (0..2)
                .map(|i| WritableTxnMarkerResult {
                    producer_id: (1 << 40) + i,
                    topics: topic_names()
                        .into_iter()
                        .map(|name| WritableTxnMarkerTopicResult {
                            name: name.into(),
                            partitions: (0..4)
                                .map(|p| WritableTxnMarkerPartitionResult {
                                    partition_index: p,
                                    error_code: 0,
                                    unknown_tagged_fields: t(),
                                })
                                .collect(),
                            unknown_tagged_fields: t(),
                        })
                        .collect(),
                    unknown_tagged_fields: t(),
                })
                .collect(),
            unknown_tagged_fields: t(),
        }),
        ApiKey::TxnOffsetCommit => Response::TxnOffsetCommit(TxnOffsetCommitResponse {
            throttle_time_ms: 0,
            topics: topic_names()
                .into_iter()
                .map(|name| TxnOffsetCommitResponseTopic {
                    name: name.into(),
                    partitions: (0..4)
                        .map(|p| TxnOffsetCommitResponsePartition {
                            partition_index: p,
                            error_code: 0,
                            unknown_tagged_fields: t(),
                        })
                        .collect(),
                    unknown_tagged_fields: t(),
                })
                .collect(),
            unknown_tagged_fields: t(),
        }),
    }
}

/// The all-defaults request of `api` (valid at every version).
pub fn default_request(api: ApiKey) -> Request {
    match api {
        ApiKey::InitProducerId => Request::InitProducerId(Default::default()),
        ApiKey::AddPartitionsToTxn => Request::AddPartitionsToTxn(Default::default()),
        ApiKey::AddOffsetsToTxn => Request::AddOffsetsToTxn(Default::default()),
        ApiKey::EndTxn => Request::EndTxn(Default::default()),
        ApiKey::WriteTxnMarkers => Request::WriteTxnMarkers(Default::default()),
        ApiKey::TxnOffsetCommit => Request::TxnOffsetCommit(Default::default()),
    }
}

/// The all-defaults response of `api` (valid at every version).
pub fn default_response(api: ApiKey) -> Response {
    match api {
        ApiKey::InitProducerId => Response::InitProducerId(Default::default()),
        ApiKey::AddPartitionsToTxn => Response::AddPartitionsToTxn(Default::default()),
        ApiKey::AddOffsetsToTxn => Response::AddOffsetsToTxn(Default::default()),
        ApiKey::EndTxn => Response::EndTxn(Default::default()),
        ApiKey::WriteTxnMarkers => Response::WriteTxnMarkers(Default::default()),
        ApiKey::TxnOffsetCommit => Response::TxnOffsetCommit(Default::default()),
    }
}

/// Encoded bodies of every sample of `api` in `direction`, with their version: for each
/// version, the all-defaults message, then the populated one.
pub fn encoded_samples(api: ApiKey, direction: Direction) -> Vec<(i16, Vec<u8>)> {
    let (min, max) = api.versions();
    let mut out = Vec::new();
    for v in min..=max {
        let bodies = match direction {
            Direction::Request => [default_request(api), populated_request(api, v)]
                .map(|m| m.encode(v).expect("a sample encodes at its version")),
            Direction::Response => [default_response(api), populated_response(api, v)]
                .map(|m| m.encode(v).expect("a sample encodes at its version")),
        };
        out.extend(bodies.into_iter().map(|b| (v, b)));
    }
    out
}

/// The file name of the fuzz target for `api` (also its corpus directory).
pub fn fuzz_target_name(api: ApiKey) -> &'static str {
    match api {
        ApiKey::InitProducerId => "init_producer_id",
        ApiKey::AddPartitionsToTxn => "add_partitions_to_txn",
        ApiKey::AddOffsetsToTxn => "add_offsets_to_txn",
        ApiKey::EndTxn => "end_txn",
        ApiKey::WriteTxnMarkers => "write_txn_markers",
        ApiKey::TxnOffsetCommit => "txn_offset_commit",
    }
}

/// The seed file name for the `index`-th entry of [`encoded_samples`] (stable, so the
/// committed corpus can be checked against the samples).
pub fn seed_file_name(direction: Direction, version: i16, index: usize) -> String {
    let d = match direction {
        Direction::Request => "request",
        Direction::Response => "response",
    };
    let kind = match index % 2 {
        0 => "defaults",
        _ => "populated",
    };
    format!("seed-{d}-v{version}-{kind}")
}
