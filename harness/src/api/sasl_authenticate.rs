//! SaslAuthenticate: how a scenario step's fields become its request, and its answer the tree a
//! transcript records.

use kafka_protocol::messages::*;
use serde_json::{json, Value};

use super::request::Fields;

/// SaslAuthenticate's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "SaslAuthenticate",
    key: ApiKey::SaslAuthenticate,
    cap: None,
    codes: &[],
    build,
    read: super::Reading::Typed(read),
};

/// The request at `version` from a step's fields.
fn build(_version: i16, f: &Fields<'_>) -> Result<RequestKind, String> {
    Ok(RequestKind::SaslAuthenticate(
        SaslAuthenticateRequest::default()
            .with_auth_bytes(bytes::Bytes::from(f.str("auth_bytes")?.as_bytes().to_vec())),
    ))
}

/// The answer at `version` as a tree, when it is SaslAuthenticate's.
fn read(response: &ResponseKind, _version: i16) -> Option<Value> {
    let ResponseKind::SaslAuthenticate(r) = response else {
        return None;
    };
    // The tokens of a PLAIN exchange are empty; a scenario sends no SCRAM token itself
    // (its server messages carry a random nonce and salt), so the bytes read as text.
    Some(json!({
        "error_code": r.error_code,
        "error_message": r.error_message.as_deref(),
        "auth_bytes": String::from_utf8_lossy(&r.auth_bytes),
        "session_lifetime_ms": r.session_lifetime_ms,
    }))
}
