//! Record batch (magic v2) framing: the header fields the broker needs, CRC32C validation, and
//! splitting a Produce payload into batches. Records themselves stay opaque bytes: batches are
//! stored as the client sent them, with only the base offset and leader epoch rewritten (both
//! outside the CRC, as in Apache).

/// Bytes of a v2 batch header before the records.
pub const HEADER_LEN: usize = 61;
/// Batch attributes bit: the batch belongs to a transaction.
pub const ATTR_TRANSACTIONAL: i16 = 0x10;
/// Batch attributes bit: the batch is a control batch (a COMMIT or ABORT marker).
pub const ATTR_CONTROL: i16 = 0x20;
/// Batch attributes bit: timestamps are the broker's append time (LogAppendTime).
pub const ATTR_LOG_APPEND_TIME: i16 = 0x08;

/// Why bytes are not a valid record batch (Produce answers CORRUPT_MESSAGE for all of them).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BatchError {
    /// Fewer bytes than a header, or than the batch length says.
    #[error("truncated record batch: {0} bytes left, {1} needed")]
    Truncated(usize, usize),
    /// Only magic 2 is stored.
    #[error("record batch magic {0} is not supported (only v2)")]
    Magic(i8),
    /// The CRC32C over attributes..end does not match.
    #[error("record batch CRC mismatch: stored {stored:#010x}, computed {computed:#010x}")]
    Crc {
        /// CRC in the batch.
        stored: u32,
        /// CRC of the bytes.
        computed: u32,
    },
    /// A batch length that cannot be right.
    #[error("record batch length {0} is invalid")]
    Length(i32),
}

/// The header fields of one v2 record batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchHeader {
    /// Offset of the first record.
    pub base_offset: i64,
    /// Total size in bytes, header included.
    pub size: usize,
    /// Attributes (compression, timestamp type, transactional, control).
    pub attributes: i16,
    /// Last offset minus base offset.
    pub last_offset_delta: i32,
    /// Largest timestamp in the batch.
    pub max_timestamp: i64,
    /// Producer id, -1 when not idempotent.
    pub producer_id: i64,
    /// Producer epoch.
    pub producer_epoch: i16,
    /// Sequence of the first record, -1 when not idempotent.
    pub base_sequence: i32,
    /// Number of records.
    pub record_count: i32,
    /// For a control batch: the marker type from its record key (0 ABORT, 1 COMMIT).
    pub control_type: Option<i16>,
    /// For a transaction marker: the coordinator epoch from its record value.
    pub coordinator_epoch: Option<i32>,
}

/// Control record type of an ABORT marker.
pub const CONTROL_ABORT: i16 = 0;
/// Control record type of a COMMIT marker.
pub const CONTROL_COMMIT: i16 = 1;

/// Reads a zigzag varint (record fields).
fn varlong(b: &[u8], at: &mut usize) -> Option<i64> {
    let mut raw: u64 = 0;
    for i in 0..10 {
        let byte = *b.get(*at)?;
        *at += 1;
        raw |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some(((raw >> 1) as i64) ^ -((raw & 1) as i64));
        }
    }
    None
}

/// The control type in the key of the first record of a control batch, and the coordinator
/// epoch in its value when the value is a transaction marker's (version i16, epoch i32).
fn control_record(batch: &[u8]) -> Option<(i16, Option<i32>)> {
    let mut at = HEADER_LEN;
    varlong(batch, &mut at)?; // record length
    at += 1; // attributes
    varlong(batch, &mut at)?; // timestamp delta
    varlong(batch, &mut at)?; // offset delta
    let key_len = usize::try_from(varlong(batch, &mut at)?).ok()?;
    if key_len < 4 {
        return None;
    }
    let key = batch.get(at..at + 4)?;
    let kind = i16::from_be_bytes([key[2], key[3]]);
    at = at.checked_add(key_len)?;
    let epoch = varlong(batch, &mut at)
        .and_then(|len| usize::try_from(len).ok())
        .filter(|len| *len >= 6)
        .and_then(|_| batch.get(at + 2..at + 6))
        .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    Some((kind, epoch))
}

impl BatchHeader {
    /// Offset of the last record.
    pub fn last_offset(&self) -> i64 {
        self.base_offset + i64::from(self.last_offset_delta)
    }
    /// Whether the batch is transactional.
    pub fn is_transactional(&self) -> bool {
        self.attributes & ATTR_TRANSACTIONAL != 0
    }
    /// Whether the batch is a control batch.
    pub fn is_control(&self) -> bool {
        self.attributes & ATTR_CONTROL != 0
    }
    /// Sequence of the last record (wrapping at i32::MAX, as Kafka's sequences do).
    pub fn last_sequence(&self) -> i32 {
        if self.base_sequence < 0 {
            return -1;
        }
        let last = i64::from(self.base_sequence) + i64::from(self.last_offset_delta);
        (last % (i64::from(i32::MAX) + 1)) as i32
    }
}

fn be_i64(b: &[u8], at: usize) -> i64 {
    i64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}
fn be_i32(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn be_i16(b: &[u8], at: usize) -> i16 {
    i16::from_be_bytes(b[at..at + 2].try_into().expect("2 bytes"))
}

/// Parses and validates the batch at the start of `bytes` (CRC included).
pub fn parse(bytes: &[u8]) -> Result<BatchHeader, BatchError> {
    if bytes.len() < HEADER_LEN {
        return Err(BatchError::Truncated(bytes.len(), HEADER_LEN));
    }
    let batch_length = be_i32(bytes, 8);
    if batch_length < (HEADER_LEN - 12) as i32 {
        return Err(BatchError::Length(batch_length));
    }
    let size = batch_length as usize + 12;
    if size > bytes.len() {
        return Err(BatchError::Truncated(bytes.len(), size));
    }
    let magic = bytes[16] as i8;
    if magic != 2 {
        return Err(BatchError::Magic(magic));
    }
    let stored = u32::from_be_bytes(bytes[17..21].try_into().expect("4 bytes"));
    let computed = crc32c::crc32c(&bytes[21..size]);
    if stored != computed {
        return Err(BatchError::Crc { stored, computed });
    }
    let attributes = be_i16(bytes, 21);
    let control = match attributes & ATTR_CONTROL {
        0 => None,
        _ => control_record(&bytes[..size]),
    };
    Ok(BatchHeader {
        base_offset: be_i64(bytes, 0),
        size,
        attributes,
        control_type: control.map(|(kind, _)| kind),
        coordinator_epoch: control.and_then(|(_, epoch)| epoch),
        last_offset_delta: be_i32(bytes, 23),
        max_timestamp: be_i64(bytes, 35),
        producer_id: be_i64(bytes, 43),
        producer_epoch: be_i16(bytes, 51),
        base_sequence: be_i32(bytes, 53),
        record_count: be_i32(bytes, 57),
    })
}

/// Splits a Produce payload into validated batches: (header, byte range).
pub fn split(bytes: &[u8]) -> Result<Vec<(BatchHeader, std::ops::Range<usize>)>, BatchError> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let h = parse(&bytes[at..])?;
        out.push((h, at..at + h.size));
        at += h.size;
    }
    Ok(out)
}

/// Rewrites the base offset and partition leader epoch of the batch at the start of `batch`.
pub fn assign(batch: &mut [u8], base_offset: i64, leader_epoch: i32) {
    batch[0..8].copy_from_slice(&base_offset.to_be_bytes());
    batch[12..16].copy_from_slice(&leader_epoch.to_be_bytes());
}

/// Whether each record of an uncompressed v2 batch has a key, in record order; `None` for a
/// compressed batch (its records are not read) or records that do not parse.
pub fn record_keys(batch: &[u8]) -> Option<Vec<bool>> {
    let attributes = i16::from_be_bytes([*batch.get(21)?, *batch.get(22)?]);
    if attributes & 0x07 != 0 {
        return None;
    }
    let count = i32::from_be_bytes(batch.get(57..61)?.try_into().ok()?);
    let mut keys = Vec::with_capacity(usize::try_from(count).ok()?.min(batch.len()));
    let mut at = HEADER_LEN;
    for _ in 0..count {
        let len = usize::try_from(varlong(batch, &mut at)?).ok()?;
        let next = at.checked_add(len)?;
        let mut field = at + 1; // attributes
        varlong(batch, &mut field)?; // timestamp delta
        varlong(batch, &mut field)?; // offset delta
        keys.push(varlong(batch, &mut field)? >= 0);
        at = next;
    }
    Some(keys)
}

/// Apache's LogAppendTime for one v2 batch: the timestamp-type attribute set and the max
/// timestamp made the broker's append time, the CRC recomputed (the base timestamp stays, as
/// Apache leaves it; readers take the max timestamp as every record's).
pub fn stamp_log_append_time(batch: &mut [u8], now: i64) {
    if batch.len() < HEADER_LEN {
        return;
    }
    let attributes = i16::from_be_bytes([batch[21], batch[22]]) | ATTR_LOG_APPEND_TIME;
    batch[21..23].copy_from_slice(&attributes.to_be_bytes());
    batch[35..43].copy_from_slice(&now.to_be_bytes());
    let crc = crc32c::crc32c(&batch[21..]);
    batch[17..21].copy_from_slice(&crc.to_be_bytes());
}

/// The batches of a Produce payload as their declared sizes lay them out (8 bytes of base
/// offset, 4 of length, then `length` bytes): (size, magic) each, the magic when the batch is
/// long enough to have one. A length that runs past the end still counts; the append reports
/// the corruption. This is what Apache's request-level checks see, before any CRC.
pub fn declared(bytes: &[u8]) -> Vec<(usize, Option<i8>)> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while let Some(len) = bytes.get(at + 8..at + 12) {
        let size = 12 + i32::from_be_bytes([len[0], len[1], len[2], len[3]]).max(0) as usize;
        out.push((size, bytes.get(at + 16).map(|m| *m as i8)));
        at = at.saturating_add(size);
    }
    out
}

/// Builds a v2 batch (uncompressed) around already-encoded records; used for control
/// batches and in tests.
#[allow(clippy::too_many_arguments)]
pub fn build(
    attributes: i16,
    last_offset_delta: i32,
    base_timestamp: i64,
    max_timestamp: i64,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    records: &[Vec<u8>],
) -> Vec<u8> {
    let mut b = Vec::with_capacity(HEADER_LEN + records.iter().map(Vec::len).sum::<usize>());
    b.extend(0i64.to_be_bytes());
    b.extend(0i32.to_be_bytes()); // length, below
    b.extend(0i32.to_be_bytes()); // leader epoch
    b.push(2);
    b.extend(0u32.to_be_bytes()); // crc, below
    b.extend(attributes.to_be_bytes());
    b.extend(last_offset_delta.to_be_bytes());
    b.extend(base_timestamp.to_be_bytes());
    b.extend(max_timestamp.to_be_bytes());
    b.extend(producer_id.to_be_bytes());
    b.extend(producer_epoch.to_be_bytes());
    b.extend(base_sequence.to_be_bytes());
    b.extend((records.len() as i32).to_be_bytes());
    for r in records {
        b.extend(r);
    }
    let len = (b.len() - 12) as i32;
    b[8..12].copy_from_slice(&len.to_be_bytes());
    let crc = crc32c::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

/// A COMMIT or ABORT control batch (kaas-internals §5): attributes transactional|control, one
/// record with key (version 0, type) and value (version 0, coordinator epoch).
pub fn control_batch(
    producer_id: i64,
    producer_epoch: i16,
    commit: bool,
    coordinator_epoch: i32,
    timestamp: i64,
) -> Vec<u8> {
    let kind = if commit {
        CONTROL_COMMIT
    } else {
        CONTROL_ABORT
    };
    let mut key = 0i16.to_be_bytes().to_vec();
    key.extend(kind.to_be_bytes());
    let mut value = 0i16.to_be_bytes().to_vec();
    value.extend(coordinator_epoch.to_be_bytes());
    let rec = record(0, 0, Some(&key), Some(&value));
    build(
        ATTR_TRANSACTIONAL | ATTR_CONTROL,
        0,
        timestamp,
        timestamp,
        producer_id,
        producer_epoch,
        -1,
        &[rec],
    )
}

/// Encodes one record (v2 format) with the given deltas, key and value, and no headers.
pub fn record(
    offset_delta: i32,
    timestamp_delta: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Vec<u8> {
    fn varint(out: &mut Vec<u8>, v: i64) {
        let mut z = ((v << 1) ^ (v >> 63)) as u64;
        while z >= 0x80 {
            out.push((z as u8) | 0x80);
            z >>= 7;
        }
        out.push(z as u8);
    }
    let mut body = vec![0u8]; // attributes
    varint(&mut body, timestamp_delta);
    varint(&mut body, i64::from(offset_delta));
    for field in [key, value] {
        match field {
            None => varint(&mut body, -1),
            Some(f) => {
                varint(&mut body, f.len() as i64);
                body.extend(f);
            }
        }
    }
    varint(&mut body, 0); // headers
    let mut out = Vec::with_capacity(body.len() + 5);
    varint(&mut out, body.len() as i64);
    out.extend(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_batch_parses_and_a_flipped_bit_fails_the_crc() {
        let recs = vec![
            record(0, 0, None, Some(b"v0")),
            record(1, 0, Some(b"k"), Some(b"v1")),
        ];
        let mut b = build(0, 1, 1000, 1000, 7, 0, 0, &recs);
        let h = parse(&b).unwrap();
        assert_eq!(h.size, b.len());
        assert_eq!(h.record_count, 2);
        assert_eq!(h.last_sequence(), 1);
        assign(&mut b, 42, 3);
        assert_eq!(
            parse(&b).unwrap().base_offset,
            42,
            "offset is outside the CRC"
        );
        let last = b.len() - 1;
        b[last] ^= 1;
        assert!(matches!(parse(&b), Err(BatchError::Crc { .. })));
    }

    #[test]
    fn control_batches_carry_their_type() {
        let c = control_batch(7, 2, true, 0, 1000);
        let h = parse(&c).unwrap();
        assert!(h.is_control() && h.is_transactional());
        assert_eq!(h.attributes, 0x30);
        assert_eq!(
            (h.control_type, h.base_sequence, h.record_count),
            (Some(1), -1, 1)
        );
        assert_eq!(h.coordinator_epoch, Some(0));
        assert_eq!(
            parse(&control_batch(7, 2, false, 5, 0))
                .unwrap()
                .control_type,
            Some(0)
        );
    }

    #[test]
    fn split_refuses_truncated_payloads() {
        let b = build(0, 0, 0, 0, -1, -1, -1, &[record(0, 0, None, Some(b"x"))]);
        let mut two = b.clone();
        two.extend(&b[..b.len() - 1]);
        assert!(matches!(split(&two), Err(BatchError::Truncated(..))));
        assert_eq!(split(&b).unwrap().len(), 1);
    }
}
