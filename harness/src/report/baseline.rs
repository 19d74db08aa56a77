//! A baseline to gate on: what fails a run, saved with `--save-baseline FILE`, so that a later
//! run given `--baseline FILE` fails only on what is new, and says what was fixed. A broker
//! project gates its CI on "nothing new" while the known defects are being fixed.
//!
//! One file holds every judge's findings ([`Judge`]): `kconform certify` writes them all, and
//! `run`, `clients`, `chaos`, `peers` and `fuzz` on their own each read the entries of their
//! own judge and leave the others alone. Each entry is keyed by what stays the same from run to
//! run and machine to machine: a root cause's signature (no addresses, no generated names, no
//! versions), a ledger entry and its scenario, a scenario and which of the two targets it failed
//! on (first or second, not its address), an anomaly's kind and placement, a crash's signature.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::gate::{Gated, Judge, Severity};
use super::Report;

/// The version of the baseline file's format: 2 keys each entry by its judge; a file of
/// version 1 (`kconform run`'s alone) is still read, its entries the scenarios'.
pub const BASELINE_VERSION: u32 = 2;

/// A saved baseline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// [`BASELINE_VERSION`].
    pub schema_version: u32,
    /// What the saved run found that failed it, sorted by judge and key.
    pub known: Vec<Known>,
    /// How many runs it holds the findings of: 1 when `--save-baseline` wrote it, one more
    /// for each run `--add-to-baseline` added ([`Baseline::grown`]).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub runs: u32,
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// One thing that failed a run.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Known {
    /// The judge that found it; none in a file of version 1, whose entries are the scenarios'
    /// (of one broker or of a cluster: that file did not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<Judge>,
    /// What identifies it from run to run: `cause: SIGNATURE`, `stale: ENTRY in SCENARIO`,
    /// `failed: SCENARIO on the first target`, `anomaly: KIND (PLACEMENT)`...
    pub key: String,
    /// How many rows of the flat report it stood for when saved (0 where it counts none).
    pub rows: usize,
    /// In how many of the baseline's runs it showed ([`Baseline::runs`]): fewer than all
    /// is a finding that varies from run to run.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub seen: u32,
}

impl Known {
    /// Whether it is an entry of `judge`'s.
    pub fn of(&self, judge: Judge) -> bool {
        match self.judge {
            Some(j) => j == judge,
            None => matches!(judge, Judge::Scenarios | Judge::ClusterScenarios),
        }
    }
}

impl From<&Gated> for Known {
    fn from(g: &Gated) -> Known {
        Known {
            judge: Some(g.judge),
            key: g.key.clone(),
            rows: g.rows,
            seen: 1,
        }
    }
}

/// This run against a baseline.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Against {
    /// Failing now and not in the baseline: these fail the run.
    pub new: Vec<Known>,
    /// In the baseline and not failing now.
    pub fixed: Vec<Known>,
    /// How many entries the baseline holds for the judges of this run.
    pub known: usize,
}

impl Against {
    /// What of `failing` (found by `judges`) is new against `baseline`, and what of the
    /// baseline's entries for those judges is gone. A judge that did not run is not among
    /// `judges`: its entries are neither new nor fixed.
    pub fn hold(judges: &[Judge], failing: &[Gated], baseline: &Baseline) -> Against {
        let ours: Vec<&Known> = baseline
            .known
            .iter()
            .filter(|k| judges.iter().any(|&j| k.of(j)))
            .collect();
        let known_now = |g: &Gated| ours.iter().any(|k| k.of(g.judge) && k.key == g.key);
        let mut new: Vec<Known> = failing
            .iter()
            .filter(|g| !known_now(g))
            .map(Known::from)
            .collect();
        new.sort();
        new.dedup();
        let fixed: Vec<Known> = ours
            .iter()
            .filter(|k| !failing.iter().any(|g| k.of(g.judge) && k.key == g.key))
            .map(|k| (*k).clone())
            .collect();
        Against {
            new,
            fixed,
            known: ours.len(),
        }
    }

    /// Whether nothing is new.
    pub fn held(&self) -> bool {
        self.new.is_empty()
    }

    /// One line: `baseline: 12 known, 1 new, 2 fixed`.
    pub fn summary(&self) -> String {
        format!(
            "baseline: {} known, {} new, {} fixed",
            self.known,
            self.new.len(),
            self.fixed.len()
        )
    }
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
    #[error("{path}: baseline format {found}, this kconform reads 1 and {BASELINE_VERSION}; save it again with --save-baseline")]
    Version {
        /// The file.
        path: String,
        /// Its version.
        found: u32,
    },
}

impl Baseline {
    /// What fails `report` (the scenarios of `judge`), as a baseline.
    pub fn of(report: &Report, judge: Judge) -> Baseline {
        Baseline::of_findings(&report.gated(judge))
    }

    /// `failing`, as a baseline.
    pub fn of_findings(failing: &[Gated]) -> Baseline {
        let mut known: Vec<Known> = failing.iter().map(Known::from).collect();
        known.sort();
        known.dedup();
        Baseline {
            schema_version: BASELINE_VERSION,
            known,
            runs: 1,
        }
    }

    /// This baseline with one more run's findings added (`--add-to-baseline`): what it knew
    /// stays known, what `failing` shows is known too, and each entry counts the runs it
    /// showed in. A broker whose findings vary from run to run (a real cluster's clients,
    /// chaos) is held, after a few runs of one build, to everything it has shown.
    pub fn grown(&self, failing: &[Gated]) -> Baseline {
        let mut known: BTreeMap<(Option<Judge>, String), Known> = self
            .known
            .iter()
            .map(|k| ((k.judge, k.key.clone()), k.clone()))
            .collect();
        let mut found: Vec<Known> = failing.iter().map(Known::from).collect();
        found.sort();
        found.dedup_by(|a, b| a.judge == b.judge && a.key == b.key);
        for k in found {
            known
                .entry((k.judge, k.key.clone()))
                .and_modify(|old| {
                    old.seen += 1;
                    old.rows = k.rows;
                })
                .or_insert(k);
        }
        Baseline {
            schema_version: BASELINE_VERSION,
            known: known.into_values().collect(),
            runs: self.runs + 1,
        }
    }

    /// How many of its entries showed in fewer than all its runs.
    pub fn varying(&self) -> usize {
        self.known.iter().filter(|k| k.seen < self.runs).count()
    }

    /// Writes it to `path` as JSON.
    pub fn save(&self, path: &Path) -> Result<(), BaselineError> {
        let text = serde_json::to_string_pretty(self).unwrap_or_default() + "\n";
        std::fs::write(path, text).map_err(|error| BaselineError::Io {
            path: path.display().to_string(),
            error,
        })
    }

    /// The baseline `--add-to-baseline` starts from: the file's, or none yet (no runs) where
    /// there is no file.
    pub fn load_or_empty(path: &Path) -> Result<Baseline, BaselineError> {
        match path.exists() {
            true => Baseline::load(path),
            false => Ok(Baseline {
                schema_version: BASELINE_VERSION,
                known: Vec::new(),
                runs: 0,
            }),
        }
    }

    /// Reads a baseline [`Baseline::save`] wrote (of this version or of version 1).
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
            Some(1) => {}
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
        let mut known: BTreeMap<(Option<Judge>, String), (usize, u32)> = Default::default();
        for k in self.known {
            let key = match k.key.strip_prefix("cause: malformed (") {
                Some(_) => crate::compare::causes::first_reading(&k.key).to_owned(),
                None => k.key,
            };
            let entry = known.entry((k.judge, key)).or_default();
            entry.0 += k.rows;
            entry.1 = entry.1.max(k.seen);
        }
        Baseline {
            schema_version: self.schema_version,
            known: known
                .into_iter()
                .map(|((judge, key), (rows, seen))| Known {
                    judge,
                    key,
                    rows,
                    seen,
                })
                .collect(),
            runs: self.runs,
        }
    }
}

impl Report {
    /// Everything that fails this run (the scenarios of `judge`), keyed as a baseline keys it,
    /// worst first.
    pub fn gated(&self, judge: Judge) -> Vec<Gated> {
        let mut out = Vec::new();
        for c in self.causes.iter().filter(|c| c.documented_by.is_none()) {
            let severity = match c.notice {
                crate::compare::signature::Notice::ExactlyOnce => Severity::ExactlyOnce,
                crate::compare::signature::Notice::Unreadable => Severity::Unreadable,
                crate::compare::signature::Notice::State => Severity::State,
                crate::compare::signature::Notice::Logged => Severity::Logged,
            };
            out.push(Gated::new(
                judge,
                severity,
                format!("cause: {}", c.signature),
                c.rows(),
            ));
            // A consequence is keyed as the cause it was before consequences were folded, so
            // that a baseline saved then still holds it, and a new one is new.
            for sig in &c.consequence_signatures {
                out.push(Gated::new(judge, severity, format!("cause: {sig}"), 0));
            }
        }
        for st in &self.stale {
            let key = format!("stale: {} in {}", st.entry, st.scenario);
            out.push(Gated::new(judge, Severity::Stale, key, 0));
        }
        for r in self
            .runs
            .iter()
            .filter(|r| !r.failed_expectations.is_empty())
        {
            out.push(Gated::new(judge, Severity::State, self.run_key(r), 0));
        }
        out.sort_by(|a, b| (a.severity, &a.key).cmp(&(b.severity, &b.key)));
        out.dedup_by(|a, b| a.key == b.key);
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

    /// Compares this run (the scenarios of `judge`) with `baseline`; from then on the run
    /// passes unless something is new.
    pub fn hold_to(&mut self, baseline: &Baseline, judge: Judge) {
        self.baseline = Some(Against::hold(&[judge], &self.gated(judge), baseline));
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
    use crate::report::gate::{Gated, Severity};

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
            shows: Vec::new(),
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
        Baseline::of(&report(&["A", "B"]), Judge::Scenarios)
            .save(&path)
            .unwrap();
        let saved = Baseline::load(&path).unwrap();
        assert_eq!(saved.known.len(), 2);
        assert_eq!(saved.known[0].rows, 3);

        let mut same = report(&["B", "A"]);
        assert_eq!(same.gated(Judge::Scenarios).len(), 2);
        same.hold_to(&saved, Judge::Scenarios);
        assert!(same.passed(), "{:?}", same.baseline);

        let mut worse = report(&["A", "C"]);
        worse.hold_to(&saved, Judge::Scenarios);
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
                    judge: None,
                    key: "cause: EndTxn error_code: 50 | 48".into(),
                    rows: 1,
                    seen: 1,
                },
                Known {
                    judge: None,
                    key: header.into(),
                    rows: 7,
                    seen: 1,
                },
            ]
        );
        let signature = header.strip_prefix("cause: ").unwrap();
        let mut now = report(&[signature, "EndTxn error_code: 50 | 48"]);
        now.hold_to(&read, Judge::Scenarios);
        assert!(now.passed(), "{:?}", now.baseline);
    }

    /// A cause folded as another's consequence is still held by a baseline saved when it was
    /// a cause of its own: nothing new, nothing fixed; a new consequence is new.
    #[test]
    fn a_consequence_is_held_by_a_baseline_that_knew_it_as_a_cause() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("before.json");
        Baseline::of(&report(&["A", "B"]), Judge::Scenarios)
            .save(&path)
            .unwrap();
        let saved = Baseline::load(&path).unwrap();
        let folded = |consequences: &[&str]| {
            let mut r = report(&["A"]);
            r.causes[0].consequences = consequences.len();
            r.causes[0].consequence_signatures =
                consequences.iter().map(|s| s.to_string()).collect();
            r
        };
        let mut now = folded(&["B"]);
        now.hold_to(&saved, Judge::Scenarios);
        assert!(now.passed(), "{:?}", now.baseline);
        let against = now.baseline.as_ref().unwrap();
        assert!(
            against.new.is_empty() && against.fixed.is_empty(),
            "{against:?}"
        );
        let mut worse = folded(&["B", "C"]);
        worse.hold_to(&saved, Judge::Scenarios);
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

    /// One file holds every judge's findings: a judge's run counts only its own entries, new
    /// and fixed; a file of version 1 (`run` alone) is the scenarios', of one broker or of a
    /// cluster.
    #[test]
    fn a_judge_counts_only_its_own_entries_and_version_1_is_the_scenarios() {
        let failing = [
            Gated::new(
                Judge::Chaos,
                Severity::ExactlyOnce,
                "anomaly: lost-write (apart)",
                1,
            ),
            Gated::new(Judge::Fuzz, Severity::Crash, "frame: X", 1),
        ];
        let saved = Baseline::of_findings(&failing);
        let chaos_only = [Gated::new(
            Judge::Chaos,
            Severity::ExactlyOnce,
            "anomaly: lost-write (apart)",
            1,
        )];
        let against = Against::hold(&[Judge::Chaos], &chaos_only, &saved);
        assert_eq!(
            (against.new.len(), against.fixed.len(), against.known),
            (0, 0, 1)
        );
        // The same key under another judge is new there.
        let as_fuzz = [Gated::new(
            Judge::Fuzz,
            Severity::Crash,
            "anomaly: lost-write (apart)",
            1,
        )];
        let against = Against::hold(&[Judge::Fuzz], &as_fuzz, &saved);
        assert_eq!(against.new.len(), 1);
        assert_eq!(against.fixed[0].key, "frame: X");

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.json");
        std::fs::write(
            &path,
            r#"{"schema_version": 1, "known": [{"key": "cause: A", "rows": 2}]}"#,
        )
        .unwrap();
        let v1 = Baseline::load(&path).unwrap();
        assert_eq!(v1.known[0].judge, None);
        let cluster = [Gated::new(
            Judge::ClusterScenarios,
            Severity::State,
            "cause: A",
            2,
        )];
        assert!(Against::hold(&[Judge::ClusterScenarios], &cluster, &v1).held());
        assert_eq!(Against::hold(&[Judge::Clients], &[], &v1).known, 0);
        // Saved again, it is of version 2 and names its judge.
        let path = dir.path().join("v2.json");
        Baseline::of_findings(&cluster).save(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("\"schema_version\": 2")
                && text.contains("\"judge\": \"cluster-scenarios\""),
            "{text}"
        );
    }

    /// Added to run by run, a baseline holds what any run showed and counts the runs each
    /// showed in; a file that is not there is no runs yet.
    #[test]
    fn a_grown_baseline_holds_what_any_run_showed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("grown.json");
        let none = Baseline::load_or_empty(&path).unwrap();
        assert_eq!((none.runs, none.known.len()), (0, 0));
        let a = Gated::new(Judge::Clients, Severity::ExactlyOnce, "difference: A", 1);
        let b = Gated::new(Judge::Clients, Severity::ExactlyOnce, "difference: B", 1);
        let first = none.grown(std::slice::from_ref(&a));
        first.save(&path).unwrap();
        let second = Baseline::load_or_empty(&path)
            .unwrap()
            .grown(&[a.clone(), b.clone()]);
        assert_eq!(second.runs, 2);
        let seen: Vec<(&str, u32)> = second
            .known
            .iter()
            .map(|k| (k.key.as_str(), k.seen))
            .collect();
        assert_eq!(seen, [("difference: A", 2), ("difference: B", 1)]);
        assert_eq!(second.varying(), 1);
        // A third run showing only B holds: A is known, not new.
        assert!(Against::hold(&[Judge::Clients], &[b], &second).held());
        // Saved and read again, the counts stay.
        second.save(&path).unwrap();
        assert_eq!(Baseline::load(&path).unwrap(), second);
        // A baseline --save-baseline wrote reads as one run, each entry seen once.
        let saved = Baseline::of_findings(&[a]);
        let text = serde_json::to_string(&saved).unwrap();
        assert!(!text.contains("runs") && !text.contains("seen"), "{text}");
    }
}
