//! Produce: how a scenario step's fields become its request, and its answer the tree a
//! transcript records.

use kafka_protocol::messages::*;
use serde_json::{json, Value};

use super::request::Fields;
use super::response::{by_name, sorted};

/// Produce's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "Produce",
    key: ApiKey::Produce,
    cap: None,
    codes: &[],
    build,
    read: super::Reading::Typed(read),
};

/// The request at `version` from a step's fields.
fn build(_version: i16, f: &Fields<'_>) -> Result<RequestKind, String> {
    Ok(RequestKind::Produce(produce(f)?))
}

/// The answer at `version` as a tree, when it is Produce's.
fn read(response: &ResponseKind, _version: i16) -> Option<Value> {
    let ResponseKind::Produce(r) = response else {
        return None;
    };
    Some(json!({
        "throttle_time_ms": r.throttle_time_ms,
        "responses": by_name(r.responses.iter().map(|t| json!({
            "name": t.name.0.as_str(),
            "partitions": sorted(t.partition_responses.iter().map(|p| json!({
                "partition_index": p.index,
                "error_code": p.error_code,
                "base_offset": p.base_offset,
                "log_append_time_ms": p.log_append_time_ms,
                "log_start_offset": p.log_start_offset,
                "record_errors": p.record_errors.iter().map(|e| json!({
                    "batch_index": e.batch_index,
                    "message": e.batch_index_error_message.as_ref().map(|m| m.as_str()),
                })).collect::<Vec<_>>(),
                "error_message": p.error_message.as_ref().map(|m| m.as_str()),
            })).collect()),
        })).collect()),
    }))
}

/// Produce to one partition: one batch of `records` ([{ key, value }]) stamped with the
/// producer fields. acks = 0 is refused: it has no answer to record.
fn produce(f: &Fields<'_>) -> Result<ProduceRequest, String> {
    let acks = f.i16("acks", -1)?;
    if acks == 0 {
        return Err("acks = 0 gets no answer; use 1 or -1".into());
    }
    let records = f
        .tables("records")?
        .iter()
        .map(|r| {
            Ok(crate::wire::record_batch::Plain {
                key: r.opt_str("key")?.map(|s| s.to_string()),
                value: r.opt_str("value")?.map(|s| s.to_string()),
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    if records.is_empty() {
        return Err("records: a Produce step needs at least one record".into());
    }
    let batch = crate::wire::record_batch::encode_batch(
        crate::wire::record_batch::BatchHeader {
            producer_id: f.int("producer_id", -1)?,
            producer_epoch: f.i16("producer_epoch", -1)?,
            base_sequence: f.i32("base_sequence", -1)?,
            transactional: f.boolean("transactional", false)?,
        },
        &records,
    )?;
    Ok(ProduceRequest::default()
        .with_transactional_id(f.opt_str("transactional_id")?.map(TransactionalId))
        .with_acks(acks)
        .with_timeout_ms(f.i32("timeout_ms", 30_000)?)
        .with_topic_data(vec![produce_request::TopicProduceData::default()
            .with_name(TopicName(f.str("topic")?))
            .with_partition_data(vec![
                produce_request::PartitionProduceData::default()
                    .with_index(f.i32("partition", 0)?)
                    .with_records(Some(batch)),
            ])]))
}
