//! Request handlers, one module per API family. Each takes the decoded request and returns the
//! response to encode at the request's version; errors the client should see are error codes
//! in the response, never a closed connection.

pub mod acls;
pub mod admin;
pub mod api_versions;
pub mod configs;
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

use crate::auth::{Operation, Resource};
use crate::state::State;

/// What a handler knows about the request besides its body.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// Broker state.
    pub state: Arc<State>,
    /// The request's API version.
    pub version: i16,
    /// The client id from the request header.
    pub client_id: String,
    /// The connection's principal (`User:ANONYMOUS` before or without authentication).
    pub principal: Arc<str>,
}

impl Ctx {
    /// Asks the authorizer on behalf of this connection's principal.
    pub fn allowed(&self, operation: Operation, resource: Resource<'_>) -> bool {
        self.state
            .authorizer
            .authorize(&self.principal, operation, resource)
    }
}

/// Runs a handler's synchronous part on the blocking pool, as `lock_order` requires: the locks
/// it takes and the fsyncs it waits for never park an async worker, so a slow or stuck request
/// cannot stop the broker from answering others. A panic in it comes back as its message.
pub async fn off_worker<R: Send + 'static>(
    f: impl FnOnce() -> R + Send + 'static,
) -> Result<R, String> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| match e.try_into_panic() {
            Ok(p) => p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panicked".into()),
            Err(e) => e.to_string(),
        })
}

/// A kafka-protocol string from a `&str`.
pub fn sb(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_owned())
}

pub use crate::storage::now_ms;
