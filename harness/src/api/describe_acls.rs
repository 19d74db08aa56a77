//! DescribeAcls: how a scenario step's fields become its request, and its answer the tree a
//! transcript records.

use kafka_protocol::messages::*;
use serde_json::{json, Value};

use super::request::Fields;

/// DescribeAcls's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "DescribeAcls",
    key: ApiKey::DescribeAcls,
    cap: None,
    codes: &[],
    build,
    read: super::Reading::Typed(read),
};

/// The request at `version` from a step's fields.
fn build(_version: i16, f: &Fields<'_>) -> Result<RequestKind, String> {
    Ok(RequestKind::DescribeAcls(
        DescribeAclsRequest::default()
            .with_resource_type_filter(f.int("resource_type_filter", 1)? as i8)
            .with_resource_name_filter(f.opt_str("resource_name_filter")?)
            .with_pattern_type_filter(f.int("pattern_type_filter", 3)? as i8)
            .with_principal_filter(f.opt_str("principal_filter")?)
            .with_host_filter(f.opt_str("host_filter")?)
            .with_operation(f.int("operation", 1)? as i8)
            .with_permission_type(f.int("permission_type", 1)? as i8),
    ))
}

/// The answer at `version` as a tree, when it is DescribeAcls's.
fn read(response: &ResponseKind, _version: i16) -> Option<Value> {
    let ResponseKind::DescribeAcls(r) = response else {
        return None;
    };
    // Apache groups the bindings in a hash map: ordered here by resource, then principal.
    Some({
        let mut resources: Vec<Value> = r
            .resources
            .iter()
            .map(|res| {
                let mut acls: Vec<Value> = res
                    .acls
                    .iter()
                    .map(|a| {
                        json!({
                            "principal": a.principal.as_str(),
                            "host": a.host.as_str(),
                            "operation": a.operation,
                            "permission_type": a.permission_type,
                        })
                    })
                    .collect();
                acls.sort_by_key(|a| a.to_string());
                json!({
                    "resource_type": res.resource_type,
                    "resource_name": res.resource_name.as_str(),
                    "pattern_type": res.pattern_type,
                    "acls": acls,
                })
            })
            .collect();
        resources.sort_by_key(|r| r.to_string());
        json!({
            "throttle_time_ms": r.throttle_time_ms,
            "error_code": r.error_code,
            "error_message": r.error_message.as_deref(),
            "resources": resources,
        })
    })
}
