//! InitProducerId: how a scenario step's fields become its request (written by
//! Apache's definitions past the versions kafka-protocol generates); its answer's tree is the
//! values Apache's definitions read.

use kafka_protocol::messages::*;

use super::request::Fields;

/// InitProducerId's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "InitProducerId",
    key: ApiKey::InitProducerId,
    cap: None,
    codes: &[-1, 0, 14, 15, 16, 31, 42, 47, 50, 51, 53, 90],
    build,
    read: super::Reading::Definitions {
        renamed: &[],
        defaults: &[
            ("transactional_id", "null"),
            ("transaction_timeout_ms", "60000"),
        ],
    },
};

/// The request at `version` from a step's fields.
fn build(_version: i16, f: &Fields<'_>) -> Result<RequestKind, String> {
    Ok(RequestKind::InitProducerId(
        InitProducerIdRequest::default()
            .with_transactional_id(f.opt_str("transactional_id")?.map(TransactionalId))
            .with_transaction_timeout_ms(f.i32("transaction_timeout_ms", 60_000)?)
            .with_producer_id(ProducerId(f.int("producer_id", -1)?))
            .with_producer_epoch(f.i16("producer_epoch", -1)?),
    ))
}
