//! What counts as a finding when a peer's suite runs on a target and on the baseline (Apache),
//! and the reviewed allowlist that documents the known ones — in the ledger's spirit: an entry
//! whose finding no longer shows is stale, so the list cannot rot.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::suite::{Outcome, SuiteRun, TestResult};

/// How a test on the target fell short of the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Passed on the baseline; failed, never finished or did not run on the target.
    Fails,
    /// Passed on the baseline, skipped itself on the target (a feature it thinks is missing).
    Skips,
    /// Passed on both, more than twice the baseline's time (and more than the floor longer).
    Slower,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The top-level test.
    pub test: String,
    /// The target it shows on.
    pub target: String,
    /// What kind.
    pub kind: Kind,
    /// The baseline's result.
    pub baseline: TestResult,
    /// The target's result (none when the test did not run there).
    pub result: Option<TestResult>,
}

impl Finding {
    /// Target time over baseline time.
    pub fn ratio(&self) -> Option<f64> {
        let r = self.result.as_ref()?;
        (self.baseline.secs > 0.0).then(|| r.secs / self.baseline.secs)
    }
}

/// The findings of `target` against `baseline`. `floor` keeps sub-second tests out of the
/// time comparison: a test is slower only when it takes more than twice the baseline's time
/// *and* more than `floor` seconds longer.
pub fn findings(
    baseline: &SuiteRun,
    target_name: &str,
    target: &SuiteRun,
    floor: f64,
) -> Vec<Finding> {
    let mut out = Vec::new();
    for (test, base) in &baseline.tests {
        if base.outcome != Outcome::Pass {
            continue;
        }
        let result = target.tests.get(test);
        let kind = match result.map(|r| r.outcome) {
            Some(Outcome::Pass) => {
                let r = result.expect("matched");
                match r.secs > 2.0 * base.secs && r.secs - base.secs > floor {
                    true => Kind::Slower,
                    false => continue,
                }
            }
            Some(Outcome::Skip) => Kind::Skips,
            Some(Outcome::Fail | Outcome::Unfinished) | None => Kind::Fails,
        };
        out.push(Finding {
            test: test.clone(),
            target: target_name.to_owned(),
            kind,
            baseline: base.clone(),
            result: result.cloned(),
        });
    }
    out
}

/// One reviewed reason why a test may differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Allowed {
    /// The top-level test.
    pub test: String,
    /// The finding it documents.
    pub kind: Kind,
    /// The target it is allowed on (all when absent).
    #[serde(default)]
    pub target: Option<String>,
    /// Why, in words franz-go's author would accept.
    pub reason: String,
}

/// The allowlist file (`scenarios/peers-allowlist.toml`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Allowlist {
    /// Entries.
    #[serde(default)]
    pub allow: Vec<Allowed>,
}

/// Why the allowlist could not be read.
#[derive(Debug, thiserror::Error)]
#[error("allowlist {path}: {reason}")]
pub struct AllowlistError {
    /// The file.
    pub path: String,
    /// Why.
    pub reason: String,
}

impl Allowlist {
    /// Parses allowlist text read from `place`.
    pub fn parse(text: &str, place: &str) -> Result<Allowlist, AllowlistError> {
        toml::from_str(text).map_err(|e| AllowlistError {
            path: place.to_owned(),
            reason: e.to_string(),
        })
    }

    /// Reads an allowlist file; a missing file is an empty allowlist.
    pub fn load(path: &Path) -> Result<Allowlist, AllowlistError> {
        let err = |reason: String| AllowlistError {
            path: path.display().to_string(),
            reason,
        };
        match std::fs::read_to_string(path) {
            Ok(text) => toml::from_str(&text).map_err(|e| err(e.to_string())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Allowlist::default()),
            Err(e) => Err(err(e.to_string())),
        }
    }

    /// The entry that documents a finding.
    pub fn documents(&self, f: &Finding) -> Option<&Allowed> {
        self.allow.iter().find(|a| {
            a.test == f.test && a.kind == f.kind && a.target.as_ref().is_none_or(|t| *t == f.target)
        })
    }

    /// Entries that did not show: their test ran on a target they apply to, and no finding of
    /// their kind showed there. (A test that did not run — filtered out — proves nothing.)
    pub fn stale<'a>(
        &'a self,
        runs: &[(&str, &SuiteRun)],
        findings: &[Finding],
    ) -> Vec<(&'a Allowed, String)> {
        let mut out = Vec::new();
        for a in &self.allow {
            for (target, run) in runs {
                if a.target.as_ref().is_some_and(|t| t != target)
                    || !run.tests.contains_key(&a.test)
                {
                    continue;
                }
                let shown = findings
                    .iter()
                    .any(|f| f.test == a.test && f.kind == a.kind && f.target == *target);
                if !shown {
                    out.push((a, (*target).to_owned()));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(tests: &[(&str, Outcome, f64)]) -> SuiteRun {
        SuiteRun {
            tests: tests
                .iter()
                .map(|(n, o, s)| {
                    (
                        n.to_string(),
                        TestResult {
                            outcome: *o,
                            secs: *s,
                            failure: Vec::new(),
                        },
                    )
                })
                .collect(),
            wall: Default::default(),
        }
    }

    #[test]
    fn failures_skips_and_slow_tests_are_findings_and_noise_is_not() {
        let apache = run(&[
            ("TestFails", Outcome::Pass, 1.0),
            ("TestMissing", Outcome::Pass, 1.0),
            ("TestSkips", Outcome::Pass, 1.0),
            ("TestSlow", Outcome::Pass, 5.0),
            ("TestTinySlow", Outcome::Pass, 0.01),
            ("TestAlsoFailsOnApache", Outcome::Fail, 1.0),
            ("TestFine", Outcome::Pass, 5.0),
        ]);
        let target = run(&[
            ("TestFails", Outcome::Unfinished, 0.0),
            ("TestSkips", Outcome::Skip, 0.0),
            ("TestSlow", Outcome::Pass, 10.5),
            ("TestTinySlow", Outcome::Pass, 0.5),
            ("TestAlsoFailsOnApache", Outcome::Fail, 1.0),
            ("TestFine", Outcome::Pass, 9.9),
        ]);
        let found: Vec<(String, Kind)> = findings(&apache, "ref", &target, 1.0)
            .into_iter()
            .map(|f| (f.test, f.kind))
            .collect();
        assert_eq!(
            found,
            [
                ("TestFails".to_string(), Kind::Fails),
                ("TestMissing".to_string(), Kind::Fails),
                ("TestSkips".to_string(), Kind::Skips),
                ("TestSlow".to_string(), Kind::Slower),
            ]
        );
    }

    #[test]
    fn entries_document_their_findings_and_go_stale_when_they_stop_showing() {
        let list: Allowlist = toml::from_str(
            r#"
            [[allow]]
            test = "TestSlow"
            kind = "slower"
            target = "ref"
            reason = "r"
            [[allow]]
            test = "TestFixed"
            kind = "fails"
            reason = "r"
            [[allow]]
            test = "TestNotRun"
            kind = "fails"
            reason = "r"
            "#,
        )
        .unwrap();
        let apache = run(&[
            ("TestSlow", Outcome::Pass, 1.0),
            ("TestFixed", Outcome::Pass, 1.0),
        ]);
        let target = run(&[
            ("TestSlow", Outcome::Pass, 5.0),
            ("TestFixed", Outcome::Pass, 1.0),
        ]);
        let found = findings(&apache, "ref", &target, 1.0);
        assert_eq!(
            list.documents(&found[0]).map(|a| a.test.as_str()),
            Some("TestSlow")
        );
        let mut other = found[0].clone();
        other.target = "external".into();
        assert!(
            list.documents(&other).is_none(),
            "the entry names its target"
        );
        let stale: Vec<&str> = list
            .stale(&[("ref", &target)], &found)
            .into_iter()
            .map(|(a, _)| a.test.as_str())
            .collect();
        assert_eq!(stale, ["TestFixed"]);
    }
}
