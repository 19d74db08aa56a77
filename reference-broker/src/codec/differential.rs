//! Our codecs checked against the `kafka-protocol` crate, an independent implementation of the
//! same Apache schemas.
//!
//! Exists so that tests, the proptest suites and the cargo-fuzz targets share one oracle:
//! [`Counterpart`] maps each of our messages to kafka-protocol's type, and [`check_fuzz_input`]
//! is the property every fuzz input (and every corpus file replayed under `cargo test`) must
//! satisfy.
//!
//! Where the two implementations disagree, Apache's schema and generated code decide. The known
//! cases, each pinned by a test in `tests/kafka_protocol_disagreements.rs`, are where
//! kafka-protocol 0.15 is laxer or stricter than Apache:
//! - strings longer than 32767 bytes: Apache refuses them, kafka-protocol reads them;
//! - varints longer than five bytes: Apache refuses them, kafka-protocol stops after five bytes
//!   and reads on;
//! - a nullable string whose length is negative but not -1: Apache reads null,
//!   kafka-protocol fails;
//! - a tagged-field count of 2^31 or more: Apache reads no tagged fields, kafka-protocol fails;
//! - array counts: kafka-protocol reserves memory for the claimed count before reading, so a
//!   few bytes can ask it for gigabytes; Apache and this codec check the count against the
//!   bytes left first. The oracle therefore never hands kafka-protocol an input that our
//!   decoder refused for a count the input could not back.

use std::collections::BTreeMap;
use std::fmt::Debug;

use bytes::Bytes;
use kafka_protocol::messages as kp;
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};

use super::add_offsets_to_txn::{AddOffsetsToTxnRequest, AddOffsetsToTxnResponse};
use super::add_partitions_to_txn::{AddPartitionsToTxnRequest, AddPartitionsToTxnResponse};
use super::end_txn::{EndTxnRequest, EndTxnResponse};
use super::init_producer_id::{InitProducerIdRequest, InitProducerIdResponse};
use super::txn_offset_commit::{TxnOffsetCommitRequest, TxnOffsetCommitResponse};
use super::write_txn_markers::{WriteTxnMarkersRequest, WriteTxnMarkersResponse};
use super::{ApiKey, CodecError, Direction, Message, TaggedFields};

/// One of our messages together with the kafka-protocol type for the same schema.
pub trait Counterpart: Message + Clone + PartialEq + Debug {
    /// kafka-protocol's type for this message.
    type Theirs: Encodable + Decodable + PartialEq + Debug + Clone;
    /// The same fields in kafka-protocol's type.
    fn to_theirs(&self) -> Self::Theirs;
}

/// Decodes `bytes` with kafka-protocol; also returns how many bytes it left unread.
pub fn theirs_decode<T: Counterpart>(
    version: i16,
    bytes: &[u8],
) -> Result<(T::Theirs, usize), String> {
    let mut buf = Bytes::copy_from_slice(bytes);
    let m = T::Theirs::decode(&mut buf, version).map_err(|e| e.to_string())?;
    Ok((m, buf.len()))
}

/// Encodes with kafka-protocol.
pub fn theirs_encode<M: Encodable>(m: &M, version: i16) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    m.encode(&mut out, version).map_err(|e| e.to_string())?;
    Ok(out)
}

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_owned())
}

fn tags(t: &TaggedFields) -> BTreeMap<i32, Bytes> {
    t.iter()
        .map(|(k, v)| (k as i32, Bytes::copy_from_slice(v)))
        .collect()
}

impl Counterpart for InitProducerIdRequest {
    type Theirs = kp::InitProducerIdRequest;
    fn to_theirs(&self) -> Self::Theirs {
        let mut t = kp::InitProducerIdRequest::default();
        t.transactional_id = self.transactional_id.as_deref().map(|v| s(v).into());
        t.transaction_timeout_ms = self.transaction_timeout_ms;
        t.producer_id = self.producer_id.into();
        t.producer_epoch = self.producer_epoch;
        t.unknown_tagged_fields = tags(&self.unknown_tagged_fields);
        t
    }
}

impl Counterpart for InitProducerIdResponse {
    type Theirs = kp::InitProducerIdResponse;
    fn to_theirs(&self) -> Self::Theirs {
        let mut t = kp::InitProducerIdResponse::default();
        t.throttle_time_ms = self.throttle_time_ms;
        t.error_code = self.error_code;
        t.producer_id = self.producer_id.into();
        t.producer_epoch = self.producer_epoch;
        t.unknown_tagged_fields = tags(&self.unknown_tagged_fields);
        t
    }
}

impl Counterpart for AddPartitionsToTxnRequest {
    type Theirs = kp::AddPartitionsToTxnRequest;
    fn to_theirs(&self) -> Self::Theirs {
        let mut t = kp::AddPartitionsToTxnRequest::default();
        t.v3_and_below_transactional_id = s(&self.transactional_id).into();
        t.v3_and_below_producer_id = self.producer_id.into();
        t.v3_and_below_producer_epoch = self.producer_epoch;
        t.v3_and_below_topics = self
            .topics
            .iter()
            .map(|topic| {
                let mut x = kp::add_partitions_to_txn_request::AddPartitionsToTxnTopic::default();
                x.name = s(&topic.name).into();
                x.partitions = topic.partitions.clone();
                x.unknown_tagged_fields = tags(&topic.unknown_tagged_fields);
                x
            })
            .collect();
        t.unknown_tagged_fields = tags(&self.unknown_tagged_fields);
        t
    }
}

impl Counterpart for AddPartitionsToTxnResponse {
    type Theirs = kp::AddPartitionsToTxnResponse;
    fn to_theirs(&self) -> Self::Theirs {
        use kp::add_partitions_to_txn_response as r;
        let mut t = kp::AddPartitionsToTxnResponse::default();
        t.throttle_time_ms = self.throttle_time_ms;
        t.results_by_topic_v3_and_below = self
            .results
            .iter()
            .map(|topic| {
                let mut x = r::AddPartitionsToTxnTopicResult::default();
                x.name = s(&topic.name).into();
                x.results_by_partition = topic
                    .results
                    .iter()
                    .map(|p| {
                        let mut y = r::AddPartitionsToTxnPartitionResult::default();
                        y.partition_index = p.partition_index;
                        y.partition_error_code = p.partition_error_code;
                        y.unknown_tagged_fields = tags(&p.unknown_tagged_fields);
                        y
                    })
                    .collect();
                x.unknown_tagged_fields = tags(&topic.unknown_tagged_fields);
                x
            })
            .collect();
        t.unknown_tagged_fields = tags(&self.unknown_tagged_fields);
        t
    }
}

impl Counterpart for AddOffsetsToTxnRequest {
    type Theirs = kp::AddOffsetsToTxnRequest;
    fn to_theirs(&self) -> Self::Theirs {
        let mut t = kp::AddOffsetsToTxnRequest::default();
        t.transactional_id = s(&self.transactional_id).into();
        t.producer_id = self.producer_id.into();
        t.producer_epoch = self.producer_epoch;
        t.group_id = s(&self.group_id).into();
        t.unknown_tagged_fields = tags(&self.unknown_tagged_fields);
        t
    }
}

impl Counterpart for AddOffsetsToTxnResponse {
    type Theirs = kp::AddOffsetsToTxnResponse;
    fn to_theirs(&self) -> Self::Theirs {
        let mut t = kp::AddOffsetsToTxnResponse::default();
        t.throttle_time_ms = self.throttle_time_ms;
        t.error_code = self.error_code;
        t.unknown_tagged_fields = tags(&self.unknown_tagged_fields);
        t
    }
}

impl Counterpart for EndTxnRequest {
    type Theirs = kp::EndTxnRequest;
    fn to_theirs(&self) -> Self::Theirs {
        let mut t = kp::EndTxnRequest::default();
        t.transactional_id = s(&self.transactional_id).into();
        t.producer_id = self.producer_id.into();
        t.producer_epoch = self.producer_epoch;
        t.committed = self.committed;
        t.unknown_tagged_fields = tags(&self.unknown_tagged_fields);
        t
    }
}

impl Counterpart for EndTxnResponse {
    type Theirs = kp::EndTxnResponse;
    fn to_theirs(&self) -> Self::Theirs {
        let mut t = kp::EndTxnResponse::default();
        t.throttle_time_ms = self.throttle_time_ms;
        t.error_code = self.error_code;
        t.unknown_tagged_fields = tags(&self.unknown_tagged_fields);
        t
    }
}

impl Counterpart for WriteTxnMarkersRequest {
    type Theirs = kp::WriteTxnMarkersRequest;
    fn to_theirs(&self) -> Self::Theirs {
        use kp::write_txn_markers_request as r;
        let mut t = kp::WriteTxnMarkersRequest::default();
        t.markers = self
            .markers
            .iter()
            .map(|m| {
                let mut x = r::WritableTxnMarker::default();
                x.producer_id = m.producer_id.into();
                x.producer_epoch = m.producer_epoch;
                x.transaction_result = m.transaction_result;
                x.topics = m
                    .topics
                    .iter()
                    .map(|topic| {
                        let mut y = r::WritableTxnMarkerTopic::default();
                        y.name = s(&topic.name).into();
                        y.partition_indexes = topic.partition_indexes.clone();
                        y.unknown_tagged_fields = tags(&topic.unknown_tagged_fields);
                        y
                    })
                    .collect();
                x.coordinator_epoch = m.coordinator_epoch;
                x.unknown_tagged_fields = tags(&m.unknown_tagged_fields);
                x
            })
            .collect();
        t.unknown_tagged_fields = tags(&self.unknown_tagged_fields);
        t
    }
}

impl Counterpart for WriteTxnMarkersResponse {
    type Theirs = kp::WriteTxnMarkersResponse;
    fn to_theirs(&self) -> Self::Theirs {
        use kp::write_txn_markers_response as r;
        let mut t = kp::WriteTxnMarkersResponse::default();
        t.markers = self
            .markers
            .iter()
            .map(|m| {
                let mut x = r::WritableTxnMarkerResult::default();
                x.producer_id = m.producer_id.into();
                x.topics = m
                    .topics
                    .iter()
                    .map(|topic| {
                        let mut y = r::WritableTxnMarkerTopicResult::default();
                        y.name = s(&topic.name).into();
                        y.partitions = topic
                            .partitions
                            .iter()
                            .map(|p| {
                                let mut z = r::WritableTxnMarkerPartitionResult::default();
                                z.partition_index = p.partition_index;
                                z.error_code = p.error_code;
                                z.unknown_tagged_fields = tags(&p.unknown_tagged_fields);
                                z
                            })
                            .collect();
                        y.unknown_tagged_fields = tags(&topic.unknown_tagged_fields);
                        y
                    })
                    .collect();
                x.unknown_tagged_fields = tags(&m.unknown_tagged_fields);
                x
            })
            .collect();
        t.unknown_tagged_fields = tags(&self.unknown_tagged_fields);
        t
    }
}

impl Counterpart for TxnOffsetCommitRequest {
    type Theirs = kp::TxnOffsetCommitRequest;
    fn to_theirs(&self) -> Self::Theirs {
        use kp::txn_offset_commit_request as r;
        let mut t = kp::TxnOffsetCommitRequest::default();
        t.transactional_id = s(&self.transactional_id).into();
        t.group_id = s(&self.group_id).into();
        t.producer_id = self.producer_id.into();
        t.producer_epoch = self.producer_epoch;
        t.generation_id = self.generation_id;
        t.member_id = s(&self.member_id);
        t.group_instance_id = self.group_instance_id.as_deref().map(s);
        t.topics = self
            .topics
            .iter()
            .map(|topic| {
                let mut x = r::TxnOffsetCommitRequestTopic::default();
                x.name = s(&topic.name).into();
                x.partitions = topic
                    .partitions
                    .iter()
                    .map(|p| {
                        let mut y = r::TxnOffsetCommitRequestPartition::default();
                        y.partition_index = p.partition_index;
                        y.committed_offset = p.committed_offset;
                        y.committed_leader_epoch = p.committed_leader_epoch;
                        y.committed_metadata = p.committed_metadata.as_deref().map(s);
                        y.unknown_tagged_fields = tags(&p.unknown_tagged_fields);
                        y
                    })
                    .collect();
                x.unknown_tagged_fields = tags(&topic.unknown_tagged_fields);
                x
            })
            .collect();
        t.unknown_tagged_fields = tags(&self.unknown_tagged_fields);
        t
    }
}

impl Counterpart for TxnOffsetCommitResponse {
    type Theirs = kp::TxnOffsetCommitResponse;
    fn to_theirs(&self) -> Self::Theirs {
        use kp::txn_offset_commit_response as r;
        let mut t = kp::TxnOffsetCommitResponse::default();
        t.throttle_time_ms = self.throttle_time_ms;
        t.topics = self
            .topics
            .iter()
            .map(|topic| {
                let mut x = r::TxnOffsetCommitResponseTopic::default();
                x.name = s(&topic.name).into();
                x.partitions = topic
                    .partitions
                    .iter()
                    .map(|p| {
                        let mut y = r::TxnOffsetCommitResponsePartition::default();
                        y.partition_index = p.partition_index;
                        y.error_code = p.error_code;
                        y.unknown_tagged_fields = tags(&p.unknown_tagged_fields);
                        y
                    })
                    .collect();
                x.unknown_tagged_fields = tags(&topic.unknown_tagged_fields);
                x
            })
            .collect();
        t.unknown_tagged_fields = tags(&self.unknown_tagged_fields);
        t
    }
}

/// How a fuzz input was judged, when it broke no property.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The version is outside what the codec serves; it said so with a typed error.
    UnsupportedVersion,
    /// Decoded, re-encoded and agreed with kafka-protocol.
    Decoded {
        /// Whether the input was in canonical form (then re-encoding gave the same bytes).
        canonical: bool,
    },
    /// Refused by both implementations.
    RefusedByBoth(CodecError),
    /// Refused by ours for a reason kafka-protocol is known not to check (see the module doc);
    /// kafka-protocol was not asked, or its answer not compared.
    RefusedKnownLaxity(CodecError),
}

/// The properties one input must satisfy for message type `T` at `version`:
/// - decoding never panics, and an unsupported version is a typed error;
/// - what decodes re-encodes; canonical input re-encodes to the same bytes, and re-encoded
///   bytes decode to the same message;
/// - kafka-protocol decodes the same bytes to the same fields, and refuses what we refuse,
///   except for the documented disagreements.
pub fn check_body<T: Counterpart>(version: i16, bytes: &[u8]) -> Result<Verdict, String> {
    let name = std::any::type_name::<T>()
        .rsplit("::")
        .next()
        .unwrap_or("?");
    let ctx = |what: &str| format!("{name} v{version}: {what} (input {})", hex(bytes));
    let (min, max) = T::API.versions();
    let decoded = match T::decode_checked(version, bytes) {
        Err(CodecError::UnsupportedVersion { .. }) if !(min..=max).contains(&version) => {
            return Ok(Verdict::UnsupportedVersion)
        }
        Err(e @ CodecError::UnsupportedVersion { .. }) => {
            return Err(ctx(&format!("supported version refused: {e}")))
        }
        Ok(_) if !(min..=max).contains(&version) => return Err(ctx("unsupported version decoded")),
        Err(e) => return refused_by_ours::<T>(version, bytes, e).map_err(|m| ctx(&m)),
        Ok(d) => d,
    };
    let canonical = decoded.leniency.is_canonical();
    let reencoded = decoded
        .message
        .encode(version)
        .map_err(|e| ctx(&format!("decoded but does not re-encode: {e}")))?;
    if canonical && reencoded != bytes {
        return Err(ctx(&format!(
            "canonical input re-encodes differently: {}",
            hex(&reencoded)
        )));
    }
    let again = T::decode_checked(version, &reencoded)
        .map_err(|e| ctx(&format!("re-encoding does not decode: {e}")))?;
    if again.message != decoded.message || !again.leniency.is_canonical() {
        return Err(ctx(
            "re-encoding decodes to a different or non-canonical message",
        ));
    }
    let expected = decoded.message.to_theirs();
    // Apache-compatible leniencies that kafka-protocol does not share: it refuses those bytes.
    let theirs_refuses_lenient_input = decoded.leniency.negative_null_length
        || decoded.leniency.negative_tag_count
        || decoded.leniency.lossy_utf8;
    match theirs_decode::<T>(version, bytes) {
        Ok((theirs, 0)) if theirs == expected => {}
        Ok((theirs, left)) => {
            return Err(ctx(&format!(
                "kafka-protocol decodes other fields ({left} bytes left): ours {expected:?}, theirs {theirs:?}"
            )))
        }
        Err(_) if theirs_refuses_lenient_input => {}
        Err(e) => return Err(ctx(&format!("kafka-protocol refuses what we decode: {e}"))),
    }
    match theirs_decode::<T>(version, &reencoded) {
        Ok((theirs, 0)) if theirs == expected => Ok(Verdict::Decoded { canonical }),
        other => Err(ctx(&format!(
            "kafka-protocol reads our canonical encoding differently: {other:?}"
        ))),
    }
}

fn refused_by_ours<T: Counterpart>(
    version: i16,
    bytes: &[u8],
    e: CodecError,
) -> Result<Verdict, String> {
    let flexible = T::API.is_flexible(version);
    let theirs_unsafe_or_lax = match &e {
        CodecError::TrailingBytes { .. }
        | CodecError::VarintTooLong { .. }
        | CodecError::StringTooLong { .. } => true,
        // kafka-protocol would reserve memory for the claimed count and read on into elements
        // whose own counts nobody checked: a few bytes can make it ask for gigabytes.
        CodecError::CountExceedsInput { .. } => true,
        // A negative compact count reaches kafka-protocol as a huge unsigned one.
        CodecError::InvalidLength { .. } => flexible,
        _ => false,
    };
    if theirs_unsafe_or_lax {
        return Ok(Verdict::RefusedKnownLaxity(e));
    }
    match theirs_decode::<T>(version, bytes) {
        Err(_) => Ok(Verdict::RefusedByBoth(e)),
        Ok((theirs, left)) => Err(format!(
            "we refuse ({e}) what kafka-protocol decodes ({left} bytes left): {theirs:?}"
        )),
    }
}

/// The fuzz input format: the first byte picks direction (bit 0: 0 request, 1 response) and
/// version (bits 1–3, so 0–7, which includes versions the codec does not serve); the rest is
/// the message body.
pub fn check_fuzz_input(api: ApiKey, data: &[u8]) -> Result<Verdict, String> {
    let Some((&selector, body)) = data.split_first() else {
        return Ok(Verdict::UnsupportedVersion);
    };
    let direction = match selector & 1 {
        0 => Direction::Request,
        _ => Direction::Response,
    };
    let version = i16::from((selector >> 1) & 0x07);
    macro_rules! by_api {
        ($($api:ident => $req:ty, $resp:ty;)*) => {
            match (api, direction) {
                $(
                    (ApiKey::$api, Direction::Request) => check_body::<$req>(version, body),
                    (ApiKey::$api, Direction::Response) => check_body::<$resp>(version, body),
                )*
            }
        };
    }
    by_api! {
        InitProducerId => InitProducerIdRequest, InitProducerIdResponse;
        AddPartitionsToTxn => AddPartitionsToTxnRequest, AddPartitionsToTxnResponse;
        AddOffsetsToTxn => AddOffsetsToTxnRequest, AddOffsetsToTxnResponse;
        EndTxn => EndTxnRequest, EndTxnResponse;
        WriteTxnMarkers => WriteTxnMarkersRequest, WriteTxnMarkersResponse;
        TxnOffsetCommit => TxnOffsetCommitRequest, TxnOffsetCommitResponse;
    }
}

/// The first byte of a fuzz input for this direction and version (inverse of the selector in
/// [`check_fuzz_input`]).
pub fn fuzz_selector(direction: Direction, version: i16) -> u8 {
    let d = match direction {
        Direction::Request => 0,
        Direction::Response => 1,
    };
    ((version as u8 & 0x07) << 1) | d
}

/// Lower-case hex, for messages.
pub fn hex(bytes: &[u8]) -> String {
    const MAX: usize = 256;
    let mut out: String = bytes.iter().take(MAX).map(|b| format!("{b:02x}")).collect();
    if bytes.len() > MAX {
        out.push_str(&format!("…(+{} bytes)", bytes.len() - MAX));
    }
    out
}
