//! The authorization hook every handler calls at the points the kaas spec names. The default
//! allows everything, as Apache does without an authorizer; [`crate::acl::AclStore`] applies
//! ACLs where security is on.

/// What is being accessed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource<'a> {
    /// The cluster.
    Cluster,
    /// A topic.
    Topic(&'a str),
    /// A consumer group.
    Group(&'a str),
    /// A transactional id.
    TransactionalId(&'a str),
}

/// The operation, as Kafka's ACLs name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Operation {
    Read,
    Write,
    Create,
    Delete,
    Alter,
    Describe,
    ClusterAction,
    IdempotentWrite,
    DescribeConfigs,
}

/// Decides whether a principal may do an operation on a resource.
pub trait Authorizer: Send + Sync + std::fmt::Debug {
    /// True when allowed.
    fn authorize(&self, principal: &str, operation: Operation, resource: Resource<'_>) -> bool;
}

/// Allows everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct AllowAll;

impl Authorizer for AllowAll {
    fn authorize(&self, _: &str, _: Operation, _: Resource<'_>) -> bool {
        true
    }
}

/// Another authorizer's answers, except that nobody may create a topic: a cluster whose topics
/// an operator provisions (`kaas-ref --refuse-create-topics`). CreateTopics answers
/// TOPIC_AUTHORIZATION_FAILED and Metadata creates nothing, as Apache does for a client
/// without the Create permission.
#[derive(Debug)]
pub struct DenyCreate(pub std::sync::Arc<dyn Authorizer>);

impl Authorizer for DenyCreate {
    fn authorize(&self, principal: &str, operation: Operation, resource: Resource<'_>) -> bool {
        operation != Operation::Create && self.0.authorize(principal, operation, resource)
    }
}

/// The principal of an unauthenticated connection.
pub const ANONYMOUS: &str = "User:ANONYMOUS";
