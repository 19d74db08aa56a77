//! ApiVersions: how a scenario step's fields become its request, and its answer the tree a
//! transcript records.

use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use serde_json::{json, Value};

use super::request::Fields;

/// ApiVersions's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "ApiVersions",
    key: ApiKey::ApiVersions,
    cap: None,
    codes: &[],
    build,
    read: super::Reading::Typed(read),
};

/// The request at `version` from a step's fields.
fn build(_version: i16, _f: &Fields<'_>) -> Result<RequestKind, String> {
    Ok(RequestKind::ApiVersions(
        ApiVersionsRequest::default()
            .with_client_software_name(StrBytes::from_static_str("kconform"))
            .with_client_software_version(StrBytes::from_static_str(env!("CARGO_PKG_VERSION"))),
    ))
}

/// The answer at `version` as a tree, when it is ApiVersions's.
fn read(response: &ResponseKind, _version: i16) -> Option<Value> {
    let ResponseKind::ApiVersions(r) = response else {
        return None;
    };
    // The transaction APIs' ranges only: the brokers serve different sets of other APIs,
    // which is not what this harness checks.
    Some(json!({
        "error_code": r.error_code,
        "throttle_time_ms": r.throttle_time_ms,
        "transaction_apis": r.api_keys.iter()
            .filter(|k| (22..=28).contains(&k.api_key) && k.api_key != 23)
            .map(|k| (crate::wire::error_codes::api_name(k.api_key), json!({
                "min_version": k.min_version,
                "max_version": k.max_version,
            }))).collect::<serde_json::Map<_, _>>(),
    }))
}
