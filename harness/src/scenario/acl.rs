//! A security scenario's ACLs: what the file says (`{ allow = "alice", operation = "Write",
//! topic = "${t}" }`) and the binding it makes on the wire.

use serde::Deserialize;

/// One ACL of a scenario: `{ allow = "alice", operation = "Write", transactional_id =
/// "${txn}" }`; `deny` instead of `allow`; the resource one of `topic`, `group`,
/// `transactional_id` or `cluster = true`; `pattern = "prefixed"` for a prefix (default
/// literal). Names may use the scenario's `unique` variables.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AclSpec {
    /// The user allowed.
    pub allow: Option<String>,
    /// The user denied.
    pub deny: Option<String>,
    /// Kafka's operation name: Read, Write, Create, Delete, Alter, Describe, ClusterAction,
    /// DescribeConfigs, AlterConfigs, IdempotentWrite or All.
    pub operation: String,
    /// A topic.
    pub topic: Option<String>,
    /// A consumer group.
    pub group: Option<String>,
    /// A transactional id.
    pub transactional_id: Option<String>,
    /// The cluster.
    #[serde(default)]
    pub cluster: bool,
    /// `literal` (default) or `prefixed`.
    pub pattern: Option<String>,
}

impl AclSpec {
    /// The ACL on the wire, its names taken through `name` (variable substitution); why not,
    /// when the spec does not make one.
    pub fn wire(
        &self,
        name: impl Fn(&str) -> Result<String, String>,
    ) -> Result<crate::targets::acls::AclWire, String> {
        let (user, permission) = match (&self.allow, &self.deny) {
            (Some(u), None) => (u, 3),
            (None, Some(u)) => (u, 2),
            _ => return Err("an ACL names exactly one of allow and deny".into()),
        };
        if crate::security::password(user).is_none() {
            return Err(format!(
                "ACL for unknown user '{user}' (the targets know {})",
                crate::security::user_names()
            ));
        }
        let operation = crate::targets::acls::ACL_OPERATIONS
            .iter()
            .find(|(n, _)| *n == self.operation)
            .map(|(_, c)| *c)
            .ok_or_else(|| {
                format!(
                    "unknown ACL operation '{}' (one of {})",
                    self.operation,
                    crate::targets::acls::ACL_OPERATIONS
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })?;
        let resources = [
            self.topic.as_ref().map(|n| (2, n.as_str())),
            self.group.as_ref().map(|n| (3, n.as_str())),
            self.cluster.then_some((4, "kafka-cluster")),
            self.transactional_id.as_ref().map(|n| (5, n.as_str())),
        ];
        let mut named = resources.into_iter().flatten();
        let (resource_type, raw_name) =
            match (named.next(), named.next()) {
                (Some(r), None) => r,
                _ => return Err(
                    "an ACL names exactly one of topic, group, transactional_id and cluster = true"
                        .into(),
                ),
            };
        let pattern_type = match self.pattern.as_deref() {
            None | Some("literal") => 3,
            Some("prefixed") => 4,
            Some(other) => {
                return Err(format!(
                    "ACL pattern '{other}': use \"literal\" or \"prefixed\""
                ))
            }
        };
        Ok(crate::targets::acls::AclWire {
            resource_type,
            resource_name: name(raw_name)?,
            pattern_type,
            principal: format!("User:{user}"),
            operation,
            permission,
        })
    }
}
