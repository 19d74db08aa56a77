//! What a run found, in the forms its readers want: a terminal table, JSON for tools (schema
//! `harness/report.schema.json`), JUnit XML for CI dashboards, Markdown for a pull-request
//! comment, and `repro`'s step-by-step view of one scenario.

pub mod baseline;
pub mod book;
mod causes;
pub mod consequences;
pub mod draft;
pub mod forms;
pub mod gate;
pub mod html;
pub mod junit;
pub mod progress;
mod terminal;

use serde::Serialize;

use crate::compare::causes::Cause;
use crate::compare::diff::{text as show, DiffRow};
use crate::compare::ledger::{Deviation, Verdict};
use crate::transcript::Transcript;
use junit::Case;

/// The version of the JSON report's schema (`harness/report.schema.json`).
pub const SCHEMA_VERSION: u32 = 1;

/// The tone of a part of the terminal report, for a renderer that colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Background information.
    Dim,
    /// A heading.
    Bold,
    /// Passed.
    Good,
    /// Documented: allowed, worth a look.
    Warn,
    /// Fails the run.
    Bad,
}

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
    pub same_values_as: Option<String>,
    /// The spec section of the documenting entry.
    pub spec: Option<String>,
    /// What a Java 3.7 client raises because of it (the documenting entry's `java_client`).
    pub java_client: Option<String>,
    /// When the documenting entry is a change Apache made after 3.7 rather than a kaas claim:
    /// the release that made it (`4.0`).
    pub apache_since: Option<String>,
}

/// One scenario on one target.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    /// Scenario.
    pub scenario: String,
    /// Target.
    pub target: String,
    /// Expectations that did not hold (a stop among them).
    pub failed_expectations: Vec<String>,
    /// Why the scenario stopped early on this target, if it did.
    pub stopped: Option<String>,
    /// Steps judged after an answer read past its framing defect (a response header of the
    /// wrong version), which would otherwise have stopped the scenario there.
    pub judged_past_framing: usize,
}

impl Run {
    fn status(&self) -> &'static str {
        match (&self.stopped, self.failed_expectations.is_empty()) {
            (Some(_), _) => "stopped",
            (None, true) => "ok",
            (None, false) => "failed",
        }
    }
}

/// A ledger entry that did not show in a scenario it lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stale {
    /// The entry.
    pub entry: String,
    /// The scenario.
    pub scenario: String,
}

/// A ledger entry that did not show in a scenario it lists because the scenario stopped, on
/// one target or both, before the steps where it shows: not stale, and not judged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotReached {
    /// The entry.
    pub entry: String,
    /// The scenario.
    pub scenario: String,
    /// The target it stopped on, and why.
    pub stopped: String,
}

/// Where a target's answers came from, or something a reader must know about them.
#[derive(Debug, Clone, Serialize)]
pub struct Origin {
    /// The target.
    pub target: String,
    /// What to know.
    pub origin: String,
}

/// A whole run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Target names, in order.
    pub targets: Vec<String>,
    /// The same targets as `--target` takes them (an external broker with its address), for
    /// the `repro` commands the report prints; empty: the names.
    pub target_args: Vec<String>,
    /// The flags besides the targets that made this run's findings (`--scenarios DIR`,
    /// `--snapshots DIR`, `--provisioned-topics`, a fault command), for the `repro` commands
    /// the report prints: without them a repro runs another suite or ledger and may pass.
    pub repro_flags: Vec<String>,
    /// Every transcript's outcome.
    pub runs: Vec<Run>,
    /// Differences between the first two targets.
    pub differences: Vec<Difference>,
    /// Ledger entries that did not show.
    pub stale: Vec<Stale>,
    /// Ledger entries whose scenario stopped before they could show.
    pub not_reached: Vec<NotReached>,
    /// The differences grouped into root causes ([`Report::group_causes`]).
    pub causes: Vec<Cause>,
    /// Show each difference on a line of its own, as before root causes (`--flat`), rather
    /// than the causes.
    pub flat: bool,
    /// This run against a saved baseline (`--baseline`): it then fails only on what is new.
    pub baseline: Option<baseline::Against>,
    /// Where each target's answers came from ("Apache Kafka 3.7.2 launched as a JVM", "recorded
    /// Apache answers, no live broker"), so nobody mistakes a recorded comparison for a live one.
    pub origins: Vec<Origin>,
    /// What the documented deviations of this run do to clients, worst first
    /// ([`consequences`]).
    pub client_harms: Vec<consequences::ClientHarm>,
    /// Fail the run when a documented deviation of it harms a client
    /// (`--fail-on-consequence`).
    pub fail_on_consequence: bool,
}

/// The JSON report: [`Report`] with its verdict and totals, in the documented schema.
#[derive(Serialize)]
struct Json<'a> {
    schema_version: u32,
    verdict: &'static str,
    targets: &'a [String],
    origins: &'a [Origin],
    runs: Vec<JsonRun<'a>>,
    differences: &'a [Difference],
    causes: &'a [Cause],
    stale: &'a [Stale],
    not_reached: &'a [NotReached],
    baseline: Option<&'a baseline::Against>,
    client_consequences: &'a [consequences::ClientHarm],
    totals: Totals,
}

#[derive(Serialize)]
struct JsonRun<'a> {
    #[serde(flatten)]
    run: &'a Run,
    status: &'static str,
}

#[derive(Serialize)]
struct Totals {
    transcripts: usize,
    failed_runs: usize,
    differences: usize,
    undocumented: usize,
    causes: usize,
    undocumented_causes: usize,
    stale: usize,
    not_reached: usize,
    judged_past_framing: usize,
}

impl Report {
    /// Adds a target's transcripts.
    pub fn add_transcripts(&mut self, transcripts: &[Transcript]) {
        for t in transcripts {
            self.runs.push(Run {
                scenario: t.scenario.clone(),
                target: t.target.clone(),
                failed_expectations: t.failed_expectations.clone(),
                stopped: t.stopped.clone(),
                judged_past_framing: t.judged_past_framing(),
            });
        }
    }

    /// Notes where a target's answers came from.
    pub fn add_origin(&mut self, target: &str, origin: impl Into<String>) {
        self.origins.push(Origin {
            target: target.to_owned(),
            origin: origin.into(),
        });
    }

    /// Adds a classified difference, with the documenting entry's spec section and Java-client
    /// consequence when there is one.
    pub fn add_difference(&mut self, row: DiffRow, verdict: &Verdict, entry: Option<&Deviation>) {
        let (documented_by, same_values_as) = match verdict {
            Verdict::Documented(id) => (Some(id.clone()), None),
            Verdict::Undocumented { hint } => (None, hint.clone()),
        };
        self.differences.push(Difference {
            row,
            documented_by,
            same_values_as,
            spec: entry.map(|e| e.spec.clone()),
            java_client: entry.map(|e| e.java_client.clone()),
            apache_since: entry.and_then(|e| e.apache_since.clone()),
        });
        if let Some(entry) = entry.filter(|_| matches!(verdict, Verdict::Documented(_))) {
            self.note_client_harms(entry);
        }
    }

    /// How a documented difference is labelled: DOCUMENTED for kaas's claims, APACHE 4.0 for
    /// a change Apache made in 4.0.
    fn documented_label(&self, id: &str) -> String {
        let since = self
            .differences
            .iter()
            .find(|d| d.documented_by.as_deref() == Some(id))
            .and_then(|d| d.apache_since.as_deref());
        match since {
            Some(since) => format!("APACHE {since}"),
            None => "DOCUMENTED".to_owned(),
        }
    }

    /// Undocumented differences.
    pub fn undocumented(&self) -> usize {
        self.differences
            .iter()
            .filter(|d| d.documented_by.is_none())
            .count()
    }

    /// Transcripts with failed expectations (or a stop).
    pub fn failed_runs(&self) -> usize {
        self.runs
            .iter()
            .filter(|r| !r.failed_expectations.is_empty())
            .count()
    }

    /// Whether the run passes: expectations held, every difference documented, nothing stale;
    /// or, held to a baseline, nothing of that is new.
    pub fn passed(&self) -> bool {
        let held = match &self.baseline {
            Some(against) => against.new.is_empty(),
            None => self.undocumented() == 0 && self.stale.is_empty() && self.failed_runs() == 0,
        };
        held && !self.fails_on_consequence()
    }

    /// "ref: X | apache: Y", the two targets' values labelled.
    fn values(&self, left: &serde_json::Value, right: &serde_json::Value) -> String {
        let name = |i: usize| self.targets.get(i).map_or("?", String::as_str);
        format!("{}: {} | {}: {}", name(0), show(left), name(1), show(right))
    }

    /// The JSON report, in the schema of `harness/report.schema.json`.
    pub fn json(&self) -> String {
        let json = Json {
            schema_version: SCHEMA_VERSION,
            verdict: if self.passed() { "passed" } else { "failed" },
            targets: &self.targets,
            origins: &self.origins,
            runs: self
                .runs
                .iter()
                .map(|run| JsonRun {
                    run,
                    status: run.status(),
                })
                .collect(),
            differences: &self.differences,
            causes: &self.causes,
            stale: &self.stale,
            not_reached: &self.not_reached,
            baseline: self.baseline.as_ref(),
            client_consequences: &self.client_harms,
            totals: Totals {
                transcripts: self.runs.len(),
                failed_runs: self.failed_runs(),
                differences: self.differences.len(),
                undocumented: self.undocumented(),
                causes: self.causes.len(),
                undocumented_causes: self.undocumented_causes(),
                stale: self.stale.len(),
                not_reached: self.not_reached.len(),
                judged_past_framing: self.judged_past_framing(),
            },
        };
        serde_json::to_string_pretty(&json).unwrap_or_default()
    }

    /// Steps judged, over every run, after an answer read past its framing defect.
    pub fn judged_past_framing(&self) -> usize {
        self.runs.iter().map(|r| r.judged_past_framing).sum()
    }

    /// The scenarios run, each once, in the order first run (runs are stored target by
    /// target, so a scenario recurs once per target).
    pub fn scenarios(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for r in &self.runs {
            if !out.contains(&r.scenario.as_str()) {
                out.push(&r.scenario);
            }
        }
        out
    }

    /// One scenario on two targets step by step, for `kconform repro`: each step's outcome on
    /// each target, each difference under its step with the ledger's verdict, the spec section
    /// and what a Java 3.7 client raises; then the report.
    pub fn repro(&self, a: &Transcript, b: &Transcript) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let outcome = |o: &crate::transcript::Outcome| serde_json::to_string(o).unwrap_or_default();
        for (i, l) in a.steps.iter().enumerate() {
            let _ = writeln!(
                out,
                "── {} ({} v{})",
                l.step,
                l.api,
                l.version.map_or("-".into(), |v| v.to_string())
            );
            let notes = |out: &mut String, target: &str, step: &crate::transcript::StepRecord| {
                for n in &step.encoding {
                    let _ = writeln!(
                        out,
                        "  {target:8} encoding note: {} at byte {}: {}",
                        n.field, n.offset, n.what
                    );
                }
            };
            let _ = writeln!(out, "  {:8} {}", a.target, outcome(&l.outcome));
            notes(&mut out, &a.target, l);
            if let Some(r) = b.steps.iter().find(|r| r.step == l.step).or(b.steps.get(i)) {
                let _ = writeln!(out, "  {:8} {}", b.target, outcome(&r.outcome));
                notes(&mut out, &b.target, r);
            }
            for d in self.differences.iter().filter(|d| d.row.step == l.step) {
                let _ = writeln!(
                    out,
                    "  ≠ {}: {}",
                    d.row.path,
                    self.values(&d.row.left, &d.row.right)
                );
                match (&d.documented_by, &d.same_values_as) {
                    (Some(id), _) => {
                        let _ = writeln!(out, "    documented by {id}");
                        if let Some(spec) = &d.spec {
                            let _ = writeln!(out, "    spec: {spec}");
                        }
                        if let Some(java) = &d.java_client {
                            let _ = writeln!(out, "    a Java 3.7 client: {java}");
                        }
                    }
                    (None, Some(like)) => {
                        let _ = writeln!(
                            out,
                            "    UNDOCUMENTED (like {like}, which does not list this scenario)"
                        );
                    }
                    (None, None) => {
                        let _ = writeln!(out, "    UNDOCUMENTED");
                    }
                }
            }
        }
        out.push_str(&self.terminal(true));
        out
    }

    /// The JUnit XML report: one test case per (scenario, target) for expectations, and one per
    /// scenario for the comparison.
    pub fn junit(&self) -> String {
        let mut cases: Vec<Case> = self
            .runs
            .iter()
            .map(|r| match r.failed_expectations.is_empty() {
                true => Case::passed(format!("kconform.{}", r.target), &r.scenario),
                false if !self.fails(&self.run_key(r)) => Case::passed(
                    format!("kconform.{}", r.target),
                    format!("{} (in the baseline)", r.scenario),
                ),
                false => Case::failed(
                    format!("kconform.{}", r.target),
                    &r.scenario,
                    "expectations failed",
                    r.failed_expectations.join("\n"),
                ),
            })
            .collect();
        if self.targets.len() >= 2 && !self.flat {
            cases.extend(self.junit_causes());
            cases.extend(self.stale.iter().map(|st| {
                let name = format!("{} in {}", st.entry, st.scenario);
                match self.fails(&format!("stale: {name}")) {
                    true => Case::failed(
                        "kconform.ledger",
                        name,
                        "stale: the documented deviation did not show",
                        "",
                    ),
                    false => Case::passed("kconform.ledger", name),
                }
            }));
        } else if self.targets.len() >= 2 {
            for s in self.scenarios() {
                let bad: Vec<String> = self
                    .differences
                    .iter()
                    .filter(|d| d.row.scenario == s && d.documented_by.is_none())
                    .map(|d| {
                        format!(
                            "UNDOCUMENTED {} {}: {}",
                            d.row.step,
                            d.row.path,
                            self.values(&d.row.left, &d.row.right)
                        )
                    })
                    .chain(
                        self.stale
                            .iter()
                            .filter(|st| st.scenario == s)
                            .map(|st| format!("STALE {}", st.entry)),
                    )
                    .collect();
                cases.push(match bad.is_empty() {
                    true => Case::passed("kconform.compare", s),
                    false => Case::failed(
                        "kconform.compare",
                        s,
                        "undocumented or stale",
                        bad.join("\n"),
                    ),
                });
            }
        }
        junit::suite("kconform", &cases)
    }

    /// The Markdown report, for a pull-request comment: undocumented differences and stale
    /// entries first, then the documented ones with what a Java client sees.
    pub fn markdown(&self) -> String {
        let mut out = format!(
            "## kconform: {}\n\nTargets: {}. {}, {} ({} undocumented){}, {} stale ledger entries, {} not reached.\n\n",
            if self.passed() { "passed" } else { "FAILED" },
            self.targets.join(", "),
            counted(self.runs.len(), "transcript"),
            counted(self.differences.len(), "difference"),
            self.undocumented(),
            match self.flat {
                true => String::new(),
                false => format!(
                    " in {} root causes ({} undocumented)",
                    self.causes.len(),
                    self.undocumented_causes()
                ),
            },
            self.stale.len(),
            self.not_reached.len()
        );
        if let Some(b) = &self.baseline {
            out.push_str(&format!(
                "Against the baseline ({} known): {} new, {} fixed.\n\n",
                b.known,
                b.new.len(),
                b.fixed.len()
            ));
            for k in &b.new {
                out.push_str(&format!("- **new**: `{}`\n", md(&k.key)));
            }
            for k in &b.fixed {
                out.push_str(&format!("- fixed: `{}`\n", md(&k.key)));
            }
            if !b.new.is_empty() || !b.fixed.is_empty() {
                out.push('\n');
            }
        }
        for o in &self.origins {
            out.push_str(&format!("- {}: {}\n", o.target, md(&o.origin)));
        }
        if !self.origins.is_empty() {
            out.push('\n');
        }
        out.push_str(&self.markdown_harms());
        let name = |i: usize| self.targets.get(i).map_or("?", String::as_str).to_owned();
        let (undocumented, documented): (Vec<&Difference>, Vec<&Difference>) = match self.flat {
            true => self
                .differences
                .iter()
                .partition(|d| d.documented_by.is_none()),
            false => {
                self.markdown_causes(&mut out);
                (Vec::new(), Vec::new())
            }
        };
        if !undocumented.is_empty() {
            out.push_str(&format!(
                "### Undocumented\n\n| scenario | step | field | {} | {} |\n|---|---|---|---|---|\n",
                name(0),
                name(1)
            ));
            for d in undocumented {
                out.push_str(&format!(
                    "| {} | {} | `{}` | {} | {} |\n",
                    d.row.scenario,
                    d.row.step,
                    d.row.path,
                    md(&show(&d.row.left)),
                    md(&show(&d.row.right)),
                ));
            }
            out.push('\n');
        }
        if !self.stale.is_empty() {
            out.push_str("### Stale ledger entries\n\n");
            for st in &self.stale {
                out.push_str(&format!(
                    "- `{}` did not show in `{}`\n",
                    st.entry, st.scenario
                ));
            }
            out.push('\n');
        }
        if !self.not_reached.is_empty() {
            out.push_str("### Ledger entries not reached\n\n");
            for n in &self.not_reached {
                out.push_str(&format!(
                    "- `{}` in `{}`: the scenario stopped before it could show ({})\n",
                    n.entry,
                    n.scenario,
                    md(&n.stopped)
                ));
            }
            out.push('\n');
        }
        if !documented.is_empty() {
            out.push_str(&format!(
                "<details><summary>{} documented difference(s)</summary>\n\n| scenario | step | field | {} | {} | ledger | a Java 3.7 client |\n|---|---|---|---|---|---|---|\n",
                documented.len(),
                name(0),
                name(1)
            ));
            for d in documented {
                out.push_str(&format!(
                    "| {} | {} | `{}` | {} | {} | {} | {} |\n",
                    d.row.scenario,
                    d.row.step,
                    d.row.path,
                    md(&show(&d.row.left)),
                    md(&show(&d.row.right)),
                    d.documented_by.as_deref().unwrap_or_default(),
                    md(d.java_client.as_deref().unwrap_or_default()),
                ));
            }
            out.push_str("\n</details>\n");
        }
        out
    }
}

crate::report::forms::report_forms!(Report);

/// Text for a Markdown table cell: pipes escaped, on one line.
fn md(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// `1 difference`, `2 differences`: a count with its noun in the number it takes.
pub(crate) fn counted(n: usize, noun: &str) -> String {
    match n {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// A difference of EndTxn's error code at step `end` of scenario `s<1>`: `left` against
    /// Apache's 48 (the report's tests and the causes' share it).
    pub(super) fn row(left: &str) -> DiffRow {
        DiffRow {
            scenario: "s<1>".into(),
            step: "end".into(),
            api: "EndTxn".into(),
            version: Some(3),
            path: "error_code".into(),
            left: json!(left),
            right: json!("48 INVALID_TXN_STATE"),
            detail: None,
        }
    }

    /// A run of `scenario` on `target` that held its expectations.
    pub(super) fn run(scenario: &str, target: &str) -> Run {
        Run {
            scenario: scenario.into(),
            target: target.into(),
            failed_expectations: vec![],
            stopped: None,
            judged_past_framing: 0,
        }
    }

    /// A difference documented by a change Apache made is labelled by its release, in the
    /// flat form and among the causes; a kaas claim stays DOCUMENTED.
    #[test]
    fn an_apache_change_is_labelled_by_its_release() {
        let ledger = crate::compare::ledger::Ledger::parse(
            "[[deviation]]\nid = \"since-4.0\"\napi = \"EndTxn\"\nfield = \"error_code\"\nkaas = \"0 NONE\"\napache = \"48 INVALID_TXN_STATE\"\nspec = \"x\"\njava_client = \"Not reached: x\"\nlibrdkafka_client = \"Not reached: x\"\nscenarios = [\"s<1>\"]\napache_since = \"4.0\"\n",
            "test",
        )
        .unwrap();
        for flat in [true, false] {
            let mut r = Report {
                targets: vec!["ref".into(), "apache@4.4.0".into()],
                flat,
                ..Default::default()
            };
            r.add_difference(
                row("0 NONE"),
                &Verdict::Documented("since-4.0".into()),
                ledger.changes.first(),
            );
            r.add_difference(row("50"), &Verdict::Documented("wire-50".into()), None);
            r.group_causes(&Default::default(), &Default::default());
            let text = r.terminal(false);
            assert!(text.contains("APACHE 4.0 since-4.0"), "{text}");
            assert!(text.contains("DOCUMENTED wire-50"), "{text}");
            let json: Value = serde_json::from_str(&r.json()).unwrap();
            assert_eq!(json["differences"][0]["apache_since"], json!("4.0"));
            assert_eq!(json["differences"][1]["apache_since"], Value::Null);
        }
    }

    /// The flat forms (`--flat`): each difference on its own.
    #[test]
    fn reports_say_what_failed_in_every_format() {
        let mut r = Report {
            targets: vec!["ref".into(), "apache".into()],
            flat: true,
            ..Default::default()
        };
        r.runs.push(run("s<1>", "ref"));
        r.runs.push(run("s<1>", "apache"));
        r.add_difference(row("50"), &Verdict::Documented("wire-50".into()), None);
        assert!(r.passed());
        r.add_difference(row("51"), &Verdict::Undocumented { hint: None }, None);
        assert!(!r.passed());
        let junit = r.junit();
        assert!(junit.contains("tests=\"3\" failures=\"1\""), "{junit}");
        // Runs come target by target: each scenario still gets one comparison case.
        let mut two = Report {
            targets: vec!["ref".into(), "apache".into()],
            flat: true,
            ..Default::default()
        };
        for t in ["ref", "apache"] {
            for s in ["a", "b"] {
                two.runs.push(run(s, t));
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
        assert!(
            md.contains("### Undocumented") && md.contains("| ref | apache |"),
            "{md}"
        );
        assert!(md.contains("wire-50"));
        let json: serde_json::Value = serde_json::from_str(&r.json()).unwrap();
        assert_eq!(json["verdict"], "failed");
        assert_eq!(json["differences"][1]["documented_by"], Value::Null);
        assert_eq!(json["differences"][0]["documented_by"], "wire-50");
        // Values are values, not JSON text inside a string.
        assert_eq!(json["differences"][0]["left"], "50");
        assert_eq!(json["runs"][0]["status"], "ok");
        r.add_origin("apache", "recorded");
        r.add_difference(
            row("52"),
            &Verdict::Undocumented {
                hint: Some("wire-50".into()),
            },
            None,
        );
        let table = r.terminal(false);
        assert!(table.starts_with("apache: recorded\n"), "{table}");
        assert!(
            table.contains("s<1>") && table.contains("3, 2 UNDOCUMENTED"),
            "{table}"
        );
        assert!(
            table.contains("UNDOCUMENTED (like wire-50, which does not list this scenario) s<1> end error_code: ref: 52 | apache: 48 INVALID_TXN_STATE"),
            "{table}"
        );
        // Undocumented first; the documented one collapsed to its entry.
        let undocumented_at = table.find("UNDOCUMENTED s<1>").unwrap();
        let documented_at = table
            .find("DOCUMENTED wire-50: 1 difference(s) in s<1>")
            .unwrap();
        assert!(undocumented_at < documented_at, "{table}");
        assert!(r
            .terminal(true)
            .contains("DOCUMENTED wire-50 s<1> end error_code: ref: 50"));
        assert!(table.contains("FAILED: 2 transcripts, 3 differences (2 undocumented)"));
    }
}
