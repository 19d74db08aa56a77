//! The six transaction APIs, on the broker's own codecs (`crate::codec`).
//!
//! So far: InitProducerId's idempotent path (null or empty transactional id → a fresh PID at
//! epoch 0 from the persisted allocator; the kaas spec documents that this path is not
//! ACL-gated). The transaction coordinator comes with its own issue; until then the
//! transactional path answers COORDINATOR_NOT_AVAILABLE, what kaas answers while its store is
//! not wired.

use std::sync::Arc;

use bytes::Bytes;

use crate::broker::State;
use crate::codec::header::{decode_request_ignoring_trailing, encode_response};
use crate::codec::{InitProducerIdRequest, InitProducerIdResponse, Request, Response};
use crate::dispatch::FrameError;
use crate::errors;

/// Handles a frame of one of the six transaction APIs.
pub async fn handle(state: &Arc<State>, frame: Bytes) -> Result<Option<Vec<u8>>, FrameError> {
    let malformed = |reason: String| FrameError::Malformed {
        api: i16::from_be_bytes([frame[0], frame[1]]),
        version: i16::from_be_bytes([frame[2], frame[3]]),
        reason,
    };
    // Apache ignores bytes after a request body; so does the broker.
    let (header, decoded, _trailing) =
        decode_request_ignoring_trailing(&frame).map_err(|e| malformed(e.to_string()))?;
    let version = header.api_version;
    let response = match decoded.message {
        Request::InitProducerId(r) => Response::InitProducerId(init_producer_id(state, &r)),
        other => return Err(malformed(format!("{:?} is not served yet", other.api()))),
    };
    encode_response(header.correlation_id, version, &response)
        .map(Some)
        .map_err(|e| malformed(e.to_string()))
}

fn init_producer_id(state: &State, req: &InitProducerIdRequest) -> InitProducerIdResponse {
    let failed = |code| InitProducerIdResponse {
        error_code: code,
        producer_id: -1,
        producer_epoch: -1,
        ..Default::default()
    };
    if (req.producer_id == -1) != (req.producer_epoch == -1) {
        return failed(errors::INVALID_REQUEST);
    }
    match req.transactional_id.as_deref() {
        None | Some("") => match state.pids.lock().expect("pid allocator lock").allocate() {
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
        Some(_) => failed(errors::COORDINATOR_NOT_AVAILABLE),
    }
}
