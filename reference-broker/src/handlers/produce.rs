//! Produce: validate and append each partition's batches; acks=-1 waits for fsync, acks=0
//! gets no response. Apache does not create topics on Produce (only Metadata does), so an
//! unknown topic is UNKNOWN_TOPIC_OR_PARTITION here too.

use kafka_protocol::messages::produce_response::{PartitionProduceResponse, TopicProduceResponse};
use kafka_protocol::messages::{ProduceRequest, ProduceResponse};

use super::{sb, Ctx};
use crate::auth::{Operation, Resource};
use crate::errors;
use crate::storage::batch;

/// Answers Produce; `None` for acks=0.
pub fn handle(ctx: &Ctx, req: ProduceRequest) -> Option<ProduceResponse> {
    let state = &ctx.state;
    let acks_ok = (-1..=1).contains(&req.acks);
    let mut responses = Vec::new();
    let mut appended_any = false;
    for topic in req.topic_data {
        let name = topic.name.0.to_string();
        let authorized = ctx.allowed(Operation::Write, Resource::Topic(&name));
        let max_batch = state
            .topics
            .read()
            .get(&name)
            .map_or(i32::MAX, |t| t.config.max_message_bytes);
        let mut partitions = Vec::new();
        for p in topic.partition_data {
            let mut r = PartitionProduceResponse::default()
                .with_index(p.index)
                .with_base_offset(-1)
                .with_log_append_time_ms(-1)
                .with_log_start_offset(-1);
            let outcome = if !acks_ok {
                Err((errors::INVALID_REQUIRED_ACKS, None, -1))
            } else if !authorized {
                Err((errors::TOPIC_AUTHORIZATION_FAILED, None, -1))
            } else {
                match state.partition(&name, p.index) {
                    None => Err((errors::UNKNOWN_TOPIC_OR_PARTITION, None, -1)),
                    Some(log) => {
                        let mut log = log.lock();
                        let payload = p.records.as_deref().unwrap_or_default();
                        let verified = verify_transactional(
                            ctx,
                            req.transactional_id.as_ref().map(|t| &*t.0),
                            &log,
                            payload,
                            &name,
                            p.index,
                        )
                        .map_err(|(code, message)| (code, message, -1))
                        .and_then(|()| {
                            // After the transactional verification, before the append's own
                            // checks, as Apache orders them; no message, as Apache sends none
                            // (scenario topic-config-max-message-bytes).
                            match batch::largest_declared(payload) > max_batch.max(0) as usize {
                                true => Err((errors::MESSAGE_TOO_LARGE, None, -1)),
                                false => Ok(()),
                            }
                        });
                        let start = log.log_start_offset();
                        match verified.and_then(|()| {
                            log.append(payload, req.acks == -1).map_err(|e| {
                                // Apache answers a sequence gap with no message and the
                                // partition's log start offset (scenario
                                // records-idempotent-duplicate-and-gap).
                                match e.code == errors::OUT_OF_ORDER_SEQUENCE_NUMBER {
                                    true => (e.code, None, start),
                                    false => (e.code, Some(e.message), -1),
                                }
                            })
                        }) {
                            Ok(a) => {
                                appended_any |= !a.duplicate;
                                Ok((a.base_offset, log.log_start_offset(), a.log_append_time))
                            }
                            Err(e) => Err(e),
                        }
                    }
                }
            };
            r = match outcome {
                Ok((base, start, append_time)) => r
                    .with_base_offset(base)
                    .with_log_start_offset(start)
                    .with_log_append_time_ms(append_time),
                Err((code, message, start)) => {
                    tracing::debug!(topic = %name, partition = p.index, code, message = ?message, "produce refused");
                    r.with_error_code(code)
                        .with_log_start_offset(start)
                        .with_error_message(message.filter(|_| ctx.version >= 8).map(|m| sb(&m)))
                }
            };
            partitions.push(r);
        }
        responses.push(
            TopicProduceResponse::default()
                .with_name(topic.name)
                .with_partition_responses(partitions),
        );
    }
    if appended_any {
        state.appended.notify_waiters();
    }
    (req.acks != 0).then(|| ProduceResponse::default().with_responses(responses))
}

/// Apache 3.7's produce-side partition verification for a transactional batch: the producer's
/// transaction must be Ongoing with this partition added (skipped when the log already has an
/// open transaction of this producer).
fn verify_transactional(
    ctx: &Ctx,
    transactional_id: Option<&str>,
    log: &crate::storage::partition::PartitionLog,
    payload: &[u8],
    topic: &str,
    partition: i32,
) -> Result<(), (i16, Option<String>)> {
    let Ok(h) = crate::storage::batch::parse(payload) else {
        return Ok(()); // the append reports the corruption
    };
    if !h.is_transactional() || h.is_control() || log.has_open_txn(h.producer_id) {
        return Ok(());
    }
    let Some(id) = transactional_id else {
        return Err((
            errors::INVALID_RECORD,
            Some("transactional records need a transactional id".into()),
        ));
    };
    if !ctx.allowed(Operation::Write, Resource::TransactionalId(id)) {
        return Err((errors::TRANSACTIONAL_ID_AUTHORIZATION_FAILED, None));
    }
    match ctx
        .state
        .txn
        .check_produce(id, h.producer_id, h.producer_epoch, topic, partition)
    {
        errors::NONE => Ok(()),
        errors::INVALID_TXN_STATE => Err((
            errors::INVALID_TXN_STATE,
            Some("Partition was not added to the transaction".into()),
        )),
        code => Err((code, None)),
    }
}
