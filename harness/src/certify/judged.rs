//! One judge's part of a certificate, whatever the judge: what it found that fails (keyed for
//! the baseline), a line that sums it up, how long it took, and its own report (JSON and page)
//! kept whole inside the certificate.

use serde::Serialize;

use crate::clients::chaos::report::{ChaosReport, Verdict as ChaosVerdict};
use crate::clients::report::ClientsReport;
use crate::fuzz::report::FuzzReport;
use crate::peers::report::PeersReport;
use crate::report::forms::Forms;
use crate::report::gate::{Gated, Judge, Severity};
use crate::report::Report;
use crate::transcript::Transcript;

/// How a judge's part went, before any baseline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "how", content = "why")]
pub enum Ran {
    /// It ran to its end.
    Ran,
    /// It ran, but too little happened to judge (chaos: too few transactions ended).
    Inconclusive(String),
    /// It could not run (a broker that did not start, a tool missing).
    CouldNotRun(String),
    /// It was not run.
    LeftOut(String),
}

/// One judge's part.
#[derive(Debug, Clone, Serialize)]
pub struct Judged {
    /// The judge.
    pub judge: Judge,
    /// The target it ran on (its form for this judge: `build` for the one-broker scenarios of
    /// `build:3`).
    pub target: Option<String>,
    /// What it was judged against.
    pub against: Option<String>,
    /// How it went.
    pub ran: Ran,
    /// One line summing it up.
    pub summary: String,
    /// Seconds it took, brokers' start included.
    pub secs: f64,
    /// What fails it, worst first, keyed for the baseline.
    pub gated: Vec<Gated>,
    /// Its own JSON report, whole (each in its own schema).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<serde_json::Value>,
    /// Its own HTML page, shown within the certificate's.
    #[serde(skip)]
    pub page: Option<String>,
}

impl Judged {
    fn new(judge: Judge, ran: Ran, summary: String) -> Judged {
        Judged {
            judge,
            target: None,
            against: None,
            ran,
            summary,
            secs: 0.0,
            gated: Vec::new(),
            report: None,
            page: None,
        }
    }

    /// A judge that was not run, and why.
    pub fn left_out(judge: Judge, why: &str) -> Judged {
        Judged::new(judge, Ran::LeftOut(why.to_owned()), String::new())
    }

    /// A judge that could not run, and why: a finding of its own (`could not run`), so that a
    /// baseline can hold a judge that never runs on a build and a certificate never passes
    /// over one silently.
    pub fn could_not_run(judge: Judge, why: &str, secs: f64) -> Judged {
        let mut j = Judged::new(judge, Ran::CouldNotRun(why.to_owned()), why.to_owned());
        j.secs = secs;
        j.gated = vec![Gated::new(judge, Severity::State, "could not run", 1)];
        j
    }

    /// The targets it ran on and against, by name.
    pub fn on(mut self, target: String, against: Option<String>) -> Judged {
        self.target = Some(target);
        self.against = against;
        self
    }

    /// The part with `note` (why it ran as it did) before its summary.
    pub fn noting(mut self, note: Option<String>) -> Judged {
        if let Some(note) = note {
            self.summary = format!("{note}; {}", self.summary);
        }
        self
    }

    fn with<R: Forms>(mut self, report: &R, page: String, secs: f64) -> Judged {
        self.report = serde_json::from_str(&report.json()).ok();
        self.page = Some(page);
        self.secs = secs;
        self
    }

    /// The scenarios' part (`judge`: of one broker or of a cluster).
    pub fn scenarios(
        judge: Judge,
        report: &Report,
        transcripts: &[Transcript],
        secs: f64,
    ) -> Judged {
        let gated = report.gated(judge);
        let undocumented = report.causes.iter().filter(|c| c.documented_by.is_none());
        let summary = format!(
            "{} transcripts, {} differences in {} root causes ({} undocumented), {} stale, {} failed",
            report.runs.len(),
            report.differences.len(),
            report.causes.len(),
            undocumented.count(),
            report.stale.len(),
            report.failed_runs()
        );
        let page = crate::report::html::page(report, transcripts);
        let mut j = Judged::new(judge, Ran::Ran, summary).with(report, page, secs);
        j.gated = gated;
        j
    }

    /// The client workloads' part.
    pub fn clients(report: &ClientsReport, secs: f64) -> Judged {
        let undocumented = report
            .differences
            .iter()
            .filter(|d| d.documented_by.is_none())
            .count();
        let summary = format!(
            "{} runs ({} without a transcript), {} differences ({} undocumented), {} stale claims",
            report.runs.len(),
            report.runs.iter().filter(|r| r.error.is_some()).count(),
            report.differences.len(),
            undocumented,
            report.stale.len()
        );
        let page = crate::clients::html::page(report);
        let mut j = Judged::new(Judge::Clients, Ran::Ran, summary).with(report, page, secs);
        j.gated = report.gated();
        j
    }

    /// The exactly-once workload's part.
    pub fn chaos(report: &ChaosReport, secs: f64) -> Judged {
        let parts: Vec<String> = report
            .targets
            .iter()
            .map(|t| {
                let role = if t.control { " (control)" } else { "" };
                match &t.error {
                    Some(e) => format!("{}{role}: did not finish ({e})", t.name),
                    None => format!(
                        "{}{role}: {} transactions ended, {} faults, {} anomalies",
                        t.name,
                        t.ended(),
                        t.faults.len(),
                        t.not_allowed().len()
                    ),
                }
            })
            .collect();
        let summary = format!(
            "{} s under faults; {}",
            report.duration_secs,
            parts.join("; ")
        );
        let ran = match report.verdict {
            ChaosVerdict::Inconclusive => {
                let why: Vec<&str> = report
                    .targets
                    .iter()
                    .filter_map(|t| t.inconclusive.as_deref())
                    .collect();
                Ran::Inconclusive(why.join("; "))
            }
            _ => Ran::Ran,
        };
        let page = crate::clients::chaos::html::page(report);
        let mut j = Judged::new(Judge::Chaos, ran, summary).with(report, page, secs);
        j.gated = report.gated();
        j
    }

    /// The live-wire fuzzing's part.
    pub fn fuzz(report: &FuzzReport, secs: f64) -> Judged {
        let summary = match &report.frames {
            Some(f) => format!(
                "{} frames ({:.0}/s), {} crashes, {} restarts, {} findings{}",
                f.frames,
                f.frames_per_sec,
                f.crashes,
                f.restarts,
                report.new_findings(),
                match &f.ended_early {
                    Some(why) => format!("; ended early: {why}"),
                    None => String::new(),
                }
            ),
            None => format!(
                "{} sequences, {} findings",
                report.sequences,
                report.new_findings()
            ),
        };
        let page = crate::fuzz::html::page(report);
        let mut j = Judged::new(Judge::Fuzz, Ran::Ran, summary).with(report, page, secs);
        j.gated = report.gated();
        j
    }

    /// The peer suite's part.
    pub fn peers(report: &PeersReport, secs: f64) -> Judged {
        let summary = format!(
            "{} tests, {} findings ({} undocumented), {} stale",
            report.tests.len(),
            report.findings.len(),
            report
                .findings
                .iter()
                .filter(|f| f.documented_by.is_none())
                .count(),
            report.stale.len()
        );
        let page = format!(
            "<pre>{}</pre>",
            crate::report::junit::xml(&report.terminal())
        );
        let mut j = Judged::new(Judge::Peers, Ran::Ran, summary).with(report, page, secs);
        j.gated = report.gated();
        j
    }
}
