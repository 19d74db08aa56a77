//! Fetch: whole batches from each partition's log, long-polling up to max_wait_ms for
//! min_bytes. No fetch sessions are created (session id 0, which KIP-227 allows); an
//! incremental fetch against a session is FETCH_SESSION_ID_NOT_FOUND.

use std::sync::Arc;
use std::time::Duration;

use kafka_protocol::messages::fetch_response::{
    AbortedTransaction, FetchableTopicResponse, PartitionData,
};
use kafka_protocol::messages::{BrokerId, FetchRequest, FetchResponse, ProducerId, TopicName};
use uuid::Uuid;

use super::{off_worker, sb, Ctx};
use crate::auth::{Operation, Resource};
use crate::errors;
use crate::planted::Bug;

/// Answers Fetch, waiting for data when asked to. The reads run on the blocking pool (they
/// take partition locks, see `lock_order`); the wait between them is async. A panic in a read
/// comes back as its message.
pub async fn handle(ctx: &Ctx, req: FetchRequest) -> Result<FetchResponse, String> {
    if ctx.version >= 7 && req.session_epoch > 0 {
        return Ok(FetchResponse::default().with_error_code(errors::FETCH_SESSION_ID_NOT_FOUND));
    }
    let wait = Duration::from_millis(req.max_wait_ms.max(0) as u64);
    let deadline = tokio::time::Instant::now() + wait;
    let min_bytes = req.min_bytes.max(0) as usize;
    let req = Arc::new(req);
    let read = || {
        let (ctx, req) = (ctx.clone(), req.clone());
        off_worker(move || build(&ctx, &req))
    };
    loop {
        let notified = ctx.state.appended.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let (response, bytes) = read().await?;
        if bytes >= min_bytes || tokio::time::Instant::now() >= deadline {
            return Ok(response);
        }
        tokio::select! {
            _ = notified => {}
            _ = tokio::time::sleep_until(deadline) => return Ok(read().await?.0),
        }
    }
}

fn build(ctx: &Ctx, req: &FetchRequest) -> (FetchResponse, usize) {
    let state = &ctx.state;
    let read_committed = req.isolation_level == 1;
    let mut remaining = if ctx.version >= 3 {
        req.max_bytes.max(0) as usize
    } else {
        usize::MAX
    };
    let mut total = 0usize;
    let mut topics = Vec::new();
    for t in &req.topics {
        let name = if ctx.version >= 13 {
            let registry = state.topics.read();
            registry.by_id(t.topic_id).map(|(n, _)| n.to_owned())
        } else {
            Some(t.topic.0.to_string())
        };
        let mut partitions = Vec::new();
        for p in &t.partitions {
            let mut aborted = None;
            let mut d = PartitionData::default()
                .with_partition_index(p.partition)
                .with_high_watermark(-1)
                .with_last_stable_offset(-1)
                .with_log_start_offset(-1)
                .with_preferred_read_replica(BrokerId(-1));
            let code = match &name {
                None => errors::UNKNOWN_TOPIC_ID,
                Some(n) if !ctx.allowed(Operation::Read, Resource::Topic(n)) => {
                    errors::TOPIC_AUTHORIZATION_FAILED
                }
                // Apache serves a consumer's Fetch v11+ from a follower too (KIP-392: the
                // request carries client metadata); older versions, and replicas, need the
                // leader.
                Some(n) => match match ctx.version >= 11 && req.replica_id.0 < 0 {
                    true => state.readable_partition(n, p.partition),
                    false => state.led_partition(n, p.partition),
                } {
                    Err(code) => code,
                    Ok(log) => {
                        let log = log.lock();
                        let hw = log.high_watermark();
                        let lso = log.last_stable_offset();
                        d = d
                            .with_high_watermark(hw)
                            .with_last_stable_offset(lso)
                            .with_log_start_offset(log.log_start_offset());
                        if p.fetch_offset < log.log_start_offset() || p.fetch_offset > hw {
                            errors::OFFSET_OUT_OF_RANGE
                        } else {
                            let budget = (p.partition_max_bytes.max(0) as usize).min(remaining);
                            let limit = if read_committed { lso } else { hw };
                            let mut records =
                                if (budget == 0 && total > 0) || p.fetch_offset >= limit {
                                    Vec::new()
                                } else {
                                    match log.read_below(p.fetch_offset, limit, budget) {
                                        Ok(r) => r,
                                        Err(e) => {
                                            tracing::warn!(error = %e, "read failed");
                                            Vec::new()
                                        }
                                    }
                                };
                            if state.config.planted.has(Bug::FetchSkipsABatch) {
                                records = skip_planted(records, n, p.partition);
                            }
                            if read_committed && ctx.version >= 4 {
                                let end =
                                    last_offset_in(&records).map_or(p.fetch_offset, |o| o + 1);
                                aborted = Some(
                                    log.aborted_between(p.fetch_offset, end)
                                        .into_iter()
                                        .map(|a| {
                                            AbortedTransaction::default()
                                                .with_producer_id(ProducerId(a.producer_id))
                                                .with_first_offset(a.first_offset)
                                        })
                                        .collect(),
                                );
                            }
                            total += records.len();
                            remaining = remaining.saturating_sub(records.len());
                            d = d.with_records(Some(records.into()));
                            errors::NONE
                        }
                    }
                },
            };
            // Apache answers null at read_uncommitted and a list (maybe empty) at
            // read_committed (checked live by scenario records-commit-visible-read-committed);
            // a partition refused before any read (unknown topic id, no READ) keeps the empty
            // list its response starts with (scenario sasl-init-idempotent-topic-acl).
            let refused = matches!(
                code,
                errors::UNKNOWN_TOPIC_ID | errors::TOPIC_AUTHORIZATION_FAILED
            );
            d = d.with_aborted_transactions(
                match (read_committed || refused) && ctx.version >= 4 {
                    true => Some(aborted.unwrap_or_default()),
                    false => None,
                },
            );
            partitions.push(d.with_error_code(code));
        }
        let mut topic = FetchableTopicResponse::default().with_partitions(partitions);
        topic = if ctx.version >= 13 {
            topic.with_topic_id(t.topic_id)
        } else {
            topic
                .with_topic(TopicName(sb(name.as_deref().unwrap_or_default())))
                .with_topic_id(Uuid::nil())
        };
        topics.push(topic);
    }
    (FetchResponse::default().with_responses(topics), total)
}

/// The batches [`Bug::FetchSkipsABatch`] leaves out, left out.
fn skip_planted(records: Vec<u8>, topic: &str, partition: i32) -> Vec<u8> {
    let Ok(batches) = crate::storage::batch::split(&records) else {
        return records;
    };
    let mut kept = Vec::with_capacity(records.len());
    for (h, range) in batches {
        // A marker (control batch) left out shows nothing: only records are skipped.
        let control = h.attributes & crate::storage::batch::ATTR_CONTROL != 0;
        if control || !crate::planted::skips(topic, partition, h.base_offset) {
            kept.extend_from_slice(&records[range]);
        }
    }
    kept
}

/// Offset of the last record in a run of whole batches.
fn last_offset_in(records: &[u8]) -> Option<i64> {
    crate::storage::batch::split(records)
        .ok()?
        .last()
        .map(|(h, _)| h.last_offset())
}
