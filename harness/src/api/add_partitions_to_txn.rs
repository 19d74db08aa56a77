//! AddPartitionsToTxn: how a scenario step's fields become its request, and its answer the tree a
//! transcript records.
//! v4 is the broker-only batched form, which scenarios do not describe.

use kafka_protocol::messages::*;
use serde_json::{json, Value};

use super::request::Fields;
use super::response::{by_name, sorted};

/// AddPartitionsToTxn's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "AddPartitionsToTxn",
    key: ApiKey::AddPartitionsToTxn,
    cap: Some(3),
    codes: &[0, 3, 14, 15, 16, 29, 31, 42, 47, 48, 49, 51, 53, 55, 90],
    build,
    read,
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

/// The answer at `version` as a tree, when it is AddPartitionsToTxn's.
fn read(response: &ResponseKind, version: i16) -> Option<Value> {
    let ResponseKind::AddPartitionsToTxn(r) = response else {
        return None;
    };
    // v4: the batched broker form, one result per transaction.
    Some(if version >= 4 {
        json!({
            "throttle_time_ms": r.throttle_time_ms,
            "error_code": r.error_code,
            "results_by_transaction": r.results_by_transaction.iter().map(|x| json!({
                "transactional_id": x.transactional_id.0.as_str(),
                "topic_results": add_partitions_results(&x.topic_results),
            })).collect::<Vec<_>>(),
        })
    } else {
        json!({
            "throttle_time_ms": r.throttle_time_ms,
            "results": add_partitions_results(&r.results_by_topic_v3_and_below),
        })
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

/// AddPartitionsToTxn's per-topic results, the same in the v0–3 and the v4 shape.
fn add_partitions_results(
    topics: &[kafka_protocol::messages::add_partitions_to_txn_response::AddPartitionsToTxnTopicResult],
) -> Vec<Value> {
    by_name(
        topics
            .iter()
            .map(|t| {
                json!({
                    "name": t.name.0.as_str(),
                    "results": sorted(t.results_by_partition.iter().map(|p| json!({
                        "partition_index": p.partition_index,
                        "partition_error_code": p.partition_error_code,
                    })).collect()),
                })
            })
            .collect(),
    )
}
