//! EndTxn: how a scenario step's fields become its request (written by
//! Apache's definitions past the versions kafka-protocol generates); its answer's tree is the
//! values Apache's definitions read.

use kafka_protocol::messages::*;

use super::request::Fields;

/// EndTxn's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "EndTxn",
    key: ApiKey::EndTxn,
    cap: None,
    codes: &[0, 14, 15, 16, 42, 47, 48, 49, 50, 51, 53, 90],
    build,
    read: super::Reading::Definitions {
        renamed: &[],
        defaults: &[("committed", "true")],
    },
};

/// The request at `version` from a step's fields.
fn build(_version: i16, f: &Fields<'_>) -> Result<RequestKind, String> {
    Ok(RequestKind::EndTxn(
        EndTxnRequest::default()
            .with_transactional_id(TransactionalId(f.str("transactional_id")?))
            .with_producer_id(ProducerId(f.int("producer_id", 0)?))
            .with_producer_epoch(f.i16("producer_epoch", 0)?)
            .with_committed(f.boolean("committed", true)?),
    ))
}
