//! A scenario's steps: what the file says ([`StepFile`], one flat table per `[[step]]`, as
//! TOML reads it) and what the runner acts on ([`Step`], whose [`Action`] says which of the
//! things it does). Reading one into the other is where a step that names two actions,
//! or fields its action has no use for, is refused; past it, no code asks a step what it is.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::VersionSpec;
pub use crate::targets::faults::BrokerAct;

/// One step of a scenario, named uniquely within it.
#[derive(Debug, Clone)]
pub struct Step {
    /// Name, unique within the scenario: the label its records carry.
    pub name: String,
    /// What it does.
    pub action: Action,
}

/// What a step does.
#[derive(Debug, Clone)]
pub enum Action {
    /// Sends a request (boxed: it is most of a step's size, and the other actions are small).
    Request(Box<Request>),
    /// Pauses this many milliseconds.
    Sleep(u64),
    /// Waits for the answer of the named background step, and records it (with that step's
    /// captures and expectations) here.
    Await(String),
    /// Does this to this broker of the cluster.
    Broker(BrokerAct, BrokerRef),
}

impl Step {
    /// The request it sends, when it sends one.
    pub fn request(&self) -> Option<&Request> {
        match &self.action {
            Action::Request(r) => Some(r),
            _ => None,
        }
    }

    /// Whether it kills, restarts, pauses or resumes a broker.
    pub fn disrupts(&self) -> bool {
        matches!(self.action, Action::Broker(..))
    }
}

/// A step that sends a request: what it sends, where, and what its answer must show.
#[derive(Debug, Clone)]
pub struct Request {
    /// API name, as Apache names it (`EndTxn`).
    pub api: String,
    /// Version(s); none means the highest both sides serve.
    pub version: Option<VersionSpec>,
    /// Named connection (default "main").
    pub connection: String,
    /// Request fields (the file's `request`).
    pub fields: toml::Table,
    /// Variables to capture: name → response field path.
    pub capture: BTreeMap<String, String>,
    /// Field path → value that must hold on every target.
    pub expect: BTreeMap<String, toml::Value>,
    /// Repeat the request until these field values hold (a broker that is still creating a
    /// topic or loading a coordinator answers a retriable error first, as clients see).
    pub until: BTreeMap<String, toml::Value>,
    /// How long `until` may keep trying, in milliseconds (default 15000).
    pub within_ms: Option<u64>,
    /// Send the request again while the answer carries an error code clients retry, within
    /// `within_ms`, and record the first answer without one, or the last: what a client would
    /// end up seeing. The steps `kconform fuzz` writes.
    pub retry_retriable: bool,
    /// Send the request this many times (default 1) and record only the last answer;
    /// `expect` must hold on every answer, and the first that breaks it is recorded instead.
    pub repeat: Option<u32>,
    /// Send the request and go on without its answer; a later await step records it. Its
    /// connection is busy until then.
    pub background: bool,
    /// A CreateTopics that sets up the topics the scenario works on (each named `${var}` of
    /// `unique`), rather than one under test: not sent where topics are provisioned.
    pub creates_topics: bool,
    /// In a cluster scenario, the broker the request goes to; none: any broker up.
    pub broker: Option<BrokerRef>,
    /// Roles this answer names: role → path of a node id in it.
    pub roles: BTreeMap<String, String>,
    /// Path of a node id → the role it must be.
    pub expect_roles: BTreeMap<String, String>,
    /// Path of a node id → role (or `not-<role>`) that `until` also waits for.
    pub until_roles: BTreeMap<String, String>,
    /// A `unique` variable given another name each time `until_roles` does not hold.
    pub renames: Option<String>,
    /// Fields of the answer recorded as `"not compared"` on every target.
    pub not_compared: Vec<String>,
    /// Why this step's answer depends on timing: not kept in snapshots.
    pub timing: Option<String>,
    /// Why this background step races a `kill`: an answer or a closed connection, alike.
    pub raced: Option<String>,
    /// Why the broker must close the connection instead of answering.
    pub closes: Option<String>,
    /// Why kconform cuts the connection as soon as the request is written, without reading
    /// its answer: a client that dies, or gives up, with the request in flight. The broker has
    /// the whole request; the steps after show whether it carried it out.
    pub cut: Option<String>,
    /// Why the step is sent at its version even to a target whose ApiVersions leaves that
    /// version out (what a 4.x broker does with WriteTxnMarkers v0, which KIP-896 removed);
    /// without it such a step is recorded as unsupported and not sent.
    pub unserved: Option<String>,
    /// In a security scenario, the user this step's connection logs in as.
    pub principal: Option<String>,
    /// The SASL mechanism of this step's connection.
    pub mechanism: Option<String>,
}

impl Request {
    /// The variables its request fields name (`${pid}`), each as often as named, in the order
    /// written: what it takes from the unique names and from earlier steps' captures.
    pub fn variables(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.fields.values().for_each(|v| variables_in(v, &mut out));
        out
    }
}

/// The step a record's label names: `init`, or `init@v3` for one version of a sweep (the
/// labels the runner gives a step sent at several versions) → `init`.
pub fn step_of(label: &str) -> &str {
    match label.rsplit_once("@v") {
        Some((step, v)) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => step,
        _ => label,
    }
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

/// A `[[step]]` table as the file gives it: every field any action takes, all optional.
/// The fields are documented on [`Request`] and [`Action`].
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct StepFile {
    #[serde(default)]
    pub(super) name: String,
    api: Option<String>,
    version: Option<VersionSpec>,
    connection: Option<String>,
    #[serde(default)]
    request: toml::Table,
    #[serde(default)]
    capture: BTreeMap<String, String>,
    #[serde(default)]
    expect: BTreeMap<String, toml::Value>,
    #[serde(default)]
    until: BTreeMap<String, toml::Value>,
    within_ms: Option<u64>,
    #[serde(default)]
    retry_retriable: bool,
    sleep_ms: Option<u64>,
    /// Inline the steps of `scenarios/fragments/<name>.toml` here: replaced before the step
    /// is read (see [`super::fragment`]).
    pub(super) include: Option<String>,
    repeat: Option<u32>,
    #[serde(default)]
    background: bool,
    #[serde(default)]
    creates_topics: bool,
    #[serde(rename = "await")]
    await_step: Option<String>,
    broker: Option<BrokerRef>,
    #[serde(default)]
    roles: BTreeMap<String, String>,
    #[serde(default)]
    expect_roles: BTreeMap<String, String>,
    #[serde(default)]
    until_roles: BTreeMap<String, String>,
    renames: Option<String>,
    #[serde(default)]
    not_compared: Vec<String>,
    timing: Option<String>,
    raced: Option<String>,
    closes: Option<String>,
    cut: Option<String>,
    unserved: Option<String>,
    kill: Option<BrokerRef>,
    restart: Option<BrokerRef>,
    pause: Option<BrokerRef>,
    resume: Option<BrokerRef>,
    hold_markers: Option<BrokerRef>,
    release_markers: Option<BrokerRef>,
    fill_disk: Option<BrokerRef>,
    free_disk: Option<BrokerRef>,
    #[serde(rename = "as")]
    principal: Option<String>,
    mechanism: Option<String>,
}

impl StepFile {
    /// The step it describes; why not, when it names no action, two, or fields its action
    /// has no use for (a pause with an `expect` would otherwise be silently ignored).
    pub(super) fn into_step(self) -> Result<Step, String> {
        let name = self.name.clone();
        if name.is_empty() {
            return Err("a step has no name".into());
        }
        let acts = [
            (BrokerAct::Kill, &self.kill),
            (BrokerAct::Restart, &self.restart),
            (BrokerAct::Pause, &self.pause),
            (BrokerAct::Resume, &self.resume),
            (BrokerAct::HoldMarkers, &self.hold_markers),
            (BrokerAct::ReleaseMarkers, &self.release_markers),
            (BrokerAct::FillDisk, &self.fill_disk),
            (BrokerAct::FreeDisk, &self.free_disk),
        ];
        let named = [
            self.api.is_some(),
            self.sleep_ms.is_some(),
            self.await_step.is_some(),
        ]
        .into_iter()
        .chain(acts.iter().map(|(_, b)| b.is_some()));
        if named.filter(|n| *n).count() != 1 {
            return Err(format!(
                "step '{name}': give exactly one of api, sleep_ms, await, {}",
                BrokerAct::keys()
            ));
        }
        // A step that sends no request: its action, and what the refusal calls it.
        let act = acts.iter().find_map(|(act, b)| Some((*act, (*b).clone()?)));
        let other = match (&self.sleep_ms, &self.await_step, act) {
            (Some(ms), ..) => Some((Action::Sleep(*ms), "sleeps".to_string())),
            (_, Some(awaited), _) => {
                Some((Action::Await(awaited.clone()), "awaits another".into()))
            }
            (_, _, Some((act, b))) => {
                Some((Action::Broker(act, b), format!("{} a broker", act.doing())))
            }
            _ => None,
        };
        if let Some((action, doing)) = other {
            let stray = self.request_fields_given();
            if !stray.is_empty() {
                return Err(format!(
                    "step '{name}': {} {} for a step that sends a request (this one {doing})",
                    stray.join(", "),
                    if stray.len() == 1 { "is" } else { "are" },
                ));
            }
            return Ok(Step { name, action });
        }
        let action = Action::Request(Box::new(Request {
            api: self.api.unwrap_or_default(),
            version: self.version,
            connection: self.connection.unwrap_or_else(|| "main".into()),
            fields: self.request,
            capture: self.capture,
            expect: self.expect,
            until: self.until,
            within_ms: self.within_ms,
            retry_retriable: self.retry_retriable,
            repeat: self.repeat,
            background: self.background,
            creates_topics: self.creates_topics,
            broker: self.broker,
            roles: self.roles,
            expect_roles: self.expect_roles,
            until_roles: self.until_roles,
            renames: self.renames,
            not_compared: self.not_compared,
            timing: self.timing,
            raced: self.raced,
            closes: self.closes,
            cut: self.cut,
            unserved: self.unserved,
            principal: self.principal,
            mechanism: self.mechanism,
        }));
        Ok(Step { name, action })
    }

    /// The request step's fields this table gives, by their names in the file.
    fn request_fields_given(&self) -> Vec<&'static str> {
        let given = [
            ("version", self.version.is_some()),
            ("connection", self.connection.is_some()),
            ("request", !self.request.is_empty()),
            ("capture", !self.capture.is_empty()),
            ("expect", !self.expect.is_empty()),
            ("until", !self.until.is_empty()),
            ("within_ms", self.within_ms.is_some()),
            ("retry_retriable", self.retry_retriable),
            ("repeat", self.repeat.is_some()),
            ("background", self.background),
            ("creates_topics", self.creates_topics),
            ("broker", self.broker.is_some()),
            ("roles", !self.roles.is_empty()),
            ("expect_roles", !self.expect_roles.is_empty()),
            ("until_roles", !self.until_roles.is_empty()),
            ("renames", self.renames.is_some()),
            ("not_compared", !self.not_compared.is_empty()),
            ("timing", self.timing.is_some()),
            ("raced", self.raced.is_some()),
            ("closes", self.closes.is_some()),
            ("cut", self.cut.is_some()),
            ("unserved", self.unserved.is_some()),
            ("as", self.principal.is_some()),
            ("mechanism", self.mechanism.is_some()),
        ];
        given.iter().filter(|(_, g)| *g).map(|(f, _)| *f).collect()
    }
}
