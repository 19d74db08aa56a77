//! Request handlers, one module per API family. Each takes the decoded request and returns the
//! response to encode at the request's version; errors the client should see are error codes
//! in the response, never a closed connection.

pub mod admin;
pub mod api_versions;
pub mod fetch;
pub mod find_coordinator;
pub mod group;
pub mod list_offsets;
pub mod metadata;
pub mod offsets;
pub mod produce;
pub mod transactions;

use std::sync::Arc;

use kafka_protocol::protocol::StrBytes;

use crate::auth::{Operation, Resource, ANONYMOUS};
use crate::broker::State;

/// What a handler knows about the request besides its body.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// Broker state.
    pub state: Arc<State>,
    /// The request's API version.
    pub version: i16,
    /// The client id from the request header.
    pub client_id: String,
}

impl Ctx {
    /// Asks the authorizer on behalf of this connection's principal.
    pub fn allowed(&self, operation: Operation, resource: Resource<'_>) -> bool {
        self.state
            .authorizer
            .authorize(ANONYMOUS, operation, resource)
    }
}

/// A kafka-protocol string from a `&str`.
pub fn sb(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_owned())
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
