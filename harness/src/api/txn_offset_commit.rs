//! TxnOffsetCommit: how a scenario step's fields become its request (written by
//! Apache's definitions past the versions kafka-protocol generates); its answer's tree is the
//! values Apache's definitions read.

use kafka_protocol::messages::*;

use super::request::Fields;

/// TxnOffsetCommit's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "TxnOffsetCommit",
    key: ApiKey::TxnOffsetCommit,
    cap: None,
    codes: &[
        -1, 0, 3, 12, 13, 14, 15, 16, 22, 24, 25, 28, 29, 30, 42, 47, 48, 49, 53, 82,
    ],
    build,
    read: super::Reading::Definitions {
        renamed: &[],
        defaults: &[("topics[].partitions[].committed_metadata", "null")],
    },
};

/// The request at `version` from a step's fields.
fn build(_version: i16, f: &Fields<'_>) -> Result<RequestKind, String> {
    Ok(RequestKind::TxnOffsetCommit(
        TxnOffsetCommitRequest::default()
            .with_transactional_id(TransactionalId(f.str("transactional_id")?))
            .with_group_id(GroupId(f.str("group_id")?))
            .with_producer_id(ProducerId(f.int("producer_id", 0)?))
            .with_producer_epoch(f.i16("producer_epoch", 0)?)
            .with_generation_id(f.i32("generation_id", -1)?)
            .with_member_id(f.str("member_id")?)
            .with_group_instance_id(f.opt_str("group_instance_id")?)
            .with_topics(committed_topics!(
                f,
                txn_offset_commit_request::TxnOffsetCommitRequestTopic,
                txn_offset_commit_request::TxnOffsetCommitRequestPartition
            )),
    ))
}
