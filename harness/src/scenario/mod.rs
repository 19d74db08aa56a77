//! Scenarios: TOML files in `scenarios/`, each a named sequence of steps.
//!
//! ```toml
//! description = "EndTxn on a transactional id that has begun no transaction"
//! unique = ["txn"]              # names made unique per run, so scenarios share a broker
//!                               # (a table shapes one: { name = "group", bytes = 249 })
//!
//! [[step]]
//! name = "init"
//! api = "InitProducerId"
//! version = 4                   # a version, "all" (each version the target serves), "1..=3",
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

mod acl;
mod checks;
mod fragment;
mod names;
pub mod releases;
mod step;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::data::Source;
pub use acl::AclSpec;
pub use names::Shape;
pub use step::{step_of, Action, BrokerAct, BrokerRef, Request, Step};

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
    /// "all" (one step per version the API has in Apache 3.7, and for the six transaction
    /// APIs each later one the target serves: EndTxn v4-5 on Apache 4.4) or "A..=B".
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

/// Who each connection of a security scenario logs in as: connection → (user, mechanism),
/// as the first step on it says (its `as`, else the scenario's; its `mechanism`, else PLAIN).
/// Empty for other scenarios.
pub fn logins(s: &Scenario) -> BTreeMap<String, (String, String)> {
    let mut out = BTreeMap::new();
    let Some(default) = &s.principal else {
        return out;
    };
    for request in s.steps.iter().filter_map(Step::request) {
        out.entry(request.connection.clone()).or_insert_with(|| {
            let user = request.principal.clone().unwrap_or_else(|| default.clone());
            let mechanism = request
                .mechanism
                .clone()
                .unwrap_or_else(|| crate::wire::sasl::PLAIN.to_owned());
            (user, mechanism)
        });
    }
    out
}

/// The data files in `scenarios/` that are not scenarios: the deviation ledger, the map from
/// spec lines to scenarios, and the allowlist of `kconform peers`.
pub const NOT_SCENARIOS: [&str; 4] = [
    "deviations.toml",
    "spec-lines.toml",
    "peers-allowlist.toml",
    "field-classes.toml",
];

/// A scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Filled from the file name.
    pub name: String,
    /// What it shows.
    pub description: String,
    /// The spec section it comes from.
    pub spec: Option<String>,
    /// Names made unique per run.
    pub unique: Vec<String>,
    /// The shapes some of them are given (an exact length, a fill, a prefix).
    pub shapes: BTreeMap<String, Shape>,
    /// Takes minutes: run only with `--include-slow`.
    pub slow: bool,
    /// The brokers it needs (default 1): it runs on targets of that many brokers only
    /// (`--target ref:3 --target apache:3` for 3).
    pub brokers: usize,
    /// The Apache releases it applies to (`apache = "3.8+"`; every one by default): it runs
    /// where every Apache of the run is one of them ([`releases`]).
    pub apache: releases::Releases,
    /// The user every connection logs in as ([`crate::security::USERS`], or `"anonymous"`
    /// for none): set, the scenario is a security scenario, which runs on the secured targets
    /// only (`ref+sasl`, `apache+sasl`).
    pub principal: Option<String>,
    /// ACLs the super user creates before the steps and deletes after (security scenarios).
    pub acls: Vec<AclSpec>,
    /// The broker settings (Apache's properties) its answers depend on: on a broker whose
    /// settings check named one of them as different, its differences are that broker's
    /// configuration's, and reported so.
    pub settings: Vec<String>,
    /// Steps.
    pub steps: Vec<Step>,
    /// A digest of its file and the fragments it includes, as read (16 hex digits of their
    /// SHA-256): answers recorded from a scenario carry it, so answers recorded from an
    /// earlier text of the scenario are refused instead of compared with what it sends now.
    pub digest: String,
}

/// A scenario file as TOML reads it: [`Scenario`]'s fields, its steps as the file gives them
/// (fragments not yet inlined, each action not yet told apart).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioFile {
    description: String,
    #[serde(default)]
    spec: Option<String>,
    #[serde(default)]
    unique: Vec<names::UniqueEntry>,
    #[serde(default)]
    slow: bool,
    #[serde(default = "one_broker")]
    brokers: usize,
    #[serde(default)]
    apache: Option<String>,
    #[serde(rename = "as")]
    principal: Option<String>,
    #[serde(default)]
    acls: Vec<AclSpec>,
    #[serde(default)]
    settings: Vec<String>,
    #[serde(rename = "step")]
    steps: Vec<step::StepFile>,
}

fn one_broker() -> usize {
    1
}

impl Scenario {
    /// Whether it is a security scenario (it names a user to log in as): it runs on the
    /// secured targets only.
    pub fn secured(&self) -> bool {
        self.principal.is_some()
    }

    /// What it does to brokers (kill, restart, pause, resume, hold and release markers), each
    /// once, in that order, with the act that undoes each (a kill's restart) it needs when it
    /// ends having left them undone:
    /// what a cluster must be able to do to run it (an external one needs a `--fault-cmd` for
    /// each).
    pub fn broker_acts(&self) -> Vec<BrokerAct> {
        let mut acts: Vec<BrokerAct> = self
            .steps
            .iter()
            .filter_map(|step| match step.action {
                Action::Broker(act, _) => Some(act),
                _ => None,
            })
            .flat_map(|act| std::iter::once(act).chain(act.undo()))
            .collect();
        acts.sort_unstable();
        acts.dedup();
        acts
    }

    /// Whether only kaas can run it: it fills a disk, which only kaas-ref's storage fault
    /// switch (or a user's command on kaas pods) can do. No Apache answer is recorded for it;
    /// a run with Apache leaves it out, and says so.
    pub fn kaas_only(&self) -> bool {
        self.broker_acts()
            .iter()
            .any(|act| act.needs_a_disk_switch())
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
        let f: ScenarioFile = toml::from_str(&text).map_err(|e| err(e.to_string()))?;
        let mut digest = Sha256::new();
        digest.update(text.as_bytes());
        let steps = fragment::expand(f.steps, source, 0, &mut digest)
            .and_then(|steps| steps.into_iter().map(step::StepFile::into_step).collect())
            .map_err(err)?;
        let mut unique = Vec::new();
        let mut shapes = BTreeMap::new();
        for (var, shape) in f.unique.into_iter().map(names::UniqueEntry::split) {
            if let Some(shape) = shape {
                shape
                    .check()
                    .map_err(|why| err(format!("unique '{var}': {why}")))?;
                shapes.insert(var.clone(), shape);
            }
            unique.push(var);
        }
        let s = Scenario {
            name: file.strip_suffix(".toml").unwrap_or(file).to_owned(),
            description: f.description,
            spec: f.spec,
            unique,
            shapes,
            slow: f.slow,
            brokers: f.brokers,
            apache: match &f.apache {
                Some(text) => releases::Releases::parse(text).map_err(err)?,
                None => releases::Releases::ALL,
            },
            principal: f.principal,
            acls: f.acls,
            settings: f.settings,
            steps,
            digest: digest.finalize()[..8]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect(),
        };
        if let Some(unknown) = s
            .settings
            .iter()
            .find(|p| !crate::targets::settings::is_assumed(p))
        {
            return Err(err(format!(
                "settings: '{unknown}' is not a setting the brokers are started with (kconform settings lists them)"
            )));
        }
        if !(1..=crate::targets::MAX_BROKERS).contains(&s.brokers) {
            return Err(err(format!(
                "brokers = {}: a scenario runs on 1 to {} brokers",
                s.brokers,
                crate::targets::MAX_BROKERS
            )));
        }
        checks::steps(&s.steps, s.brokers > 1).map_err(err)?;
        checks::requests(&s.steps, &s.unique).map_err(err)?;
        checks::security(&s).map_err(err)?;
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
    fn broker_steps_read_as_what_they_do_to_which_broker() {
        let dir = tempfile::tempdir().unwrap();
        let text = "description = \"x\"\nbrokers = 3\n[[step]]\nname = \"k\"\nkill = 2\n[[step]]\nname = \"r\"\nrestart = 2\n[[step]]\nname = \"p\"\npause = 1\n[[step]]\nname = \"c\"\nresume = 1\n";
        let scenario = Scenario::load(&write(dir.path(), "s.toml", text)).unwrap();
        let acts: Vec<_> = scenario
            .steps
            .iter()
            .map(|s| match &s.action {
                Action::Broker(act, BrokerRef::Node(n)) => (act.key(), *n, s.disrupts()),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            scenario.broker_acts(),
            [
                BrokerAct::Kill,
                BrokerAct::Restart,
                BrokerAct::Pause,
                BrokerAct::Resume
            ]
        );
        assert_eq!(
            acts,
            [
                ("kill", 2, true),
                ("restart", 2, true),
                ("pause", 1, true),
                ("resume", 1, true)
            ]
        );
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
            ("description = \"x\"\n[[step]]\nname = \"a\"\n", "exactly one of api, sleep_ms, await, kill, restart, pause, resume, hold_markers, release_markers"),
            (
                "description = \"x\"\nbrokers = 3\n[[step]]\nname = \"p\"\npause = 0\nresume = 0\n",
                "step 'p': give exactly one of api, sleep_ms, await, kill, restart, pause, resume, hold_markers, release_markers",
            ),
            (
                "description = \"x\"\n[[step]]\nname = \"p\"\npause = 1\n",
                "step 'p': broker, roles and what is done to a broker (kill, restart, pause, resume, hold_markers, release_markers, fill_disk, free_disk) are for cluster scenarios",
            ),
            (
                "description = \"x\"\nbrokers = 3\n[[step]]\nname = \"r\"\nresume = \"coordinator\"\n",
                "step 'r': no earlier step binds the role 'coordinator'",
            ),
            (
                "description = \"x\"\nbrokers = 3\n[[step]]\nname = \"p\"\npause = 1\nexpect = { error_code = 0 }\n",
                "step 'p': expect is for a step that sends a request (this one pauses a broker)",
            ),
            (
                "description = \"x\"\n[[step]]\nname = \"k\"\nkill = 0\n",
                "step 'k': broker, roles and what is done to a broker",
            ),
            (
                "description = \"x\"\nbrokers = 3\n[[step]]\nname = \"e\"\napi = \"EndTxn\"\nbroker = \"not-coordinator\"\n",
                "step 'e': no earlier step binds the role 'coordinator'",
            ),
            (
                "description = \"x\"\n[[step]]\nname = \"m\"\napi = \"WriteTxnMarkers\"\nversion = \"all\"\nunserved = \"removed\"\n",
                "step 'm': unserved sends one version a target may not serve: name it (version = 0)",
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
            (
                "description = \"x\"\n[[step]]\nname = \"c\"\napi = \"EndTxn\"\ncut = \"dies\"\nexpect = { error_code = 0 }\n",
                "step 'c': a step that cuts its connection reads no answer",
            ),
            (
                "description = \"x\"\n[[step]]\nname = \"c\"\napi = \"EndTxn\"\ncut = \"dies\"\nbackground = true\n",
                "step 'c': a step that cuts its connection reads no answer",
            ),
            (
                "description = \"x\"\n[[step]]\nname = \"c\"\nsleep_ms = 1\ncut = \"dies\"\n",
                "step 'c': cut is for a step that sends a request (this one sleeps)",
            ),
            ("description = \"x\"\n[[step]]\nsleep_ms = 1\n", "no name"),
            (
                "description = \"x\"\n[[step]]\nname = \"p\"\nsleep_ms = 1\nexpect = { error_code = 0 }\n",
                "step 'p': expect is for a step that sends a request (this one sleeps)",
            ),
            (
                "description = \"x\"\nbrokers = 3\n[[step]]\nname = \"k\"\nkill = 0\nconnection = \"b\"\ntiming = \"t\"\n",
                "step 'k': connection, timing are for a step that sends a request (this one kills a broker)",
            ),
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
