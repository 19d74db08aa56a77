//! SaslHandshake: how a scenario step's fields become its request, and its answer the tree a
//! transcript records.

use kafka_protocol::messages::*;
use serde_json::{json, Value};

use super::request::Fields;

/// SaslHandshake's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "SaslHandshake",
    key: ApiKey::SaslHandshake,
    cap: None,
    codes: &[],
    build,
    read: super::Reading::Typed(read),
};

/// The request at `version` from a step's fields.
fn build(_version: i16, f: &Fields<'_>) -> Result<RequestKind, String> {
    Ok(RequestKind::SaslHandshake(
        SaslHandshakeRequest::default().with_mechanism(f.str("mechanism")?),
    ))
}

/// The answer at `version` as a tree, when it is SaslHandshake's.
fn read(response: &ResponseKind, _version: i16) -> Option<Value> {
    let ResponseKind::SaslHandshake(r) = response else {
        return None;
    };
    Some(json!({
        "error_code": r.error_code,
        "mechanisms": r.mechanisms.iter().map(|m| m.as_str()).collect::<Vec<_>>(),
    }))
}
