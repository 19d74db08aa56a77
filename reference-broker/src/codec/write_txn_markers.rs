//! WriteTxnMarkers (key 27), v0–1, flexible from v1. The coordinator-to-leader API: write a
//! COMMIT or ABORT control batch on each listed partition. Its response has no throttle field.

use super::{ApiKey, CompactString, Direction, Message, Reader, Result, TaggedFields, Writer};
use crate::planted::Bug;

/// WriteTxnMarkers as kaas-ref serves it: its row of [`super::TRANSACTION_APIS`], which the codec's
/// version checks and the broker's ApiVersions answer both read.
pub const SPEC: super::ApiSpec = super::ApiSpec {
    api: ApiKey::WriteTxnMarkers,
    key: 27,
    name: "WriteTxnMarkers",
    versions: (0, 1),
    first_flexible: 1,
};

/// The markers to write.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteTxnMarkersRequest {
    /// One entry per (producer, result).
    pub markers: Vec<WritableTxnMarker>,
    /// Tagged fields this schema does not name (flexible versions).
    pub unknown_tagged_fields: TaggedFields,
}

/// One marker to write on a set of partitions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WritableTxnMarker {
    /// The producer id.
    pub producer_id: i64,
    /// The producer epoch.
    pub producer_epoch: i16,
    /// True for COMMIT, false for ABORT.
    pub transaction_result: bool,
    /// The partitions, by topic.
    pub topics: Vec<WritableTxnMarkerTopic>,
    /// Epoch of the coordinator that writes the marker.
    pub coordinator_epoch: i32,
    /// Tagged fields this schema does not name (flexible versions).
    pub unknown_tagged_fields: TaggedFields,
}

/// One topic's partitions in a [`WritableTxnMarker`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WritableTxnMarkerTopic {
    /// Topic name.
    pub name: CompactString,
    /// Partition indexes.
    pub partition_indexes: Vec<i32>,
    /// Tagged fields this schema does not name (flexible versions).
    pub unknown_tagged_fields: TaggedFields,
}

/// Smallest wire size of a marker: int64 + int16 + bool + empty array + int32.
const MIN_MARKER_SIZE: usize = 16;
/// Smallest wire size of a topic entry.
const MIN_TOPIC_SIZE: usize = 2;
/// Smallest wire size of a partition result: int32 + int16.
const MIN_PARTITION_RESULT_SIZE: usize = 6;
/// Smallest wire size of a marker result: int64 + empty array.
const MIN_MARKER_RESULT_SIZE: usize = 9;

/// One marker of a request.
fn marker(r: &mut Reader<'_>) -> Result<WritableTxnMarker> {
    Ok(WritableTxnMarker {
        producer_id: r.i64("WriteTxnMarkersRequest.markers[].producer_id")?,
        producer_epoch: r.i16("WriteTxnMarkersRequest.markers[].producer_epoch")?,
        transaction_result: r.bool("WriteTxnMarkersRequest.markers[].transaction_result")?,
        topics: r.array_of(
            "WriteTxnMarkersRequest.markers[].topics",
            MIN_TOPIC_SIZE,
            |r| {
                Ok(WritableTxnMarkerTopic {
                    name: r.string("WriteTxnMarkersRequest.markers[].topics[].name")?,
                    partition_indexes: r
                        .i32_array("WriteTxnMarkersRequest.markers[].topics[].partition_indexes")?,
                    unknown_tagged_fields: r.tagged_fields(
                        "WriteTxnMarkersRequest.markers[].topics[]._tagged_fields",
                    )?,
                })
            },
        )?,
        coordinator_epoch: r.i32("WriteTxnMarkersRequest.markers[].coordinator_epoch")?,
        unknown_tagged_fields: r
            .tagged_fields("WriteTxnMarkersRequest.markers[]._tagged_fields")?,
    })
}

/// The planted allocation ([`Bug::MarkerCountAllocates`], only in a `planted-bugs` build): a
/// 1 MiB scratch buffer reserved per marker the v0 count claims, before any is read.
fn markers_with_scratch(r: &mut Reader<'_>) -> Result<Vec<WritableTxnMarker>> {
    let count = r.i32("WriteTxnMarkersRequest.markers")? as u32 as usize;
    let scratch: Vec<[u8; 1 << 20]> = Vec::with_capacity(count);
    std::hint::black_box(&scratch);
    let mut markers = Vec::new();
    for _ in 0..count {
        markers.push(marker(r)?);
    }
    Ok(markers)
}

impl Message for WriteTxnMarkersRequest {
    const API: ApiKey = ApiKey::WriteTxnMarkers;
    const DIRECTION: Direction = Direction::Request;

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self> {
        Ok(WriteTxnMarkersRequest {
            markers: match version == 0 && crate::planted::in_codec(Bug::MarkerCountAllocates) {
                true => markers_with_scratch(r)?,
                false => r.array_of("WriteTxnMarkersRequest.markers", MIN_MARKER_SIZE, marker)?,
            },
            unknown_tagged_fields: r.tagged_fields("WriteTxnMarkersRequest._tagged_fields")?,
        })
    }

    fn write(&self, w: &mut Writer) -> Result<()> {
        w.array_of("WriteTxnMarkersRequest.markers", &self.markers, |w, m| {
            w.i64(m.producer_id);
            w.i16(m.producer_epoch);
            w.bool(m.transaction_result);
            w.array_of(
                "WriteTxnMarkersRequest.markers[].topics",
                &m.topics,
                |w, t| {
                    w.string("WriteTxnMarkersRequest.markers[].topics[].name", &t.name)?;
                    w.i32_array(
                        "WriteTxnMarkersRequest.markers[].topics[].partition_indexes",
                        &t.partition_indexes,
                    )?;
                    w.tagged_fields(
                        "WriteTxnMarkersRequest.markers[].topics[]._tagged_fields",
                        &t.unknown_tagged_fields,
                    )
                },
            )?;
            w.i32(m.coordinator_epoch);
            w.tagged_fields(
                "WriteTxnMarkersRequest.markers[]._tagged_fields",
                &m.unknown_tagged_fields,
            )
        })?;
        w.tagged_fields(
            "WriteTxnMarkersRequest._tagged_fields",
            &self.unknown_tagged_fields,
        )
    }
}

/// Per-partition results, keyed by producer id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteTxnMarkersResponse {
    /// One entry per producer id in the request.
    pub markers: Vec<WritableTxnMarkerResult>,
    /// Tagged fields this schema does not name (flexible versions).
    pub unknown_tagged_fields: TaggedFields,
}

/// Results for one producer id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WritableTxnMarkerResult {
    /// The producer id.
    pub producer_id: i64,
    /// Results by topic.
    pub topics: Vec<WritableTxnMarkerTopicResult>,
    /// Tagged fields this schema does not name (flexible versions).
    pub unknown_tagged_fields: TaggedFields,
}

/// One topic's results.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WritableTxnMarkerTopicResult {
    /// Topic name.
    pub name: CompactString,
    /// Results by partition.
    pub partitions: Vec<WritableTxnMarkerPartitionResult>,
    /// Tagged fields this schema does not name (flexible versions).
    pub unknown_tagged_fields: TaggedFields,
}

/// One partition's result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WritableTxnMarkerPartitionResult {
    /// Partition index.
    pub partition_index: i32,
    /// Error code, 0 for none.
    pub error_code: i16,
    /// Tagged fields this schema does not name (flexible versions).
    pub unknown_tagged_fields: TaggedFields,
}

impl Message for WriteTxnMarkersResponse {
    const API: ApiKey = ApiKey::WriteTxnMarkers;
    const DIRECTION: Direction = Direction::Response;

    fn read(r: &mut Reader<'_>, _version: i16) -> Result<Self> {
        Ok(WriteTxnMarkersResponse {
            markers: r.array_of(
                "WriteTxnMarkersResponse.markers",
                MIN_MARKER_RESULT_SIZE,
                |r| {
                    Ok(WritableTxnMarkerResult {
                        producer_id: r.i64("WriteTxnMarkersResponse.markers[].producer_id")?,
                        topics: r.array_of(
                            "WriteTxnMarkersResponse.markers[].topics",
                            MIN_TOPIC_SIZE,
                            |r| {
                                Ok(WritableTxnMarkerTopicResult {
                                    name: r.string(
                                        "WriteTxnMarkersResponse.markers[].topics[].name",
                                    )?,
                                    partitions: r.array_of(
                                        "WriteTxnMarkersResponse.markers[].topics[].partitions",
                                        MIN_PARTITION_RESULT_SIZE,
                                        |r| {
                                            Ok(WritableTxnMarkerPartitionResult {
                                                partition_index: r.i32(
                                                    "WriteTxnMarkersResponse.markers[].topics[].partitions[].partition_index",
                                                )?,
                                                error_code: r.i16(
                                                    "WriteTxnMarkersResponse.markers[].topics[].partitions[].error_code",
                                                )?,
                                                unknown_tagged_fields: r.tagged_fields(
                                                    "WriteTxnMarkersResponse.markers[].topics[].partitions[]._tagged_fields",
                                                )?,
                                            })
                                        },
                                    )?,
                                    unknown_tagged_fields: r.tagged_fields(
                                        "WriteTxnMarkersResponse.markers[].topics[]._tagged_fields",
                                    )?,
                                })
                            },
                        )?,
                        unknown_tagged_fields: r
                            .tagged_fields("WriteTxnMarkersResponse.markers[]._tagged_fields")?,
                    })
                },
            )?,
            unknown_tagged_fields: r.tagged_fields("WriteTxnMarkersResponse._tagged_fields")?,
        })
    }

    fn write(&self, w: &mut Writer) -> Result<()> {
        w.array_of("WriteTxnMarkersResponse.markers", &self.markers, |w, m| {
            w.i64(m.producer_id);
            w.array_of(
                "WriteTxnMarkersResponse.markers[].topics",
                &m.topics,
                |w, t| {
                    w.string("WriteTxnMarkersResponse.markers[].topics[].name", &t.name)?;
                    w.array_of(
                        "WriteTxnMarkersResponse.markers[].topics[].partitions",
                        &t.partitions,
                        |w, p| {
                            w.i32(p.partition_index);
                            w.i16(p.error_code);
                            w.tagged_fields(
                                "WriteTxnMarkersResponse.markers[].topics[].partitions[]._tagged_fields",
                                &p.unknown_tagged_fields,
                            )
                        },
                    )?;
                    w.tagged_fields(
                        "WriteTxnMarkersResponse.markers[].topics[]._tagged_fields",
                        &t.unknown_tagged_fields,
                    )
                },
            )?;
            w.tagged_fields(
                "WriteTxnMarkersResponse.markers[]._tagged_fields",
                &m.unknown_tagged_fields,
            )
        })?;
        w.tagged_fields(
            "WriteTxnMarkersResponse._tagged_fields",
            &self.unknown_tagged_fields,
        )
    }
}
