//! DeleteGroups: how a scenario step's fields become its request, and its answer the tree a
//! transcript records.

use kafka_protocol::messages::*;
use serde_json::{json, Value};

use super::request::Fields;

/// DeleteGroups's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "DeleteGroups",
    key: ApiKey::DeleteGroups,
    cap: None,
    codes: &[],
    build,
    read: super::Reading::Typed(read),
};

/// The request at `version` from a step's fields.
fn build(_version: i16, f: &Fields<'_>) -> Result<RequestKind, String> {
    Ok(RequestKind::DeleteGroups(
        DeleteGroupsRequest::default()
            .with_groups_names(f.strs("groups")?.into_iter().map(GroupId).collect()),
    ))
}

/// The answer at `version` as a tree, when it is DeleteGroups's.
fn read(response: &ResponseKind, _version: i16) -> Option<Value> {
    let ResponseKind::DeleteGroups(r) = response else {
        return None;
    };
    Some({
        let mut results: Vec<Value> = r
            .results
            .iter()
            .map(|g| {
                json!({
                    "group_id": g.group_id.as_str(),
                    "error_code": g.error_code,
                })
            })
            .collect();
        results.sort_by(|a, b| a["group_id"].as_str().cmp(&b["group_id"].as_str()));
        json!({ "throttle_time_ms": r.throttle_time_ms, "results": results })
    })
}
