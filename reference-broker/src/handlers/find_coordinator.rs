//! FindCoordinator: the broker the cluster's routing picks for the key (`crate::cluster`); a
//! broker alone coordinates every group and every transactional id.

use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::{BrokerId, FindCoordinatorRequest, FindCoordinatorResponse};
use kafka_protocol::protocol::StrBytes;

use super::{sb, Ctx};
use crate::auth::{Operation, Resource};
use crate::cluster::Peer;
use crate::errors;

/// The answer for one key: the coordinating broker, or an error code.
fn lookup(ctx: &Ctx, key: &str, key_type: i8) -> Result<Peer, i16> {
    let allowed = match key_type {
        0 => ctx.allowed(Operation::Describe, Resource::Group(key)),
        1 => ctx.allowed(Operation::Describe, Resource::TransactionalId(key)),
        _ => return Err(errors::INVALID_REQUEST),
    };
    match (allowed, key_type) {
        (false, 0) => Err(errors::GROUP_AUTHORIZATION_FAILED),
        (false, _) => Err(errors::TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
        (true, key_type) => {
            if key_type == 0 {
                // Apache creates __consumer_offsets on the first group lookup.
                ctx.state
                    .offsets_topic
                    .store(true, std::sync::atomic::Ordering::Relaxed);
            }
            ctx.state
                .membership
                .coordinator(key)
                .ok_or(errors::COORDINATOR_NOT_AVAILABLE)
        }
    }
}

/// The message Apache's `Errors` gives a code, which FindCoordinator v1-3 answer beside it
/// (seen live on the authorization failures).
fn message(code: i16) -> Option<&'static str> {
    match code {
        errors::GROUP_AUTHORIZATION_FAILED => Some("Group authorization failed."),
        errors::TRANSACTIONAL_ID_AUTHORIZATION_FAILED => {
            Some("Transactional Id authorization failed.")
        }
        _ => None,
    }
}

/// Answers FindCoordinator (v0–3 one key, v4 a batch of keys).
pub fn handle(ctx: &Ctx, req: FindCoordinatorRequest) -> FindCoordinatorResponse {
    let host = |p: &Peer| sb(&p.addr.ip().to_string());
    let port = |p: &Peer| i32::from(p.addr.port());
    if ctx.version >= 4 {
        if !matches!(req.key_type, 0 | 1) {
            return FindCoordinatorResponse::default().with_error_code(errors::INVALID_REQUEST);
        }
        let coordinators = req
            .coordinator_keys
            .iter()
            .map(|k| {
                // Apache 3.7 answers an empty (not null) per-key error message (seen live).
                let c = Coordinator::default().with_key(k.clone());
                match lookup(ctx, k, req.key_type) {
                    Ok(peer) => c
                        .with_node_id(BrokerId(peer.id))
                        .with_host(host(&peer))
                        .with_port(port(&peer)),
                    Err(code) => c
                        .with_error_code(code)
                        .with_node_id(BrokerId(-1))
                        .with_host(StrBytes::default())
                        .with_port(-1),
                }
            })
            .collect();
        return FindCoordinatorResponse::default().with_coordinators(coordinators);
    }
    match lookup(ctx, &req.key, req.key_type) {
        Ok(peer) => FindCoordinatorResponse::default()
            .with_node_id(BrokerId(peer.id))
            .with_host(host(&peer))
            .with_port(port(&peer))
            .with_error_message(if ctx.version >= 1 {
                Some(sb("NONE"))
            } else {
                None
            }),
        Err(code) => FindCoordinatorResponse::default()
            .with_error_code(code)
            .with_error_message(match ctx.version >= 1 {
                true => message(code).map(sb),
                false => None,
            })
            .with_node_id(BrokerId(-1))
            .with_port(-1),
    }
}
