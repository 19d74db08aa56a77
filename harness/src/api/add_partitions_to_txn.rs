//! AddPartitionsToTxn: how a scenario step's fields become its request (v4 and later are the
//! broker's batched form: the step's fields become its one transaction); its answer's tree is
//! the values Apache's definitions read, each topic's and partition's results named `results`
//! as in transcripts since 3.7.

use kafka_protocol::messages::*;

use super::request::Fields;

/// AddPartitionsToTxn's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "AddPartitionsToTxn",
    key: ApiKey::AddPartitionsToTxn,
    cap: Some(3),
    codes: &[0, 3, 14, 15, 16, 29, 31, 42, 47, 48, 49, 51, 53, 55, 90],
    build,
    read: super::Reading::Definitions {
        renamed: &[
            ("results_by_topic_v3_and_below", "results"),
            ("results_by_partition", "results"),
        ],
        defaults: &[],
    },
};

/// The request at `version` from a step's fields.
fn build(version: i16, f: &Fields<'_>) -> Result<RequestKind, String> {
    // v4 is the batched broker form: the same fields become its one transaction.
    Ok(if version >= 4 {
        RequestKind::AddPartitionsToTxn(AddPartitionsToTxnRequest::default().with_transactions(
            vec![
                add_partitions_to_txn_request::AddPartitionsToTxnTransaction::default()
                    .with_transactional_id(TransactionalId(f.str("transactional_id")?))
                    .with_producer_id(ProducerId(f.int("producer_id", 0)?))
                    .with_producer_epoch(f.i16("producer_epoch", 0)?)
                    .with_verify_only(f.boolean("verify_only", false)?)
                    .with_topics(
                        add_partitions_topics(f)?,
                    ),
            ],
        ))
    } else {
        RequestKind::AddPartitionsToTxn(
            AddPartitionsToTxnRequest::default()
                .with_v3_and_below_transactional_id(TransactionalId(f.str("transactional_id")?))
                .with_v3_and_below_producer_id(ProducerId(f.int("producer_id", 0)?))
                .with_v3_and_below_producer_epoch(f.i16("producer_epoch", 0)?)
                .with_v3_and_below_topics(add_partitions_topics(f)?),
        )
    })
}

/// AddPartitionsToTxn's `topics`, the same in the v0–3 and the v4 shape.
fn add_partitions_topics(
    f: &Fields<'_>,
) -> Result<Vec<add_partitions_to_txn_request::AddPartitionsToTxnTopic>, String> {
    f.tables("topics")?
        .iter()
        .map(|t| {
            Ok(
                add_partitions_to_txn_request::AddPartitionsToTxnTopic::default()
                    .with_name(TopicName(t.str("name")?))
                    .with_partitions(t.i32s("partitions")?),
            )
        })
        .collect()
}
