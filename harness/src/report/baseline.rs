//! A baseline to gate on: what fails a run (undocumented root causes, stale ledger entries,
//! scenarios whose expectations failed), saved with `--save-baseline FILE`, so that a later run
//! given `--baseline FILE` fails only on what is new, and says what was fixed. A broker project
//! gates its CI on "nothing new" while the known differences are being fixed.
//!
//! Each entry is keyed by what stays the same from run to run and machine to machine: a root
//! cause's signature (no addresses, no generated names, no versions), a ledger entry and its
//! scenario, a scenario and which of the two targets it failed on (first or second, not its
//! address).

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::Report;

/// The version of the baseline file's format.
pub const BASELINE_VERSION: u32 = 1;

/// A saved baseline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// [`BASELINE_VERSION`].
    pub schema_version: u32,
    /// What the saved run found that failed it, sorted by key.
    pub known: Vec<Known>,
}

/// One thing that failed a run.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Known {
    /// What identifies it from run to run: `cause: SIGNATURE`, `stale: ENTRY in SCENARIO` or
    /// `failed: SCENARIO on the first target`.
    pub key: String,
    /// How many rows of the flat report it stood for when saved (0 where it counts none).
    pub rows: usize,
}

/// This run against a baseline.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Against {
    /// Failing now and not in the baseline: these fail the run.
    pub new: Vec<Known>,
    /// In the baseline and not failing now.
    pub fixed: Vec<Known>,
    /// How many entries the baseline holds.
    pub known: usize,
}

/// Why a baseline cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    /// The file cannot be read or written.
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: String,
        /// Why (not a `source`: the message says it once).
        error: std::io::Error,
    },
    /// The file is not a baseline kconform wrote.
    #[error("{path}: not a kconform baseline ({reason}); write one with --save-baseline")]
    Format {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// A baseline of another format version.
    #[error("{path}: baseline format {found}, this kconform reads {BASELINE_VERSION}; save it again with --save-baseline")]
    Version {
        /// The file.
        path: String,
        /// Its version.
        found: u32,
    },
}

impl Baseline {
    /// What fails `report`, as a baseline.
    pub fn of(report: &Report) -> Baseline {
        let mut known: Vec<Known> = report.failing().into_iter().collect();
        known.sort();
        Baseline {
            schema_version: BASELINE_VERSION,
            known,
        }
    }

    /// Writes it to `path` as JSON.
    pub fn save(&self, path: &Path) -> Result<(), BaselineError> {
        let text = serde_json::to_string_pretty(self).unwrap_or_default() + "\n";
        std::fs::write(path, text).map_err(|error| BaselineError::Io {
            path: path.display().to_string(),
            error,
        })
    }

    /// Reads a baseline [`Baseline::save`] wrote.
    pub fn load(path: &Path) -> Result<Baseline, BaselineError> {
        let place = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|error| BaselineError::Io {
            path: place.clone(),
            error,
        })?;
        let version: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| BaselineError::Format {
                path: place.clone(),
                reason: e.to_string(),
            })?;
        match version.get("schema_version").and_then(|v| v.as_u64()) {
            Some(v) if v == u64::from(BASELINE_VERSION) => {}
            Some(found) => {
                return Err(BaselineError::Version {
                    path: place,
                    found: found as u32,
                })
            }
            None => {
                return Err(BaselineError::Format {
                    path: place,
                    reason: "no schema_version".into(),
                })
            }
        }
        let saved: Baseline =
            serde_json::from_value(version).map_err(|e| BaselineError::Format {
                path: place,
                reason: e.to_string(),
            })?;
        Ok(saved.keyed_as_today())
    }

    /// The same baseline with keys saved by an earlier kconform read as today's: a malformed
    /// answer's cause was signed by its whole diagnosis, alternative readings included (`...
    /// header vN; or a stray byte xx at byte N, before throttle_time_ms...`), so one framing
    /// defect was a cause per field the alternative named; it is now signed by the first
    /// reading alone. Entries that become one are one, their rows added.
    fn keyed_as_today(self) -> Baseline {
        let mut known: std::collections::BTreeMap<String, usize> = Default::default();
        for k in self.known {
            let key = match k.key.strip_prefix("cause: malformed (") {
                Some(_) => crate::compare::causes::first_reading(&k.key).to_owned(),
                None => k.key,
            };
            *known.entry(key).or_default() += k.rows;
        }
        Baseline {
            schema_version: self.schema_version,
            known: known
                .into_iter()
                .map(|(key, rows)| Known { key, rows })
                .collect(),
        }
    }
}

impl Report {
    /// Everything that fails this run, keyed as a baseline keys it.
    pub fn failing(&self) -> BTreeSet<Known> {
        let mut out = BTreeSet::new();
        for c in self.causes.iter().filter(|c| c.documented_by.is_none()) {
            out.insert(Known {
                key: format!("cause: {}", c.signature),
                rows: c.rows(),
            });
            // A consequence is keyed as the cause it was before consequences were folded, so
            // that a baseline saved then still holds it, and a new one is new.
            for sig in &c.consequence_signatures {
                out.insert(Known {
                    key: format!("cause: {sig}"),
                    rows: 0,
                });
            }
        }
        for st in &self.stale {
            out.insert(Known {
                key: format!("stale: {} in {}", st.entry, st.scenario),
                rows: 0,
            });
        }
        for r in self
            .runs
            .iter()
            .filter(|r| !r.failed_expectations.is_empty())
        {
            out.insert(Known {
                key: self.run_key(r),
                rows: 0,
            });
        }
        out
    }

    /// A failed run's key: its scenario and which target (by position, not address).
    pub(super) fn run_key(&self, r: &super::Run) -> String {
        let side = match self.targets.iter().position(|t| *t == r.target) {
            Some(0) => "the first target".to_owned(),
            Some(1) => "the second target".to_owned(),
            Some(n) => format!("target {}", n + 1),
            None => r.target.clone(),
        };
        format!("failed: {} on {side}", r.scenario)
    }

    /// Compares this run with `baseline`; from then on the run passes unless something is new.
    pub fn hold_to(&mut self, baseline: &Baseline) {
        let known: BTreeSet<&str> = baseline.known.iter().map(|k| k.key.as_str()).collect();
        let failing = self.failing();
        let now: BTreeSet<&str> = failing.iter().map(|k| k.key.as_str()).collect();
        self.baseline = Some(Against {
            new: failing
                .iter()
                .filter(|k| !known.contains(k.key.as_str()))
                .cloned()
                .collect(),
            fixed: baseline
                .known
                .iter()
                .filter(|k| !now.contains(k.key.as_str()))
                .cloned()
                .collect(),
            known: baseline.known.len(),
        });
    }

    /// Whether `key` fails the run: always, without a baseline; with one, when it is new.
    pub fn fails(&self, key: &str) -> bool {
        self.baseline
            .as_ref()
            .is_none_or(|b| b.new.iter().any(|k| k.key == key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::causes::{Cause, Notice};
    use crate::compare::diff::DiffRow;

    fn cause(signature: &str) -> Cause {
        Cause {
            notice: Notice::State,
            signature: signature.into(),
            title: signature.into(),
            versions: String::new(),
            documented_by: None,
            differences: 2,
            folded: 1,
            consequences: 0,
            consequence_signatures: Vec::new(),
            consequence_chains: Vec::new(),
            kept_from_reach: Vec::new(),
            steps: Default::default(),
            scenarios: vec!["s".into()],
            example: DiffRow {
                scenario: "s".into(),
                step: "a".into(),
                api: "EndTxn".into(),
                version: Some(0),
                path: "error_code".into(),
                left: "1".into(),
                right: "0".into(),
                detail: None,
            },
            configuration: None,
        }
    }

    fn report(causes: &[&str]) -> Report {
        Report {
            targets: vec!["external=127.0.0.1:9092".into(), "apache".into()],
            causes: causes.iter().map(|s| cause(s)).collect(),
            ..Report::default()
        }
    }

    #[test]
    fn only_what_is_new_fails_and_what_went_is_fixed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("baseline.json");
        Baseline::of(&report(&["A", "B"])).save(&path).unwrap();
        let saved = Baseline::load(&path).unwrap();
        assert_eq!(saved.known.len(), 2);
        assert_eq!(saved.known[0].rows, 3);

        let mut same = report(&["B", "A"]);
        assert_eq!(same.failing().len(), 2);
        same.hold_to(&saved);
        assert!(same.passed(), "{:?}", same.baseline);

        let mut worse = report(&["A", "C"]);
        worse.hold_to(&saved);
        assert!(!worse.passed());
        let against = worse.baseline.as_ref().unwrap();
        assert_eq!(
            against
                .new
                .iter()
                .map(|k| k.key.as_str())
                .collect::<Vec<_>>(),
            ["cause: C"]
        );
        assert_eq!(
            against
                .fixed
                .iter()
                .map(|k| k.key.as_str())
                .collect::<Vec<_>>(),
            ["cause: B"]
        );
        assert!(worse.fails("cause: C") && !worse.fails("cause: A"));
    }

    #[test]
    fn a_file_that_is_not_a_baseline_is_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.json");
        std::fs::write(&path, "{\"schema_version\": 7, \"known\": []}").unwrap();
        let e = Baseline::load(&path).unwrap_err().to_string();
        assert!(e.contains("baseline format 7"), "{e}");
        std::fs::write(&path, "[1]").unwrap();
        let e = Baseline::load(&path).unwrap_err().to_string();
        assert!(e.contains("not a kconform baseline"), "{e}");
        let e = Baseline::load(&dir.path().join("none.json"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!("{}: ", dir.path().join("none.json").display())),
            "{e}"
        );
    }

    /// A baseline saved when one framing defect was a cause per alternative reading is read
    /// with those causes as the one cause they are now, so that a run gated on it fails on
    /// nothing new.
    #[test]
    fn a_baseline_saved_with_alternative_readings_is_read_as_one_cause() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.json");
        let header = "cause: malformed (malformed | response): the response header is vN, but <API> answers with header vN";
        let old = serde_json::json!({
            "schema_version": 1,
            "known": [
                { "key": format!("{header}; or a stray byte xx at byte N, before throttle_time_ms: without it the answer is well-formed"), "rows": 3 },
                { "key": format!("{header}; or a stray byte xx at byte N, before topics (count): without it the answer is well-formed"), "rows": 4 },
                { "key": "cause: EndTxn error_code: 50 | 48", "rows": 1 },
            ]
        });
        std::fs::write(&path, old.to_string()).unwrap();
        let read = Baseline::load(&path).unwrap();
        assert_eq!(
            read.known,
            [
                Known {
                    key: "cause: EndTxn error_code: 50 | 48".into(),
                    rows: 1
                },
                Known {
                    key: header.into(),
                    rows: 7
                },
            ]
        );
        let signature = header.strip_prefix("cause: ").unwrap();
        let mut now = report(&[signature, "EndTxn error_code: 50 | 48"]);
        now.hold_to(&read);
        assert!(now.passed(), "{:?}", now.baseline);
    }

    /// A cause folded as another's consequence is still held by a baseline saved when it was
    /// a cause of its own: nothing new, nothing fixed; a new consequence is new.
    #[test]
    fn a_consequence_is_held_by_a_baseline_that_knew_it_as_a_cause() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("before.json");
        Baseline::of(&report(&["A", "B"])).save(&path).unwrap();
        let saved = Baseline::load(&path).unwrap();
        let folded = |consequences: &[&str]| {
            let mut r = report(&["A"]);
            r.causes[0].consequences = consequences.len();
            r.causes[0].consequence_signatures =
                consequences.iter().map(|s| s.to_string()).collect();
            r
        };
        let mut now = folded(&["B"]);
        now.hold_to(&saved);
        assert!(now.passed(), "{:?}", now.baseline);
        let against = now.baseline.as_ref().unwrap();
        assert!(
            against.new.is_empty() && against.fixed.is_empty(),
            "{against:?}"
        );
        let mut worse = folded(&["B", "C"]);
        worse.hold_to(&saved);
        assert!(!worse.passed());
        let new: Vec<&str> = worse
            .baseline
            .as_ref()
            .unwrap()
            .new
            .iter()
            .map(|k| k.key.as_str())
            .collect();
        assert_eq!(new, ["cause: C"]);
    }
}
