//! The six transaction APIs, one file each, on the broker's own codecs (`crate::codec`, where
//! each API's versions are written) and the coordinator in `crate::txn`. Gates run in Apache
//! 3.7's order: WRITE on the transactional id (53), then the group or topic checks, then the
//! empty-id check (42), then the store.

mod add_offsets_to_txn;
mod add_partitions_to_txn;
mod end_txn;
mod init_producer_id;
mod txn_offset_commit;
mod write_txn_markers;

use super::Ctx;
use crate::codec::{Request, Response};

/// Topics no client may add to a transaction (Apache removes internal topics before the ACL
/// check, so they always get TOPIC_AUTHORIZATION_FAILED).
const INTERNAL_TOPICS: [&str; 2] = ["__consumer_offsets", "__transaction_state"];

/// Answers one of the six transaction APIs (dispatch decoded it and encodes the answer).
/// Blocking: the store writes and fsyncs slot files.
pub fn handle(ctx: &Ctx, request: Request) -> Response {
    match request {
        Request::InitProducerId(r) => Response::InitProducerId(init_producer_id::handle(ctx, &r)),
        Request::AddPartitionsToTxn(r) => {
            Response::AddPartitionsToTxn(add_partitions_to_txn::handle(ctx, &r))
        }
        Request::AddOffsetsToTxn(r) => {
            Response::AddOffsetsToTxn(add_offsets_to_txn::handle(ctx, &r))
        }
        Request::EndTxn(r) => Response::EndTxn(end_txn::handle(ctx, &r)),
        Request::WriteTxnMarkers(r) => {
            Response::WriteTxnMarkers(write_txn_markers::handle(ctx, &r))
        }
        Request::TxnOffsetCommit(r) => {
            Response::TxnOffsetCommit(txn_offset_commit::handle(ctx, &r))
        }
    }
}
