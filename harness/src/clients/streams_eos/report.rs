//! What `kconform streams-eos` found: per target, the verifier's word (PASS, FAIL with the
//! stage and the first error, HANG with the stage and what it waited for, or NOT RUN), the
//! stages done, the exceptions the processors printed, and where every program's output is.
//! Apache is the control: when it does not PASS, kconform (or the machine) is wrong, and the
//! run says nothing of the others.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::schedule::{Outcome, Verdict};

/// One target's run.
#[derive(Debug, Clone, Serialize)]
pub struct TargetEos {
    /// Its name.
    pub name: String,
    /// How it was started.
    pub origin: String,
    /// Whether it is the control (the first Apache beside a target under test).
    pub control: bool,
    /// What the schedule left.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// The folder holding every program's properties and output.
    pub outputs: PathBuf,
    /// Seconds from starting the target to its verdict.
    pub wall_secs: f64,
}

impl TargetEos {
    /// A target not run yet, writing into `dir`.
    pub fn new(name: &str, dir: &Path) -> TargetEos {
        TargetEos {
            name: name.to_owned(),
            origin: String::new(),
            control: false,
            outcome: Outcome {
                verdict: Verdict::NotRun {
                    why: "not run".into(),
                },
                stages: Vec::new(),
                exceptions: Vec::new(),
                produced: None,
            },
            outputs: dir.to_owned(),
            wall_secs: 0.0,
        }
    }

    /// A target that could not run, and why.
    pub fn not_run(name: &str, why: String) -> TargetEos {
        let mut t = TargetEos::new(name, Path::new(""));
        t.outcome.verdict = Verdict::NotRun { why };
        t
    }
}

/// How the whole run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunVerdict {
    /// Every target passed.
    Passed,
    /// The control passed, and a target under test did not.
    Failed,
    /// The control did not pass (or could not run): nothing can be said of the others.
    Inconclusive,
}

/// A whole run.
#[derive(Debug, Clone, Serialize)]
pub struct StreamsEosReport {
    /// The JSON schema's version.
    pub schema_version: u32,
    /// The Streams release whose test programs ran.
    pub streams_release: &'static str,
    /// Each target, the control first.
    pub targets: Vec<TargetEos>,
    /// Passed, failed or inconclusive.
    pub verdict: RunVerdict,
    /// Where the outputs are.
    pub outputs: PathBuf,
}

impl StreamsEosReport {
    /// Judges the targets' runs.
    pub fn judge(targets: Vec<TargetEos>, outputs: &Path) -> StreamsEosReport {
        let control_passed = targets
            .iter()
            .filter(|t| t.control)
            .all(|t| t.outcome.verdict == Verdict::Pass);
        let all_passed = targets.iter().all(|t| t.outcome.verdict == Verdict::Pass);
        let verdict = match (control_passed, all_passed) {
            (_, true) => RunVerdict::Passed,
            (false, false) => RunVerdict::Inconclusive,
            (true, false) => RunVerdict::Failed,
        };
        StreamsEosReport {
            schema_version: 1,
            streams_release: super::jars::VERSION,
            targets,
            verdict,
            outputs: outputs.to_owned(),
        }
    }

    /// The report for a terminal.
    pub fn terminal(&self) -> String {
        let mut s = format!(
            "kconform streams-eos: Apache's StreamsEosTest {} (exactly_once_v2, complex), three processors, two killed\n",
            self.streams_release
        );
        for t in &self.targets {
            let role = match t.control {
                true => ", the control",
                false => "",
            };
            let _ = writeln!(s, "\n{} ({}{role}), {:.0} s", t.name, t.origin, t.wall_secs);
            let _ = match &t.outcome.verdict {
                Verdict::Pass => {
                    writeln!(s, "  PASS: every input record exactly once in every output")
                }
                Verdict::Fail { stage, first_error } => {
                    writeln!(s, "  FAIL at {stage}: {first_error}")
                }
                Verdict::Hang { stage, waiting_for } => {
                    writeln!(s, "  HANG at {stage}: waited for {waiting_for}")
                }
                Verdict::NotRun { why } => writeln!(s, "  NOT RUN: {why}"),
            };
            if let Some(n) = t.outcome.produced {
                let _ = writeln!(s, "  records the driver produced: {n}");
            }
            let stages: Vec<String> = t
                .outcome
                .stages
                .iter()
                .map(|st| format!("{} ({:.0} s)", st.name, st.at_secs))
                .collect();
            if !stages.is_empty() {
                let _ = writeln!(s, "  stages done: {}", stages.join("; "));
            }
            for e in t.outcome.exceptions.iter().take(5) {
                let _ = writeln!(s, "  exception: {e}");
            }
            if t.outcome.exceptions.len() > 5 {
                let _ = writeln!(
                    s,
                    "  ... and {} more exceptions",
                    t.outcome.exceptions.len() - 5
                );
            }
            if !t.outputs.as_os_str().is_empty() {
                let _ = writeln!(s, "  outputs: {}", t.outputs.display());
            }
        }
        let _ = writeln!(
            s,
            "\n{}",
            match self.verdict {
                RunVerdict::Passed => "PASSED",
                RunVerdict::Failed => "FAILED",
                RunVerdict::Inconclusive =>
                    "INCONCLUSIVE: the control did not pass, so the others' verdicts say nothing of them",
            }
        );
        s
    }

    /// The report as JSON.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(name: &str, control: bool, verdict: Verdict) -> TargetEos {
        let mut t = TargetEos::new(name, Path::new("/out"));
        t.control = control;
        t.outcome.verdict = verdict;
        t
    }

    fn hang() -> Verdict {
        Verdict::Hang {
            stage: "processor 2 joins".into(),
            waiting_for: "processor 2 to show RUNNING".into(),
        }
    }

    #[test]
    fn a_target_failing_beside_a_passing_control_fails_the_run() {
        let r = StreamsEosReport::judge(
            vec![
                target("apache", true, Verdict::Pass),
                target("ref", false, hang()),
            ],
            Path::new("/out"),
        );
        assert_eq!(r.verdict, RunVerdict::Failed);
        assert!(r
            .terminal()
            .contains("HANG at processor 2 joins: waited for processor 2 to show RUNNING"));
    }

    #[test]
    fn a_control_that_does_not_pass_makes_the_run_inconclusive() {
        let r = StreamsEosReport::judge(
            vec![
                target("apache", true, hang()),
                target("ref", false, Verdict::Pass),
            ],
            Path::new("/out"),
        );
        assert_eq!(r.verdict, RunVerdict::Inconclusive);
        let both = StreamsEosReport::judge(
            vec![
                target("apache", true, Verdict::Pass),
                target("ref", false, Verdict::Pass),
            ],
            Path::new("/out"),
        );
        assert_eq!(both.verdict, RunVerdict::Passed);
    }
}
