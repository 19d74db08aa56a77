//! AddOffsetsToTxn (25): a consumer group joins the open transaction.

use super::super::Ctx;
use crate::auth::{Operation, Resource};
use crate::codec::{AddOffsetsToTxnRequest, AddOffsetsToTxnResponse};
use crate::errors;

/// Answers AddOffsetsToTxn.
pub(super) fn handle(ctx: &Ctx, req: &AddOffsetsToTxnRequest) -> AddOffsetsToTxnResponse {
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
