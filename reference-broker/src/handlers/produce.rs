//! Produce: validate and append each partition's batches; acks=-1 waits for fsync, acks=0
//! gets no response. Apache does not create topics on Produce (only Metadata does), so an
//! unknown topic is UNKNOWN_TOPIC_OR_PARTITION here too.

use kafka_protocol::messages::produce_response::{
    BatchIndexAndErrorMessage, PartitionProduceResponse, TopicProduceResponse,
};
use kafka_protocol::messages::{ProduceRequest, ProduceResponse};

use super::{sb, Ctx};
use crate::auth::{Operation, Resource};
use std::sync::Arc;

use crate::errors;
use crate::planted::Bug;
use crate::storage::batch;
use crate::storage::partition::{Durability, PartitionLog};

/// Why one partition's data was refused, as the answer carries it.
struct Refusal {
    code: i16,
    message: Option<String>,
    log_start: i64,
    record_errors: Vec<(i32, String)>,
}

impl Refusal {
    fn of(code: i16, message: Option<String>, log_start: i64) -> Refusal {
        Refusal {
            code,
            message,
            log_start,
            record_errors: Vec::new(),
        }
    }
}

/// A Produce whose appends are done and whose acks=all answer waits for them to be durable.
#[derive(Debug)]
pub struct Appended {
    response: Option<ProduceResponse>,
    /// (topic index, partition index, the log's group commit, bytes to cover).
    waits: Vec<(usize, usize, Arc<Durability>, u64)>,
}

impl Appended {
    /// Whether the answer must wait for fsyncs.
    pub fn waits(&self) -> bool {
        !self.waits.is_empty()
    }

    /// Waits until every append is durable (blocking: run it on the blocking pool) and gives
    /// the answer; a partition whose fsync failed answers KAFKA_STORAGE_ERROR. `None` for
    /// acks=0.
    pub fn durable(self) -> Option<ProduceResponse> {
        let mut response = self.response?;
        for (t, p, durability, end) in self.waits {
            if let Err(e) = durability.sync_through(end) {
                tracing::warn!(error = %e, "fsync failed");
                let r = &mut response.responses[t].partition_responses[p];
                *r = PartitionProduceResponse::default()
                    .with_index(r.index)
                    .with_error_code(errors::KAFKA_STORAGE_ERROR)
                    .with_base_offset(-1)
                    .with_log_append_time_ms(-1)
                    .with_log_start_offset(-1);
            }
        }
        Some(response)
    }
}

/// Answers Produce; `None` for acks=0 (appends and their durability in one call).
pub fn handle(ctx: &Ctx, req: ProduceRequest) -> Option<ProduceResponse> {
    append(ctx, req).durable()
}

/// Produce's appends, in order, under each partition's lock; the acks=all answer then waits
/// for durability without any lock (`Appended::durable`), so that concurrent producers — and
/// the requests a client pipelines on one connection — share fsyncs.
pub fn append(ctx: &Ctx, req: ProduceRequest) -> Appended {
    let state = &ctx.state;
    let acks_ok = (-1..=1).contains(&req.acks);
    let mut responses = Vec::new();
    let mut appended_any = false;
    let mut waits = Vec::new();
    for (topic_index, topic) in req.topic_data.into_iter().enumerate() {
        let name = topic.name.0.to_string();
        let authorized = ctx.allowed(Operation::Write, Resource::Topic(&name));
        let max_batch = state
            .topics
            .read()
            .get(&name)
            .map_or(i32::MAX, |t| t.config.max_message_bytes);
        let mut partitions = Vec::new();
        for p in topic.partition_data {
            let r = PartitionProduceResponse::default()
                .with_index(p.index)
                .with_base_offset(-1)
                .with_log_append_time_ms(-1)
                .with_log_start_offset(-1);
            let outcome = if !acks_ok {
                Err(Refusal::of(errors::INVALID_REQUIRED_ACKS, None, -1))
            } else if !authorized {
                Err(Refusal::of(errors::TOPIC_AUTHORIZATION_FAILED, None, -1))
            } else {
                let payload = p.records.as_deref().unwrap_or_default();
                let declared = batch::declared(payload);
                match state.partition(&name, p.index) {
                    None => Err(Refusal::of(errors::UNKNOWN_TOPIC_OR_PARTITION, None, -1)),
                    // Apache's ProduceRequest.validateRecords, before anything else looks at the
                    // data: from v3 on, exactly one record batch per partition, of magic 2
                    // (scenario records-produce-one-batch-per-partition).
                    Some(_)
                        if ctx.version >= 3
                            && (declared.len() != 1
                                || declared.iter().any(|(_, magic)| *magic != Some(2))) =>
                    {
                        Err(Refusal::of(errors::INVALID_RECORD, None, -1))
                    }
                    // Apache checks leadership after the records (ReplicaManager, on append).
                    Some(_) => match state.led_partition(&name, p.index) {
                        Err(code) => Err(Refusal::of(code, None, -1)),
                        Ok(log) => 'partition: {
                            let mut log = log.lock();
                            let verified = verify_transactional(
                                ctx,
                                req.transactional_id.as_ref().map(|t| &*t.0),
                                &mut log,
                                payload,
                                &name,
                                p.index,
                            )
                            .map_err(|(code, message)| Refusal::of(code, message, -1))
                            .and_then(|()| {
                                producer_room(
                                    &log,
                                    payload,
                                    state.config.limits.max_producers_per_partition,
                                )
                            })
                            .and_then(|()| {
                                // After the transactional verification, before the append's own
                                // checks, as Apache orders them; no message, as Apache sends none
                                // (scenario topic-config-max-message-bytes).
                                let largest = declared.iter().map(|(size, _)| *size).max();
                                match largest.unwrap_or(0) > max_batch.max(0) as usize {
                                    true => Err(Refusal::of(errors::MESSAGE_TOO_LARGE, None, -1)),
                                    false => Ok(()),
                                }
                            });
                            let start = log.log_start_offset();
                            // acks=all waits for durability after the log is released, so the
                            // appends of concurrent producers share fsyncs (group commit).
                            let appended = verified.and_then(|()| {
                                log.append(payload, false).map_err(|e| {
                                    // Apache answers the producer-state check's refusals (a
                                    // sequence gap, an epoch older than the partition has
                                    // seen) with no message and the partition's log start
                                    // offset: ReplicaManager's catch-all branch (scenarios
                                    // records-idempotent-duplicate-and-gap,
                                    // records-produce-older-epoch-than-partition).
                                    let producer_state = [
                                        errors::OUT_OF_ORDER_SEQUENCE_NUMBER,
                                        errors::INVALID_PRODUCER_EPOCH,
                                    ];
                                    match producer_state.contains(&e.code) {
                                        true => Refusal::of(e.code, None, start),
                                        // Apache's record validation answers its message, the record
                                        // errors and the log start offset (scenario
                                        // topic-config-compact-needs-keys).
                                        false if !e.record_errors.is_empty() => Refusal {
                                            code: e.code,
                                            message: Some(e.message),
                                            log_start: start,
                                            record_errors: e.record_errors,
                                        },
                                        false => Refusal::of(e.code, Some(e.message), -1),
                                    }
                                })
                            });
                            let a = match appended {
                                Ok(a) => a,
                                Err(e) => break 'partition Err(e),
                            };
                            appended_any |= !a.duplicate;
                            if req.acks == -1 {
                                waits.push((
                                    topic_index,
                                    partitions.len(),
                                    log.durability(),
                                    a.end,
                                ));
                            }
                            let mut base = a.base_offset;
                            if state.config.planted.has(Bug::ProduceAnswersOffsetOneHigh)
                                && base % 10 == 5
                            {
                                base += 1;
                            }
                            Ok((base, log.log_start_offset(), a.log_append_time))
                        }
                    },
                }
            };
            partitions.push(answered(r, outcome, ctx.version, &name, p.index));
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
    Appended {
        response: (req.acks != 0).then(|| ProduceResponse::default().with_responses(responses)),
        waits,
    }
}

/// One partition's answer: where its records went, or why they were refused (the message and
/// the record errors from v8 on, as Apache answers them).
fn answered(
    r: PartitionProduceResponse,
    outcome: Result<(i64, i64, i64), Refusal>,
    version: i16,
    topic: &str,
    partition: i32,
) -> PartitionProduceResponse {
    match outcome {
        Ok((base, start, append_time)) => r
            .with_base_offset(base)
            .with_log_start_offset(start)
            .with_log_append_time_ms(append_time),
        Err(Refusal {
            code,
            message,
            log_start: start,
            record_errors,
        }) => {
            tracing::debug!(topic = %topic, partition, code, message = ?message, "produce refused");
            r.with_error_code(code)
                .with_log_start_offset(start)
                .with_error_message(message.filter(|_| version >= 8).map(|m| sb(&m)))
                .with_record_errors(
                    record_errors
                        .into_iter()
                        .filter(|_| version >= 8)
                        .map(|(i, m)| {
                            BatchIndexAndErrorMessage::default()
                                .with_batch_index(i)
                                .with_batch_index_error_message(Some(sb(&m)))
                        })
                        .collect(),
                )
        }
    }
}

/// Apache 3.7's produce-side partition verification for a transactional batch: the producer's
/// transaction must be Ongoing with this partition added (skipped when the log already has an
/// open transaction of this producer).
fn verify_transactional(
    ctx: &Ctx,
    transactional_id: Option<&str>,
    log: &mut crate::storage::partition::PartitionLog,
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
    log.start_verification(h.producer_id, h.producer_epoch, h.base_sequence);
    match ctx
        .state
        .txn
        .check_produce(id, h.producer_id, h.producer_epoch, topic, partition)
        .code()
    {
        errors::NONE => Ok(()),
        errors::INVALID_TXN_STATE => Err((
            errors::INVALID_TXN_STATE,
            Some("Partition was not added to the transaction".into()),
        )),
        code => Err((code, None)),
    }
}

/// A producer new to the partition is refused once the partition keeps the state of
/// `max` producers (`crate::limits`); one it knows is never refused.
fn producer_room(log: &PartitionLog, payload: &[u8], max: usize) -> Result<(), Refusal> {
    let Ok(h) = batch::parse(payload) else {
        return Ok(());
    };
    if h.producer_id < 0 || log.producer(h.producer_id).is_some() {
        return Ok(());
    }
    crate::limits::check_count(
        "Producers one partition keeps",
        log.producer_count() + 1,
        max,
        "max-producers-per-partition",
    )
    .map_err(|r| Refusal::of(r.code, Some(r.message), -1))
}
