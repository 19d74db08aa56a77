//! Which later steps of a scenario a step's answer flows into: the values it hands on (its
//! captures, the roles it binds, the topics it creates) and the steps that take them (a
//! `${var}` in their request, a `broker = "role"` that routes them, a topic they name, an
//! `await` that records a background step's answer). A topic's creation hands on only its
//! error code: whether the topic exists for the steps after.
//! A later difference is a consequence of an earlier one only along these edges
//! ([`super::causes`]): what a scenario does not pass on from one step to the next, a
//! difference there cannot have broken. Read from the scenarios as written, before any run.

use std::collections::BTreeMap;

use crate::scenario::{step_of, Action, Scenario};

/// What one step takes from an earlier step's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taken {
    /// The step whose answer it is (the step that records it: an await for a background
    /// step's answer).
    pub from: String,
    /// Where in that answer (`producer_epoch`, `coordinators.0.node_id`).
    pub path: String,
    /// How the later step uses it: `${epoch}`, `broker = coordinator`.
    pub how: String,
}

impl Taken {
    /// Whether a difference at `path` of the step's answer changes what is taken: the field
    /// itself, a part of it, what holds it, or the answer's kind (`outcome`). A `*` in the
    /// taken path stands for any array index.
    pub fn is_touched_by(&self, path: &str) -> bool {
        if path == "outcome" {
            return true;
        }
        let mut taken = self.path.split('.');
        let mut differs = path.split('.');
        loop {
            match (taken.next(), differs.next()) {
                // One is the other, or holds it.
                (None, _) | (_, None) => return true,
                (Some("*"), Some(index)) if index.bytes().all(|b| b.is_ascii_digit()) => {}
                (Some(a), Some(b)) if a == b => {}
                _ => return false,
            }
        }
    }

    /// `'init'.producer_epoch as ${epoch}`: the hop as a reader follows it.
    pub fn describe(&self) -> String {
        format!("'{}'.{} as {}", self.from, self.path, self.how)
    }
}

/// The data flow of every scenario of a run: per scenario, per step, what it takes.
#[derive(Debug, Clone, Default)]
pub struct Flows {
    scenarios: BTreeMap<String, BTreeMap<String, Vec<Taken>>>,
}

impl Flows {
    /// The flow of each of `scenarios`.
    pub fn of(scenarios: &[&Scenario]) -> Flows {
        Flows {
            scenarios: scenarios
                .iter()
                .map(|s| (s.name.clone(), takes(s)))
                .collect(),
        }
    }

    /// These flows and one more: `step` of `scenario` takes `taken` (a flow that no scenario
    /// file says, for a caller that builds its steps otherwise).
    pub fn taking(mut self, scenario: &str, step: &str, taken: Taken) -> Flows {
        self.scenarios
            .entry(scenario.to_owned())
            .or_default()
            .entry(step.to_owned())
            .or_default()
            .push(taken);
        self
    }

    /// What the step a record is labelled `label` (`init`, or `init@v3` in a sweep) takes from
    /// earlier answers (a sweep's step from its own earlier versions too: a topic it creates);
    /// nothing for a step or scenario it does not know.
    pub fn takes(&self, scenario: &str, label: &str) -> &[Taken] {
        self.scenarios
            .get(scenario)
            .and_then(|steps| steps.get(step_of(label)))
            .map_or(&[], Vec::as_slice)
    }
}

/// What a topic's creation hands on to the steps that name the topic: the error code of each
/// topic of its answer, which says whether the topic exists.
const CREATED: &str = "topics.*.error_code";

/// Per step of `s`, what it takes from earlier answers, in step order: a variable a step uses
/// comes from the last step before it that captured that name (a sweep's or a repeat's last
/// answer), a role from the last that bound it. A background step's captures are made, and
/// its answer recorded, at the step that awaits it.
fn takes(s: &Scenario) -> BTreeMap<String, Vec<Taken>> {
    // var → (recording step, path); role → (recording step, path)
    let mut captured: BTreeMap<&str, (String, &str)> = BTreeMap::new();
    let mut roles: BTreeMap<&str, (String, &str)> = BTreeMap::new();
    // topic variable → the step that created it
    let mut topics: BTreeMap<String, String> = BTreeMap::new();
    let mut background: BTreeMap<&str, Vec<Taken>> = BTreeMap::new();
    let mut out: BTreeMap<String, Vec<Taken>> = BTreeMap::new();
    for step in &s.steps {
        let (request, records_at) = match &step.action {
            Action::Request(r) => (r.as_ref(), step.name.as_str()),
            Action::Await(awaited) => {
                let Some(r) = s.steps.iter().find(|st| st.name == *awaited) else {
                    continue;
                };
                let Some(r) = r.request() else { continue };
                let taken = background.remove(awaited.as_str()).unwrap_or_default();
                out.insert(step.name.clone(), taken);
                hand_on(r, &step.name, &mut captured, &mut roles);
                continue;
            }
            _ => continue,
        };
        let mut taken = Vec::new();
        for var in request.variables() {
            let from = match (captured.get(var.as_str()), topics.get(&var)) {
                (Some((from, path)), _) => Some((from.clone(), (*path).to_owned(), "")),
                (None, Some(from)) => Some((from.clone(), CREATED.to_owned(), "topic ")),
                (None, None) => None,
            };
            if let Some((from, path, kind)) = from {
                let t = Taken {
                    from,
                    path,
                    how: format!("{kind}${{{var}}}"),
                };
                if !taken.contains(&t) {
                    taken.push(t);
                }
            }
        }
        let role = request.broker.as_ref().and_then(|b| b.role());
        if let Some((from, path)) = role.and_then(|(role, _)| roles.get(role)) {
            taken.push(Taken {
                from: from.clone(),
                path: (*path).to_owned(),
                how: format!("broker = {}", request.broker.as_ref().expect("a role")),
            });
        }
        match request.background {
            true => {
                background.insert(records_at, taken);
            }
            false => {
                out.insert(records_at.to_owned(), taken);
                hand_on(request, records_at, &mut captured, &mut roles);
            }
        }
        // A set-up step (`creates_topics`) is a CreateTopics too.
        if request.api == "CreateTopics" {
            let named = request.fields.get("topics").and_then(toml::Value::as_array);
            for topic in named.into_iter().flatten() {
                if let Some(var) = crate::scenario::topic_var(topic) {
                    topics.insert(var.to_owned(), records_at.to_owned());
                    // A sweep's earlier versions made the topic its later ones name again.
                    let again = Taken {
                        from: records_at.to_owned(),
                        path: CREATED.to_owned(),
                        how: format!("topic ${{{var}}}"),
                    };
                    if let Some(taken) = out.get_mut(records_at).filter(|t| !t.contains(&again)) {
                        taken.push(again);
                    }
                }
            }
        }
    }
    out
}

/// Records what `request`'s answer, recorded at `at`, hands on to later steps.
fn hand_on<'s>(
    request: &'s crate::scenario::Request,
    at: &str,
    captured: &mut BTreeMap<&'s str, (String, &'s str)>,
    roles: &mut BTreeMap<&'s str, (String, &'s str)>,
) {
    for (var, path) in &request.capture {
        captured.insert(var, (at.to_owned(), path));
    }
    for (role, path) in &request.roles {
        roles.insert(role, (at.to_owned(), path));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Source;

    fn scenario(text: &str) -> Scenario {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s.toml"), text).unwrap();
        Scenario::read(&Source::Dir(dir.path().to_owned()), "s.toml").unwrap()
    }

    const TEXT: &str = r#"
description = "x"
unique = ["txn", "topic"]

[[step]]
name = "find"
api = "FindCoordinator"
request = { key = "${txn}", key_type = 1 }

[[step]]
name = "create"
api = "CreateTopics"
creates_topics = true
request = { topics = [{ name = "${topic}", num_partitions = 1, replication_factor = 1 }] }

[[step]]
name = "read"
api = "Metadata"
request = { topics = [{ name = "${topic}" }] }

[[step]]
name = "init"
api = "InitProducerId"
version = "all"
request = { transactional_id = "${txn}", transaction_timeout_ms = 60000 }
capture = { pid = "producer_id", epoch = "producer_epoch" }

[[step]]
name = "end"
api = "EndTxn"
background = true
request = { transactional_id = "${txn}", producer_id = "${pid}", producer_epoch = "${epoch}", committed = true }

[[step]]
name = "end-answer"
await = "end"

[[step]]
name = "again"
api = "InitProducerId"
request = { transactional_id = "${txn}", transaction_timeout_ms = 60000, producer_id = "${pid}", producer_epoch = "${epoch}" }
"#;

    /// A step takes what it names from the step that captured it; a unique name is nobody's;
    /// an awaited answer takes what its background request named; a sweep's label is its step.
    #[test]
    fn each_step_takes_what_it_names_from_where_it_was_captured() {
        let s = scenario(TEXT);
        let flows = Flows::of(&[&s]);
        assert!(
            flows.takes("s", "find").is_empty(),
            "a unique name flows from no answer"
        );
        assert!(flows.takes("s", "init@v2").is_empty());
        assert_eq!(
            flows.takes("s", "create@v1")[0].describe(),
            "'create'.topics.*.error_code as topic ${topic}",
            "a sweep's later versions meet the topic its earlier ones made"
        );
        assert_eq!(
            flows.takes("s", "read")[0].describe(),
            "'create'.topics.*.error_code as topic ${topic}",
            "a topic's creation hands on whether it exists"
        );
        let awaited = flows.takes("s", "end-answer");
        assert_eq!(
            awaited.iter().map(Taken::describe).collect::<Vec<_>>(),
            [
                "'init'.producer_epoch as ${epoch}",
                "'init'.producer_id as ${pid}"
            ]
        );
        assert!(flows.takes("s", "end").is_empty(), "recorded at its await");
        assert_eq!(flows.takes("s", "again").len(), 2);
        assert!(flows.takes("other", "again").is_empty());
        assert_eq!(step_of("init@v12"), "init");
        assert_eq!(step_of("a@vb"), "a@vb");
    }

    #[test]
    fn a_difference_touches_what_is_taken_only_along_its_path() {
        let t = Taken {
            from: "init".into(),
            path: "topics.0.topic_id".into(),
            how: "${id}".into(),
        };
        assert!(t.is_touched_by("topics.0.topic_id"));
        assert!(t.is_touched_by("topics"), "what holds it");
        assert!(t.is_touched_by("outcome"), "the answer's kind");
        assert!(!t.is_touched_by("topics.0.topic_id_other"));
        assert!(!t.is_touched_by("topics.0.error_message"));
        assert!(!t.is_touched_by("throttle_time_ms"));
        let created = Taken {
            path: "topics.*.error_code".into(),
            ..t
        };
        assert!(created.is_touched_by("topics.1.error_code"));
        assert!(!created.is_touched_by("topics.1.num_partitions"));
        assert!(!created.is_touched_by("topics.x.error_code"));
    }
}
