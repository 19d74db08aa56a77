//! InitProducerId (22): a producer id and epoch for a transactional id (fencing the last one), or a
//! fresh idempotent producer id when the id is null or empty.

use super::super::Ctx;
use crate::auth::{Operation, Resource};
use crate::codec::{InitProducerIdRequest, InitProducerIdResponse};
use crate::errors;

/// Answers InitProducerId.
pub(super) fn handle(ctx: &Ctx, req: &InitProducerIdRequest) -> InitProducerIdResponse {
    let failed = |code| InitProducerIdResponse {
        error_code: code,
        producer_id: -1,
        producer_epoch: -1,
        ..Default::default()
    };
    let state = &ctx.state;
    if state
        .config
        .planted
        .has(crate::planted::Bug::AbortAfterArmedTimeout)
        && req.transaction_timeout_ms == i32::MAX
    {
        crate::planted::arm();
    }
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
