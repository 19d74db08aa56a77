//! AddOffsetsToTxn (key 25), v0–3, flexible from v3.

use super::{ApiKey, CompactString, Direction, Message, Reader, Result, TaggedFields, Writer};
use crate::planted::Bug;

/// AddOffsetsToTxn as kaas-ref serves it: its row of [`super::TRANSACTION_APIS`], which the codec's
/// version checks and the broker's ApiVersions answer both read.
pub const SPEC: super::ApiSpec = super::ApiSpec {
    api: ApiKey::AddOffsetsToTxn,
    key: 25,
    name: "AddOffsetsToTxn",
    versions: (0, 3),
    first_flexible: 3,
};

/// The planted misread ([`Bug::GroupIdLengthOneByte`], only in a `planted-bugs` build's
/// tests): a compact length taken from its first byte alone.
fn one_byte_length_string(r: &mut Reader<'_>, field: &'static str) -> Result<CompactString> {
    let len = usize::from(r.i8(field)? as u8).saturating_sub(1);
    let bytes = (0..len)
        .map(|_| r.i8(field).map(|b| b as u8))
        .collect::<Result<Vec<u8>>>()?;
    Ok(CompactString::from_utf8_lossy(&bytes))
}

/// Adds a consumer group's offsets partition to the producer's transaction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddOffsetsToTxnRequest {
    /// The transactional id.
    pub transactional_id: CompactString,
    /// The producer id.
    pub producer_id: i64,
    /// The producer epoch.
    pub producer_epoch: i16,
    /// The consumer group whose offsets the transaction will commit.
    pub group_id: CompactString,
    /// Tagged fields this schema does not name (flexible versions).
    pub unknown_tagged_fields: TaggedFields,
}

impl Message for AddOffsetsToTxnRequest {
    const API: ApiKey = ApiKey::AddOffsetsToTxn;
    const DIRECTION: Direction = Direction::Request;

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self> {
        Ok(AddOffsetsToTxnRequest {
            transactional_id: r.string("AddOffsetsToTxnRequest.transactional_id")?,
            producer_id: r.i64("AddOffsetsToTxnRequest.producer_id")?,
            producer_epoch: r.i16("AddOffsetsToTxnRequest.producer_epoch")?,
            group_id: match version == 3 && crate::planted::in_codec(Bug::GroupIdLengthOneByte) {
                true => one_byte_length_string(r, "AddOffsetsToTxnRequest.group_id")?,
                false => r.string("AddOffsetsToTxnRequest.group_id")?,
            },
            unknown_tagged_fields: r.tagged_fields("AddOffsetsToTxnRequest._tagged_fields")?,
        })
    }

    fn write(&self, w: &mut Writer) -> Result<()> {
        w.string(
            "AddOffsetsToTxnRequest.transactional_id",
            &self.transactional_id,
        )?;
        w.i64(self.producer_id);
        w.i16(self.producer_epoch);
        w.string("AddOffsetsToTxnRequest.group_id", &self.group_id)?;
        w.tagged_fields(
            "AddOffsetsToTxnRequest._tagged_fields",
            &self.unknown_tagged_fields,
        )
    }
}

/// The outcome of AddOffsetsToTxn: a single error code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddOffsetsToTxnResponse {
    /// Quota throttle.
    pub throttle_time_ms: i32,
    /// Error code, 0 for none.
    pub error_code: i16,
    /// Tagged fields this schema does not name (flexible versions).
    pub unknown_tagged_fields: TaggedFields,
}

impl Message for AddOffsetsToTxnResponse {
    const API: ApiKey = ApiKey::AddOffsetsToTxn;
    const DIRECTION: Direction = Direction::Response;

    fn read(r: &mut Reader<'_>, _version: i16) -> Result<Self> {
        Ok(AddOffsetsToTxnResponse {
            throttle_time_ms: r.i32("AddOffsetsToTxnResponse.throttle_time_ms")?,
            error_code: r.i16("AddOffsetsToTxnResponse.error_code")?,
            unknown_tagged_fields: r.tagged_fields("AddOffsetsToTxnResponse._tagged_fields")?,
        })
    }

    fn write(&self, w: &mut Writer) -> Result<()> {
        w.i32(self.throttle_time_ms);
        w.i16(self.error_code);
        w.tagged_fields(
            "AddOffsetsToTxnResponse._tagged_fields",
            &self.unknown_tagged_fields,
        )
    }
}
