//! InitProducerId (key 22), v0–4, flexible from v2.

use super::{ApiKey, CompactString, Direction, Message, Reader, Result, TaggedFields, Writer};

/// InitProducerId as kaas-ref serves it: its row of [`super::TRANSACTION_APIS`], which the codec's
/// version checks and the broker's ApiVersions answer both read.
pub const SPEC: super::ApiSpec = super::ApiSpec {
    api: ApiKey::InitProducerId,
    key: 22,
    name: "InitProducerId",
    versions: (0, 4),
    first_flexible: 2,
};

/// Asks for a (producer id, epoch): idempotent when `transactional_id` is null, transactional
/// otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitProducerIdRequest {
    /// Null for an idempotent producer.
    pub transactional_id: Option<CompactString>,
    /// The transaction timeout the coordinator enforces.
    pub transaction_timeout_ms: i32,
    /// v3+ (KIP-360): the producer id the caller holds, -1 for none.
    pub producer_id: i64,
    /// v3+: the epoch the caller holds, -1 for none.
    pub producer_epoch: i16,
    /// Tagged fields this schema does not name (flexible versions).
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for InitProducerIdRequest {
    fn default() -> Self {
        InitProducerIdRequest {
            transactional_id: None,
            transaction_timeout_ms: 0,
            producer_id: -1,
            producer_epoch: -1,
            unknown_tagged_fields: TaggedFields::new(),
        }
    }
}

impl Message for InitProducerIdRequest {
    const API: ApiKey = ApiKey::InitProducerId;
    const DIRECTION: Direction = Direction::Request;

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self> {
        let mut m = InitProducerIdRequest {
            transactional_id: r.nullable_string("InitProducerIdRequest.transactional_id")?,
            transaction_timeout_ms: r.i32("InitProducerIdRequest.transaction_timeout_ms")?,
            ..Default::default()
        };
        if version >= 3 {
            m.producer_id = r.i64("InitProducerIdRequest.producer_id")?;
            m.producer_epoch = r.i16("InitProducerIdRequest.producer_epoch")?;
        }
        m.unknown_tagged_fields = r.tagged_fields("InitProducerIdRequest._tagged_fields")?;
        Ok(m)
    }

    fn write(&self, w: &mut Writer) -> Result<()> {
        w.nullable_string(
            "InitProducerIdRequest.transactional_id",
            self.transactional_id.as_deref(),
        )?;
        w.i32(self.transaction_timeout_ms);
        if w.version() >= 3 {
            w.i64(self.producer_id);
            w.i16(self.producer_epoch);
        } else {
            w.require_default("InitProducerIdRequest.producer_id", &self.producer_id, &-1)?;
            w.require_default(
                "InitProducerIdRequest.producer_epoch",
                &self.producer_epoch,
                &-1,
            )?;
        }
        w.tagged_fields(
            "InitProducerIdRequest._tagged_fields",
            &self.unknown_tagged_fields,
        )
    }
}

/// The (producer id, epoch) granted, or an error with -1/-1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitProducerIdResponse {
    /// Quota throttle.
    pub throttle_time_ms: i32,
    /// Error code, 0 for none.
    pub error_code: i16,
    /// The producer id, -1 on error.
    pub producer_id: i64,
    /// The producer epoch.
    pub producer_epoch: i16,
    /// Tagged fields this schema does not name (flexible versions).
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for InitProducerIdResponse {
    fn default() -> Self {
        InitProducerIdResponse {
            throttle_time_ms: 0,
            error_code: 0,
            producer_id: -1,
            producer_epoch: 0,
            unknown_tagged_fields: TaggedFields::new(),
        }
    }
}

impl Message for InitProducerIdResponse {
    const API: ApiKey = ApiKey::InitProducerId;
    const DIRECTION: Direction = Direction::Response;

    fn read(r: &mut Reader<'_>, _version: i16) -> Result<Self> {
        Ok(InitProducerIdResponse {
            throttle_time_ms: r.i32("InitProducerIdResponse.throttle_time_ms")?,
            error_code: r.i16("InitProducerIdResponse.error_code")?,
            producer_id: r.i64("InitProducerIdResponse.producer_id")?,
            producer_epoch: r.i16("InitProducerIdResponse.producer_epoch")?,
            unknown_tagged_fields: r.tagged_fields("InitProducerIdResponse._tagged_fields")?,
        })
    }

    fn write(&self, w: &mut Writer) -> Result<()> {
        w.i32(self.throttle_time_ms);
        w.i16(self.error_code);
        w.i64(self.producer_id);
        w.i16(self.producer_epoch);
        w.tagged_fields(
            "InitProducerIdResponse._tagged_fields",
            &self.unknown_tagged_fields,
        )
    }
}
