//! The verdict of a peer suite's run: a table per test (result and time on each target), the
//! findings with their allowlist reasons, stale entries, and the same as JSON, JUnit and
//! Markdown.

use crate::report::junit::Case;
use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

use super::judge::{Allowed, Finding, Kind};
use super::suite::{Outcome, TestResult};

/// One target's run, summed up.
#[derive(Debug, Clone, Serialize)]
pub struct TargetRun {
    /// Target name.
    pub name: String,
    /// Where the broker came from.
    pub origin: String,
    /// Wall time of the suite's run.
    pub wall_secs: f64,
    /// Tests that passed.
    pub passed: usize,
    /// Tests that failed.
    pub failed: usize,
    /// Tests that skipped themselves.
    pub skipped: usize,
    /// Tests that never ended.
    pub unfinished: usize,
}

/// A finding and, when the allowlist documents it, the reason.
#[derive(Debug, Clone, Serialize)]
pub struct Judged {
    /// The finding.
    #[serde(flatten)]
    pub finding: Finding,
    /// Target time over baseline time.
    pub ratio: Option<f64>,
    /// The allowlist's reason; none for an undocumented finding.
    pub documented_by: Option<String>,
}

/// A stale allowlist entry and the target where it did not show.
#[derive(Debug, Clone, Serialize)]
pub struct Stale {
    /// The entry.
    #[serde(flatten)]
    pub entry: Allowed,
    /// Where its test ran without the finding.
    pub on: String,
}

/// The whole verdict. The JSON form is this struct (see `docs/peers-report.schema.json`).
#[derive(Debug, Clone, Serialize)]
pub struct PeersReport {
    /// `github.com/twmb/franz-go@v1.22.3`, package `pkg/kgo`.
    pub suite: String,
    /// The target every other is judged against.
    pub baseline: String,
    /// Each target's run.
    pub targets: Vec<TargetRun>,
    /// Test → target → result.
    pub tests: BTreeMap<String, BTreeMap<String, TestResult>>,
    /// Every finding.
    pub findings: Vec<Judged>,
    /// Allowlist entries that did not show.
    pub stale: Vec<Stale>,
    /// "passed" or "failed".
    pub verdict: String,
}

impl PeersReport {
    /// No undocumented finding and no stale entry.
    pub fn passed(&self) -> bool {
        self.findings.iter().all(|f| f.documented_by.is_some()) && self.stale.is_empty()
    }

    /// Sets `verdict` from [`PeersReport::passed`].
    pub fn seal(mut self) -> Self {
        self.verdict = match self.passed() {
            true => "passed",
            false => "failed",
        }
        .into();
        self
    }

    fn cell(result: Option<&TestResult>) -> String {
        match result {
            None => "-".into(),
            Some(r) => {
                let word = match r.outcome {
                    Outcome::Pass => "pass",
                    Outcome::Fail => "FAIL",
                    Outcome::Skip => "skip",
                    Outcome::Unfinished => "HUNG",
                };
                format!("{word} {:.2}s", r.secs)
            }
        }
    }

    fn verdict_of(&self, test: &str) -> String {
        let mine: Vec<&Judged> = self
            .findings
            .iter()
            .filter(|f| f.finding.test == test)
            .collect();
        if mine.is_empty() {
            return "ok".into();
        }
        mine.iter()
            .map(|f| {
                let kind = match f.finding.kind {
                    Kind::Fails => "fails",
                    Kind::Skips => "skips",
                    Kind::Slower => "slower",
                };
                let ratio = f.ratio.map(|r| format!(" x{r:.1}")).unwrap_or_default();
                let how = match &f.documented_by {
                    Some(_) => "DOCUMENTED",
                    None => "UNDOCUMENTED",
                };
                format!("{how} {kind}{ratio} on {}", f.finding.target)
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The terminal table: one line per test, then totals, findings and stale entries.
    pub fn terminal(&self) -> String {
        let mut out = String::new();
        let names: Vec<&str> = self.targets.iter().map(|t| t.name.as_str()).collect();
        let _ = write!(out, "{:48}", "test");
        for n in &names {
            let _ = write!(out, " {n:>14}");
        }
        let _ = writeln!(out, "  verdict");
        for (test, results) in &self.tests {
            let _ = write!(out, "{test:48}");
            for n in &names {
                let _ = write!(out, " {:>14}", Self::cell(results.get(*n)));
            }
            let _ = writeln!(out, "  {}", self.verdict_of(test));
        }
        for t in &self.targets {
            let _ = writeln!(
                out,
                "{}: {} passed, {} failed, {} skipped, {} unfinished in {:.0} s ({})",
                t.name, t.passed, t.failed, t.skipped, t.unfinished, t.wall_secs, t.origin
            );
        }
        for f in &self.findings {
            match &f.documented_by {
                Some(reason) => {
                    let _ = writeln!(
                        out,
                        "DOCUMENTED {} on {}: {reason}",
                        f.finding.test, f.finding.target
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "UNDOCUMENTED {} on {}: {:?} against {} ({})",
                        f.finding.test,
                        f.finding.target,
                        f.finding.kind,
                        self.baseline,
                        Self::cell(f.finding.result.as_ref())
                    );
                    for line in f.finding.result.iter().flat_map(|r| &r.failure) {
                        let _ = writeln!(out, "    {line}");
                    }
                }
            }
        }
        for s in &self.stale {
            let _ = writeln!(
                out,
                "STALE allowlist entry {} ({:?}) did not show on {}",
                s.entry.test, s.entry.kind, s.on
            );
        }
        let undocumented = self
            .findings
            .iter()
            .filter(|f| f.documented_by.is_none())
            .count();
        let _ = writeln!(
            out,
            "{}: {} tests against {}, {} findings ({} undocumented), {} stale",
            match self.passed() {
                true => "PASSED",
                false => "FAILED",
            },
            self.tests.len(),
            self.baseline,
            self.findings.len(),
            undocumented,
            self.stale.len()
        );
        out
    }

    /// The report as JSON.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// JUnit XML: one test case per suite test, failed for an undocumented finding; one per
    /// stale entry.
    pub fn junit(&self) -> String {
        let tests = self.tests.keys().map(|test| {
            let undocumented = self
                .findings
                .iter()
                .any(|f| &f.finding.test == test && f.documented_by.is_none());
            match undocumented {
                false => Case::passed("peers", test),
                true => Case::failed("peers", test, self.verdict_of(test), ""),
            }
        });
        let stale = self.stale.iter().map(|s| {
            Case::failed(
                "peers.allowlist",
                &s.entry.test,
                format!("stale: did not show on {}", s.on),
                "",
            )
        });
        let cases: Vec<Case> = tests.chain(stale).collect();
        crate::report::junit::suite(&format!("kconform peers ({})", self.suite), &cases)
    }

    /// Markdown for a pull-request comment: totals, then findings and stale entries.
    pub fn markdown(&self) -> String {
        let mut out = format!("### kconform peers: {}\n\n", self.suite);
        out.push_str("| target | passed | failed | skipped | unfinished | wall |\n|---|---|---|---|---|---|\n");
        for t in &self.targets {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {:.0} s |",
                t.name, t.passed, t.failed, t.skipped, t.unfinished, t.wall_secs
            );
        }
        if !self.findings.is_empty() || !self.stale.is_empty() {
            out.push_str("\n| test | target | finding | verdict |\n|---|---|---|---|\n");
            for f in &self.findings {
                let _ = writeln!(
                    out,
                    "| {} | {} | {:?}{} | {} |",
                    f.finding.test,
                    f.finding.target,
                    f.finding.kind,
                    f.ratio.map(|r| format!(" x{r:.1}")).unwrap_or_default(),
                    f.documented_by.as_deref().unwrap_or("**undocumented**")
                );
            }
            for s in &self.stale {
                let _ = writeln!(
                    out,
                    "| {} | {} | {:?} | **stale**: {} |",
                    s.entry.test, s.on, s.entry.kind, s.entry.reason
                );
            }
        }
        let _ = writeln!(
            out,
            "\n**{}** against {}",
            match self.passed() {
                true => "PASSED",
                false => "FAILED",
            },
            self.baseline
        );
        out
    }
}

crate::report::forms::report_forms!(PeersReport);
