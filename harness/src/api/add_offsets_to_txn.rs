//! AddOffsetsToTxn: how a scenario step's fields become its request (written by
//! Apache's definitions past the versions kafka-protocol generates); its answer's tree is the
//! values Apache's definitions read.

use kafka_protocol::messages::*;

use super::request::Fields;

/// AddOffsetsToTxn's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "AddOffsetsToTxn",
    key: ApiKey::AddOffsetsToTxn,
    cap: None,
    codes: &[0, 14, 15, 16, 30, 42, 47, 49, 50, 51, 53, 90],
    build,
    read: super::Reading::Definitions {
        renamed: &[],
        defaults: &[],
    },
};

/// The request at `version` from a step's fields.
fn build(_version: i16, f: &Fields<'_>) -> Result<RequestKind, String> {
    Ok(RequestKind::AddOffsetsToTxn(
        AddOffsetsToTxnRequest::default()
            .with_transactional_id(TransactionalId(f.str("transactional_id")?))
            .with_producer_id(ProducerId(f.int("producer_id", 0)?))
            .with_producer_epoch(f.i16("producer_epoch", 0)?)
            .with_group_id(GroupId(f.str("group_id")?)),
    ))
}
