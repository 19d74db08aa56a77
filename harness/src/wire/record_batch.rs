//! Record batches in scenario steps: built for Produce from a step's `records`, and read back
//! from Fetch answers as plain trees, one entry per batch with its header fields, so that
//! transactional data and COMMIT/ABORT control batches compare field by field across brokers.
//! Encoding and decoding go through kafka-protocol's record codec.

use bytes::{Bytes, BytesMut};
use indexmap::IndexMap;
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    Compression, Record, RecordBatchDecoder, RecordBatchEncoder, RecordCompression,
    RecordEncodeOptions, RecordSet, TimestampType,
};
use serde_json::{json, Value};

/// The producer fields a batch is stamped with.
#[derive(Debug, Clone, Copy)]
pub struct BatchHeader {
    /// Producer id (-1: none).
    pub producer_id: i64,
    /// Producer epoch (-1: none).
    pub producer_epoch: i16,
    /// Sequence of the first record (-1: none).
    pub base_sequence: i32,
    /// Whether the batch belongs to a transaction.
    pub transactional: bool,
}

/// One record to produce: key and value as text (a missing key is null).
#[derive(Debug, Clone)]
pub struct Plain {
    /// Key.
    pub key: Option<String>,
    /// Value.
    pub value: Option<String>,
}

/// One uncompressed v2 batch holding `records`, each with the current time as its timestamp.
pub fn encode_batch(header: BatchHeader, records: &[Plain]) -> Result<Bytes, String> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    let records: Vec<Record> = records
        .iter()
        .enumerate()
        .map(|(i, r)| Record {
            transactional: header.transactional,
            control: false,
            partition_leader_epoch: -1,
            producer_id: header.producer_id,
            producer_epoch: header.producer_epoch,
            timestamp_type: TimestampType::Creation,
            offset: i as i64,
            sequence: match header.base_sequence {
                -1 => -1,
                s => s.wrapping_add(i as i32),
            },
            timestamp: now,
            key: r.key.clone().map(Bytes::from),
            value: r.value.clone().map(Bytes::from),
            headers: IndexMap::<StrBytes, Option<Bytes>>::new(),
        })
        .collect();
    let mut buf = BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        &records,
        &RecordEncodeOptions {
            version: 2,
            compression: Compression::None,
        },
    )
    .map_err(|e| format!("encoding the record batch: {e}"))?;
    Ok(buf.freeze())
}

/// Text when the bytes are printable UTF-8, hex otherwise.
fn show(bytes: &Option<Bytes>) -> Value {
    match bytes {
        None => Value::Null,
        Some(b) => match std::str::from_utf8(b) {
            Ok(s) if s.chars().all(|c| !c.is_control()) => Value::String(s.to_owned()),
            _ => Value::String(format!(
                "0x{}",
                b.iter().map(|x| format!("{x:02x}")).collect::<String>()
            )),
        },
    }
}

fn i16_at(b: &[u8], at: usize) -> Option<i16> {
    Some(i16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn i32_at(b: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// A control record's type, from its key (version, type): 0 ABORT, 1 COMMIT, as the
/// transaction-marker schema defines them; none where the key is too short.
pub fn control_type(key: &[u8]) -> Option<i16> {
    i16_at(key, 2)
}

/// A control record's key (version, type) and value (version, coordinator epoch), as the
/// transaction-marker schema defines them.
fn control(record: &Record) -> Value {
    let key = record.key.as_deref().unwrap_or_default();
    let value = record.value.as_deref().unwrap_or_default();
    let kind = match control_type(key) {
        Some(0) => json!("ABORT"),
        Some(1) => json!("COMMIT"),
        Some(other) => json!(other),
        None => Value::Null,
    };
    json!({
        "offset": record.offset,
        "key": { "version": i16_at(key, 0), "type": kind },
        "value": { "version": i16_at(value, 0), "coordinator_epoch": i32_at(value, 2) },
        "value_bytes": value.len(),
    })
}

fn batch(set: &RecordSet) -> Value {
    let Some(first) = set.records.first() else {
        return json!({ "records": [] });
    };
    let compression = match &set.compression {
        RecordCompression::RecordBatch(c) => format!("{c:?}").to_lowercase(),
        RecordCompression::MessageSet => "message_set".into(),
    };
    let records: Vec<Value> = set
        .records
        .iter()
        .map(|r| match r.control {
            true => control(r),
            false => json!({
                "offset": r.offset,
                "sequence": r.sequence,
                "timestamp": r.timestamp,
                "key": show(&r.key),
                "value": show(&r.value),
                "headers": r.headers.len(),
            }),
        })
        .collect();
    json!({
        "magic": set.version,
        "base_offset": first.offset,
        "producer_id": first.producer_id,
        "producer_epoch": first.producer_epoch,
        "transactional": first.transactional,
        "control": first.control,
        "compression": compression,
        "timestamp_type": format!("{:?}", first.timestamp_type).to_lowercase(),
        "records": records,
    })
}

/// The batches in a Fetch answer's `records` field, read as Apache's consumer reads them: a
/// batch cut short at the end (a fetch's size limit may cut the last one) is no batch and is
/// left out; what does not decode is said so.
pub fn describe(records: &Option<Bytes>) -> Value {
    let Some(bytes) = records else {
        return Value::Null;
    };
    let whole = match whole_batches(bytes) {
        Ok(n) => n,
        Err(why) => return json!({ "undecodable": why }),
    };
    let mut buf = bytes.slice(..whole);
    match RecordBatchDecoder::decode_all(&mut buf) {
        Ok(sets) => Value::Array(sets.iter().map(batch).collect()),
        Err(e) => json!({ "undecodable": e.to_string() }),
    }
}

/// The smallest size a batch's length field may give (Apache's `LegacyRecord.RECORD_OVERHEAD_V0`):
/// below it the length is corrupt, not short.
const SMALLEST_BATCH: i32 = 14;

/// How many of `bytes`' leading bytes are whole batches, each an offset (8 bytes), a length (4)
/// and that many bytes, as Apache's `ByteBufferLogInputStream` walks them: fewer than 12
/// bytes left, or fewer than the length says, ends the walk (a partial last batch); a length
/// below [`SMALLEST_BATCH`] is corrupt.
pub fn whole_batches(bytes: &[u8]) -> Result<usize, String> {
    let mut at = 0usize;
    while let Some(header) = bytes.get(at..at + 12) {
        let length = i32::from_be_bytes([header[8], header[9], header[10], header[11]]);
        if length < SMALLEST_BATCH {
            return Err(format!(
                "the batch at byte {at} gives its length as {length}, below the smallest a batch has ({SMALLEST_BATCH})"
            ));
        }
        let end = at + 12 + length as usize;
        if end > bytes.len() {
            break;
        }
        at = end;
    }
    Ok(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transactional_batch_reads_back_with_its_header() {
        let header = BatchHeader {
            producer_id: 1 << 40,
            producer_epoch: 3,
            base_sequence: 7,
            transactional: true,
        };
        let bytes = encode_batch(
            header,
            &[
                Plain {
                    key: Some("k".into()),
                    value: Some("v1".into()),
                },
                Plain {
                    key: None,
                    value: Some("v2".into()),
                },
            ],
        )
        .unwrap();
        let v = describe(&Some(bytes));
        let b = &v[0];
        assert_eq!(b["producer_id"], json!(1i64 << 40));
        assert_eq!(b["producer_epoch"], json!(3));
        assert_eq!(b["transactional"], json!(true));
        assert_eq!(b["control"], json!(false));
        assert_eq!(b["records"][1]["sequence"], json!(8));
        assert_eq!(b["records"][1]["key"], Value::Null);
        assert_eq!(b["records"][0]["value"], json!("v1"));
    }

    #[test]
    fn control_records_show_their_type_and_coordinator_epoch() {
        let r = Record {
            transactional: true,
            control: true,
            partition_leader_epoch: 0,
            producer_id: 5,
            producer_epoch: 0,
            timestamp_type: TimestampType::Creation,
            offset: 4,
            sequence: -1,
            timestamp: 0,
            key: Some(Bytes::from_static(&[0, 0, 0, 1])),
            value: Some(Bytes::from_static(&[0, 0, 0, 0, 0, 9])),
            headers: IndexMap::new(),
        };
        let c = control(&r);
        assert_eq!(c["key"]["type"], json!("COMMIT"));
        assert_eq!(c["value"]["coordinator_epoch"], json!(9));
    }

    #[test]
    fn a_batch_cut_short_at_the_end_is_left_out_as_apaches_consumer_leaves_it() {
        let header = BatchHeader {
            producer_id: 1,
            producer_epoch: 0,
            base_sequence: 0,
            transactional: false,
        };
        let one = encode_batch(
            header,
            &[Plain {
                key: Some("k1".into()),
                value: Some("v".into()),
            }],
        )
        .unwrap();
        let mut two = one.to_vec();
        two.extend_from_slice(&one[..one.len() - 3]);
        let v = describe(&Some(Bytes::from(two)));
        assert_eq!(v.as_array().map(Vec::len), Some(1), "{v}");
        assert_eq!(v[0]["records"][0]["key"], json!("k1"));
        // Only a cut batch: none.
        let v = describe(&Some(one.slice(..one.len() - 1)));
        assert_eq!(v, json!([]));
        // A length below any batch's is corrupt, not short.
        let mut corrupt = one.to_vec();
        corrupt[8..12].copy_from_slice(&3i32.to_be_bytes());
        let v = describe(&Some(Bytes::from(corrupt)));
        assert!(
            v["undecodable"].as_str().unwrap().contains("length as 3"),
            "{v}"
        );
    }

    #[test]
    fn garbage_is_reported_not_panicked_on() {
        let v = describe(&Some(Bytes::from_static(&[
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 1,
        ])));
        assert!(v.get("undecodable").is_some(), "{v}");
    }
}
