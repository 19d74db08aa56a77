//! TxnOffsetCommit (28): consumer offsets staged inside the transaction, committed or dropped with
//! it.

use super::super::Ctx;
use crate::auth::{Operation, Resource};
use crate::codec::txn_offset_commit::{
    TxnOffsetCommitResponsePartition, TxnOffsetCommitResponseTopic,
};
use crate::codec::{TxnOffsetCommitRequest, TxnOffsetCommitResponse};
use crate::errors;
use crate::storage::offsets::Committed;

/// Answers TxnOffsetCommit.
pub(super) fn handle(ctx: &Ctx, req: &TxnOffsetCommitRequest) -> TxnOffsetCommitResponse {
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
