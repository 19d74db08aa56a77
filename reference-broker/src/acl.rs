//! Access control lists as Apache 3.7's `StandardAuthorizer` keeps and applies them: bindings
//! created, listed and deleted over the wire (CreateAcls / DescribeAcls / DeleteAcls), super
//! users who pass every check, DENY before ALLOW, and — as with
//! `allow.everyone.if.no.acl.found=false` — no access where no binding allows it.
//!
//! The wire codes are Kafka's (`ResourceType`, `PatternType`, `AclOperation`,
//! `AclPermissionType`), so a binding is stored as the request gave it.
//!
//! The bindings live in `__cluster/acls.json` on the data directory, so that they outlive a
//! restart and every broker sharing the volume applies the same ones: a change is made under a
//! file lock on the latest file and written atomically; a broker reads the file again whenever
//! it was replaced (a new inode) since it last read it.

use std::path::{Path, PathBuf};
use std::sync::RwLock;

use crate::auth::{Authorizer, Operation, Resource};

/// `ResourceType` wire codes.
pub mod resource_type {
    /// Matches every type (filters only).
    pub const ANY: i8 = 1;
    /// A topic.
    pub const TOPIC: i8 = 2;
    /// A consumer group.
    pub const GROUP: i8 = 3;
    /// The cluster (`kafka-cluster`).
    pub const CLUSTER: i8 = 4;
    /// A transactional id.
    pub const TRANSACTIONAL_ID: i8 = 5;
    /// A delegation token.
    pub const DELEGATION_TOKEN: i8 = 6;
    /// A user.
    pub const USER: i8 = 7;
}

/// `PatternType` wire codes.
pub mod pattern_type {
    /// Matches every pattern type (filters only).
    pub const ANY: i8 = 1;
    /// Matches the bindings that would apply to the name (filters only).
    pub const MATCH: i8 = 2;
    /// The name exactly (or `*`, every name).
    pub const LITERAL: i8 = 3;
    /// Every name that starts with it.
    pub const PREFIXED: i8 = 4;
}

/// `AclOperation` wire codes.
pub mod operation {
    /// Matches every operation (filters only).
    pub const ANY: i8 = 1;
    /// Every operation.
    pub const ALL: i8 = 2;
    /// Read.
    pub const READ: i8 = 3;
    /// Write.
    pub const WRITE: i8 = 4;
    /// Create.
    pub const CREATE: i8 = 5;
    /// Delete.
    pub const DELETE: i8 = 6;
    /// Alter.
    pub const ALTER: i8 = 7;
    /// Describe.
    pub const DESCRIBE: i8 = 8;
    /// Cluster action.
    pub const CLUSTER_ACTION: i8 = 9;
    /// Describe configs.
    pub const DESCRIBE_CONFIGS: i8 = 10;
    /// Alter configs.
    pub const ALTER_CONFIGS: i8 = 11;
    /// Idempotent write.
    pub const IDEMPOTENT_WRITE: i8 = 12;
    /// Create tokens.
    pub const CREATE_TOKENS: i8 = 13;
    /// Describe tokens.
    pub const DESCRIBE_TOKENS: i8 = 14;
}

/// `AclPermissionType` wire codes.
pub mod permission {
    /// Matches both (filters only).
    pub const ANY: i8 = 1;
    /// Deny.
    pub const DENY: i8 = 2;
    /// Allow.
    pub const ALLOW: i8 = 3;
}

/// The cluster resource's one name.
pub const CLUSTER_NAME: &str = "kafka-cluster";

/// One ACL: who may (or may not) do what, on which resources, from where.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Binding {
    /// `resource_type` code.
    pub resource_type: i8,
    /// Resource name (or prefix, or `*`).
    pub resource_name: String,
    /// `pattern_type` code: LITERAL or PREFIXED.
    pub pattern_type: i8,
    /// `User:alice`, or `User:*` for every user.
    pub principal: String,
    /// Client host, or `*`.
    pub host: String,
    /// `operation` code.
    pub operation: i8,
    /// `permission` code: ALLOW or DENY.
    pub permission: i8,
}

/// What DescribeAcls and DeleteAcls select bindings by; `None` and the ANY codes match all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    /// `resource_type` code, or ANY.
    pub resource_type: i8,
    /// Resource name, or `None` for any.
    pub resource_name: Option<String>,
    /// `pattern_type` code, or ANY or MATCH.
    pub pattern_type: i8,
    /// Principal, or `None` for any.
    pub principal: Option<String>,
    /// Host, or `None` for any.
    pub host: Option<String>,
    /// `operation` code, or ANY.
    pub operation: i8,
    /// `permission` code, or ANY.
    pub permission: i8,
}

impl Filter {
    /// Whether `b` is selected.
    pub fn matches(&self, b: &Binding) -> bool {
        let name_ok = match (&self.resource_name, self.pattern_type) {
            (None, pattern_type::ANY | pattern_type::MATCH) => true,
            (None, p) => p == b.pattern_type,
            (Some(n), pattern_type::ANY) => *n == b.resource_name,
            (Some(n), pattern_type::MATCH) => match b.pattern_type {
                pattern_type::LITERAL => *n == b.resource_name || b.resource_name == "*",
                pattern_type::PREFIXED => n.starts_with(&b.resource_name),
                _ => false,
            },
            (Some(n), p) => p == b.pattern_type && *n == b.resource_name,
        };
        (self.resource_type == resource_type::ANY || self.resource_type == b.resource_type)
            && name_ok
            && self.principal.as_ref().is_none_or(|p| *p == b.principal)
            && self.host.as_ref().is_none_or(|h| *h == b.host)
            && (self.operation == operation::ANY || self.operation == b.operation)
            && (self.permission == permission::ANY || self.permission == b.permission)
    }
}

/// Why a binding cannot be created: Apache's reasons, answered as INVALID_REQUEST (42).
pub fn invalid(b: &Binding) -> Option<&'static str> {
    use self::{operation as op, pattern_type as pt, resource_type as rt};
    if !(rt::TOPIC..=rt::USER).contains(&b.resource_type) {
        return Some("Invalid resourceType");
    }
    if !matches!(b.pattern_type, pt::LITERAL | pt::PREFIXED) {
        return Some("Invalid patternType");
    }
    if !(op::ALL..=op::DESCRIBE_TOKENS).contains(&b.operation) {
        return Some("Invalid operation");
    }
    if !matches!(b.permission, permission::ALLOW | permission::DENY) {
        return Some("Invalid permissionType");
    }
    if b.resource_name.is_empty() {
        return Some("Resource name should not be empty");
    }
    if !b.principal.contains(':') {
        return Some("Could not parse principal");
    }
    None
}

/// The bindings of a broker, and the super users, applied as `StandardAuthorizer` applies
/// them with `allow.everyone.if.no.acl.found=false`.
#[derive(Debug, Default)]
pub struct AclStore {
    super_users: Vec<String>,
    /// `__cluster/acls.json`, or none: kept in memory only.
    file: Option<PathBuf>,
    bindings: RwLock<Loaded>,
}

/// The bindings as last read, and which file they were read from (its inode: every write
/// replaces the file).
#[derive(Debug, Default)]
struct Loaded {
    inode: Option<u64>,
    bindings: Vec<Binding>,
}

/// Why the ACL file could not be read or written.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct AclFileError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub reason: String,
}

fn inode(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| m.ino())
}

fn read_file(path: &Path) -> Result<Loaded, AclFileError> {
    let failed = |reason: String| AclFileError {
        path: path.to_owned(),
        reason,
    };
    let inode = inode(path);
    let bindings = match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| failed(e.to_string()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(failed(e.to_string())),
    };
    Ok(Loaded { inode, bindings })
}

impl AclStore {
    /// A store with no bindings, in memory; `super_users` are principals (`User:admin`).
    pub fn new(super_users: Vec<String>) -> AclStore {
        AclStore {
            super_users,
            file: None,
            bindings: RwLock::default(),
        }
    }

    /// The store kept in `file` (shared by the brokers of one volume), as it is now.
    pub fn open(super_users: Vec<String>, file: PathBuf) -> Result<AclStore, AclFileError> {
        let loaded = read_file(&file)?;
        Ok(AclStore {
            super_users,
            file: Some(file),
            bindings: RwLock::new(loaded),
        })
    }

    /// The bindings now: read again when another broker (or this one) replaced the file.
    fn current(&self) -> std::sync::RwLockReadGuard<'_, Loaded> {
        if let Some(file) = &self.file {
            let stale = {
                let loaded = self.bindings.read().unwrap_or_else(|p| p.into_inner());
                loaded.inode != inode(file)
            };
            if stale {
                match read_file(file) {
                    Ok(fresh) => {
                        *self.bindings.write().unwrap_or_else(|p| p.into_inner()) = fresh;
                    }
                    // Half a write cannot be seen (the file is replaced whole); a file that
                    // does not parse keeps the bindings last read, and says so.
                    Err(e) => {
                        tracing::warn!(error = %e, "ACL file unreadable; keeping the last ACLs read")
                    }
                }
            }
        }
        self.bindings.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Applies `change` to the latest bindings and stores the result (under the file's lock,
    /// so that brokers sharing it lose none of each other's changes).
    fn change<R>(&self, change: impl FnOnce(&mut Vec<Binding>) -> R) -> Result<R, AclFileError> {
        let Some(file) = &self.file else {
            let mut loaded = self.bindings.write().unwrap_or_else(|p| p.into_inner());
            return Ok(change(&mut loaded.bindings));
        };
        let failed = |e: std::io::Error| AclFileError {
            path: file.clone(),
            reason: e.to_string(),
        };
        let _lock = crate::storage::file_lock::FileLock::exclusive(&file.with_extension("lock"))
            .map_err(failed)?;
        let mut loaded = read_file(file)?;
        let out = change(&mut loaded.bindings);
        let bytes = serde_json::to_vec_pretty(&loaded.bindings).expect("bindings serialize");
        crate::storage::atomic::write_atomic(file, &bytes).map_err(failed)?;
        loaded.inode = inode(file);
        *self.bindings.write().unwrap_or_else(|p| p.into_inner()) = loaded;
        Ok(out)
    }

    /// Adds `b` unless an equal binding exists (creating one twice is no error in Apache).
    pub fn create(&self, b: Binding) -> Result<(), AclFileError> {
        self.change(|all| {
            if !all.contains(&b) {
                all.push(b);
            }
        })
    }

    /// The bindings `f` selects, in the order they were created.
    pub fn describe(&self, f: &Filter) -> Vec<Binding> {
        let loaded = self.current();
        loaded
            .bindings
            .iter()
            .filter(|b| f.matches(b))
            .cloned()
            .collect()
    }

    /// Removes and returns the bindings `f` selects.
    pub fn delete(&self, f: &Filter) -> Result<Vec<Binding>, AclFileError> {
        self.change(|all| {
            let (gone, kept) = std::mem::take(all).into_iter().partition(|b| f.matches(b));
            *all = kept;
            gone
        })
    }
}

fn resource_code(r: Resource<'_>) -> (i8, &str) {
    match r {
        Resource::Cluster => (resource_type::CLUSTER, CLUSTER_NAME),
        Resource::Topic(n) => (resource_type::TOPIC, n),
        Resource::Group(n) => (resource_type::GROUP, n),
        Resource::TransactionalId(n) => (resource_type::TRANSACTIONAL_ID, n),
    }
}

fn operation_code(o: Operation) -> i8 {
    match o {
        Operation::Read => operation::READ,
        Operation::Write => operation::WRITE,
        Operation::Create => operation::CREATE,
        Operation::Delete => operation::DELETE,
        Operation::Alter => operation::ALTER,
        Operation::Describe => operation::DESCRIBE,
        Operation::ClusterAction => operation::CLUSTER_ACTION,
        Operation::IdempotentWrite => operation::IDEMPOTENT_WRITE,
        Operation::DescribeConfigs => operation::DESCRIBE_CONFIGS,
    }
}

/// Whether an ALLOW binding for `granted` lets `wanted` through: ALL grants everything, and
/// READ, WRITE, DELETE and ALTER each imply DESCRIBE (ALTER_CONFIGS, DESCRIBE_CONFIGS).
fn allow_covers(granted: i8, wanted: i8) -> bool {
    use operation as op;
    granted == op::ALL
        || granted == wanted
        || (wanted == op::DESCRIBE
            && matches!(granted, op::READ | op::WRITE | op::DELETE | op::ALTER))
        || (wanted == op::DESCRIBE_CONFIGS && granted == op::ALTER_CONFIGS)
}

impl Authorizer for AclStore {
    fn authorize(&self, principal: &str, operation: Operation, resource: Resource<'_>) -> bool {
        if self.super_users.iter().any(|s| s == principal) {
            return true;
        }
        let (rtype, name) = resource_code(resource);
        let wanted = operation_code(operation);
        let loaded = self.current();
        let all = &loaded.bindings;
        let applies = |b: &&Binding| {
            b.resource_type == rtype
                && match b.pattern_type {
                    pattern_type::LITERAL => b.resource_name == name || b.resource_name == "*",
                    pattern_type::PREFIXED => name.starts_with(&b.resource_name),
                    _ => false,
                }
                && (b.principal == principal || b.principal == "User:*")
        };
        let mut allowed = false;
        for b in all.iter().filter(applies) {
            match b.permission {
                permission::DENY if b.operation == operation::ALL || b.operation == wanted => {
                    return false
                }
                permission::ALLOW if allow_covers(b.operation, wanted) => allowed = true,
                _ => {}
            }
        }
        allowed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allow(rt: i8, name: &str, pt: i8, who: &str, op: i8) -> Binding {
        Binding {
            resource_type: rt,
            resource_name: name.into(),
            pattern_type: pt,
            principal: who.into(),
            host: "*".into(),
            operation: op,
            permission: permission::ALLOW,
        }
    }

    #[test]
    fn nothing_is_allowed_without_a_binding_but_to_super_users() {
        let s = AclStore::new(vec!["User:admin".into()]);
        assert!(!s.authorize("User:alice", Operation::Write, Resource::Topic("t")));
        assert!(s.authorize("User:admin", Operation::Write, Resource::Topic("t")));
    }

    #[test]
    fn literal_prefixed_and_wildcard_bindings_apply_to_their_names() {
        let s = AclStore::new(vec![]);
        s.create(allow(
            resource_type::TOPIC,
            "t",
            pattern_type::LITERAL,
            "User:alice",
            operation::WRITE,
        ))
        .unwrap();
        s.create(allow(
            resource_type::GROUP,
            "g-",
            pattern_type::PREFIXED,
            "User:alice",
            operation::READ,
        ))
        .unwrap();
        s.create(allow(
            resource_type::TRANSACTIONAL_ID,
            "*",
            pattern_type::LITERAL,
            "User:*",
            operation::WRITE,
        ))
        .unwrap();
        let a = |op, r| s.authorize("User:alice", op, r);
        assert!(a(Operation::Write, Resource::Topic("t")));
        assert!(!a(Operation::Write, Resource::Topic("t2")));
        assert!(!a(Operation::Read, Resource::Topic("t")));
        assert!(
            a(Operation::Describe, Resource::Topic("t")),
            "WRITE implies DESCRIBE"
        );
        assert!(a(Operation::Read, Resource::Group("g-1")));
        assert!(!a(Operation::Read, Resource::Group("h")));
        assert!(s.authorize(
            "User:bob",
            Operation::Write,
            Resource::TransactionalId("any")
        ));
        assert!(!s.authorize("User:bob", Operation::Write, Resource::Cluster));
    }

    #[test]
    fn a_deny_wins_over_an_allow() {
        let s = AclStore::new(vec![]);
        s.create(allow(
            resource_type::TOPIC,
            "*",
            pattern_type::LITERAL,
            "User:alice",
            operation::ALL,
        ))
        .unwrap();
        s.create(Binding {
            permission: permission::DENY,
            ..allow(
                resource_type::TOPIC,
                "secret",
                pattern_type::LITERAL,
                "User:alice",
                operation::READ,
            )
        })
        .unwrap();
        assert!(s.authorize("User:alice", Operation::Read, Resource::Topic("open")));
        assert!(!s.authorize("User:alice", Operation::Read, Resource::Topic("secret")));
        assert!(s.authorize("User:alice", Operation::Write, Resource::Topic("secret")));
    }

    #[test]
    fn filters_select_what_describe_and_delete_act_on() {
        let s = AclStore::new(vec![]);
        let b = allow(
            resource_type::GROUP,
            "g-",
            pattern_type::PREFIXED,
            "User:alice",
            operation::READ,
        );
        s.create(b.clone()).unwrap();
        s.create(b.clone()).unwrap();
        let any = Filter {
            resource_type: resource_type::ANY,
            resource_name: None,
            pattern_type: pattern_type::ANY,
            principal: None,
            host: None,
            operation: operation::ANY,
            permission: permission::ANY,
        };
        assert_eq!(
            s.describe(&any),
            vec![b.clone()],
            "created twice, kept once"
        );
        let matching = Filter {
            resource_name: Some("g-7".into()),
            pattern_type: pattern_type::MATCH,
            ..any.clone()
        };
        assert_eq!(s.describe(&matching).len(), 1);
        let literal = Filter {
            resource_name: Some("g-7".into()),
            pattern_type: pattern_type::LITERAL,
            ..any.clone()
        };
        assert!(s.describe(&literal).is_empty());
        assert_eq!(s.delete(&any).unwrap(), vec![b]);
        assert!(s.describe(&any).is_empty());
    }

    #[test]
    fn brokers_sharing_the_file_apply_each_others_changes() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("acls.json");
        let a = AclStore::open(vec![], file.clone()).unwrap();
        let b = AclStore::open(vec![], file.clone()).unwrap();
        let write = allow(
            resource_type::TOPIC,
            "t",
            pattern_type::LITERAL,
            "User:alice",
            operation::WRITE,
        );
        a.create(write.clone()).unwrap();
        assert!(
            b.authorize("User:alice", Operation::Write, Resource::Topic("t")),
            "b reads a's change"
        );
        let other = allow(
            resource_type::GROUP,
            "g",
            pattern_type::LITERAL,
            "User:bob",
            operation::READ,
        );
        b.create(other.clone()).unwrap();
        let any = Filter {
            resource_type: resource_type::ANY,
            resource_name: None,
            pattern_type: pattern_type::ANY,
            principal: None,
            host: None,
            operation: operation::ANY,
            permission: permission::ANY,
        };
        assert_eq!(
            a.describe(&any),
            vec![write.clone(), other],
            "neither change lost"
        );
        b.delete(&Filter {
            resource_type: resource_type::GROUP,
            ..any.clone()
        })
        .unwrap();
        assert_eq!(a.describe(&any), vec![write]);
        let reopened = AclStore::open(vec![], file).unwrap();
        assert!(
            reopened.authorize("User:alice", Operation::Write, Resource::Topic("t")),
            "kept across a restart"
        );
    }
}
