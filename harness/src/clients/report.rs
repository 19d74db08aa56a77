//! The verdict of `kconform clients`: per workload and client, whether the targets' clients
//! saw the same, each difference with the ledger entry that documents it, stale claims, runs
//! that gave no transcript; and the same as JSON (`harness/clients-report.schema.json`),
//! JUnit and Markdown.

use crate::report::junit::Case;
use std::fmt::Write;

use serde::Serialize;

use super::judge::{self, JudgedDiff, StaleClaim};
use super::placement::Placement;
use super::transcript::{self, ClientTranscript};
use crate::compare::ledger::{Consequence, Ledger};
use crate::report::consequences::{gather, ClientHarm};

/// One target's run.
#[derive(Debug, Clone, Serialize)]
pub struct TargetRun {
    /// Target name.
    pub name: String,
    /// Where the broker came from.
    pub origin: String,
    /// Wall time of its workloads (both clients side by side).
    pub wall_secs: f64,
}

/// One workload run by one client on one target.
#[derive(Debug, Clone, Serialize)]
pub struct RunRow {
    /// `java` or `librdkafka`.
    pub client: String,
    /// The workload.
    pub workload: String,
    /// The target.
    pub target: String,
    /// Where its transaction coordinator sat on a cluster, beside its group's coordinator (a
    /// workload with a group) or its partition's leader (one without: apart); none on one
    /// broker, where they sit together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coordinators: Option<Placement>,
    /// How long it took.
    pub secs: f64,
    /// What the client saw; none when the run gave no transcript.
    pub transcript: Option<ClientTranscript>,
    /// Why it gave none.
    pub error: Option<String>,
}

/// The whole verdict. The JSON form is this struct.
#[derive(Debug, Clone, Serialize)]
pub struct ClientsReport {
    /// 1; changes only with a change that breaks readers.
    pub schema_version: u32,
    /// Each target's run.
    pub targets: Vec<TargetRun>,
    /// The target under test (the left side of each difference), when two ran.
    pub left: Option<String>,
    /// The target it is judged against (Apache), when two ran.
    pub right: Option<String>,
    /// Every run, with its transcript.
    pub runs: Vec<RunRow>,
    /// Every difference, judged.
    pub differences: Vec<JudgedDiff>,
    /// Ledger claims the run did not confirm.
    pub stale: Vec<StaleClaim>,
    /// What the documented differences of this run do to the applications, worst first: one
    /// line per entry and consequence short of a difference of no stated harm.
    pub consequences: Vec<ClientHarm>,
    /// What a reader must know of how the run was judged: a client or Apache release other
    /// than the ones the ledger's claims speak of, and so claims not judged stale.
    pub notes: Vec<String>,
    /// "passed" or "failed".
    pub verdict: String,
}

impl RunRow {
    /// Whether this row is a run of `key`'s workload and client, its coordinators placed as
    /// `key` says (one broker's run stands for `together`).
    pub(super) fn is(&self, key: &Key) -> bool {
        key.has(&self.client, &self.workload, self.coordinators)
    }

    fn key(&self) -> Key {
        Key {
            workload: self.workload.clone(),
            client: self.client.clone(),
            placement: Placement::of_run(self.coordinators),
            placed: self.coordinators.is_some(),
        }
    }
}

/// The ecosystem's clients start every workload with `initTransactions`, which succeeds on
/// Apache: where it failed on the baseline the client never worked there (a bootstrap it could
/// not read, a tool that broke), and a failure alike on both sides would read as "same". Such
/// a run is made one that gave no transcript, saying why.
fn refuse_dead_baselines(runs: &mut [RunRow], baseline: &str) {
    let programs: Vec<&str> = super::programs::Program::ALL
        .iter()
        .map(|p| p.name())
        .collect();
    for row in runs
        .iter_mut()
        .filter(|r| r.target == baseline && programs.contains(&r.client.as_str()))
    {
        let failed = row.transcript.as_ref().and_then(|t| {
            t.calls
                .iter()
                .find(|c| c.call == "initTransactions" && c.result != "ok")
        });
        if let Some(call) = failed {
            row.error = Some(format!(
                "{} could not start a transactional producer on the baseline {baseline}: {} ({}), so nothing it saw is judged",
                row.client,
                call.result,
                call.message.as_deref().unwrap_or_default()
            ));
            row.transcript = None;
        }
    }
}

/// The consequences the documented differences show, by entry and consequence, worst first
/// (those of no stated harm left out).
fn harms(differences: &[JudgedDiff]) -> Vec<ClientHarm> {
    let mut out: Vec<ClientHarm> = Vec::new();
    for d in differences {
        if let (Some(id), Some(consequence)) = (&d.documented_by, d.consequence) {
            if consequence < Consequence::Differs {
                gather(&mut out, id, consequence, &d.diff.client, &d.diff.workload);
            }
        }
    }
    out
}

/// A line of the report: a workload run by a client, its coordinators placed one way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Key {
    pub(super) workload: String,
    pub(super) client: String,
    placement: Placement,
    /// Whether some run of it was placed (on a cluster), so the line names the placement.
    placed: bool,
}

impl Key {
    /// The workload, with where its coordinators sat when that was chosen.
    pub(super) fn label(&self) -> String {
        match self.placed {
            true => format!("{} ({})", self.workload, self.placement.name()),
            false => self.workload.clone(),
        }
    }

    /// Whether a difference or stale claim of `client`'s `workload`, from runs whose
    /// coordinators sat at `coordinators`, belongs on this line.
    pub(super) fn has(
        &self,
        client: &str,
        workload: &str,
        coordinators: Option<Placement>,
    ) -> bool {
        self.workload == workload
            && self.client == client
            && self.placement == Placement::of_run(coordinators)
    }
}

impl ClientsReport {
    /// Diffs each workload's transcripts (the target under test against `baseline`) and
    /// judges the differences against `ledger`.
    pub fn judge(
        targets: Vec<TargetRun>,
        baseline: Option<String>,
        runs: Vec<RunRow>,
        ledger: &Ledger,
    ) -> ClientsReport {
        let (left, right) = match (targets.len(), baseline) {
            (2, Some(b)) => (
                targets.iter().find(|t| t.name != b).map(|t| t.name.clone()),
                Some(b),
            ),
            _ => (None, None),
        };
        let mut runs = runs;
        if let Some(b) = &right {
            refuse_dead_baselines(&mut runs, b);
        }
        let mut diffs = Vec::new();
        let mut compared = Vec::new();
        if let (Some(l), Some(r)) = (&left, &right) {
            let of = |target: &str, key: &Key| {
                runs.iter()
                    .find(|x| x.target == target && x.is(key))
                    .and_then(|x| x.transcript.as_ref())
            };
            for row in runs.iter().filter(|x| x.target == *l) {
                let key = row.key();
                if let (Some(a), Some(b)) = (of(l, &key), of(r, &key)) {
                    compared.push(judge::Compared {
                        client: row.client.clone(),
                        workload: row.workload.clone(),
                        coordinators: row.coordinators,
                        left: a.fields(),
                        right: b.fields(),
                    });
                    diffs.extend(transcript::diff(a, b).into_iter().map(|mut d| {
                        d.coordinators = row.coordinators;
                        d
                    }));
                }
            }
        }
        let differences = judge::judge(ledger, diffs);
        let stale = judge::stale(ledger, &compared);
        let consequences = harms(&differences);
        let mut report = ClientsReport {
            schema_version: 1,
            targets,
            left,
            right,
            runs,
            differences,
            stale,
            consequences,
            notes: Vec::new(),
            verdict: String::new(),
        };
        report.set_verdict();
        report
    }

    /// Leaves unjudged the claims the ledger does not make of this run (those of `client`, or
    /// every claim when none is named), saying `why` in the notes: they still document the
    /// differences they match, but one that did not show says nothing about the docs.
    pub fn leave_claims_unjudged(&mut self, client: Option<&str>, why: String) {
        self.stale.retain(|s| client.is_some_and(|c| s.client != c));
        self.notes.push(why);
        self.set_verdict();
    }

    /// Rows for the runs `client` could not make of `workloads` on `targets`, each saying
    /// `why`: a client the user named that cannot run here fails the run.
    pub fn add_failed_runs<'a>(
        &mut self,
        targets: impl Iterator<Item = String> + Clone,
        client: &str,
        workloads: impl Iterator<Item = &'a &'a str>,
        why: &str,
    ) {
        for workload in workloads {
            for target in targets.clone() {
                self.runs.push(RunRow {
                    client: client.into(),
                    workload: (*workload).into(),
                    target,
                    coordinators: None,
                    secs: 0.0,
                    transcript: None,
                    error: Some(format!("{client} did not run: {why}")),
                });
            }
        }
        self.set_verdict();
    }

    /// `verdict` as [`ClientsReport::passed`] says, after what it depends on changed.
    fn set_verdict(&mut self) {
        self.verdict = match self.passed() {
            true => "passed",
            false => "failed",
        }
        .into();
    }

    /// Every run gave a transcript, no difference is undocumented, no claim is stale.
    pub fn passed(&self) -> bool {
        self.runs.iter().all(|r| r.error.is_none())
            && self.differences.iter().all(|d| d.documented_by.is_some())
            && self.stale.is_empty()
    }

    pub(super) fn keys(&self) -> Vec<Key> {
        let mut out: Vec<Key> = Vec::new();
        for r in &self.runs {
            let key = r.key();
            match out.iter_mut().find(|k| r.is(k)) {
                Some(k) => k.placed |= key.placed,
                None => out.push(key),
            }
        }
        out
    }

    pub(super) fn verdict_of(&self, key: &Key) -> String {
        let failed: Vec<String> = self
            .runs
            .iter()
            .filter(|r| r.is(key) && r.error.is_some())
            .map(|r| format!("NO TRANSCRIPT on {}", r.target))
            .collect();
        if !failed.is_empty() {
            return failed.join("; ");
        }
        let mine: Vec<&JudgedDiff> = self
            .differences
            .iter()
            .filter(|d| key.has(&d.diff.client, &d.diff.workload, d.diff.coordinators))
            .collect();
        let stale = self
            .stale
            .iter()
            .filter(|s| key.has(&s.client, &s.workload, s.coordinators))
            .count();
        let mut words = Vec::new();
        let undocumented = mine.iter().filter(|d| d.documented_by.is_none()).count();
        let worst = mine.iter().filter_map(|d| d.breaks_undocumented()).min();
        if let Some(c) = worst {
            words.push(format!("BREAKS EXACTLY-ONCE ({})", c.name()));
        }
        if undocumented > 0 {
            words.push(format!("UNDOCUMENTED x{undocumented}"));
        }
        let mut ids: Vec<&str> = Vec::new();
        for id in mine.iter().filter_map(|d| d.documented_by.as_deref()) {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        if !ids.is_empty() {
            words.push(format!("documented ({})", ids.join(", ")));
        }
        if stale > 0 {
            words.push(format!("STALE claim x{stale}"));
        }
        match (words.is_empty(), self.left.is_some()) {
            (true, true) => "same".into(),
            (true, false) => "ran".into(),
            _ => words.join("; "),
        }
    }

    fn cell(&self, key: &Key, target: &str) -> String {
        match self.runs.iter().find(|r| r.is(key) && r.target == target) {
            None => "-".into(),
            Some(r) if r.error.is_some() => format!("FAIL {:.1}s", r.secs),
            Some(r) => format!("ok {:.1}s", r.secs),
        }
    }

    /// The terminal table (a line per workload and client), then each difference, stale claim
    /// and failed run, then the verdict.
    pub fn terminal(&self) -> String {
        let mut out = String::new();
        if !self.consequences.is_empty() {
            out.push_str("What the documented differences did to the clients:\n");
            for h in &self.consequences {
                let _ = writeln!(
                    out,
                    "  {} {}: {} ({}) for {} (workloads {})",
                    match h.consequence.breaks_exactly_once() {
                        true => "BREAKS EXACTLY-ONCE",
                        false => "HARMS",
                    },
                    h.deviation,
                    h.consequence.name(),
                    h.consequence.about(),
                    h.clients.join(", "),
                    h.workloads.join(", ")
                );
            }
            out.push('\n');
        }
        let broken: Vec<(&JudgedDiff, Consequence)> = self
            .differences
            .iter()
            .filter_map(|d| Some((d, d.breaks_undocumented()?)))
            .collect();
        if !broken.is_empty() {
            out.push_str("What the undocumented differences did to the clients:\n");
            for (d, c) in broken {
                let _ = writeln!(
                    out,
                    "  BREAKS EXACTLY-ONCE (undocumented): {} ({}) for {} (workload {}{}: '{}' {} | {})",
                    c.name(),
                    c.about(),
                    d.diff.client,
                    d.diff.workload,
                    placed(d.diff.coordinators.map(Placement::name)),
                    d.diff.field,
                    d.diff.left,
                    d.diff.right
                );
            }
            out.push('\n');
        }
        let _ = write!(out, "{:36} {:11}", "workload", "client");
        for t in &self.targets {
            let _ = write!(out, " {:>12}", t.name);
        }
        let _ = writeln!(out, "  verdict");
        for key in self.keys() {
            let _ = write!(out, "{:36} {:11}", key.label(), key.client);
            for t in &self.targets {
                let _ = write!(out, " {:>12}", self.cell(&key, &t.name));
            }
            let _ = writeln!(out, "  {}", self.verdict_of(&key));
        }
        for t in &self.targets {
            let _ = writeln!(out, "{}: {:.0} s ({})", t.name, t.wall_secs, t.origin);
        }
        for note in &self.notes {
            let _ = writeln!(out, "note: {note}");
        }
        for d in &self.differences {
            let how = match (&d.documented_by, d.consequence) {
                (Some(id), Some(c)) if c < Consequence::Differs => {
                    format!("DOCUMENTED by {id} ({})", c.name())
                }
                (Some(id), _) => format!("DOCUMENTED by {id}"),
                (None, Some(c)) if c.breaks_exactly_once() => {
                    format!("UNDOCUMENTED, BREAKS EXACTLY-ONCE ({})", c.name())
                }
                (None, _) => "UNDOCUMENTED".into(),
            };
            let _ = writeln!(
                out,
                "{how}: {} {}{} '{}': {} {} | {} {}",
                d.diff.client,
                d.diff.workload,
                placed(d.diff.coordinators.map(Placement::name)),
                d.diff.field,
                self.left.as_deref().unwrap_or("left"),
                d.diff.left,
                self.right.as_deref().unwrap_or("right"),
                d.diff.right
            );
        }
        for s in &self.stale {
            let _ = writeln!(
                out,
                "STALE claim of {}: {} {}{} '{}' should show kaas {} against Apache {}",
                s.deviation,
                s.client,
                s.workload,
                placed(s.coordinators.map(Placement::name)),
                s.field,
                s.kaas,
                s.apache
            );
        }
        for r in self.runs.iter().filter(|r| r.error.is_some()) {
            let why = r.error.as_deref().unwrap_or_default();
            let _ = writeln!(
                out,
                "NO TRANSCRIPT: {} {}{} on {}: {}",
                r.client,
                r.workload,
                placed(r.coordinators.map(Placement::name)),
                r.target,
                why.lines().next().unwrap_or_default()
            );
        }
        let undocumented = self
            .differences
            .iter()
            .filter(|d| d.documented_by.is_none())
            .count();
        let failed = self.runs.iter().filter(|r| r.error.is_some()).count();
        let _ = writeln!(
            out,
            "{}: {} runs ({failed} without a transcript), {} differences ({undocumented} undocumented), {} stale claims",
            match self.passed() {
                true => "PASSED",
                false => "FAILED",
            },
            self.runs.len(),
            self.differences.len(),
            self.stale.len()
        );
        out
    }

    /// The report as JSON.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// JUnit XML: a test case per workload and client, failed for a run without a transcript,
    /// an undocumented difference or a stale claim.
    pub fn junit(&self) -> String {
        let cases: Vec<Case> = self
            .keys()
            .iter()
            .map(|key| {
                let verdict = self.verdict_of(key);
                let failing = ["UNDOCUMENTED", "STALE", "NO TRANSCRIPT"]
                    .iter()
                    .any(|word| verdict.contains(word));
                let (class, name) = (format!("clients.{}", key.client), key.label());
                match failing {
                    false => Case::passed(class, &name),
                    true => Case::failed(class, &name, verdict, ""),
                }
            })
            .collect();
        crate::report::junit::suite("kconform clients", &cases)
    }

    /// Markdown for a pull-request comment.
    pub fn markdown(&self) -> String {
        let mut out = String::from("### kconform clients\n\n");
        for h in &self.consequences {
            let _ = writeln!(
                out,
                "- **{}** `{}`: {} for {} (workloads {})",
                h.consequence.name(),
                h.deviation,
                h.consequence.about(),
                h.clients.join(", "),
                h.workloads.join(", ")
            );
        }
        if !self.consequences.is_empty() {
            out.push('\n');
        }
        out.push_str("| workload | client |");
        for t in &self.targets {
            let _ = write!(out, " {} |", t.name);
        }
        out.push_str(" verdict |\n|---|---|");
        out.push_str(&"---|".repeat(self.targets.len()));
        out.push_str("---|\n");
        for key in self.keys() {
            let _ = write!(out, "| {} | {} |", key.label(), key.client);
            for t in &self.targets {
                let _ = write!(out, " {} |", self.cell(&key, &t.name));
            }
            let _ = writeln!(out, " {} |", self.verdict_of(&key));
        }
        if !self.differences.is_empty() || !self.stale.is_empty() {
            out.push_str("\n| client | workload | field | kaas | Apache | verdict |\n|---|---|---|---|---|---|\n");
            let md = |s: &str| s.replace('|', "\\|");
            for d in &self.differences {
                let _ = writeln!(
                    out,
                    "| {} | {}{} | {} | `{}` | `{}` | {} |",
                    d.diff.client,
                    d.diff.workload,
                    placed(d.diff.coordinators.map(Placement::name)),
                    md(&d.diff.field),
                    md(&d.diff.left),
                    md(&d.diff.right),
                    d.documented_by.as_deref().unwrap_or("**undocumented**")
                );
            }
            for s in &self.stale {
                let _ = writeln!(
                    out,
                    "| {} | {}{} | {} | `{}` | `{}` | **stale** ({}) |",
                    s.client,
                    s.workload,
                    placed(s.coordinators.map(Placement::name)),
                    md(&s.field),
                    md(&s.kaas),
                    md(&s.apache),
                    s.deviation
                );
            }
        }
        let _ = writeln!(out, "\n**{}**", self.verdict.to_uppercase());
        out
    }
}

/// ` (apart)` after a workload's name when its coordinators were placed.
fn placed(placement: Option<&str>) -> String {
    placement.map(|p| format!(" ({p})")).unwrap_or_default()
}

crate::report::forms::report_forms!(ClientsReport);

#[cfg(test)]
mod tests {
    use super::*;

    fn stale(client: &str) -> StaleClaim {
        StaleClaim {
            deviation: "d".into(),
            client: client.into(),
            workload: "eos".into(),
            field: "f".into(),
            kaas: "k".into(),
            apache: "a".into(),
            coordinators: None,
        }
    }

    fn row(client: &str, target: &str, init: &str) -> RunRow {
        RunRow {
            client: client.into(),
            workload: "fencing".into(),
            target: target.into(),
            coordinators: None,
            secs: 1.0,
            transcript: Some(ClientTranscript {
                workload: "fencing".into(),
                client: client.into(),
                calls: vec![super::super::transcript::Call {
                    call: "initTransactions".into(),
                    result: init.into(),
                    message: None,
                }],
                observed: Default::default(),
            }),
            error: None,
        }
    }

    fn target(name: &str) -> TargetRun {
        TargetRun {
            name: name.into(),
            origin: "test".into(),
            wall_secs: 0.0,
        }
    }

    /// A client that could not start on Apache either is no "same": its run gave nothing to
    /// judge, and says why (seen: KafkaJS given a cluster's comma-separated bootstrap).
    #[test]
    fn a_client_that_failed_alike_on_the_baseline_is_no_pass() {
        let failing = "KafkaJSConnectionError";
        let judged = |client: &str, result: &str| {
            ClientsReport::judge(
                vec![target("ref"), target("apache")],
                Some("apache".into()),
                vec![row(client, "ref", result), row(client, "apache", result)],
                &Ledger::default(),
            )
        };
        let report = judged("kafkajs", failing);
        assert!(!report.passed());
        let refused = report.runs.iter().find(|r| r.target == "apache").unwrap();
        assert!(
            refused.error.as_deref().unwrap_or_default().contains(
                "kafkajs could not start a transactional producer on the baseline apache: KafkaJSConnectionError"
            ),
            "{refused:?}"
        );
        assert!(judged("kafkajs", "ok").passed(), "started on both: same");
        assert!(
            judged("java", failing).passed(),
            "Java and librdkafka workloads that fail to start on purpose (empty-id) are theirs to judge"
        );
    }

    #[test]
    fn claims_left_unjudged_are_said_and_no_longer_fail_the_run() {
        let ledger = Ledger::default();
        let mut report = ClientsReport::judge(Vec::new(), None, Vec::new(), &ledger);
        report.stale = vec![stale("java"), stale("librdkafka")];
        report.leave_claims_unjudged(Some("java"), "a 4.4 client".into());
        let left: Vec<&str> = report.stale.iter().map(|s| s.client.as_str()).collect();
        assert_eq!(left, ["librdkafka"]);
        assert_eq!(report.verdict, "failed", "librdkafka's claim still stale");
        report.leave_claims_unjudged(None, "Apache 4.4".into());
        assert!(report.stale.is_empty());
        assert_eq!(report.verdict, "passed");
        assert!(report
            .terminal()
            .contains("note: a 4.4 client\nnote: Apache 4.4\n"));
    }

    /// An undocumented difference whose read-back breaks exactly-once heads the report as
    /// such (seen on a real kaas cluster: the Java client's abort-redo read the aborted
    /// records, one UNDOCUMENTED row among ten, nothing saying what it meant).
    #[test]
    fn an_undocumented_aborted_read_heads_the_report_as_breaking_exactly_once() {
        let seen = |target: &str, read: &str| {
            let mut r = row("java", target, "ok");
            r.workload = "abort-redo".into();
            let t = r.transcript.as_mut().unwrap();
            t.workload = "abort-redo".into();
            t.observed = [(
                "read_committed".to_string(),
                serde_json::from_str(read).unwrap(),
            )]
            .into();
            r
        };
        let report = ClientsReport::judge(
            vec![target("kaas"), target("apache")],
            Some("apache".into()),
            vec![
                seen("kaas", r#"["a0","a1","r0","r1"]"#),
                seen("apache", r#"["r0","r1"]"#),
            ],
            &Ledger::default(),
        );
        assert!(!report.passed());
        let text = report.terminal();
        assert!(
            text.contains("BREAKS EXACTLY-ONCE (undocumented): aborted-read")
                && text.contains("UNDOCUMENTED, BREAKS EXACTLY-ONCE (aborted-read): java abort-redo 'read_committed'")
                && text.contains("BREAKS EXACTLY-ONCE (aborted-read); UNDOCUMENTED x1"),
            "{text}"
        );
        let json: serde_json::Value = serde_json::from_str(&report.json()).unwrap();
        assert_eq!(json["differences"][0]["consequence"], "aborted-read");
    }
}
