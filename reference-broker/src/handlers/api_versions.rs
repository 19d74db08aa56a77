//! ApiVersions: the ranges Apache 3.7 serves, for every API this broker serves.

use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::{ApiVersionsRequest, ApiVersionsResponse};

use super::Ctx;
use crate::apis::served_apis;
use crate::errors;

fn versions() -> Vec<ApiVersion> {
    let mut v: Vec<ApiVersion> = served_apis()
        .map(|(api, min, max)| {
            ApiVersion::default()
                .with_api_key(api as i16)
                .with_min_version(min)
                .with_max_version(max)
        })
        .collect();
    v.sort_by_key(|a| a.api_key);
    v
}

/// Answers ApiVersions.
pub fn handle(_ctx: &Ctx, _req: ApiVersionsRequest) -> ApiVersionsResponse {
    ApiVersionsResponse::default()
        .with_error_code(errors::NONE)
        .with_api_keys(versions())
}

/// The v0 answer to an ApiVersions version this broker does not know (KIP-511).
pub fn unsupported_version() -> ApiVersionsResponse {
    ApiVersionsResponse::default()
        .with_error_code(errors::UNSUPPORTED_VERSION)
        .with_api_keys(versions())
}
