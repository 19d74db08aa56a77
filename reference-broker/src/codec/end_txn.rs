//! EndTxn (key 26), v0–3, flexible from v3.

use super::{ApiKey, CompactString, Direction, Message, Reader, Result, TaggedFields, Writer};

/// EndTxn as kaas-ref serves it: its row of [`super::TRANSACTION_APIS`], which the codec's
/// version checks and the broker's ApiVersions answer both read.
pub const SPEC: super::ApiSpec = super::ApiSpec {
    api: ApiKey::EndTxn,
    key: 26,
    name: "EndTxn",
    versions: (0, 3),
    first_flexible: 3,
};

/// Commits (`committed = true`) or aborts the producer's open transaction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndTxnRequest {
    /// The transactional id.
    pub transactional_id: CompactString,
    /// The producer id.
    pub producer_id: i64,
    /// The producer epoch.
    pub producer_epoch: i16,
    /// True to commit, false to abort.
    pub committed: bool,
    /// Tagged fields this schema does not name (flexible versions).
    pub unknown_tagged_fields: TaggedFields,
}

impl Message for EndTxnRequest {
    const API: ApiKey = ApiKey::EndTxn;
    const DIRECTION: Direction = Direction::Request;

    fn read(r: &mut Reader<'_>, _version: i16) -> Result<Self> {
        Ok(EndTxnRequest {
            transactional_id: r.string("EndTxnRequest.transactional_id")?,
            producer_id: r.i64("EndTxnRequest.producer_id")?,
            producer_epoch: r.i16("EndTxnRequest.producer_epoch")?,
            committed: r.bool("EndTxnRequest.committed")?,
            unknown_tagged_fields: r.tagged_fields("EndTxnRequest._tagged_fields")?,
        })
    }

    fn write(&self, w: &mut Writer) -> Result<()> {
        w.string("EndTxnRequest.transactional_id", &self.transactional_id)?;
        w.i64(self.producer_id);
        w.i16(self.producer_epoch);
        w.bool(self.committed);
        w.tagged_fields("EndTxnRequest._tagged_fields", &self.unknown_tagged_fields)
    }
}

/// The outcome of EndTxn: a single error code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndTxnResponse {
    /// Quota throttle.
    pub throttle_time_ms: i32,
    /// Error code, 0 for none.
    pub error_code: i16,
    /// Tagged fields this schema does not name (flexible versions).
    pub unknown_tagged_fields: TaggedFields,
}

impl Message for EndTxnResponse {
    const API: ApiKey = ApiKey::EndTxn;
    const DIRECTION: Direction = Direction::Response;

    fn read(r: &mut Reader<'_>, _version: i16) -> Result<Self> {
        Ok(EndTxnResponse {
            throttle_time_ms: r.i32("EndTxnResponse.throttle_time_ms")?,
            error_code: r.i16("EndTxnResponse.error_code")?,
            unknown_tagged_fields: r.tagged_fields("EndTxnResponse._tagged_fields")?,
        })
    }

    fn write(&self, w: &mut Writer) -> Result<()> {
        w.i32(self.throttle_time_ms);
        w.i16(self.error_code);
        w.tagged_fields("EndTxnResponse._tagged_fields", &self.unknown_tagged_fields)
    }
}
