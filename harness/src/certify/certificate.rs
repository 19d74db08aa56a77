//! The certificate: a verdict per judge and one overall, the findings of every judge ranked
//! worst first across judges, held to one baseline; as text, Markdown for a pull-request
//! comment, one JUnit file with a suite per judge, and JSON (`harness/certificate.schema.json`).

use std::fmt::Write as _;

use serde::Serialize;

use super::judged::{Judged, Ran};
use crate::report::baseline::{Against, Baseline};
use crate::report::gate::{Gated, Judge};
use crate::report::junit::{xml, Case};

/// The version of the certificate's JSON schema.
pub const SCHEMA_VERSION: u32 = 1;

/// How many findings the text and the Markdown show before folding the rest.
const SHOWN: usize = 25;

/// A verdict: of one judge, or of the whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Something (new, with a baseline) fails it.
    Failed,
    /// It could not run.
    CouldNotRun,
    /// Too little happened to judge, and nothing else fails it.
    Inconclusive,
    /// Nothing (new) fails it.
    Passed,
    /// Not run.
    LeftOut,
}

impl Verdict {
    /// The word the reports use.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Failed => "FAILED",
            Verdict::CouldNotRun => "COULD NOT RUN",
            Verdict::Inconclusive => "INCONCLUSIVE",
            Verdict::Passed => "PASSED",
            Verdict::LeftOut => "left out",
        }
    }
}

/// One finding of the certificate.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// The finding as its judge keyed it.
    #[serde(flatten)]
    pub gated: Gated,
    /// Whether it fails the certificate: always without a baseline; with one, when new.
    pub new: bool,
}

/// One judge's line.
#[derive(Debug, Clone, Serialize)]
pub struct JudgeLine {
    /// Its verdict, baseline held.
    pub verdict: Verdict,
    /// Findings new against the baseline (all, without one).
    pub new: usize,
    /// Findings the baseline knows.
    pub known: usize,
    /// The part itself.
    #[serde(flatten)]
    pub part: Judged,
}

impl JudgeLine {
    /// What its line says: the summary, or why it did not run or could not judge.
    pub fn what(&self) -> String {
        match &self.part.ran {
            Ran::LeftOut(why) | Ran::CouldNotRun(why) => why.clone(),
            Ran::Inconclusive(why) => format!("{} — {why}", self.part.summary),
            Ran::Ran => self.part.summary.clone(),
        }
    }
}

/// The whole certificate. The JSON form is this struct.
#[derive(Debug, Clone, Serialize)]
pub struct Certificate {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The target, as `--target` named it.
    pub target: String,
    /// What it was judged against.
    pub against: String,
    /// The verdict of the whole: the worst of the judges' (left out ones aside).
    pub verdict: Verdict,
    /// Each judge, in the order they ran, then those left out.
    pub judges: Vec<JudgeLine>,
    /// Every finding of every judge, worst first across judges.
    pub findings: Vec<Finding>,
    /// The run against a baseline, when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Against>,
    /// The budget given, in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_secs: Option<u64>,
    /// Seconds the whole took.
    pub secs: f64,
    /// What a reader must know of how it was judged.
    pub notes: Vec<String>,
}

impl Certificate {
    /// The certificate of `parts`, held to `baseline` when given.
    pub fn new(
        target: String,
        against: String,
        parts: Vec<Judged>,
        baseline: Option<&Baseline>,
        secs: f64,
    ) -> Certificate {
        let ran: Vec<Judge> = parts
            .iter()
            .filter(|p| !matches!(p.ran, Ran::LeftOut(_)))
            .map(|p| p.judge)
            .collect();
        let failing: Vec<Gated> = parts.iter().flat_map(|p| p.gated.clone()).collect();
        let against_baseline = baseline.map(|b| Against::hold(&ran, &failing, b));
        let is_new = |g: &Gated| {
            against_baseline.as_ref().is_none_or(|a| {
                a.new
                    .iter()
                    .any(|k| k.judge == Some(g.judge) && k.key == g.key)
            })
        };
        let mut findings: Vec<Finding> = failing
            .iter()
            .map(|g| Finding {
                gated: g.clone(),
                new: is_new(g),
            })
            .collect();
        // Worst first: new before known, then severity, then judge order.
        findings.sort_by(|a, b| {
            (!a.new, a.gated.severity, a.gated.judge, &a.gated.key).cmp(&(
                !b.new,
                b.gated.severity,
                b.gated.judge,
                &b.gated.key,
            ))
        });
        let judges: Vec<JudgeLine> = parts
            .into_iter()
            .map(|part| {
                let new = findings
                    .iter()
                    .filter(|f| f.new && f.gated.judge == part.judge)
                    .count();
                let known = part.gated.len().saturating_sub(new);
                let verdict = match (&part.ran, new) {
                    (Ran::LeftOut(_), _) => Verdict::LeftOut,
                    (Ran::CouldNotRun(_), n) if n > 0 => Verdict::CouldNotRun,
                    (Ran::Inconclusive(_), n)
                        if n > 0 && only_inconclusive(&findings, part.judge) =>
                    {
                        Verdict::Inconclusive
                    }
                    (_, 0) => Verdict::Passed,
                    (_, _) => Verdict::Failed,
                };
                JudgeLine {
                    verdict,
                    new,
                    known,
                    part,
                }
            })
            .collect();
        let verdict = judges
            .iter()
            .map(|j| j.verdict)
            .filter(|v| *v != Verdict::LeftOut)
            .min()
            .unwrap_or(Verdict::CouldNotRun);
        Certificate {
            schema_version: SCHEMA_VERSION,
            target,
            against,
            verdict,
            judges,
            findings,
            baseline: against_baseline,
            budget_secs: None,
            secs,
            notes: Vec::new(),
        }
    }

    /// Whether the certificate passes: every judge that ran passed, baseline held.
    pub fn passed(&self) -> bool {
        self.verdict == Verdict::Passed
    }

    /// Every finding of every judge that ran, keyed as a baseline keys them: what a baseline
    /// saved from this run holds.
    pub fn gated(&self) -> Vec<Gated> {
        self.findings.iter().map(|f| f.gated.clone()).collect()
    }

    /// What a baseline saved from this run holds.
    pub fn baseline(&self) -> Baseline {
        Baseline::of_findings(&self.gated())
    }

    /// The certificate as text: the judges' table, the findings worst first, the baseline,
    /// the time each judge took and the whole.
    pub fn terminal(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "certificate of {} against {}", self.target, self.against);
        let _ = writeln!(s, "{:18} {:13} {:>7}  summary", "judge", "verdict", "secs");
        for j in &self.judges {
            let what = j.what();
            let secs = match j.verdict {
                Verdict::LeftOut => "-".to_owned(),
                _ => format!("{:.0}", j.part.secs),
            };
            let _ = writeln!(
                s,
                "{:18} {:13} {secs:>7}  {what}",
                j.part.judge.name(),
                j.verdict.label()
            );
        }
        let new: Vec<&Finding> = self.findings.iter().filter(|f| f.new).collect();
        let heading = match &self.baseline {
            Some(_) => "New findings, worst first",
            None => "Findings, worst first",
        };
        if !new.is_empty() {
            let _ = writeln!(s, "\n{heading} ({}):", new.len());
            for f in new.iter().take(SHOWN) {
                let _ = writeln!(s, "  {}", line(f));
            }
            if new.len() > SHOWN {
                let _ = writeln!(
                    s,
                    "  ... and {} more (--json, --html, --markdown list them all)",
                    new.len() - SHOWN
                );
            }
        }
        if let Some(b) = &self.baseline {
            let _ = writeln!(
                s,
                "\n{}; the certificate fails only on what is new",
                b.summary()
            );
            for k in b.fixed.iter().take(SHOWN) {
                let judge = k.judge.map_or("scenarios", Judge::name);
                let _ = writeln!(s, "  FIXED [{judge}] {}", k.key);
            }
        }
        for n in &self.notes {
            let _ = writeln!(s, "note: {n}");
        }
        let budget = match self.budget_secs {
            Some(b) => format!(" (budget {b} s)"),
            None => String::new(),
        };
        let _ = writeln!(s, "\ntook {:.0} s{budget}", self.secs);
        let _ = writeln!(s, "{}", self.headline());
        s
    }

    /// The last line: `CERTIFIED: ...` or `NOT CERTIFIED: ...`.
    pub fn headline(&self) -> String {
        let ran = self
            .judges
            .iter()
            .filter(|j| j.verdict != Verdict::LeftOut)
            .count();
        let new = self.findings.iter().filter(|f| f.new).count();
        match self.passed() {
            true => format!(
                "CERTIFIED: {} against {}, {ran} judges passed{}",
                self.target,
                self.against,
                match &self.baseline {
                    Some(b) => format!(" ({} known findings held by the baseline)", b.known),
                    None => String::new(),
                }
            ),
            false => format!(
                "NOT CERTIFIED ({}): {} against {}, {new} {}finding(s) over {ran} judges",
                self.verdict.label(),
                self.target,
                self.against,
                if self.baseline.is_some() { "new " } else { "" }
            ),
        }
    }

    /// Markdown for a pull-request comment: the verdict, the judges, what is new; the rest
    /// folded.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "## kconform certify: {}\n", self.headline());
        let _ = writeln!(s, "| judge | verdict | new | known | seconds | summary |");
        let _ = writeln!(s, "| --- | --- | --- | --- | --- | --- |");
        for j in &self.judges {
            let what = j.what();
            let numbers = match j.verdict {
                Verdict::LeftOut => "- | - | -".to_owned(),
                _ => format!("{} | {} | {:.0}", j.new, j.known, j.part.secs),
            };
            let _ = writeln!(
                s,
                "| {} | **{}** | {numbers} | {} |",
                j.part.judge.name(),
                j.verdict.label(),
                what.replace('|', "\\|")
            );
        }
        let (new, known): (Vec<&Finding>, Vec<&Finding>) =
            self.findings.iter().partition(|f| f.new);
        if !new.is_empty() {
            let _ = writeln!(s, "\n### What fails ({})\n", new.len());
            for f in new.iter().take(SHOWN) {
                let _ = writeln!(s, "- {}", md_line(f));
            }
            if new.len() > SHOWN {
                let _ = writeln!(
                    s,
                    "\n<details><summary>{} more</summary>\n",
                    new.len() - SHOWN
                );
                for f in new.iter().skip(SHOWN) {
                    let _ = writeln!(s, "- {}", md_line(f));
                }
                let _ = writeln!(s, "\n</details>");
            }
        }
        if let Some(b) = &self.baseline {
            let _ = writeln!(s, "\n{}.", b.summary());
            if !b.fixed.is_empty() {
                let _ = writeln!(
                    s,
                    "\n<details><summary>Fixed ({})</summary>\n",
                    b.fixed.len()
                );
                for k in &b.fixed {
                    let judge = k.judge.map_or("scenarios", Judge::name);
                    let _ = writeln!(s, "- [{judge}] `{}`", k.key.replace('`', "'"));
                }
                let _ = writeln!(s, "\n</details>");
            }
        }
        if !known.is_empty() {
            let _ = writeln!(
                s,
                "\n<details><summary>Known findings, held by the baseline ({})</summary>\n",
                known.len()
            );
            for f in &known {
                let _ = writeln!(s, "- {}", md_line(f));
            }
            let _ = writeln!(s, "\n</details>");
        }
        let _ = writeln!(s, "\nTook {:.0} s.", self.secs);
        s
    }

    /// JUnit XML: a suite per judge, a case per finding (failed when new), and a case for a
    /// judge with no finding, or one left out (passed, named so).
    pub fn junit(&self) -> String {
        let mut out = String::from(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"kconform certify\">\n",
        );
        for j in &self.judges {
            let class = format!("certify.{}", j.part.judge.name());
            let mut cases: Vec<Case> = self
                .findings
                .iter()
                .filter(|f| f.gated.judge == j.part.judge)
                .map(|f| match f.new {
                    true => Case::failed(
                        &class,
                        &f.gated.key,
                        format!("{} ({})", f.gated.severity.label(), j.part.judge),
                        "",
                    ),
                    false => Case::passed(&class, format!("{} (in the baseline)", f.gated.key)),
                })
                .collect();
            if cases.is_empty() {
                let name = match &j.part.ran {
                    Ran::LeftOut(why) => format!("left out: {why}"),
                    _ => format!("no finding: {}", j.part.summary),
                };
                cases.push(Case::passed(&class, name));
            }
            let suite = crate::report::junit::suite(j.part.judge.name(), &cases);
            // One document of suites: each suite without its own XML declaration.
            let body = suite.split_once('\n').map_or(suite.as_str(), |(_, b)| b);
            out.push_str(body);
        }
        out.push_str("</testsuites>\n");
        out
    }

    /// The JSON form, in `harness/certificate.schema.json`.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }
}

crate::report::forms::report_forms!(Certificate);

/// Whether every new finding of `judge` says only that it could not judge.
fn only_inconclusive(findings: &[Finding], judge: Judge) -> bool {
    findings
        .iter()
        .filter(|f| f.new && f.gated.judge == judge)
        .all(|f| f.gated.key.starts_with("inconclusive:"))
}

/// A finding on one line of text.
fn line(f: &Finding) -> String {
    let rows = match f.gated.rows {
        0 | 1 => String::new(),
        n => format!(" (x{n})"),
    };
    format!(
        "{:12} [{}] {}{rows}",
        f.gated.severity.label().to_uppercase(),
        f.gated.judge,
        f.gated.key
    )
}

/// A finding as a Markdown list item.
fn md_line(f: &Finding) -> String {
    let rows = match f.gated.rows {
        0 | 1 => String::new(),
        n => format!(" (x{n})"),
    };
    format!(
        "**{}** [{}] `{}`{rows}",
        f.gated.severity.label(),
        f.gated.judge,
        f.gated.key.replace('`', "'")
    )
}

/// `text` escaped for HTML (for the page).
pub(super) fn html(text: &str) -> String {
    xml(text)
}
