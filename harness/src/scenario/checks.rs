//! The checks a scenario passes when it is loaded, so that a run never meets a step it cannot
//! take: names unique, roles bound before use, background steps awaited, variables defined
//! before use, APIs and versions known, logins to users the targets have.

use std::collections::{BTreeMap, BTreeSet};

use super::{logins, Action, Request, Scenario, Step, VersionSpec};

/// Each step has a unique name, names roles an earlier step bound, and keeps its action to
/// the scenarios it belongs to (kill, restart, pause, resume, broker and roles to clusters); a background
/// step sends one request once and is awaited before its connection is used again.
pub(super) fn steps(steps: &[Step], cluster: bool) -> Result<(), String> {
    let mut seen = BTreeSet::new();
    let mut roles = BTreeSet::new();
    // Background steps not yet awaited: name → connection.
    let mut in_flight: BTreeMap<&str, &str> = BTreeMap::new();
    for step in steps {
        let name = step.name.as_str();
        if !seen.insert(name) {
            return Err(format!("two steps are named '{name}'"));
        }
        // The brokers the step names (to send to, kill or restart).
        let brokers = match &step.action {
            Action::Broker(_, b) => vec![b],
            Action::Request(r) => r.broker.iter().collect(),
            _ => Vec::new(),
        };
        let binds_roles = step.request().is_some_and(|r| !r.roles.is_empty());
        if !cluster && (!brokers.is_empty() || binds_roles) {
            return Err(format!(
                "step '{name}': broker, roles and what is done to a broker ({}) are for cluster scenarios (set `brokers` to 2 or more)",
                crate::scenario::BrokerAct::keys()
            ));
        }
        for b in brokers {
            if let Some((role, _)) = b.role() {
                if !roles.contains(role) {
                    return Err(format!(
                        "step '{name}': no earlier step binds the role '{role}' (bind it with `roles = {{ {role} = \"node_id\" }}` on a FindCoordinator or Metadata step)"
                    ));
                }
            }
        }
        let request = match &step.action {
            Action::Await(awaited) => {
                if in_flight.remove(awaited.as_str()).is_none() {
                    return Err(format!(
                        "step '{name}': awaits '{awaited}', which is no background step in flight"
                    ));
                }
                continue;
            }
            Action::Request(r) => r,
            _ => continue,
        };
        if !cluster && !request.expect_roles.is_empty() {
            return Err(format!(
                "step '{name}': expect_roles is for cluster scenarios (set `brokers` to 2 or more)"
            ));
        }
        if let Some(role) = request
            .expect_roles
            .values()
            .find(|r| !roles.contains(r.as_str()))
        {
            return Err(format!(
                "step '{name}': expect_roles names '{role}', which no earlier step binds"
            ));
        }
        roles.extend(request.roles.keys().map(String::as_str));
        if let Some((busy, _)) = in_flight.iter().find(|(_, c)| **c == request.connection) {
            return Err(format!(
                "step '{name}': connection '{}' is busy with background step '{busy}' until it is awaited",
                request.connection
            ));
        }
        how_it_is_sent(name, request, cluster)?;
        if request.background {
            in_flight.insert(name, request.connection.as_str());
        }
    }
    Ok(())
}

/// How a request step may be sent, from its own fields: one that closes or cuts its
/// connection reads no answer, `unserved` names one version, `raced` is for a background step
/// of a cluster scenario that captures nothing, and a background step sends one request once.
fn how_it_is_sent(name: &str, request: &Request, cluster: bool) -> Result<(), String> {
    if request.closes.is_some()
        && (request.background
            || !request.capture.is_empty()
            || !request.until.is_empty()
            || request.repeat.is_some_and(|r| r > 1))
    {
        return Err(format!(
            "step '{name}': a step that closes its connection gets no answer: no background, capture, until or repeat"
        ));
    }
    if request.cut.is_some()
        && (request.background
            || request.closes.is_some()
            || request.raced.is_some()
            || !request.capture.is_empty()
            || !request.roles.is_empty()
            || !request.expect.is_empty()
            || !request.expect_roles.is_empty()
            || !request.until.is_empty()
            || !request.until_roles.is_empty()
            || request.retry_retriable
            || request.repeat.is_some_and(|r| r > 1))
    {
        return Err(format!(
            "step '{name}': a step that cuts its connection reads no answer: no background, closes, raced, capture, roles, expect, until, retry_retriable or repeat (show what the broker did with later steps)"
        ));
    }
    if request.unserved.is_some() && !matches!(request.version, Some(VersionSpec::One(_))) {
        return Err(format!(
            "step '{name}': unserved sends one version a target may not serve: name it (version = 0)"
        ));
    }
    if request.raced.is_some() && !(cluster && request.background) {
        return Err(format!(
            "step '{name}': raced is for a background step of a cluster scenario, awaited after the kill it races"
        ));
    }
    if request.raced.is_some() && !(request.capture.is_empty() && request.roles.is_empty()) {
        return Err(format!(
            "step '{name}': a raced step may get no answer, so it can capture nothing (no capture or roles)"
        ));
    }
    if request.background {
        let sweep = matches!(&request.version, Some(VersionSpec::Named(_)));
        if sweep || !request.until.is_empty() || request.repeat.is_some_and(|r| r > 1) {
            return Err(format!(
                "step '{name}': a background step sends one request once (no version sweep, until or repeat)"
            ));
        }
    }
    Ok(())
}

/// Each request names an API kconform knows at versions that parse, and uses only variables
/// that exist by then: the scenario's `unique` names and what earlier steps captured (a
/// background step's captures once it is awaited).
pub(super) fn requests(steps: &[Step], unique: &[String]) -> Result<(), String> {
    let mut defined: BTreeSet<String> = unique.iter().cloned().collect();
    let mut pending: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for step in steps {
        let name = &step.name;
        let request = match &step.action {
            Action::Await(awaited) => {
                defined.extend(pending.remove(awaited.as_str()).unwrap_or_default());
                continue;
            }
            Action::Request(r) => r,
            _ => continue,
        };
        let api = &request.api;
        if crate::api::request::api_key(api).is_none() {
            return Err(format!(
                "step '{name}': unknown API '{api}' (kconform sends {})",
                crate::api::names()
            ));
        }
        if let Some(version) = &request.version {
            version
                .expand(0)
                .map_err(|e| format!("step '{name}': {e}"))?;
        }
        if request.creates_topics {
            let topics = request.fields.get("topics").and_then(toml::Value::as_array);
            let vars: Vec<Option<&str>> =
                topics.into_iter().flatten().map(super::topic_var).collect();
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
        if let Some(var) = request.renames.as_ref().filter(|v| !unique.contains(v)) {
            return Err(format!(
                "step '{name}': renames '{var}', which is not in `unique`"
            ));
        }
        let used = request.variables();
        if let Some(missing) = used.iter().find(|v| !defined.contains(*v)) {
            return Err(format!(
                "step '{name}': ${{{missing}}} is not defined here (define it in `unique`, or capture it in an earlier step)"
            ));
        }
        let captured = request.capture.keys().cloned();
        match request.background {
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
pub(super) fn security(s: &Scenario) -> Result<(), String> {
    let secured = s.principal.is_some();
    let known =
        |user: &str| user == crate::security::NOBODY || crate::security::password(user).is_some();
    if let Some(user) = s.principal.as_deref().filter(|u| !known(u)) {
        return Err(format!(
            "as = \"{user}\": no such user (the targets know {}, and \"anonymous\")",
            crate::security::user_names()
        ));
    }
    let requests = s
        .steps
        .iter()
        .filter_map(|st| Some((&st.name, st.request()?)));
    if !secured
        && (!s.acls.is_empty()
            || requests
                .clone()
                .any(|(_, r)| r.principal.is_some() || r.mechanism.is_some()))
    {
        return Err("acls, and a step's as and mechanism, are for security scenarios (give the scenario `as = \"<user>\"`)".into());
    }
    if !secured {
        return Ok(());
    }
    let logins = logins(s);
    for (name, request) in requests {
        let (user, mechanism) = &logins[&request.connection];
        if !known(user) {
            return Err(format!("step '{name}': as = \"{user}\": no such user"));
        }
        if !crate::security::MECHANISMS.contains(&mechanism.as_str()) {
            return Err(format!(
                "step '{name}': mechanism '{mechanism}': use PLAIN or SCRAM-SHA-512"
            ));
        }
        let named = (request.principal.as_ref(), request.mechanism.as_ref());
        if named.0.is_some_and(|u| u != user) || named.1.is_some_and(|m| m != mechanism) {
            return Err(format!(
                "step '{name}': connection '{}' logs in as {user} ({mechanism}), as its first step says; use another connection for another login",
                request.connection
            ));
        }
    }
    for acl in &s.acls {
        acl.wire(|n| Ok(n.to_owned()))?;
    }
    Ok(())
}
