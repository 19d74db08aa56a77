//! Which (API, version, error code) cells the scenarios reach on each target, against the
//! codes each transaction API can return: the map of what the scenario library proves and
//! what it leaves unexercised.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::release::Release;
use crate::transcript::{Outcome, Transcript};
use crate::wire::error_codes;

pub use crate::api::TRANSACTION_APIS;

/// The codes Apache added after 3.7 to what a transaction API can return, each with the
/// release that added it: TRANSACTION_ABORTABLE with KIP-890 part 1, and TxnOffsetCommit v6's
/// GROUP_ID_NOT_FOUND, UNKNOWN_TOPIC_ID and STALE_MEMBER_EPOCH with KIP-1319.
///
/// The message definitions of InitProducerId v5, AddOffsetsToTxn v4 and EndTxn v4 list
/// TRANSACTION_ABORTABLE too, so that clients handle it, but no broker from 3.8.1 to 4.4.0
/// returns it on them: its bytecode names the code (or its exception) only in the verify-only
/// AddPartitionsToTxn and the produce- and offset-side verification
/// (`ci/apache-error-sites.sh TRANSACTION_ABORTABLE` shows where). Counted there, it would be
/// "unreached" for ever; a later release that returns it belongs here.
const LATER_CODES: [(&str, (u8, u8), i16); 5] = [
    ("AddPartitionsToTxn", (3, 8), 120),
    ("TxnOffsetCommit", (3, 8), 120),
    ("TxnOffsetCommit", (4, 4), 69),
    ("TxnOffsetCommit", (4, 4), 100),
    ("TxnOffsetCommit", (4, 4), 113),
];

/// The codes an API can return ([`crate::api::Api::codes`], Apache 3.7's and kaas's) and,
/// on any of `releases`, the codes later Apache releases added; none for an API kconform does
/// not know.
pub fn possible_codes(api: &str, releases: &[Release]) -> Vec<i16> {
    let mut codes: BTreeSet<i16> = crate::api::by_name(api)
        .map_or(&[][..], |a| a.codes)
        .iter()
        .copied()
        .collect();
    for (name, since, code) in LATER_CODES {
        if name == api && releases.iter().any(|r| (r.major, r.minor) >= since) {
            codes.insert(code);
        }
    }
    codes.into_iter().collect()
}

/// The kind of broker a target is, for its cells: its name without the size and the login
/// (`ref:3+sasl` counts for `ref`, `apache@4.4.0+tv2:3` for `apache@4.4.0+tv2`).
fn kind_of(target: &str) -> &str {
    let plain = target.strip_suffix("+sasl").unwrap_or(target);
    plain.split(':').next().unwrap_or(plain)
}

/// What a cell holds for one target.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cell {
    /// Error codes seen.
    pub codes: BTreeSet<i16>,
    /// The target answered "version not served" at least once.
    pub unsupported: bool,
}

/// Cells per (API, version), per target.
#[derive(Debug, Default)]
pub struct Coverage {
    /// Target names, in order.
    pub targets: Vec<String>,
    /// The Apache releases among them: what decides the codes an API can return.
    releases: Vec<Release>,
    cells: BTreeMap<(usize, i16), BTreeMap<String, Cell>>,
}

/// Every error code in a normalised response, labelled ("48 INVALID_TXN_STATE") or not.
fn codes_in(value: &Value, out: &mut BTreeSet<i16>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.ends_with("error_code"), v) {
                    (true, Value::String(s)) => {
                        if let Some(code) = error_codes::code_of_label(s) {
                            out.insert(code);
                        }
                    }
                    (true, Value::Number(n)) => {
                        if let Some(code) = n.as_i64() {
                            out.insert(code as i16);
                        }
                    }
                    _ => codes_in(v, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|v| codes_in(v, out)),
        _ => {}
    }
}

impl Coverage {
    /// Adds one transcript's transaction-API steps, from a target that answers as Apache's
    /// release `answers_as` (none for a broker that is not Apache and claims no release):
    /// the codes that release added become codes a broker could return. A cluster's or a
    /// secured broker's cells count for its kind of broker: `ref:3` and `ref+sasl` for `ref`,
    /// `apache:3` and `apache+sasl` for `apache`.
    pub fn add(&mut self, t: &Transcript, answers_as: Option<Release>) {
        let target = kind_of(&t.target).to_owned();
        if !self.targets.contains(&target) {
            self.releases.extend(answers_as);
            self.targets.push(target.clone());
        }
        for step in &t.steps {
            let (Some(api), Some(version)) = (
                TRANSACTION_APIS.iter().position(|a| *a == step.api),
                step.version,
            ) else {
                continue;
            };
            let cell = self
                .cells
                .entry((api, version))
                .or_default()
                .entry(target.clone())
                .or_default();
            match &step.outcome {
                Outcome::Response(v) => codes_in(v, &mut cell.codes),
                Outcome::Unsupported { .. } => cell.unsupported = true,
                Outcome::NoAnswer(_)
                | Outcome::Malformed(_)
                | Outcome::Unsendable(_)
                | Outcome::Skipped(_)
                | Outcome::Provisioned(_)
                | Outcome::Slept(_)
                | Outcome::Broker(_)
                | Outcome::Raced(_)
                | Outcome::Closed(_)
                | Outcome::Cut(_) => {}
            }
        }
    }

    /// The cell of `target` at (`api`, `version`).
    pub fn cell(&self, api: &str, version: i16, target: &str) -> Option<&Cell> {
        let i = TRANSACTION_APIS.iter().position(|a| *a == api)?;
        self.cells.get(&(i, version))?.get(target)
    }

    /// Codes `api` can return that no scenario produced on any target.
    pub fn never_produced(&self, api: &str) -> Vec<i16> {
        let seen: BTreeSet<i16> = self
            .cells
            .iter()
            .filter(|((i, _), _)| TRANSACTION_APIS[*i] == api)
            .flat_map(|(_, by_target)| by_target.values().flat_map(|c| c.codes.iter().copied()))
            .collect();
        possible_codes(api, &self.releases)
            .into_iter()
            .filter(|c| !seen.contains(c))
            .collect()
    }

    /// The table as Markdown: one row per (API, version), the codes each target produced,
    /// then per API the codes it can return that no scenario reached.
    pub fn markdown(&self) -> String {
        let mut out = format!("| API | v | {} |\n|---|---|", self.targets.join(" | "));
        out.push_str(&"---|".repeat(self.targets.len()));
        out.push('\n');
        for ((api, version), by_target) in &self.cells {
            let cells: Vec<String> = self
                .targets
                .iter()
                .map(|t| match by_target.get(t) {
                    None => "·".into(),
                    Some(c) => {
                        let mut parts: Vec<String> =
                            c.codes.iter().map(|c| error_codes::label(*c)).collect();
                        if c.unsupported {
                            parts.push("not served".into());
                        }
                        parts.join(", ")
                    }
                })
                .collect();
            out.push_str(&format!(
                "| {} | {version} | {} |\n",
                TRANSACTION_APIS[*api],
                cells.join(" | ")
            ));
        }
        out.push_str("\nCodes an API can return that no scenario produced:\n\n");
        for api in TRANSACTION_APIS {
            let missing: Vec<String> = self
                .never_produced(api)
                .iter()
                .map(|c| error_codes::label(*c))
                .collect();
            out.push_str(&format!(
                "- {api}: {}\n",
                match missing.is_empty() {
                    true => "none".to_owned(),
                    false => missing.join(", "),
                }
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::StepRecord;
    use serde_json::json;

    fn step(api: &str, version: i16, outcome: Outcome) -> StepRecord {
        StepRecord {
            encoding: Vec::new(),
            step: "s".into(),
            api: api.into(),
            version: Some(version),
            request: Value::Null,
            outcome,
        }
    }

    #[test]
    fn cells_collect_every_error_code_and_unserved_versions() {
        let t = Transcript {
            scenario: "x".into(),
            target: "ref".into(),
            steps: vec![
                step(
                    "AddPartitionsToTxn",
                    3,
                    Outcome::Response(json!({"results": [{"results": [
                        {"partition_error_code": "49 INVALID_PRODUCER_ID_MAPPING"},
                        {"partition_error_code": "0 NONE"}]}]})),
                ),
                step(
                    "AddPartitionsToTxn",
                    4,
                    Outcome::Unsupported { min: 0, max: 3 },
                ),
                step(
                    "Metadata",
                    12,
                    Outcome::Response(json!({"error_code": "3 X"})),
                ),
            ],
            failed_expectations: vec![],
            stopped: None,
            readback: Vec::new(),
        };
        let mut c = Coverage::default();
        c.add(&t, None);
        let cell = c.cell("AddPartitionsToTxn", 3, "ref").unwrap();
        assert_eq!(cell.codes, BTreeSet::from([0, 49]));
        assert!(c.cell("AddPartitionsToTxn", 4, "ref").unwrap().unsupported);
        assert!(
            c.cell("Metadata", 12, "ref").is_none(),
            "only the transaction APIs"
        );
        assert!(!c.never_produced("AddPartitionsToTxn").contains(&49));
        assert!(c.never_produced("AddPartitionsToTxn").contains(&51));
        let md = c.markdown();
        assert!(
            md.contains("| AddPartitionsToTxn | 3 | 0 NONE, 49 INVALID_PRODUCER_ID_MAPPING |"),
            "{md}"
        );
        assert!(
            md.contains("| AddPartitionsToTxn | 4 | not served |"),
            "{md}"
        );
    }

    #[test]
    fn a_secured_or_clustered_broker_counts_for_its_kind() {
        let mut c = Coverage::default();
        for (target, code) in [("ref+sasl", 53), ("ref:3", 16), ("apache+sasl", 53)] {
            let answers_as = target.starts_with("apache").then(Release::default);
            c.add(
                &Transcript {
                    scenario: "x".into(),
                    target: target.into(),
                    steps: vec![step(
                        "EndTxn",
                        3,
                        Outcome::Response(json!({"error_code": code})),
                    )],
                    failed_expectations: vec![],
                    stopped: None,
                    readback: Vec::new(),
                },
                answers_as,
            );
        }
        assert_eq!(
            c.cell("EndTxn", 3, "ref").unwrap().codes,
            BTreeSet::from([16, 53])
        );
        assert_eq!(
            c.cell("EndTxn", 3, "apache").unwrap().codes,
            BTreeSet::from([53])
        );
        assert!(c.cell("EndTxn", 3, "ref+sasl").is_none());
    }

    #[test]
    fn a_later_release_can_return_the_codes_it_added() {
        let mut c = Coverage::default();
        for (target, answers_as) in [
            ("ref", None),
            ("apache@4.4.0+tv2:3+sasl", Release::parse("4.4+tv2").ok()),
        ] {
            c.add(
                &Transcript {
                    scenario: "x".into(),
                    target: target.into(),
                    steps: vec![step(
                        "TxnOffsetCommit",
                        4,
                        Outcome::Response(
                            json!({"topics": [{"partitions": [{"error_code": 120}]}]}),
                        ),
                    )],
                    failed_expectations: vec![],
                    stopped: None,
                    readback: Vec::new(),
                },
                answers_as,
            );
        }
        assert_eq!(c.targets, ["ref", "apache@4.4.0+tv2"]);
        // 120 reached; 4.4's own TxnOffsetCommit v6 codes possible and not reached.
        let missing = c.never_produced("TxnOffsetCommit");
        assert!(
            !missing.contains(&120) && missing.contains(&113),
            "{missing:?}"
        );
        assert!(c.never_produced("AddPartitionsToTxn").contains(&120));
        // Declared on EndTxn v4 for clients, returned by no broker: not "unreached".
        assert!(!c.never_produced("EndTxn").contains(&120));
        // Beside 3.7 alone, no code 3.7 cannot return is listed.
        let mut old = Coverage::default();
        old.add(
            &Transcript {
                scenario: "x".into(),
                target: "apache".into(),
                steps: vec![],
                failed_expectations: vec![],
                stopped: None,
                readback: Vec::new(),
            },
            Some(Release::default()),
        );
        assert!(!old.never_produced("AddPartitionsToTxn").contains(&120));
    }
}
