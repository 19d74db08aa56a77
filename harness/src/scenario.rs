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

/// One step.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Name, unique within the scenario.
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
    /// A pause instead of a request.
    pub sleep_ms: Option<u64>,
    /// Send the request this many times (default 1) and record only the last answer;
    /// `expect` must hold on every answer, and the first that breaks it is recorded instead.
    pub repeat: Option<u32>,
}

fn default_connection() -> String {
    "main".into()
}

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
    /// Steps.
    #[serde(rename = "step")]
    pub steps: Vec<Step>,
}

impl Scenario {
    /// Parses a scenario file.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let err = |reason: String| ScenarioError::Read {
            path: path.display().to_string(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        let mut s: Scenario = toml::from_str(&text).map_err(|e| err(e.to_string()))?;
        s.name = path
            .file_stem()
            .and_then(|n| n.to_str())
            .unwrap_or("scenario")
            .to_owned();
        Ok(s)
    }

    /// Every `*.toml` scenario in a directory (the ledger excluded), sorted by name.
    pub fn load_dir(dir: &Path) -> Result<Vec<Scenario>, ScenarioError> {
        let entries = std::fs::read_dir(dir).map_err(|e| ScenarioError::Read {
            path: dir.display().to_string(),
            reason: e.to_string(),
        })?;
        let mut paths: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .filter(|p| p.file_name().is_some_and(|n| n != "deviations.toml"))
            .collect();
        paths.sort();
        paths.iter().map(|p| Scenario::load(p)).collect()
    }
}
