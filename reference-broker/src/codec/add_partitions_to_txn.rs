//! AddPartitionsToTxn (key 24), v0–3, flexible from v3.
//!
//! Apache 3.7 also serves v4, the batched broker-to-coordinator form (KIP-890 part 1). kaas stops
//! at v3, the last version clients send, so v4 is an [`super::CodecError::UnsupportedVersion`]
//! here. Apache names the v0–3 fields `V3AndBelow*`; this codec knows no other shape.

use super::{ApiKey, CompactString, Direction, Message, Reader, Result, TaggedFields, Writer};

/// AddPartitionsToTxn as kaas-ref serves it: its row of [`super::TRANSACTION_APIS`], which the codec's
/// version checks and the broker's ApiVersions answer both read.
pub const SPEC: super::ApiSpec = super::ApiSpec {
    api: ApiKey::AddPartitionsToTxn,
    key: 24,
    name: "AddPartitionsToTxn",
    versions: (0, 3),
    first_flexible: 3,
};

/// Adds partitions to the producer's transaction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddPartitionsToTxnRequest {
    /// The transactional id.
    pub transactional_id: CompactString,
    /// The producer id.
    pub producer_id: i64,
    /// The producer epoch.
    pub producer_epoch: i16,
    /// The partitions to add, by topic.
    pub topics: Vec<AddPartitionsToTxnTopic>,
    /// Tagged fields this schema does not name (flexible versions).
    pub unknown_tagged_fields: TaggedFields,
}

/// One topic's partitions in [`AddPartitionsToTxnRequest`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddPartitionsToTxnTopic {
    /// Topic name.
    pub name: CompactString,
    /// Partition indexes.
    pub partitions: Vec<i32>,
    /// Tagged fields this schema does not name (flexible versions).
    pub unknown_tagged_fields: TaggedFields,
}

/// Smallest wire size of a topic entry: an empty name, an empty array, (tags).
const MIN_TOPIC_SIZE: usize = 2;

impl Message for AddPartitionsToTxnRequest {
    const API: ApiKey = ApiKey::AddPartitionsToTxn;
    const DIRECTION: Direction = Direction::Request;

    fn read(r: &mut Reader<'_>, _version: i16) -> Result<Self> {
        Ok(AddPartitionsToTxnRequest {
            transactional_id: r.string("AddPartitionsToTxnRequest.transactional_id")?,
            producer_id: r.i64("AddPartitionsToTxnRequest.producer_id")?,
            producer_epoch: r.i16("AddPartitionsToTxnRequest.producer_epoch")?,
            topics: r.array_of("AddPartitionsToTxnRequest.topics", MIN_TOPIC_SIZE, |r| {
                Ok(AddPartitionsToTxnTopic {
                    name: r.string("AddPartitionsToTxnRequest.topics[].name")?,
                    partitions: r.i32_array("AddPartitionsToTxnRequest.topics[].partitions")?,
                    unknown_tagged_fields: r
                        .tagged_fields("AddPartitionsToTxnRequest.topics[]._tagged_fields")?,
                })
            })?,
            unknown_tagged_fields: r.tagged_fields("AddPartitionsToTxnRequest._tagged_fields")?,
        })
    }

    fn write(&self, w: &mut Writer) -> Result<()> {
        w.string(
            "AddPartitionsToTxnRequest.transactional_id",
            &self.transactional_id,
        )?;
        w.i64(self.producer_id);
        w.i16(self.producer_epoch);
        w.array_of("AddPartitionsToTxnRequest.topics", &self.topics, |w, t| {
            w.string("AddPartitionsToTxnRequest.topics[].name", &t.name)?;
            w.i32_array(
                "AddPartitionsToTxnRequest.topics[].partitions",
                &t.partitions,
            )?;
            w.tagged_fields(
                "AddPartitionsToTxnRequest.topics[]._tagged_fields",
                &t.unknown_tagged_fields,
            )
        })?;
        w.tagged_fields(
            "AddPartitionsToTxnRequest._tagged_fields",
            &self.unknown_tagged_fields,
        )
    }
}

/// Per-partition results. v0–3 has no top-level error: a top-level failure is repeated on
/// every partition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddPartitionsToTxnResponse {
    /// Quota throttle.
    pub throttle_time_ms: i32,
    /// Results by topic.
    pub results: Vec<AddPartitionsToTxnTopicResult>,
    /// Tagged fields this schema does not name (flexible versions).
    pub unknown_tagged_fields: TaggedFields,
}

/// One topic's results in [`AddPartitionsToTxnResponse`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddPartitionsToTxnTopicResult {
    /// Topic name.
    pub name: CompactString,
    /// Results by partition.
    pub results: Vec<AddPartitionsToTxnPartitionResult>,
    /// Tagged fields this schema does not name (flexible versions).
    pub unknown_tagged_fields: TaggedFields,
}

/// One partition's result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddPartitionsToTxnPartitionResult {
    /// Partition index.
    pub partition_index: i32,
    /// Error code, 0 for none.
    pub partition_error_code: i16,
    /// Tagged fields this schema does not name (flexible versions).
    pub unknown_tagged_fields: TaggedFields,
}

/// Smallest wire size of a partition result: int32 + int16.
const MIN_PARTITION_RESULT_SIZE: usize = 6;

impl Message for AddPartitionsToTxnResponse {
    const API: ApiKey = ApiKey::AddPartitionsToTxn;
    const DIRECTION: Direction = Direction::Response;

    fn read(r: &mut Reader<'_>, _version: i16) -> Result<Self> {
        Ok(AddPartitionsToTxnResponse {
            throttle_time_ms: r.i32("AddPartitionsToTxnResponse.throttle_time_ms")?,
            results: r.array_of("AddPartitionsToTxnResponse.results", MIN_TOPIC_SIZE, |r| {
                Ok(AddPartitionsToTxnTopicResult {
                    name: r.string("AddPartitionsToTxnResponse.results[].name")?,
                    results: r.array_of(
                        "AddPartitionsToTxnResponse.results[].results",
                        MIN_PARTITION_RESULT_SIZE,
                        |r| {
                            Ok(AddPartitionsToTxnPartitionResult {
                                partition_index: r.i32(
                                    "AddPartitionsToTxnResponse.results[].results[].partition_index",
                                )?,
                                partition_error_code: r.i16(
                                    "AddPartitionsToTxnResponse.results[].results[].partition_error_code",
                                )?,
                                unknown_tagged_fields: r.tagged_fields(
                                    "AddPartitionsToTxnResponse.results[].results[]._tagged_fields",
                                )?,
                            })
                        },
                    )?,
                    unknown_tagged_fields: r
                        .tagged_fields("AddPartitionsToTxnResponse.results[]._tagged_fields")?,
                })
            })?,
            unknown_tagged_fields: r.tagged_fields("AddPartitionsToTxnResponse._tagged_fields")?,
        })
    }

    fn write(&self, w: &mut Writer) -> Result<()> {
        w.i32(self.throttle_time_ms);
        w.array_of(
            "AddPartitionsToTxnResponse.results",
            &self.results,
            |w, t| {
                w.string("AddPartitionsToTxnResponse.results[].name", &t.name)?;
                w.array_of(
                    "AddPartitionsToTxnResponse.results[].results",
                    &t.results,
                    |w, p| {
                        w.i32(p.partition_index);
                        w.i16(p.partition_error_code);
                        w.tagged_fields(
                            "AddPartitionsToTxnResponse.results[].results[]._tagged_fields",
                            &p.unknown_tagged_fields,
                        )
                    },
                )?;
                w.tagged_fields(
                    "AddPartitionsToTxnResponse.results[]._tagged_fields",
                    &t.unknown_tagged_fields,
                )
            },
        )?;
        w.tagged_fields(
            "AddPartitionsToTxnResponse._tagged_fields",
            &self.unknown_tagged_fields,
        )
    }
}
