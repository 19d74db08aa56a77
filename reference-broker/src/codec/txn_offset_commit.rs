//! TxnOffsetCommit (key 28), v0–3, flexible from v3. v2 adds the committed leader epoch (an
//! ignorable field: dropped silently below v2, as Apache's writer does); v3 adds the group
//! member fields (not ignorable: refused below v3 unless at their defaults).

use super::{ApiKey, CompactString, Direction, Message, Reader, Result, TaggedFields, Writer};

/// TxnOffsetCommit as kaas-ref serves it: its row of [`super::TRANSACTION_APIS`], which the codec's
/// version checks and the broker's ApiVersions answer both read.
pub const SPEC: super::ApiSpec = super::ApiSpec {
    api: ApiKey::TxnOffsetCommit,
    key: 28,
    name: "TxnOffsetCommit",
    versions: (0, 3),
    first_flexible: 3,
};

/// Stages consumer offsets inside the producer's transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnOffsetCommitRequest {
    /// The transactional id.
    pub transactional_id: CompactString,
    /// The consumer group.
    pub group_id: CompactString,
    /// The producer id.
    pub producer_id: i64,
    /// The producer epoch.
    pub producer_epoch: i16,
    /// v3+: the consumer's generation, -1 for none.
    pub generation_id: i32,
    /// v3+: the member id, "" for none.
    pub member_id: CompactString,
    /// v3+: the static member id, null for none.
    pub group_instance_id: Option<CompactString>,
    /// Offsets by topic.
    pub topics: Vec<TxnOffsetCommitRequestTopic>,
    /// Tagged fields this schema does not name (flexible versions).
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for TxnOffsetCommitRequest {
    fn default() -> Self {
        TxnOffsetCommitRequest {
            transactional_id: CompactString::default(),
            group_id: CompactString::default(),
            producer_id: 0,
            producer_epoch: 0,
            generation_id: -1,
            member_id: CompactString::default(),
            group_instance_id: None,
            topics: Vec::new(),
            unknown_tagged_fields: TaggedFields::new(),
        }
    }
}

/// One topic's offsets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TxnOffsetCommitRequestTopic {
    /// Topic name.
    pub name: CompactString,
    /// Offsets by partition.
    pub partitions: Vec<TxnOffsetCommitRequestPartition>,
    /// Tagged fields this schema does not name (flexible versions).
    pub unknown_tagged_fields: TaggedFields,
}

/// One partition's offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnOffsetCommitRequestPartition {
    /// Partition index.
    pub partition_index: i32,
    /// The offset to commit.
    pub committed_offset: i64,
    /// v2+: leader epoch of the last consumed record, -1 for none.
    pub committed_leader_epoch: i32,
    /// Client metadata, nullable.
    pub committed_metadata: Option<CompactString>,
    /// Tagged fields this schema does not name (flexible versions).
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for TxnOffsetCommitRequestPartition {
    fn default() -> Self {
        TxnOffsetCommitRequestPartition {
            partition_index: 0,
            committed_offset: 0,
            committed_leader_epoch: -1,
            committed_metadata: Some(CompactString::default()),
            unknown_tagged_fields: TaggedFields::new(),
        }
    }
}

/// Smallest wire size of a topic entry.
const MIN_TOPIC_SIZE: usize = 2;
/// Smallest wire size of a partition entry: int32 + int64 + null string.
const MIN_PARTITION_SIZE: usize = 13;
/// Smallest wire size of a partition result: int32 + int16.
const MIN_PARTITION_RESULT_SIZE: usize = 6;

/// The planted panic ([`crate::planted::Bug::PanicOnMinLeaderEpoch`], only in a
/// `planted-bugs` build): an epoch negated as if it could not be i32::MIN.
fn planted_panic(epoch: i32) {
    if crate::planted::in_codec(crate::planted::Bug::PanicOnMinLeaderEpoch) {
        let _positive = epoch
            .checked_neg()
            .unwrap_or_else(|| panic!("planted: leader epoch {epoch} cannot be negated"));
    }
}

/// One topic of a TxnOffsetCommit request at `version`.
fn topic(r: &mut Reader<'_>, version: i16) -> Result<TxnOffsetCommitRequestTopic> {
    Ok(TxnOffsetCommitRequestTopic {
        name: r.string("TxnOffsetCommitRequest.topics[].name")?,
        partitions: r.array_of(
            "TxnOffsetCommitRequest.topics[].partitions",
            MIN_PARTITION_SIZE,
            |r| {
                let mut p = TxnOffsetCommitRequestPartition {
                    partition_index: r
                        .i32("TxnOffsetCommitRequest.topics[].partitions[].partition_index")?,
                    committed_offset: r
                        .i64("TxnOffsetCommitRequest.topics[].partitions[].committed_offset")?,
                    ..Default::default()
                };
                if version >= 2 {
                    p.committed_leader_epoch = r.i32(
                        "TxnOffsetCommitRequest.topics[].partitions[].committed_leader_epoch",
                    )?;
                    planted_panic(p.committed_leader_epoch);
                }
                p.committed_metadata = r.nullable_string(
                    "TxnOffsetCommitRequest.topics[].partitions[].committed_metadata",
                )?;
                p.unknown_tagged_fields =
                    r.tagged_fields("TxnOffsetCommitRequest.topics[].partitions[]._tagged_fields")?;
                Ok(p)
            },
        )?,
        unknown_tagged_fields: r.tagged_fields("TxnOffsetCommitRequest.topics[]._tagged_fields")?,
    })
}

/// The planted allocation ([`crate::planted::Bug::TopicCountAllocates`], only in a
/// `planted-bugs` build): a 1 MiB scratch buffer reserved per topic the v1 count claims,
/// before any is read.
fn topics_with_scratch(
    r: &mut Reader<'_>,
    version: i16,
) -> Result<Vec<TxnOffsetCommitRequestTopic>> {
    let count = r.i32("TxnOffsetCommitRequest.topics")? as u32 as usize;
    let scratch: Vec<[u8; 1 << 20]> = Vec::with_capacity(count);
    std::hint::black_box(&scratch);
    let mut topics = Vec::new();
    for _ in 0..count {
        topics.push(topic(r, version)?);
    }
    Ok(topics)
}

impl Message for TxnOffsetCommitRequest {
    const API: ApiKey = ApiKey::TxnOffsetCommit;
    const DIRECTION: Direction = Direction::Request;

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self> {
        let mut m = TxnOffsetCommitRequest {
            transactional_id: r.string("TxnOffsetCommitRequest.transactional_id")?,
            group_id: r.string("TxnOffsetCommitRequest.group_id")?,
            producer_id: r.i64("TxnOffsetCommitRequest.producer_id")?,
            producer_epoch: r.i16("TxnOffsetCommitRequest.producer_epoch")?,
            ..Default::default()
        };
        if version >= 3 {
            m.generation_id = r.i32("TxnOffsetCommitRequest.generation_id")?;
            m.member_id = r.string("TxnOffsetCommitRequest.member_id")?;
            m.group_instance_id = r.nullable_string("TxnOffsetCommitRequest.group_instance_id")?;
        }
        let planted =
            version == 1 && crate::planted::in_codec(crate::planted::Bug::TopicCountAllocates);
        m.topics = match planted {
            true => topics_with_scratch(r, version)?,
            false => r.array_of("TxnOffsetCommitRequest.topics", MIN_TOPIC_SIZE, |r| {
                topic(r, version)
            })?,
        };
        m.unknown_tagged_fields = r.tagged_fields("TxnOffsetCommitRequest._tagged_fields")?;
        Ok(m)
    }

    fn write(&self, w: &mut Writer) -> Result<()> {
        w.string(
            "TxnOffsetCommitRequest.transactional_id",
            &self.transactional_id,
        )?;
        w.string("TxnOffsetCommitRequest.group_id", &self.group_id)?;
        w.i64(self.producer_id);
        w.i16(self.producer_epoch);
        if w.version() >= 3 {
            w.i32(self.generation_id);
            w.string("TxnOffsetCommitRequest.member_id", &self.member_id)?;
            w.nullable_string(
                "TxnOffsetCommitRequest.group_instance_id",
                self.group_instance_id.as_deref(),
            )?;
        } else {
            w.require_default(
                "TxnOffsetCommitRequest.generation_id",
                &self.generation_id,
                &-1,
            )?;
            w.require_default(
                "TxnOffsetCommitRequest.member_id",
                &self.member_id.as_str(),
                &"",
            )?;
            w.require_default(
                "TxnOffsetCommitRequest.group_instance_id",
                &self.group_instance_id,
                &None,
            )?;
        }
        w.array_of("TxnOffsetCommitRequest.topics", &self.topics, |w, t| {
            w.string("TxnOffsetCommitRequest.topics[].name", &t.name)?;
            w.array_of(
                "TxnOffsetCommitRequest.topics[].partitions",
                &t.partitions,
                |w, p| {
                    w.i32(p.partition_index);
                    w.i64(p.committed_offset);
                    // Ignorable in Apache's schema: silently dropped below v2.
                    if w.version() >= 2 {
                        w.i32(p.committed_leader_epoch);
                    }
                    w.nullable_string(
                        "TxnOffsetCommitRequest.topics[].partitions[].committed_metadata",
                        p.committed_metadata.as_deref(),
                    )?;
                    w.tagged_fields(
                        "TxnOffsetCommitRequest.topics[].partitions[]._tagged_fields",
                        &p.unknown_tagged_fields,
                    )
                },
            )?;
            w.tagged_fields(
                "TxnOffsetCommitRequest.topics[]._tagged_fields",
                &t.unknown_tagged_fields,
            )
        })?;
        w.tagged_fields(
            "TxnOffsetCommitRequest._tagged_fields",
            &self.unknown_tagged_fields,
        )
    }
}

/// Per-partition results; no top-level error exists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TxnOffsetCommitResponse {
    /// Quota throttle.
    pub throttle_time_ms: i32,
    /// Results by topic.
    pub topics: Vec<TxnOffsetCommitResponseTopic>,
    /// Tagged fields this schema does not name (flexible versions).
    pub unknown_tagged_fields: TaggedFields,
}

/// One topic's results.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TxnOffsetCommitResponseTopic {
    /// Topic name.
    pub name: CompactString,
    /// Results by partition.
    pub partitions: Vec<TxnOffsetCommitResponsePartition>,
    /// Tagged fields this schema does not name (flexible versions).
    pub unknown_tagged_fields: TaggedFields,
}

/// One partition's result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TxnOffsetCommitResponsePartition {
    /// Partition index.
    pub partition_index: i32,
    /// Error code, 0 for none.
    pub error_code: i16,
    /// Tagged fields this schema does not name (flexible versions).
    pub unknown_tagged_fields: TaggedFields,
}

impl Message for TxnOffsetCommitResponse {
    const API: ApiKey = ApiKey::TxnOffsetCommit;
    const DIRECTION: Direction = Direction::Response;

    fn read(r: &mut Reader<'_>, _version: i16) -> Result<Self> {
        Ok(TxnOffsetCommitResponse {
            throttle_time_ms: r.i32("TxnOffsetCommitResponse.throttle_time_ms")?,
            topics: r.array_of("TxnOffsetCommitResponse.topics", MIN_TOPIC_SIZE, |r| {
                Ok(TxnOffsetCommitResponseTopic {
                    name: r.string("TxnOffsetCommitResponse.topics[].name")?,
                    partitions: r.array_of(
                        "TxnOffsetCommitResponse.topics[].partitions",
                        MIN_PARTITION_RESULT_SIZE,
                        |r| {
                            Ok(TxnOffsetCommitResponsePartition {
                                partition_index: r.i32(
                                    "TxnOffsetCommitResponse.topics[].partitions[].partition_index",
                                )?,
                                error_code: r.i16(
                                    "TxnOffsetCommitResponse.topics[].partitions[].error_code",
                                )?,
                                unknown_tagged_fields: r.tagged_fields(
                                    "TxnOffsetCommitResponse.topics[].partitions[]._tagged_fields",
                                )?,
                            })
                        },
                    )?,
                    unknown_tagged_fields: r
                        .tagged_fields("TxnOffsetCommitResponse.topics[]._tagged_fields")?,
                })
            })?,
            unknown_tagged_fields: r.tagged_fields("TxnOffsetCommitResponse._tagged_fields")?,
        })
    }

    fn write(&self, w: &mut Writer) -> Result<()> {
        w.i32(self.throttle_time_ms);
        w.array_of("TxnOffsetCommitResponse.topics", &self.topics, |w, t| {
            w.string("TxnOffsetCommitResponse.topics[].name", &t.name)?;
            w.array_of(
                "TxnOffsetCommitResponse.topics[].partitions",
                &t.partitions,
                |w, p| {
                    w.i32(p.partition_index);
                    w.i16(p.error_code);
                    w.tagged_fields(
                        "TxnOffsetCommitResponse.topics[].partitions[]._tagged_fields",
                        &p.unknown_tagged_fields,
                    )
                },
            )?;
            w.tagged_fields(
                "TxnOffsetCommitResponse.topics[]._tagged_fields",
                &t.unknown_tagged_fields,
            )
        })?;
        w.tagged_fields(
            "TxnOffsetCommitResponse._tagged_fields",
            &self.unknown_tagged_fields,
        )
    }
}
