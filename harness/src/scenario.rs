//! Scenarios: TOML files in `scenarios/`, each a named sequence of steps.
//!
//! ```toml
//! description = "EndTxn on a transactional id that has begun no transaction"
//! unique = ["txn"]              # names made unique per run, so scenarios share a broker
//!
//! [[step]]
//! name = "init"
//! api = "InitProducerId"
//! version = 4                   # a version, "all" (each version the API has), "1..=3",
//!                               # or none: the highest version both sides serve
//! request = { transactional_id = "${txn}", transaction_timeout_ms = 60000 }
//! capture = { pid = "producer_id", epoch = "producer_epoch" }
//! expect = { error_code = 0 }   # must hold on every target
//! until = { error_code = 0 }    # optional: repeat until this holds (within_ms, default 15 s)
//! repeat = 3                    # optional: send it 3 times, record the last answer
//!
//! [[step]]
//! name = "pause"
//! sleep_ms = 100
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use crate::data::Source;

use serde::Deserialize;

/// Why a scenario file is not usable.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// Unreadable.
    #[error("{path}: {reason}")]
    Read {
        /// File.
        path: String,
        /// Why.
        reason: String,
    },
    /// A step that cannot be built.
    #[error("step '{step}': {reason}")]
    Step {
        /// Step name.
        step: String,
        /// Why.
        reason: String,
    },
}

/// Which versions a step is sent at.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum VersionSpec {
    /// One version.
    One(i16),
    /// "all" (one step per version the API has in Apache 3.7 or kaas) or "A..=B".
    Named(String),
}

impl Default for VersionSpec {
    fn default() -> Self {
        VersionSpec::Named("all".into())
    }
}

impl VersionSpec {
    /// The lowest and highest version named (`None`: up to the highest the API has, for
    /// `"all"`); why not, when the text names none. The one reader of version text, used by
    /// scenarios and the ledger alike.
    pub fn bounds(&self) -> Result<(i16, Option<i16>), String> {
        match self {
            VersionSpec::One(v) if *v < 0 => Err(format!("version {v} is negative")),
            VersionSpec::One(v) => Ok((*v, Some(*v))),
            VersionSpec::Named(n) if n == "all" => Ok((0, None)),
            VersionSpec::Named(n) => match n.split_once("..=") {
                Some((a, b)) => match (a.trim().parse::<i16>(), b.trim().parse::<i16>()) {
                    (Ok(a), Ok(b)) if a > b => {
                        Err(format!("version range \"{n}\" is empty ({a} > {b})"))
                    }
                    (Ok(a), Ok(_)) if a < 0 => Err(format!("version range \"{n}\" starts below 0")),
                    (Ok(a), Ok(b)) => Ok((a, Some(b))),
                    _ => Err(format!(
                        "version range \"{n}\": expected \"A..=B\" with numbers"
                    )),
                },
                None => match n.trim().parse::<i16>() {
                    Ok(v) => VersionSpec::One(v).bounds(),
                    Err(_) => Err(format!(
                        "version \"{n}\": use a number, \"all\" or \"A..=B\""
                    )),
                },
            },
        }
    }

    /// The versions named, `"all"` being 0 to `highest`; why not, when the text names none.
    pub fn expand(&self, highest: i16) -> Result<Vec<i16>, String> {
        let (low, high) = self.bounds()?;
        Ok((low..=high.unwrap_or(highest)).collect())
    }

    /// Whether `version` is among those named (`None`, a step without a version, only under
    /// `"all"`).
    pub fn covers(&self, version: Option<i16>) -> bool {
        match (self.bounds(), version) {
            (Ok((_, None)), None) => true,
            (Ok((low, high)), Some(v)) => low <= v && high.is_none_or(|h| v <= h),
            _ => false,
        }
    }
}

/// The `${var}` a CreateTopics topic entry is named, when its name is exactly one placeholder.
pub fn topic_var(topic: &toml::Value) -> Option<&str> {
    topic
        .get("name")?
        .as_str()?
        .strip_prefix("${")?
        .strip_suffix('}')
        .filter(|v| !v.contains(['$', '{', '}']))
}

/// Every `${name}` in a request's strings.
fn variables_in(value: &toml::Value, out: &mut Vec<String>) {
    match value {
        toml::Value::String(s) => {
            let mut rest = s.as_str();
            while let Some(start) = rest.find("${") {
                let Some(len) = rest[start..].find('}') else {
                    break;
                };
                out.push(rest[start + 2..start + len].to_owned());
                rest = &rest[start + len..];
            }
        }
        toml::Value::Array(a) => a.iter().for_each(|v| variables_in(v, out)),
        toml::Value::Table(t) => t.values().for_each(|v| variables_in(v, out)),
        _ => {}
    }
}

/// Each step names an API kconform knows at versions that parse, and uses only variables
/// that exist by then: the scenario's `unique` names and what earlier steps captured (a
/// background step's captures once it is awaited).
fn check_requests(steps: &[Step], unique: &[String]) -> Result<(), String> {
    let mut defined: std::collections::BTreeSet<String> = unique.iter().cloned().collect();
    let mut pending: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for step in steps {
        let name = &step.name;
        if let Some(awaited) = &step.await_step {
            defined.extend(pending.remove(awaited.as_str()).unwrap_or_default());
            continue;
        }
        let Some(api) = &step.api else { continue };
        if crate::api::request::api_key(api).is_none() {
            return Err(format!(
                "step '{name}': unknown API '{api}' (kconform sends {})",
                crate::api::names()
            ));
        }
        if let Some(version) = &step.version {
            version
                .expand(0)
                .map_err(|e| format!("step '{name}': {e}"))?;
        }
        if step.creates_topics {
            let topics = step.request.get("topics").and_then(toml::Value::as_array);
            let vars: Vec<Option<&str>> = topics.into_iter().flatten().map(topic_var).collect();
            let named = !vars.is_empty()
                && vars
                    .iter()
                    .all(|v| v.is_some_and(|v| unique.iter().any(|u| u == v)));
            if api != "CreateTopics" || !named {
                return Err(format!(
                    "step '{name}': creates_topics is for a CreateTopics whose every topic is named \"${{var}}\" with var in `unique`"
                ));
            }
        }
        if let Some(var) = step.renames.as_ref().filter(|v| !unique.contains(v)) {
            return Err(format!(
                "step '{name}': renames '{var}', which is not in `unique`"
            ));
        }
        let mut used = Vec::new();
        variables_in(&toml::Value::Table(step.request.clone()), &mut used);
        if let Some(missing) = used.iter().find(|v| !defined.contains(*v)) {
            return Err(format!(
                "step '{name}': ${{{missing}}} is not defined here (define it in `unique`, or capture it in an earlier step)"
            ));
        }
        let captured = step.capture.keys().cloned();
        match step.background {
            true => {
                pending.insert(name, captured.collect());
            }
            false => defined.extend(captured),
        }
    }
    Ok(())
}

/// A security scenario names known users, one per connection, mechanisms both targets
/// enable, and ACLs that make one binding each; `as`, `mechanism` and `acls` belong to
/// security scenarios only.
fn check_security(s: &Scenario) -> Result<(), String> {
    let secured = s.principal.is_some();
    let known =
        |user: &str| user == crate::security::NOBODY || crate::security::password(user).is_some();
    if let Some(user) = s.principal.as_deref().filter(|u| !known(u)) {
        return Err(format!(
            "as = \"{user}\": no such user (the targets know {}, and \"anonymous\")",
            crate::security::USERS
                .iter()
                .map(|(u, _)| *u)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if !secured
        && (!s.acls.is_empty()
            || s.steps
                .iter()
                .any(|st| st.principal.is_some() || st.mechanism.is_some()))
    {
        return Err("acls, and a step's as and mechanism, are for security scenarios (give the scenario `as = \"<user>\"`)".into());
    }
    if !secured {
        return Ok(());
    }
    let logins = logins(s);
    for step in s.steps.iter().filter(|st| st.api.is_some()) {
        let (user, mechanism) = &logins[&step.connection];
        if !known(user) {
            return Err(format!(
                "step '{}': as = \"{user}\": no such user",
                step.name
            ));
        }
        if !crate::security::MECHANISMS.contains(&mechanism.as_str()) {
            return Err(format!(
                "step '{}': mechanism '{mechanism}': use PLAIN or SCRAM-SHA-512",
                step.name
            ));
        }
        let named = (step.principal.as_ref(), step.mechanism.as_ref());
        if named.0.is_some_and(|u| u != user) || named.1.is_some_and(|m| m != mechanism) {
            return Err(format!(
                "step '{}': connection '{}' logs in as {user} ({mechanism}), as its first step says; use another connection for another login",
                step.name, step.connection
            ));
        }
    }
    for acl in &s.acls {
        acl.wire(|n| Ok(n.to_owned()))?;
    }
    Ok(())
}

/// Who each connection of a security scenario logs in as: connection → (user, mechanism),
/// as the first step on it says (its `as`, else the scenario's; its `mechanism`, else PLAIN).
/// Empty for other scenarios.
pub fn logins(s: &Scenario) -> BTreeMap<String, (String, String)> {
    let mut out = BTreeMap::new();
    let Some(default) = &s.principal else {
        return out;
    };
    for step in s.steps.iter().filter(|st| st.api.is_some()) {
        out.entry(step.connection.clone()).or_insert_with(|| {
            let user = step.principal.clone().unwrap_or_else(|| default.clone());
            let mechanism = step
                .mechanism
                .clone()
                .unwrap_or_else(|| crate::wire::sasl::PLAIN.to_owned());
            (user, mechanism)
        });
    }
    out
}

/// One step.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Name, unique within the scenario (an `include` step needs none).
    #[serde(default)]
    pub name: String,
    /// API name, as Apache names it (`EndTxn`).
    pub api: Option<String>,
    /// Version(s); none means the highest both sides serve.
    pub version: Option<VersionSpec>,
    /// Named connection (default "main").
    #[serde(default = "default_connection")]
    pub connection: String,
    /// Request fields.
    #[serde(default)]
    pub request: toml::Table,
    /// Variables to capture: name → response field path.
    #[serde(default)]
    pub capture: BTreeMap<String, String>,
    /// Field path → value that must hold on every target.
    #[serde(default)]
    pub expect: BTreeMap<String, toml::Value>,
    /// Repeat the request until these field values hold (a broker that is still creating a
    /// topic or loading a coordinator answers a retriable error first, as clients see).
    #[serde(default)]
    pub until: BTreeMap<String, toml::Value>,
    /// How long `until` may keep trying, in milliseconds (default 15000).
    pub within_ms: Option<u64>,
    /// Send the request again while the answer carries an error code clients retry
    /// (CONCURRENT_TRANSACTIONS, a coordinator still loading...), within `within_ms`, and
    /// record the first answer without one, or the last: what a client would end up seeing.
    /// The steps `kconform fuzz` writes, whose answers may otherwise depend on how soon a
    /// broker finished the step before.
    #[serde(default)]
    pub retry_retriable: bool,
    /// A pause instead of a request.
    pub sleep_ms: Option<u64>,
    /// Inline the steps of `scenarios/fragments/<name>.toml` here (shared set-up such as
    /// "coordinator found, topic created, producer initialised").
    pub include: Option<String>,
    /// Send the request this many times (default 1) and record only the last answer;
    /// `expect` must hold on every answer, and the first that breaks it is recorded instead.
    pub repeat: Option<u32>,
    /// Send the request and go on without its answer (a JoinGroup that waits for the other
    /// members, say); a later `await` step names this one and records the answer then. Its
    /// connection is busy until then.
    #[serde(default)]
    pub background: bool,
    /// A CreateTopics that sets up the topics the scenario works on (each named `${var}` of
    /// `unique`), rather than one under test. On a broker whose topics are provisioned
    /// (`kconform topics`), it is not sent: the provisioned topics stand in.
    #[serde(default)]
    pub creates_topics: bool,
    /// Wait for the answer of the named background step, and record it (with that step's
    /// captures and expectations) here.
    #[serde(rename = "await")]
    pub await_step: Option<String>,
    /// In a cluster scenario, the broker the request goes to ([`BrokerRef`]); none: any broker
    /// up.
    pub broker: Option<BrokerRef>,
    /// Roles this answer names: role → path of a node id in it (`{ coordinator = "node_id" }`
    /// on a FindCoordinator). Later steps address the broker by the role, and node ids in
    /// answers read as the role, so two clusters' transcripts compare.
    #[serde(default)]
    pub roles: BTreeMap<String, String>,
    /// Path of a node id → the role it must be (`{ node_id = "coordinator" }`): an expectation,
    /// and the node then reads as that role in this answer (a node can hold several roles;
    /// which one names it is otherwise the latest bound).
    #[serde(default)]
    pub expect_roles: BTreeMap<String, String>,
    /// Path of a node id → role (or `not-<role>`) that `until` also waits for: with
    /// `renames`, the way to find a name the cluster places apart from a role.
    #[serde(default)]
    pub until_roles: BTreeMap<String, String>,
    /// A `unique` variable given another name (`<name>~N`) each time `until_roles` does not
    /// hold, the request sent again with it (32 names at most): kaas and Apache place names
    /// by different hashes, so each cluster finds its own (a group whose coordinator is not
    /// the transaction's). Later steps use the name found.
    pub renames: Option<String>,
    /// Fields of the answer recorded as `"not compared"` on every target, for values a live
    /// broker sets by timing rather than by rule (say why in a comment beside them).
    #[serde(default)]
    pub not_compared: Vec<String>,
    /// Why this step's answer depends on timing (a marker that may or may not have landed):
    /// compared between live brokers, where a `timing` ledger entry documents what differs,
    /// but not kept in snapshots, nor compared with recorded answers.
    pub timing: Option<String>,
    /// Why this background step races a `kill` (an EndTxn in flight when its coordinator dies):
    /// the broker may answer before it dies or the connection may close first, as the race goes
    /// on each target. Either is recorded alike, as `raced`, so that transcripts compare; an
    /// answer must still meet `expect`, and no answer within the deadline is still a failure.
    pub raced: Option<String>,
    /// Why the broker must close the connection instead of answering (a request before SASL
    /// authentication): recorded as `closed`; an answer is a failure.
    pub closes: Option<String>,
    /// Kill this broker of the cluster (instead of a request).
    pub kill: Option<BrokerRef>,
    /// Start this broker of the cluster again and wait until it serves (instead of a request).
    pub restart: Option<BrokerRef>,
    /// In a security scenario, the user this step's connection logs in as (default: the
    /// scenario's `as`); `"anonymous"` does not log in. Every step on one connection names
    /// the same user.
    #[serde(rename = "as")]
    pub principal: Option<String>,
    /// The SASL mechanism of this step's connection: `PLAIN` (default) or `SCRAM-SHA-512`.
    pub mechanism: Option<String>,
}

/// A broker of a cluster as a step names it: a role bound by an earlier step's `roles`
/// (`"coordinator"`), any other broker (`"not-coordinator"`: the lowest node id that does not
/// hold the role), or a node id (`0`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum BrokerRef {
    /// A node id.
    Node(i32),
    /// A role, or `not-<role>`.
    Role(String),
}

impl std::fmt::Display for BrokerRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BrokerRef::Node(n) => write!(f, "broker {n}"),
            BrokerRef::Role(r) => f.write_str(r),
        }
    }
}

impl BrokerRef {
    /// The role named, and whether the step means a broker without it (`not-<role>`).
    pub fn role(&self) -> Option<(&str, bool)> {
        match self {
            BrokerRef::Node(_) => None,
            BrokerRef::Role(r) => Some(match r.strip_prefix("not-") {
                Some(role) => (role, true),
                None => (r.as_str(), false),
            }),
        }
    }
}

fn one_broker() -> usize {
    1
}

fn default_connection() -> String {
    "main".into()
}

/// A file of shared steps that scenarios `include`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fragment {
    /// What the steps do.
    #[allow(dead_code)]
    description: String,
    #[serde(rename = "step")]
    steps: Vec<Step>,
}

/// Replaces each `include` step by the fragment's steps (fragments may include fragments,
/// four deep at most).
fn expand(steps: Vec<Step>, source: &Source, depth: usize) -> Result<Vec<Step>, String> {
    let mut out = Vec::new();
    for step in steps {
        let Some(name) = &step.include else {
            out.push(step);
            continue;
        };
        if depth >= 4 {
            return Err(format!("fragment '{name}': includes nest too deep"));
        }
        let text = source
            .read(&format!("fragments/{name}.toml"))
            .map_err(|e| format!("include '{name}' ({e})"))?;
        let fragment: Fragment =
            toml::from_str(&text).map_err(|e| format!("fragment '{name}': {e}"))?;
        out.extend(expand(fragment.steps, source, depth + 1)?);
    }
    Ok(out)
}

/// Each step has a unique name and is a request, a pause or an await; a background step sends
/// one request once and is awaited before its connection is used again.
fn check_steps(steps: &[Step], cluster: bool) -> Result<(), String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut roles = std::collections::BTreeSet::new();
    // Background steps not yet awaited: name → connection.
    let mut in_flight: std::collections::BTreeMap<&str, &str> = Default::default();
    for step in steps {
        let name = step.name.as_str();
        if name.is_empty() {
            return Err("a step has no name".into());
        }
        if !seen.insert(name) {
            return Err(format!("two steps are named '{name}'"));
        }
        let kinds = [
            step.api.is_some(),
            step.sleep_ms.is_some(),
            step.await_step.is_some(),
            step.kill.is_some(),
            step.restart.is_some(),
        ];
        if kinds.iter().filter(|k| **k).count() != 1 {
            return Err(format!(
                "step '{name}': give exactly one of api, sleep_ms, await, kill and restart"
            ));
        }
        if !cluster
            && (step.broker.is_some()
                || step.kill.is_some()
                || step.restart.is_some()
                || !step.roles.is_empty())
        {
            return Err(format!(
                "step '{name}': broker, roles, kill and restart are for cluster scenarios (set `brokers` to 2 or more)"
            ));
        }
        if !cluster && !step.expect_roles.is_empty() {
            return Err(format!(
                "step '{name}': expect_roles is for cluster scenarios (set `brokers` to 2 or more)"
            ));
        }
        if let Some(role) = step
            .expect_roles
            .values()
            .find(|r| !roles.contains(r.as_str()))
        {
            return Err(format!(
                "step '{name}': expect_roles names '{role}', which no earlier step binds"
            ));
        }
        for r in [&step.broker, &step.kill, &step.restart]
            .into_iter()
            .flatten()
        {
            if let Some((role, _)) = r.role() {
                if !roles.contains(role) {
                    return Err(format!(
                        "step '{name}': no earlier step binds the role '{role}' (bind it with `roles = {{ {role} = \"node_id\" }}` on a FindCoordinator or Metadata step)"
                    ));
                }
            }
        }
        roles.extend(step.roles.keys().map(String::as_str));
        if let Some(awaited) = &step.await_step {
            if in_flight.remove(awaited.as_str()).is_none() {
                return Err(format!(
                    "step '{name}': awaits '{awaited}', which is no background step in flight"
                ));
            }
            continue;
        }
        if step.api.is_none() {
            continue;
        }
        if let Some((busy, _)) = in_flight.iter().find(|(_, c)| **c == step.connection) {
            return Err(format!(
                "step '{name}': connection '{}' is busy with background step '{busy}' until it is awaited",
                step.connection
            ));
        }
        if step.closes.is_some()
            && (step.background
                || !step.capture.is_empty()
                || !step.until.is_empty()
                || step.repeat.is_some_and(|r| r > 1))
        {
            return Err(format!(
                "step '{name}': a step that closes its connection gets no answer: no background, capture, until or repeat"
            ));
        }
        if step.raced.is_some() && !(cluster && step.background) {
            return Err(format!(
                "step '{name}': raced is for a background step of a cluster scenario, awaited after the kill it races"
            ));
        }
        if step.raced.is_some() && !(step.capture.is_empty() && step.roles.is_empty()) {
            return Err(format!(
                "step '{name}': a raced step may get no answer, so it can capture nothing (no capture or roles)"
            ));
        }
        if step.background {
            let sweep = matches!(&step.version, Some(VersionSpec::Named(_)));
            if sweep || !step.until.is_empty() || step.repeat.is_some_and(|r| r > 1) {
                return Err(format!(
                    "step '{name}': a background step sends one request once (no version sweep, until or repeat)"
                ));
            }
            in_flight.insert(name, step.connection.as_str());
        }
    }
    Ok(())
}

/// The data files in `scenarios/` that are not scenarios: the deviation ledger, the map from
/// spec lines to scenarios, and the allowlist of `kconform peers`.
pub const NOT_SCENARIOS: [&str; 3] = ["deviations.toml", "spec-lines.toml", "peers-allowlist.toml"];

/// A scenario.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Filled from the file name.
    #[serde(skip)]
    pub name: String,
    /// What it shows.
    pub description: String,
    /// The spec section it comes from.
    #[serde(default)]
    pub spec: Option<String>,
    /// Names made unique per run.
    #[serde(default)]
    pub unique: Vec<String>,
    /// Takes minutes: run only with `--include-slow`.
    #[serde(default)]
    pub slow: bool,
    /// The brokers it needs (default 1): it runs on targets of that many brokers only
    /// (`--target ref:3 --target apache:3` for 3).
    #[serde(default = "one_broker")]
    pub brokers: usize,
    /// The user every connection logs in as ([`crate::security::USERS`], or `"anonymous"`
    /// for none): set, the scenario is a security scenario, which runs on the secured targets
    /// only (`ref+sasl`, `apache+sasl`).
    #[serde(rename = "as")]
    pub principal: Option<String>,
    /// ACLs the super user creates before the steps and deletes after (security scenarios).
    #[serde(default)]
    pub acls: Vec<AclSpec>,
    /// Steps.
    #[serde(rename = "step")]
    pub steps: Vec<Step>,
}

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
                crate::security::USERS
                    .iter()
                    .map(|(u, _)| *u)
                    .collect::<Vec<_>>()
                    .join(", ")
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

impl Scenario {
    /// Whether it is a security scenario (it names a user to log in as): it runs on the
    /// secured targets only.
    pub fn secured(&self) -> bool {
        self.principal.is_some()
    }

    /// Parses a scenario file.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let dir = path.parent().unwrap_or(Path::new("."));
        let file = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("scenario");
        Scenario::read(&Source::Dir(dir.to_owned()), file)
    }

    /// Parses the scenario file `file` of `source` (fragments come from the same source).
    pub fn read(source: &Source, file: &str) -> Result<Scenario, ScenarioError> {
        let err = |reason: String| ScenarioError::Read {
            path: source.place(file),
            reason,
        };
        let text = source.read(file).map_err(|e| err(e.reason))?;
        let mut s: Scenario = toml::from_str(&text).map_err(|e| err(e.to_string()))?;
        s.steps = expand(s.steps, source, 0).map_err(err)?;
        if !(1..=crate::targets::MAX_BROKERS).contains(&s.brokers) {
            return Err(err(format!(
                "brokers = {}: a scenario runs on 1 to {} brokers",
                s.brokers,
                crate::targets::MAX_BROKERS
            )));
        }
        check_steps(&s.steps, s.brokers > 1).map_err(err)?;
        check_requests(&s.steps, &s.unique).map_err(err)?;
        check_security(&s).map_err(err)?;
        s.name = file.strip_suffix(".toml").unwrap_or(file).to_owned();
        Ok(s)
    }

    /// Every `*.toml` scenario in a directory ([`NOT_SCENARIOS`] excluded), sorted by name.
    pub fn load_dir(dir: &Path) -> Result<Vec<Scenario>, ScenarioError> {
        Scenario::load_all(&Source::Dir(dir.to_owned()))
    }

    /// Every scenario of a source ([`NOT_SCENARIOS`] excluded), sorted by name.
    pub fn load_all(source: &Source) -> Result<Vec<Scenario>, ScenarioError> {
        let names = source.names(".toml").map_err(|e| ScenarioError::Read {
            path: e.place,
            reason: e.reason,
        })?;
        names
            .iter()
            .filter(|n| !NOT_SCENARIOS.contains(&n.as_str()))
            .map(|n| Scenario::read(source, n))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_text_reads_one_way_for_scenarios_and_the_ledger() {
        let named = |t: &str| VersionSpec::Named(t.into());
        assert_eq!(named("all").expand(3), Ok(vec![0, 1, 2, 3]));
        assert_eq!(named("1..=2").expand(9), Ok(vec![1, 2]));
        assert_eq!(named("4").expand(9), Ok(vec![4]));
        assert!(named("all").covers(None) && named("all").covers(Some(7)));
        assert!(named("1..=2").covers(Some(2)) && !named("1..=2").covers(Some(3)));
        assert!(!named("1..=2").covers(None) && !named("2").covers(Some(1)));
        assert!(!named("x").covers(Some(0)));
        assert!(named("2..=1").expand(9).is_err() && VersionSpec::One(-1).expand(9).is_err());
    }

    fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn a_topic_var_is_exactly_one_placeholder() {
        let t = |s: &str| toml::Value::Table(toml::from_str(&format!("name = \"{s}\"")).unwrap());
        assert_eq!(topic_var(&t("${topic}")), Some("topic"));
        assert_eq!(topic_var(&t("x-${topic}")), None);
        assert_eq!(topic_var(&t("${a}${b}")), None);
    }

    #[test]
    fn includes_inline_fragment_steps_in_place() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "fragments/setup.toml",
            "description = \"d\"\n[[step]]\nname = \"a\"\nsleep_ms = 1\n[[step]]\nname = \"b\"\nsleep_ms = 2\n",
        );
        let p = write(
            dir.path(),
            "s.toml",
            "description = \"x\"\n[[step]]\ninclude = \"setup\"\n[[step]]\nname = \"c\"\nsleep_ms = 3\n",
        );
        let s = Scenario::load(&p).unwrap();
        let names: Vec<_> = s.steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
    }

    #[test]
    fn bad_scenarios_are_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        for (text, why) in [
            ("description = \"x\"\n[[step]]\ninclude = \"nope\"\n", "include 'nope'"),
            (
                "description = \"x\"\n[[step]]\nname = \"a\"\nsleep_ms = 1\n[[step]]\nname = \"a\"\nsleep_ms = 1\n",
                "two steps are named 'a'",
            ),
            ("description = \"x\"\n[[step]]\nname = \"a\"\n", "exactly one of api, sleep_ms, await, kill and restart"),
            (
                "description = \"x\"\n[[step]]\nname = \"k\"\nkill = 0\n",
                "step 'k': broker, roles, kill and restart are for cluster scenarios",
            ),
            (
                "description = \"x\"\nbrokers = 3\n[[step]]\nname = \"e\"\napi = \"EndTxn\"\nbroker = \"not-coordinator\"\n",
                "step 'e': no earlier step binds the role 'coordinator'",
            ),
            (
                "description = \"x\"\nbrokers = 12\n[[step]]\nname = \"s\"\nsleep_ms = 1\n",
                "brokers = 12: a scenario runs on 1 to 9 brokers",
            ),
            (
                "description = \"x\"\n[[step]]\nname = \"j\"\napi = \"JoinGroup\"\nbackground = true\n[[step]]\nname = \"c\"\napi = \"Heartbeat\"\n",
                "connection 'main' is busy with background step 'j'",
            ),
            (
                "description = \"x\"\nbrokers = 3\n[[step]]\nname = \"e\"\napi = \"EndTxn\"\nraced = \"kill\"\n",
                "step 'e': raced is for a background step of a cluster scenario",
            ),
            (
                "description = \"x\"\n[[step]]\nname = \"e\"\napi = \"EndTxn\"\nbackground = true\nraced = \"kill\"\n",
                "step 'e': raced is for a background step of a cluster scenario",
            ),
            (
                "description = \"x\"\n[[step]]\nname = \"w\"\nawait = \"j\"\n",
                "awaits 'j', which is no background step in flight",
            ),
            (
                "description = \"x\"\n[[step]]\nname = \"j\"\napi = \"JoinGroup\"\nversion = \"all\"\nbackground = true\n",
                "a background step sends one request once",
            ),
            ("description = \"x\"\n[[step]]\nsleep_ms = 1\n", "no name"),
            (
                "description = \"x\"\n[[step]]\nname = \"e\"\napi = \"EndTxnn\"\n",
                "step 'e': unknown API 'EndTxnn' (kconform sends InitProducerId,",
            ),
            (
                "description = \"x\"\n[[step]]\nname = \"e\"\napi = \"EndTxn\"\nversion = \"9..=2\"\n",
                "step 'e': version range \"9..=2\" is empty (9 > 2)",
            ),
            (
                "description = \"x\"\n[[step]]\nname = \"e\"\napi = \"EndTxn\"\nversion = \"some\"\n",
                "step 'e': version \"some\": use a number",
            ),
            (
                "description = \"x\"\nunique = [\"txn\"]\n[[step]]\nname = \"e\"\napi = \"EndTxn\"\nrequest = { transactional_id = \"${txn}\", producer_epoch = \"${epoch}\" }\n",
                "step 'e': ${epoch} is not defined here",
            ),
            (
                "description = \"x\"\n[[step]]\nname = \"j\"\napi = \"JoinGroup\"\nbackground = true\ncapture = { m = \"member_id\" }\n[[step]]\nname = \"h\"\napi = \"Heartbeat\"\nconnection = \"b\"\nrequest = { member_id = \"${m}\" }\n",
                "step 'h': ${m} is not defined here",
            ),
        ] {
            let p = write(dir.path(), "s.toml", text);
            let e = Scenario::load(&p).unwrap_err().to_string();
            assert!(e.contains(why), "{e}");
        }
    }
}
