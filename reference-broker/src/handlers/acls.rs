//! CreateAcls (30), DescribeAcls (29) and DeleteAcls (31): the ACLs of a broker whose
//! security is on, managed over the wire as Apache's are, so that kconform sets up both
//! brokers the same way. Creating and deleting need ALTER on the cluster, describing needs
//! DESCRIBE; a broker without security answers SECURITY_DISABLED (54), as Apache without an
//! authorizer does.

use kafka_protocol::messages::create_acls_response::AclCreationResult;
use kafka_protocol::messages::delete_acls_response::{
    DeleteAclsFilterResult, DeleteAclsMatchingAcl,
};
use kafka_protocol::messages::describe_acls_response::{AclDescription, DescribeAclsResource};
use kafka_protocol::messages::{
    CreateAclsRequest, CreateAclsResponse, DeleteAclsRequest, DeleteAclsResponse,
    DescribeAclsRequest, DescribeAclsResponse,
};
use kafka_protocol::protocol::StrBytes;

use super::{sb, Ctx};
use crate::acl::{invalid, Binding, Filter};
use crate::auth::{Operation, Resource};

/// The ACL file could not be written (a full disk): the change is not made.
const UNKNOWN_SERVER_ERROR: i16 = -1;
const CLUSTER_AUTHORIZATION_FAILED: i16 = 31;
const INVALID_REQUEST: i16 = 42;
const SECURITY_DISABLED: i16 = 54;
const NO_AUTHORIZER: &str = "No Authorizer is configured.";

/// Why a whole request is refused: no authorizer, or no permission on the cluster.
fn refused(ctx: &Ctx, operation: Operation) -> Option<(i16, String)> {
    if ctx.state.acls.is_none() {
        return Some((SECURITY_DISABLED, NO_AUTHORIZER.into()));
    }
    (!ctx.allowed(operation, Resource::Cluster)).then(|| {
        (
            CLUSTER_AUTHORIZATION_FAILED,
            format!("Request of {} is not authorized.", ctx.principal),
        )
    })
}

fn text(s: &StrBytes) -> String {
    s.as_str().to_owned()
}

/// CreateAcls: each creation is stored (once), or refused with its reason.
pub fn create(ctx: &Ctx, r: CreateAclsRequest) -> CreateAclsResponse {
    let refusal = refused(ctx, Operation::Alter);
    let results = r
        .creations
        .iter()
        .map(|c| {
            let b = Binding {
                resource_type: c.resource_type,
                resource_name: text(&c.resource_name),
                pattern_type: c.resource_pattern_type,
                principal: text(&c.principal),
                host: text(&c.host),
                operation: c.operation,
                permission: c.permission_type,
            };
            let (code, message) = match (&refusal, invalid(&b), &ctx.state.acls) {
                (Some((code, m)), _, _) => (*code, Some(m.clone())),
                (None, Some(why), _) => (INVALID_REQUEST, Some(why.to_owned())),
                (None, None, Some(store)) => match store.create(b) {
                    Ok(()) => (0, None),
                    Err(e) => (UNKNOWN_SERVER_ERROR, Some(e.to_string())),
                },
                (None, None, None) => (SECURITY_DISABLED, Some(NO_AUTHORIZER.into())),
            };
            AclCreationResult::default()
                .with_error_code(code)
                .with_error_message(message.map(StrBytes::from_string))
        })
        .collect();
    CreateAclsResponse::default().with_results(results)
}

fn filter(
    resource_type: i8,
    resource_name: &Option<StrBytes>,
    pattern_type: i8,
    principal: &Option<StrBytes>,
    host: &Option<StrBytes>,
    operation: i8,
    permission: i8,
) -> Filter {
    Filter {
        resource_type,
        resource_name: resource_name.as_ref().map(text),
        pattern_type,
        principal: principal.as_ref().map(text),
        host: host.as_ref().map(text),
        operation,
        permission,
    }
}

/// DescribeAcls: the bindings the filter selects, grouped by resource pattern.
pub fn describe(ctx: &Ctx, r: DescribeAclsRequest) -> DescribeAclsResponse {
    if let Some((code, message)) = refused(ctx, Operation::Describe) {
        return DescribeAclsResponse::default()
            .with_error_code(code)
            .with_error_message(Some(StrBytes::from_string(message)));
    }
    let f = filter(
        r.resource_type_filter,
        &r.resource_name_filter,
        r.pattern_type_filter,
        &r.principal_filter,
        &r.host_filter,
        r.operation,
        r.permission_type,
    );
    let found = ctx
        .state
        .acls
        .as_ref()
        .map(|s| s.describe(&f))
        .unwrap_or_default();
    let mut resources: Vec<DescribeAclsResource> = Vec::new();
    for b in found {
        let description = AclDescription::default()
            .with_principal(sb(&b.principal))
            .with_host(sb(&b.host))
            .with_operation(b.operation)
            .with_permission_type(b.permission);
        let same = |res: &&mut DescribeAclsResource| {
            res.resource_type == b.resource_type
                && res.resource_name.as_str() == b.resource_name
                && res.pattern_type == b.pattern_type
        };
        match resources.iter_mut().find(same) {
            Some(res) => res.acls.push(description),
            None => resources.push(
                DescribeAclsResource::default()
                    .with_resource_type(b.resource_type)
                    .with_resource_name(sb(&b.resource_name))
                    .with_pattern_type(b.pattern_type)
                    .with_acls(vec![description]),
            ),
        }
    }
    DescribeAclsResponse::default().with_resources(resources)
}

/// DeleteAcls: per filter, the bindings it removed.
pub fn delete(ctx: &Ctx, r: DeleteAclsRequest) -> DeleteAclsResponse {
    let refusal = refused(ctx, Operation::Alter);
    let results = r
        .filters
        .iter()
        .map(|d| {
            if let Some((code, message)) = &refusal {
                return DeleteAclsFilterResult::default()
                    .with_error_code(*code)
                    .with_error_message(Some(StrBytes::from_string(message.clone())));
            }
            let f = filter(
                d.resource_type_filter,
                &d.resource_name_filter,
                d.pattern_type_filter,
                &d.principal_filter,
                &d.host_filter,
                d.operation,
                d.permission_type,
            );
            let gone = match ctx.state.acls.as_ref().map(|s| s.delete(&f)) {
                Some(Ok(gone)) => gone,
                Some(Err(e)) => {
                    return DeleteAclsFilterResult::default()
                        .with_error_code(UNKNOWN_SERVER_ERROR)
                        .with_error_message(Some(StrBytes::from_string(e.to_string())))
                }
                None => Vec::new(),
            };
            DeleteAclsFilterResult::default().with_matching_acls(
                gone.iter()
                    .map(|b| {
                        DeleteAclsMatchingAcl::default()
                            .with_resource_type(b.resource_type)
                            .with_resource_name(sb(&b.resource_name))
                            .with_pattern_type(b.pattern_type)
                            .with_principal(sb(&b.principal))
                            .with_host(sb(&b.host))
                            .with_operation(b.operation)
                            .with_permission_type(b.permission)
                    })
                    .collect(),
            )
        })
        .collect();
    DeleteAclsResponse::default().with_filter_results(results)
}
