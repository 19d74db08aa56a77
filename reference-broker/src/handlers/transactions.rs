//! The six transaction APIs, on the broker's own codecs (`crate::codec`) and the coordinator in
//! `crate::txn`. Gates run in Apache 3.7's order: WRITE on the transactional id (53), then the
//! group or topic checks, then the empty-id check (42), then the store.

use std::collections::BTreeMap;

use super::Ctx;
use crate::auth::{Operation, Resource};
use crate::codec::add_partitions_to_txn::{
    AddPartitionsToTxnPartitionResult, AddPartitionsToTxnTopicResult,
};
use crate::codec::txn_offset_commit::{
    TxnOffsetCommitResponsePartition, TxnOffsetCommitResponseTopic,
};
use crate::codec::write_txn_markers::{
    WritableTxnMarkerPartitionResult, WritableTxnMarkerResult, WritableTxnMarkerTopicResult,
};
use crate::codec::*;
use crate::errors;
use crate::storage::batch;
use crate::storage::offsets::Committed;

/// Topics no client may add to a transaction (Apache removes internal topics before the ACL
/// check, so they always get TOPIC_AUTHORIZATION_FAILED).
const INTERNAL_TOPICS: [&str; 2] = ["__consumer_offsets", "__transaction_state"];

/// Answers one of the six transaction APIs (dispatch decoded it and encodes the answer).
/// Blocking: the store writes and fsyncs slot files.
pub fn handle(ctx: &Ctx, request: Request) -> Response {
    match request {
        Request::InitProducerId(r) => Response::InitProducerId(init_producer_id(ctx, &r)),
        Request::AddPartitionsToTxn(r) => {
            Response::AddPartitionsToTxn(add_partitions_to_txn(ctx, &r))
        }
        Request::AddOffsetsToTxn(r) => Response::AddOffsetsToTxn(add_offsets_to_txn(ctx, &r)),
        Request::EndTxn(r) => Response::EndTxn(end_txn(ctx, &r)),
        Request::WriteTxnMarkers(r) => Response::WriteTxnMarkers(write_txn_markers(ctx, &r)),
        Request::TxnOffsetCommit(r) => Response::TxnOffsetCommit(txn_offset_commit(ctx, &r)),
    }
}

fn init_producer_id(ctx: &Ctx, req: &InitProducerIdRequest) -> InitProducerIdResponse {
    let failed = |code| InitProducerIdResponse {
        error_code: code,
        producer_id: -1,
        producer_epoch: -1,
        ..Default::default()
    };
    let state = &ctx.state;
    // kaas decodes the v3+ producer_id/producer_epoch but ignores them (spec deviation).
    match req.transactional_id.as_deref() {
        // Null or empty: the idempotent path, not ACL-gated (spec).
        None | Some("") => match state.pids.lock().allocate() {
            Ok(pid) => InitProducerIdResponse {
                producer_id: pid,
                producer_epoch: 0,
                ..Default::default()
            },
            Err(e) => {
                tracing::warn!(error = %e, "producer id allocation failed");
                failed(errors::COORDINATOR_NOT_AVAILABLE)
            }
        },
        Some(id) => {
            if !ctx.allowed(Operation::Write, Resource::TransactionalId(id)) {
                return failed(errors::TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
            }
            if !state.membership.owns(id) {
                return failed(errors::NOT_COORDINATOR);
            }
            match state
                .txn
                .init_producer_id(&**state, id, req.transaction_timeout_ms)
            {
                Ok((pid, epoch)) => InitProducerIdResponse {
                    producer_id: pid,
                    producer_epoch: epoch,
                    ..Default::default()
                },
                Err(code) => failed(code.code()),
            }
        }
    }
}

fn add_partitions_to_txn(ctx: &Ctx, req: &AddPartitionsToTxnRequest) -> AddPartitionsToTxnResponse {
    let state = &ctx.state;
    let id = req.transactional_id.as_str();
    let requested: Vec<(String, i32)> = req
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter().map(|p| (t.name.to_string(), *p)))
        .collect();
    if state
        .config
        .planted
        .has(crate::planted::Bug::PanicOnLastPartitionIndex)
    {
        for (_, p) in &requested {
            let _next = p
                .checked_add(1)
                .expect("planted: partition index + 1 overflows");
        }
    }
    let mut codes: BTreeMap<(String, i32), i16> = BTreeMap::new();
    if !ctx.allowed(Operation::Write, Resource::TransactionalId(id)) {
        for tp in &requested {
            codes.insert(tp.clone(), errors::TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
        }
    } else {
        // Per-partition gates; if any fails, the rest get OPERATION_NOT_ATTEMPTED.
        let mut failed = BTreeMap::new();
        for (t, p) in &requested {
            let code = if INTERNAL_TOPICS.contains(&t.as_str())
                || !ctx.allowed(Operation::Write, Resource::Topic(t))
            {
                errors::TOPIC_AUTHORIZATION_FAILED
            } else if state.partition(t, *p).is_none() {
                errors::UNKNOWN_TOPIC_OR_PARTITION
            } else {
                continue;
            };
            failed.insert((t.clone(), *p), code);
        }
        let outcome = if !failed.is_empty() {
            None
        } else if id.is_empty() {
            Some(errors::INVALID_REQUEST)
        } else if !state.membership.owns(id) {
            Some(errors::NOT_COORDINATOR)
        } else {
            Some(
                state
                    .txn
                    .add_partitions(id, req.producer_id, req.producer_epoch, &requested)
                    .code(),
            )
        };
        for tp in &requested {
            let code = match (outcome, failed.get(tp)) {
                (Some(c), _) => c,
                (None, Some(c)) => *c,
                (None, None) => errors::OPERATION_NOT_ATTEMPTED,
            };
            codes.insert(tp.clone(), code);
        }
    }
    let results = req
        .topics
        .iter()
        .map(|t| AddPartitionsToTxnTopicResult {
            name: t.name.clone(),
            results: t
                .partitions
                .iter()
                .map(|p| AddPartitionsToTxnPartitionResult {
                    partition_index: *p,
                    partition_error_code: codes[&(t.name.to_string(), *p)],
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        })
        .collect();
    AddPartitionsToTxnResponse {
        results,
        ..Default::default()
    }
}

fn add_offsets_to_txn(ctx: &Ctx, req: &AddOffsetsToTxnRequest) -> AddOffsetsToTxnResponse {
    let id = req.transactional_id.as_str();
    let code = if !ctx.allowed(Operation::Write, Resource::TransactionalId(id)) {
        errors::TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    } else if !ctx.allowed(Operation::Read, Resource::Group(&req.group_id)) {
        errors::GROUP_AUTHORIZATION_FAILED
    } else if id.is_empty() {
        errors::INVALID_REQUEST
    } else if !ctx.state.membership.owns(id) {
        errors::NOT_COORDINATOR
    } else {
        ctx.state
            .txn
            .add_offsets(id, req.producer_id, req.producer_epoch, &req.group_id)
            .code()
    };
    AddOffsetsToTxnResponse {
        error_code: code,
        ..Default::default()
    }
}

fn end_txn(ctx: &Ctx, req: &EndTxnRequest) -> EndTxnResponse {
    let id = req.transactional_id.as_str();
    let code = if !ctx.allowed(Operation::Write, Resource::TransactionalId(id)) {
        errors::TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    } else if id.is_empty() {
        errors::INVALID_REQUEST
    } else if !ctx.state.membership.owns(id) {
        errors::NOT_COORDINATOR
    } else {
        ctx.state
            .txn
            .end_txn(
                &*ctx.state,
                id,
                req.producer_id,
                req.producer_epoch,
                req.committed,
            )
            .code()
    };
    EndTxnResponse {
        error_code: code,
        ..Default::default()
    }
}

/// One producer's marker results: topic → (partition, error code).
type MarkerResults = BTreeMap<String, Vec<(i32, i16)>>;

fn write_txn_markers(ctx: &Ctx, req: &WriteTxnMarkersRequest) -> WriteTxnMarkersResponse {
    let state = &ctx.state;
    let authorized = ctx.allowed(Operation::ClusterAction, Resource::Cluster);
    // The response is keyed by producer id; duplicate producer ids are merged.
    let mut by_pid: Vec<(i64, MarkerResults)> = Vec::new();
    let mut wrote = false;
    for m in &req.markers {
        let slot = match by_pid.iter().position(|(pid, _)| *pid == m.producer_id) {
            Some(i) => i,
            None => {
                by_pid.push((m.producer_id, BTreeMap::new()));
                by_pid.len() - 1
            }
        };
        for t in &m.topics {
            for &p in &t.partition_indexes {
                let code = if !authorized {
                    errors::CLUSTER_AUTHORIZATION_FAILED
                } else {
                    match state.led_partition(&t.name, p) {
                        Err(code) => code,
                        Ok(log) => {
                            let mut log = log.lock();
                            // Apache's receiver checks: an older producer epoch, then an
                            // older coordinator epoch (scenarios write-txn-markers-stale-epoch
                            // and write-txn-markers-coordinator-epoch-fenced).
                            let known = log.producer(m.producer_id);
                            if known.is_some_and(|s| m.producer_epoch < s.epoch) {
                                errors::INVALID_PRODUCER_EPOCH
                            } else if known
                                .is_some_and(|s| m.coordinator_epoch < s.coordinator_epoch)
                            {
                                errors::TRANSACTION_COORDINATOR_FENCED
                            } else {
                                let marker = batch::control_batch(
                                    m.producer_id,
                                    m.producer_epoch,
                                    m.transaction_result,
                                    m.coordinator_epoch,
                                    super::now_ms(),
                                );
                                match log.append_control(marker) {
                                    Ok(_) => {
                                        wrote = true;
                                        errors::NONE
                                    }
                                    Err(e) => {
                                        tracing::warn!(error = %e, "marker append failed");
                                        errors::UNKNOWN_SERVER_ERROR
                                    }
                                }
                            }
                        }
                    }
                };
                by_pid[slot]
                    .1
                    .entry(t.name.to_string())
                    .or_default()
                    .push((p, code));
            }
        }
    }
    if wrote {
        state.appended.notify_waiters();
    }
    WriteTxnMarkersResponse {
        markers: by_pid
            .into_iter()
            .map(|(pid, topics)| WritableTxnMarkerResult {
                producer_id: pid,
                topics: topics
                    .into_iter()
                    .map(|(name, ps)| WritableTxnMarkerTopicResult {
                        name: name.into(),
                        partitions: ps
                            .into_iter()
                            .map(|(p, code)| WritableTxnMarkerPartitionResult {
                                partition_index: p,
                                error_code: code,
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn txn_offset_commit(ctx: &Ctx, req: &TxnOffsetCommitRequest) -> TxnOffsetCommitResponse {
    let state = &ctx.state;
    let id = req.transactional_id.as_str();
    let group = req.group_id.as_str();
    let all_code = if !ctx.allowed(Operation::Write, Resource::TransactionalId(id)) {
        Some(errors::TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    } else if !ctx.allowed(Operation::Read, Resource::Group(group)) {
        Some(errors::GROUP_AUTHORIZATION_FAILED)
    } else {
        None
    };
    // Per-partition gates first; the group and transaction checks apply to what remains.
    let mut codes: Vec<Vec<i16>> = Vec::new();
    let mut valid = Vec::new();
    for (ti, t) in req.topics.iter().enumerate() {
        let topic_allowed = ctx.allowed(Operation::Read, Resource::Topic(&t.name));
        let mut row = Vec::new();
        for (pi, p) in t.partitions.iter().enumerate() {
            let code = match all_code {
                Some(c) => c,
                None if !topic_allowed => errors::TOPIC_AUTHORIZATION_FAILED,
                None if state.partition(&t.name, p.partition_index).is_none() => {
                    errors::UNKNOWN_TOPIC_OR_PARTITION
                }
                None => {
                    valid.push((ti, pi));
                    errors::NONE
                }
            };
            row.push(code);
        }
        codes.push(row);
    }
    if !valid.is_empty() {
        // Every partition that passed its gates gets the group and transaction check's code,
        // or its own metadata check; what passes is staged.
        let mut stage = |group_code: errors::ErrorCode| {
            let group_code = group_code.code();
            let mut staged = Vec::new();
            for &(ti, pi) in &valid {
                let t = &req.topics[ti];
                let p = &t.partitions[pi];
                codes[ti][pi] = if group_code != errors::NONE {
                    group_code
                } else {
                    let metadata = p.committed_metadata.as_deref();
                    match Committed::from_commit(
                        p.committed_offset,
                        p.committed_leader_epoch,
                        metadata,
                    ) {
                        Ok(c) => {
                            staged.push(((t.name.to_string(), p.partition_index), c));
                            errors::NONE
                        }
                        Err(code) => code,
                    }
                };
            }
            // Bounded per transaction (`crate::limits`): over it, nothing of this request is
            // staged.
            let partitions: Vec<(String, i32)> = staged.iter().map(|(tp, _)| tp.clone()).collect();
            let after = state
                .offsets
                .lock()
                .staged_with(group, req.producer_id, &partitions);
            if let Err(refusal) = crate::limits::check_count(
                "Offsets staged by one transaction",
                after,
                state.config.limits.max_staged_offsets_per_txn,
                "max-staged-offsets-per-txn",
            ) {
                tracing::info!(transactional_id = id, reason = %refusal.message, "refused");
                for &(ti, pi) in &valid {
                    if codes[ti][pi] == errors::NONE {
                        codes[ti][pi] = refusal.code;
                    }
                }
                staged.clear();
            }
            staged
        };
        if group.is_empty() {
            stage(errors::ErrorCode(errors::INVALID_GROUP_ID));
        } else if id.is_empty() {
            // The preamble's shared mapping; Apache answers 42 too (scenario
            // txn-offset-commit-empty-id).
            stage(errors::ErrorCode(errors::INVALID_REQUEST));
        } else if !state.membership.owns(group) {
            // The group's coordinator, not the transaction's, takes TxnOffsetCommit.
            stage(errors::ErrorCode(errors::NOT_COORDINATOR));
        } else {
            state
                .txn
                .stage_offset_commit(&**state, id, req.producer_id, group, stage);
        }
    }
    TxnOffsetCommitResponse {
        topics: req
            .topics
            .iter()
            .zip(codes)
            .map(|(t, row)| TxnOffsetCommitResponseTopic {
                name: t.name.clone(),
                partitions: t
                    .partitions
                    .iter()
                    .zip(row)
                    .map(|(p, code)| TxnOffsetCommitResponsePartition {
                        partition_index: p.partition_index,
                        error_code: code,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}
