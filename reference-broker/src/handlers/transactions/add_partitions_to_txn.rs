//! AddPartitionsToTxn (24): partitions join the open transaction, each with its own code: internal
//! topics and unauthorised ones refused first, then the ones that do not exist.

use std::collections::BTreeMap;

use super::super::Ctx;
use super::INTERNAL_TOPICS;
use crate::auth::{Operation, Resource};
use crate::codec::add_partitions_to_txn::{
    AddPartitionsToTxnPartitionResult, AddPartitionsToTxnTopicResult,
};
use crate::codec::{AddPartitionsToTxnRequest, AddPartitionsToTxnResponse};
use crate::errors;

/// Answers AddPartitionsToTxn.
pub(super) fn handle(ctx: &Ctx, req: &AddPartitionsToTxnRequest) -> AddPartitionsToTxnResponse {
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
