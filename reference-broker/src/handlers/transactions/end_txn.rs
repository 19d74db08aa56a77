//! EndTxn (26): commits or aborts the open transaction.

use super::super::Ctx;
use crate::auth::{Operation, Resource};
use crate::codec::{EndTxnRequest, EndTxnResponse};
use crate::errors;
use crate::planted::Bug;

/// Answers EndTxn.
pub(super) fn handle(ctx: &Ctx, req: &EndTxnRequest) -> EndTxnResponse {
    let id = req.transactional_id.as_str();
    if ctx.state.config.planted.has(Bug::AbortAfterArmedTimeout)
        && crate::planted::armed()
        && !req.committed
    {
        eprintln!("planted: an abort after a timeout of i32::MAX ms was asked for; aborting");
        std::process::abort();
    }
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
    let code = match ctx
        .state
        .config
        .planted
        .has(Bug::EndTxnV0CommitAnswersInvalidState)
    {
        true if ctx.version == 0 && req.committed && code == errors::NONE => {
            errors::INVALID_TXN_STATE
        }
        _ => code,
    };
    EndTxnResponse {
        error_code: code,
        ..Default::default()
    }
}
