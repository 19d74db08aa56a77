//! A security scenario's ACLs, set up by the super user before its steps and removed after,
//! identically on every secured target: CreateAcls, then DescribeAcls until each binding
//! shows (Apache applies a created ACL through its metadata log, a few milliseconds later),
//! and DeleteAcls of exactly those bindings at the end.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use kafka_protocol::messages::create_acls_request::AclCreation;
use kafka_protocol::messages::delete_acls_request::DeleteAclsFilter;
use kafka_protocol::messages::{
    ApiKey, CreateAclsRequest, DeleteAclsRequest, DescribeAclsRequest, RequestKind, ResponseKind,
};
use kafka_protocol::protocol::StrBytes;

use crate::wire::client::Connection;
use crate::wire::sasl::super_user;

/// Kafka's operation names and their `AclOperation` codes.
pub const ACL_OPERATIONS: &[(&str, i8)] = &[
    ("All", 2),
    ("Read", 3),
    ("Write", 4),
    ("Create", 5),
    ("Delete", 6),
    ("Alter", 7),
    ("Describe", 8),
    ("ClusterAction", 9),
    ("DescribeConfigs", 10),
    ("AlterConfigs", 11),
    ("IdempotentWrite", 12),
];

/// An ACL as the wire carries it (`CreateAcls`, and the filter that finds it again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AclWire {
    /// `ResourceType` code.
    pub resource_type: i8,
    /// Resource name.
    pub resource_name: String,
    /// `PatternType` code.
    pub pattern_type: i8,
    /// `User:<name>`.
    pub principal: String,
    /// `AclOperation` code.
    pub operation: i8,
    /// `AclPermissionType` code.
    pub permission: i8,
}

/// The version of the three ACL APIs kconform sends (Apache 3.7 and kaas-ref serve 0 to 3).
const VERSION: i16 = 3;

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_owned())
}

/// Creates `acls` through the first of `brokers` and waits (within `deadline`) until every
/// broker lists every one (a cluster's brokers apply a new ACL each a little later).
pub async fn create(
    brokers: &[SocketAddr],
    deadline: Duration,
    acls: &[AclWire],
) -> Result<(), String> {
    let Some(&addr) = brokers.first() else {
        return Err("no broker to create ACLs on".into());
    };
    let mut conn = super_user(addr, deadline).await?;
    let creations = acls
        .iter()
        .map(|a| {
            AclCreation::default()
                .with_resource_type(a.resource_type)
                .with_resource_name(s(&a.resource_name))
                .with_resource_pattern_type(a.pattern_type)
                .with_principal(s(&a.principal))
                .with_host(s("*"))
                .with_operation(a.operation)
                .with_permission_type(a.permission)
        })
        .collect();
    let request = RequestKind::CreateAcls(CreateAclsRequest::default().with_creations(creations));
    match conn
        .send(ApiKey::CreateAcls, VERSION, &request)
        .await
        .map_err(|e| format!("CreateAcls: {e}"))?
    {
        ResponseKind::CreateAcls(r) => {
            for (acl, result) in acls.iter().zip(&r.results) {
                if result.error_code != 0 {
                    return Err(format!(
                        "CreateAcls refused {acl:?}: error {} ({})",
                        result.error_code,
                        result.error_message.as_deref().unwrap_or("no message")
                    ));
                }
            }
        }
        other => return Err(format!("CreateAcls answered {other:?}")),
    }
    wait_everywhere(brokers, deadline, acls, true).await
}

/// Waits (within `deadline`) until every one of `brokers` lists every one of `acls`
/// (`present`), or none of them.
async fn wait_everywhere(
    brokers: &[SocketAddr],
    deadline: Duration,
    acls: &[AclWire],
    present: bool,
) -> Result<(), String> {
    let started = Instant::now();
    for &broker in brokers {
        let mut conn = super_user(broker, deadline).await?;
        wait_listed(&mut conn, started, deadline, acls, present).await?;
    }
    Ok(())
}

/// Asks `conn`'s broker until it lists every one of `acls` (`present`) or none of them, or
/// `deadline` after `started`.
async fn wait_listed(
    conn: &mut Connection,
    started: Instant,
    deadline: Duration,
    acls: &[AclWire],
    present: bool,
) -> Result<(), String> {
    for acl in acls {
        loop {
            let request = RequestKind::DescribeAcls(
                DescribeAclsRequest::default()
                    .with_resource_type_filter(acl.resource_type)
                    .with_resource_name_filter(Some(s(&acl.resource_name)))
                    .with_pattern_type_filter(acl.pattern_type)
                    .with_principal_filter(Some(s(&acl.principal)))
                    .with_host_filter(Some(s("*")))
                    .with_operation(acl.operation)
                    .with_permission_type(acl.permission),
            );
            let listed = match conn
                .send(ApiKey::DescribeAcls, VERSION, &request)
                .await
                .map_err(|e| format!("DescribeAcls: {e}"))?
            {
                ResponseKind::DescribeAcls(r) if r.error_code == 0 => !r.resources.is_empty(),
                ResponseKind::DescribeAcls(r) => {
                    return Err(format!("DescribeAcls answered error {}", r.error_code))
                }
                other => return Err(format!("DescribeAcls answered {other:?}")),
            };
            if listed == present {
                break;
            }
            if started.elapsed() > deadline {
                return Err(match present {
                    true => {
                        format!("the ACL {acl:?} was created but not listed within {deadline:?}")
                    }
                    false => {
                        format!("the ACL {acl:?} was deleted but still listed after {deadline:?}")
                    }
                });
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    Ok(())
}

/// Deletes exactly `acls` through the first of `brokers`, and waits (within `deadline`) until
/// no broker lists them, so that the next scenario meets none of them.
pub async fn delete(
    brokers: &[SocketAddr],
    deadline: Duration,
    acls: &[AclWire],
) -> Result<(), String> {
    let Some(&addr) = brokers.first() else {
        return Err("no broker to delete ACLs on".into());
    };
    let mut conn = super_user(addr, deadline).await?;
    let filters = acls
        .iter()
        .map(|a| {
            DeleteAclsFilter::default()
                .with_resource_type_filter(a.resource_type)
                .with_resource_name_filter(Some(s(&a.resource_name)))
                .with_pattern_type_filter(a.pattern_type)
                .with_principal_filter(Some(s(&a.principal)))
                .with_host_filter(Some(s("*")))
                .with_operation(a.operation)
                .with_permission_type(a.permission)
        })
        .collect();
    let request = RequestKind::DeleteAcls(DeleteAclsRequest::default().with_filters(filters));
    match conn
        .send(ApiKey::DeleteAcls, VERSION, &request)
        .await
        .map_err(|e| format!("DeleteAcls: {e}"))?
    {
        ResponseKind::DeleteAcls(r) => {
            if let Some(f) = r.filter_results.iter().find(|f| f.error_code != 0) {
                return Err(format!("DeleteAcls answered error {}", f.error_code));
            }
        }
        other => return Err(format!("DeleteAcls answered {other:?}")),
    }
    wait_everywhere(brokers, deadline, acls, false).await
}
