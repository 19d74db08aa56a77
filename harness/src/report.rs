//! What a run found, in the forms its readers want: a terminal table, JSON for tools, JUnit XML
//! for CI dashboards, Markdown for a pull-request comment.

use serde::Serialize;

use crate::diff::DiffRow;
use crate::ledger::Verdict;
use crate::runner::Transcript;

/// One difference and its classification.
#[derive(Debug, Clone, Serialize)]
pub struct Difference {
    /// The difference (left is the first target, right the second).
    #[serde(flatten)]
    pub row: DiffRow,
    /// The ledger entry that documents it, if one does.
    pub documented_by: Option<String>,
    /// For an undocumented difference: an entry with the same values that does not list this
    /// scenario.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub same_values_as: Option<String>,
}

/// A whole run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// Target names, in order.
    pub targets: Vec<String>,
    /// (scenario, target, failed expectations) for every transcript.
    pub runs: Vec<(String, String, Vec<String>)>,
    /// Differences between the first two targets.
    pub differences: Vec<Difference>,
    /// (ledger entry, scenario) pairs that did not show.
    pub stale: Vec<(String, String)>,
    /// Where each target's answers came from ("Apache Kafka 3.7.2 launched as a JVM", "recorded
    /// Apache answers, no live broker"), so nobody mistakes a recorded comparison for a live one.
    #[serde(default)]
    pub origins: Vec<(String, String)>,
}

impl Report {
    /// Adds a target's transcripts.
    pub fn add_transcripts(&mut self, transcripts: &[Transcript]) {
        for t in transcripts {
            self.runs.push((
                t.scenario.clone(),
                t.target.clone(),
                t.failed_expectations.clone(),
            ));
        }
    }

    /// Adds a classified difference.
    pub fn add_difference(&mut self, row: DiffRow, verdict: &Verdict) {
        let (documented_by, same_values_as) = match verdict {
            Verdict::Documented(id) => (Some(id.clone()), None),
            Verdict::Undocumented { hint } => (None, hint.clone()),
        };
        self.differences.push(Difference {
            row,
            documented_by,
            same_values_as,
        });
    }

    /// Undocumented differences.
    pub fn undocumented(&self) -> usize {
        self.differences
            .iter()
            .filter(|d| d.documented_by.is_none())
            .count()
    }

    /// Transcripts with failed expectations.
    pub fn failed_runs(&self) -> usize {
        self.runs.iter().filter(|(_, _, f)| !f.is_empty()).count()
    }

    /// Whether the run passes: expectations held, every difference documented, nothing stale.
    pub fn passed(&self) -> bool {
        self.undocumented() == 0 && self.stale.is_empty() && self.failed_runs() == 0
    }

    /// The terminal report: where each target's answers came from, one line per scenario with
    /// its status on each target, then each difference with its verdict, then the totals.
    /// Coloured only when stdout is a terminal (console decides).
    pub fn terminal(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        use console::style;
        for (target, origin) in &self.origins {
            let _ = writeln!(out, "{}", style(format!("{target}: {origin}")).dim());
        }
        let scenarios = self.scenarios();
        let w = self
            .targets
            .iter()
            .map(String::len)
            .max()
            .unwrap_or(0)
            .max(8);
        let header: String = self.targets.iter().map(|t| format!(" {t:>w$}")).collect();
        let _ = writeln!(
            out,
            "{}",
            style(format!("{:48}{header}  differences", "scenario")).bold()
        );
        for s in &scenarios {
            let mut line = format!("{s:48}");
            let mut failures = Vec::new();
            for t in &self.targets {
                match self.runs.iter().find(|(a, b, _)| a == s && b == t) {
                    Some((_, _, failed)) if failed.is_empty() => {
                        line.push_str(&format!(" {}", style(format!("{:>w$}", "ok")).green()))
                    }
                    Some((_, _, failed)) => {
                        line.push_str(&format!(
                            " {}",
                            style(format!("{:>8}", "FAILED")).red().bold()
                        ));
                        failures.extend(failed.iter().map(|f| format!("{t}: {f}")));
                    }
                    None => line.push_str(&format!(" {:>w$}", "-")),
                }
            }
            let diffs: Vec<_> = self
                .differences
                .iter()
                .filter(|d| d.row.scenario == *s)
                .collect();
            let undocumented = diffs.iter().filter(|d| d.documented_by.is_none()).count();
            let summary = match (diffs.len(), undocumented) {
                (0, _) => style("none".to_owned()).dim(),
                (n, 0) => style(format!("{n} documented")).yellow(),
                (n, u) => style(format!("{n}, {u} UNDOCUMENTED")).red().bold(),
            };
            let _ = writeln!(out, "{line}  {summary}");
            for f in failures {
                let _ = writeln!(out, "    {}", style(f).red());
            }
        }
        for d in &self.differences {
            let label = match &d.documented_by {
                Some(id) => style(format!("DOCUMENTED {id}")).yellow(),
                None => style(match &d.same_values_as {
                    Some(id) => {
                        format!("UNDOCUMENTED (like {id}, which does not list this scenario)")
                    }
                    None => "UNDOCUMENTED".to_owned(),
                })
                .red()
                .bold(),
            };
            let _ = writeln!(
                out,
                "{label} {} {} {}: {} | {}",
                d.row.scenario, d.row.step, d.row.path, d.row.left, d.row.right
            );
        }
        for (id, s) in &self.stale {
            let _ = writeln!(
                out,
                "{} {id}: documented in {s}, but it did not show",
                style("STALE").red().bold()
            );
        }
        let verdict = match self.passed() {
            true => style("PASSED").green().bold(),
            false => style("FAILED").red().bold(),
        };
        let _ = writeln!(
            out,
            "{verdict}: {} transcripts, {} differences ({} undocumented), {} stale",
            self.runs.len(),
            self.differences.len(),
            self.undocumented(),
            self.stale.len()
        );
        out
    }

    /// The JSON self.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The scenarios run, each once, in the order first run (runs are stored target by
    /// target, so a scenario recurs once per target).
    pub fn scenarios(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for (scenario, _, _) in &self.runs {
            if !out.contains(&scenario.as_str()) {
                out.push(scenario);
            }
        }
        out
    }

    /// The JUnit XML report: one test case per (scenario, target) for expectations, and one per
    /// scenario for the comparison.
    pub fn junit(&self) -> String {
        let mut cases = String::new();
        let mut failures = 0;
        let mut case = |class: &str, name: &str, message: &str, problems: &[String]| {
            cases.push_str(&format!(
                "  <testcase classname=\"kconform.{}\" name=\"{}\">",
                xml(class),
                xml(name)
            ));
            if !problems.is_empty() {
                failures += 1;
                cases.push_str(&format!(
                    "<failure message=\"{message}\">{}</failure>",
                    xml(&problems.join("\n"))
                ));
            }
            cases.push_str("</testcase>\n");
        };
        for (scenario, target, failed) in &self.runs {
            case(target, scenario, "expectations failed", failed);
        }
        if self.targets.len() >= 2 {
            for s in self.scenarios() {
                let bad: Vec<String> = self
                    .differences
                    .iter()
                    .filter(|d| d.row.scenario == s && d.documented_by.is_none())
                    .map(|d| {
                        format!(
                            "UNDOCUMENTED {} {}: {} | {}",
                            d.row.step, d.row.path, d.row.left, d.row.right
                        )
                    })
                    .chain(
                        self.stale
                            .iter()
                            .filter(|(_, sc)| sc == s)
                            .map(|(id, _)| format!("STALE {id}")),
                    )
                    .collect();
                case("compare", s, "undocumented or stale", &bad);
            }
        }
        let tests = cases.matches("<testcase").count();
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"kconform\" tests=\"{tests}\" failures=\"{failures}\">\n{cases}</testsuite>\n"
        )
    }

    /// The Markdown report, for a pull-request comment.
    pub fn markdown(&self) -> String {
        let mut out = format!(
            "## kconform: {}\n\nTargets: {}. {} transcripts, {} differences ({} undocumented), {} stale ledger entries.\n\n",
            if self.passed() { "passed" } else { "FAILED" },
            self.targets.join(", "),
            self.runs.len(),
            self.differences.len(),
            self.undocumented(),
            self.stale.len()
        );
        for (target, origin) in &self.origins {
            out.push_str(&format!("- {target}: {origin}\n"));
        }
        if !self.origins.is_empty() {
            out.push('\n');
        }
        if !self.differences.is_empty() {
            out.push_str(
                "| scenario | step | field | left | right | ledger |\n|---|---|---|---|---|---|\n",
            );
            for d in &self.differences {
                out.push_str(&format!(
                    "| {} | {} | `{}` | {} | {} | {} |\n",
                    d.row.scenario,
                    d.row.step,
                    d.row.path,
                    md(&d.row.left),
                    md(&d.row.right),
                    d.documented_by.as_deref().unwrap_or("**undocumented**")
                ));
            }
        }
        for (id, s) in &self.stale {
            out.push_str(&format!("\n- **stale**: `{id}` did not show in `{s}`"));
        }
        out
    }
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn md(s: &str) -> String {
    s.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(left: &str) -> DiffRow {
        DiffRow {
            scenario: "s<1>".into(),
            step: "end".into(),
            api: "EndTxn".into(),
            version: Some(3),
            path: "error_code".into(),
            left: left.into(),
            right: "\"48 INVALID_TXN_STATE\"".into(),
        }
    }

    #[test]
    fn reports_say_what_failed_in_every_format() {
        let mut r = Report {
            targets: vec!["ref".into(), "apache".into()],
            ..Default::default()
        };
        r.runs.push(("s<1>".into(), "ref".into(), vec![]));
        r.runs.push(("s<1>".into(), "apache".into(), vec![]));
        r.add_difference(row("\"50\""), &Verdict::Documented("wire-50".into()));
        assert!(r.passed());
        r.add_difference(row("\"51\""), &Verdict::Undocumented { hint: None });
        assert!(!r.passed());
        let junit = r.junit();
        assert!(junit.contains("tests=\"3\" failures=\"1\""), "{junit}");
        // Runs come target by target: each scenario still gets one comparison case.
        let mut two = Report {
            targets: vec!["ref".into(), "apache".into()],
            ..Default::default()
        };
        for t in ["ref", "apache"] {
            for s in ["a", "b"] {
                two.runs.push((s.into(), t.into(), vec![]));
            }
        }
        assert_eq!(two.scenarios(), ["a", "b"]);
        assert_eq!(
            two.junit()
                .matches("classname=\"kconform.compare\"")
                .count(),
            2
        );
        assert!(junit.contains("name=\"s&lt;1&gt;\""));
        let md = r.markdown();
        assert!(md.starts_with("## kconform: FAILED"));
        assert!(md.contains("**undocumented**") && md.contains("wire-50"));
        let json: serde_json::Value = serde_json::from_str(&r.json()).unwrap();
        assert_eq!(
            json["differences"][1]["documented_by"],
            serde_json::Value::Null
        );
        assert_eq!(json["differences"][0]["documented_by"], "wire-50");
        console::set_colors_enabled(false);
        r.origins.push(("apache".into(), "recorded".into()));
        r.add_difference(
            row("\"52\""),
            &Verdict::Undocumented {
                hint: Some("wire-50".into()),
            },
        );
        let table = r.terminal();
        assert!(table.starts_with("apache: recorded\n"), "{table}");
        assert!(
            table.contains("s<1>") && table.contains("3, 2 UNDOCUMENTED"),
            "{table}"
        );
        assert!(
            table.contains("UNDOCUMENTED (like wire-50, which does not list this scenario)"),
            "{table}"
        );
        assert!(table.trim_end().ends_with("0 stale"), "{table}");
        assert!(table.contains("FAILED: 2 transcripts, 3 differences (2 undocumented)"));
    }
}
