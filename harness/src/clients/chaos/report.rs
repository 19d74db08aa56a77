//! What `kconform chaos` reports: per cluster, the faults it suffered, what the clients did and
//! the anomalies the checker found, with Apache as the control (an anomaly Apache shows too is
//! Apache's, or the workload's, not kaas's); and how to run the same schedule again. As text,
//! and as JSON following `harness/chaos-report.schema.json`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::Serialize;

use super::checker::{Anomaly, Kind};
use super::schedule::Done;
use super::workload::{Shape, WorkerStats};
use crate::clients::placement::Placement;

/// How many anomalies of one kind the text shows (the JSON holds them all).
const SHOWN: usize = 3;

/// One cluster's chaos run.
#[derive(Debug, Clone, Serialize)]
pub struct TargetChaos {
    /// The target's name.
    pub name: String,
    /// How it was started.
    pub origin: String,
    /// Whether this target is the control (Apache).
    pub control: bool,
    /// Why the run on it did not happen or did not finish (a broker that did not start, topics
    /// that could not be made, an output that could not be read).
    pub error: Option<String>,
    /// Why no fault was done, when none was.
    pub no_faults_because: Option<String>,
    /// The faults done.
    pub faults: Vec<Done>,
    /// Input records loaded into each worker's partition.
    pub input_per_worker: u64,
    /// Each worker's counts.
    pub workers: Vec<WorkerStats>,
    /// Output records read back and checked.
    pub records_checked: usize,
    /// Every anomaly found.
    pub anomalies: Vec<Anomaly>,
    /// Why nothing can be said of this cluster although its run finished: fewer transactions
    /// ended on it than the floor ([`floor`]), so "no anomaly" would mean nothing was looked
    /// at. Set by [`ChaosReport::judge`].
    pub inconclusive: Option<String>,
    /// What the checker could not check, and why (a worker's group offsets the reader could
    /// not read).
    pub unchecked: Vec<String>,
    /// When too few transactions ended: what kconform's own first requests found wrong on the
    /// target (an answer it cannot read, a refusal), one line each ([`super::probe`]).
    pub probe: Vec<String>,
    /// Per second of the workload, the transactions that ended in it.
    pub timeline: Vec<super::history::Second>,
    /// Seconds from starting the target to its report.
    pub wall_secs: f64,
}

impl TargetChaos {
    /// The kinds of anomaly found that Kafka does not allow (those it allows, a write cycle
    /// say, are shown and never fail a run).
    pub fn kinds(&self) -> BTreeSet<Kind> {
        self.anomalies
            .iter()
            .filter(|a| !a.allowed)
            .map(|a| a.kind)
            .collect()
    }

    /// The anomalies Kafka does not allow: those that can fail a run.
    pub fn not_allowed(&self) -> Vec<&Anomaly> {
        self.anomalies.iter().filter(|a| !a.allowed).collect()
    }

    /// The anomalies by kind, in the order reports list them, each kind's that Kafka does not
    /// allow before those it does: (kind, allowed, the anomalies); kinds not found left out.
    pub fn by_kind(&self) -> Vec<(Kind, bool, Vec<&Anomaly>)> {
        Kind::ALL
            .iter()
            .flat_map(|&k| [(k, false), (k, true)])
            .map(|(kind, allowed)| {
                let of: Vec<&Anomaly> = self
                    .anomalies
                    .iter()
                    .filter(|a| a.kind == kind && a.allowed == allowed)
                    .collect();
                (kind, allowed, of)
            })
            .filter(|(_, _, of)| !of.is_empty())
            .collect()
    }

    /// Whether this target fails the run: its run did not finish, or it shows a kind of anomaly
    /// the control did not (never so for the control itself, whose kinds are `control`).
    fn fails(&self, control: &BTreeSet<Kind>) -> bool {
        self.error.is_some() || self.kinds().difference(control).next().is_some()
    }

    fn total(&self, f: fn(&WorkerStats) -> u64) -> u64 {
        self.workers.iter().map(f).sum()
    }

    /// Transactions that ended, however (committed or aborted; not those whose outcome the
    /// client could not tell).
    pub fn ended(&self) -> u64 {
        self.total(WorkerStats::ended)
    }

    /// Which client each worker ran on and what each client's workers ended, where there was
    /// more than one client: `clients: librdkafka w0 w2 (12 ended), java w1 (9 ended)`.
    fn clients_line(&self) -> Option<String> {
        let mut by: BTreeMap<&str, (Vec<String>, u64)> = BTreeMap::new();
        for (i, w) in self.workers.iter().enumerate() {
            let entry = by.entry(w.client).or_default();
            entry.0.push(format!("w{i}"));
            entry.1 += w.ended();
        }
        (by.len() > 1).then(|| {
            let parts: Vec<String> = by
                .iter()
                .map(|(client, (workers, ended))| {
                    format!("{client} {} ({ended} ended)", workers.join(" "))
                })
                .collect();
            format!("clients: {}", parts.join(", "))
        })
    }

    /// Whether fewer transactions ended on it than the floor ([`floor`]), on any one client's
    /// workers: too few to judge what that client met.
    pub fn too_few_ended(&self) -> bool {
        !self.short_clients().is_empty()
    }

    /// The clients whose workers ended fewer transactions, together, than the floor for as
    /// many workers: each with how many ended and how many workers it had.
    pub(super) fn short_clients(&self) -> Vec<(&'static str, u64, usize)> {
        let mut by_client: BTreeMap<&'static str, (u64, usize)> = BTreeMap::new();
        for w in &self.workers {
            let entry = by_client.entry(w.client).or_default();
            entry.0 += w.ended();
            entry.1 += 1;
        }
        if by_client.is_empty() {
            by_client.insert("", (0, 0));
        }
        by_client
            .into_iter()
            .filter(|(_, (ended, workers))| *ended < floor(*workers))
            .map(|(client, (ended, workers))| (client, ended, workers))
            .collect()
    }

    /// Why its run says nothing (of one client, or of all), when fewer transactions ended than
    /// the floor: how many did, and what kept each worker that never began from beginning
    /// (said of a run that did not finish too: its "no anomaly" means as little).
    fn why_inconclusive(&self) -> Option<String> {
        let short = self.short_clients();
        if short.is_empty() {
            return None;
        }
        let clients: BTreeSet<&str> = self.workers.iter().map(|w| w.client).collect();
        let mut parts = Vec::new();
        for (client, ended, workers) in short {
            let never: Vec<String> = self
                .workers
                .iter()
                .enumerate()
                .filter(|(_, w)| w.client == client && w.ended() == 0)
                .map(|(i, w)| match &w.before_first {
                    Some(why) => format!("worker {i} never began a transaction ({why})"),
                    None => format!("worker {i} never began a transaction (no client error)"),
                })
                .collect();
            let whose = match clients.len() > 1 {
                true => format!("on {client}, "),
                false => String::new(),
            };
            let mut why = format!(
                "{whose}{ended} transaction(s) ended, fewer than the {} needed to judge (one per worker): no anomaly found means nothing was checked",
                floor(workers)
            );
            if !never.is_empty() {
                why.push_str(&format!("; {}", never.join("; ")));
            }
            parts.push(why);
        }
        let mut why = parts.join("; ");
        if !self.probe.is_empty() {
            why.push_str(&format!(
                "; what a transactional client asks first, asked by kconform: {}",
                self.probe.join("; ")
            ));
        }
        Some(why)
    }
}

/// How many transactions must end on a cluster for its run to be judged: one per worker. A
/// cluster on which fewer ended is INCONCLUSIVE, never clean.
pub fn floor(workers: usize) -> u64 {
    workers.max(1) as u64
}

/// What a chaos run concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every cluster ran, checked, and no target under test showed an anomaly of a kind the
    /// control did not.
    Passed,
    /// A cluster did not finish, or a target under test showed an anomaly the control did not.
    Failed,
    /// Nothing failed, but on some cluster too few transactions ended to say anything.
    Inconclusive,
}

impl Verdict {
    /// The word the reports use.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Passed => "PASSED",
            Verdict::Failed => "FAILED",
            Verdict::Inconclusive => "INCONCLUSIVE",
        }
    }
}

/// The kinds of anomaly the control showed (none without a control).
pub(super) fn control_kinds(targets: &[TargetChaos]) -> BTreeSet<Kind> {
    targets
        .iter()
        .filter(|t| t.control)
        .flat_map(TargetChaos::kinds)
        .collect()
}

/// A whole chaos run.
#[derive(Debug, Clone, Serialize)]
pub struct ChaosReport {
    /// The JSON schema's version.
    pub schema_version: u32,
    /// The seed of the fault schedule and of the workers' choices.
    pub seed: u64,
    /// How long the workload ran, in seconds.
    pub duration_secs: u64,
    /// The workload's shape.
    pub shape: Shape,
    /// Where each worker's transaction and group coordinators sat.
    pub placement: Placement,
    /// The command that runs the same schedule again.
    pub replay: String,
    /// Each cluster.
    pub targets: Vec<TargetChaos>,
    /// Whether the run passed: every cluster ran and checked enough transactions, and no target
    /// under test shows an anomaly of a kind the control did not show.
    pub passed: bool,
    /// Passed, failed, or inconclusive (nothing failed, but on some cluster fewer transactions
    /// ended than the floor).
    pub verdict: Verdict,
    /// What the run could not do as asked, and did instead (a client that could not start).
    pub notes: Vec<String>,
}

impl ChaosReport {
    /// Judges the targets' runs.
    pub fn judge(
        seed: u64,
        duration_secs: u64,
        shape: Shape,
        placement: Placement,
        replay: String,
        mut targets: Vec<TargetChaos>,
    ) -> ChaosReport {
        for t in &mut targets {
            t.inconclusive = t.why_inconclusive();
        }
        let control = control_kinds(&targets);
        let verdict = match (
            targets.iter().any(|t| t.fails(&control)),
            targets.iter().any(|t| t.inconclusive.is_some()),
        ) {
            (true, _) => Verdict::Failed,
            (false, true) => Verdict::Inconclusive,
            (false, false) => Verdict::Passed,
        };
        ChaosReport {
            schema_version: 1,
            seed,
            duration_secs,
            shape,
            placement,
            replay,
            targets,
            passed: verdict == Verdict::Passed,
            verdict,
            notes: Vec::new(),
        }
    }

    /// The report as text.
    pub fn terminal(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "kconform chaos: seed {}, {} s, {} workers, {} output partitions, replication {}, coordinators {}",
            self.seed,
            self.duration_secs,
            self.shape.workers,
            self.shape.outputs,
            self.shape.replication,
            self.placement.name()
        );
        let _ = writeln!(s, "replay: {}", self.replay);
        for note in &self.notes {
            let _ = writeln!(s, "note: {note}");
        }
        let control = control_kinds(&self.targets);
        let has_control = self.targets.iter().any(|t| t.control);
        for t in &self.targets {
            let role = match t.control {
                true => ", the control",
                false => "",
            };
            let _ = writeln!(s, "\n{} ({}{role}), {:.0} s", t.name, t.origin, t.wall_secs);
            if let Some(e) = &t.error {
                let _ = writeln!(s, "  did not finish: {e}");
            }
            match (&t.no_faults_because, t.faults.is_empty()) {
                (Some(why), _) => {
                    let _ = writeln!(s, "  faults: none ({why})");
                }
                (None, true) => {
                    let _ = writeln!(s, "  faults: none fell within the run");
                }
                (None, false) => {
                    let _ = writeln!(s, "  faults: {}", t.faults.len());
                    for f in &t.faults {
                        let back = match (f.back_ms, &f.error) {
                            (_, Some(e)) => format!("FAILED: {e}"),
                            (Some(b), None) => format!("back at {:.1} s", b as f64 / 1000.0),
                            (None, None) => String::new(),
                        };
                        let whose = match f.fault.worker {
                            Some(w) => format!(" (worker {w}'s coordinator)"),
                            None => String::new(),
                        };
                        let _ = writeln!(
                            s,
                            "    {:>6.1} s  {} broker {}{whose} for {:.1} s, {back}",
                            f.done_ms as f64 / 1000.0,
                            f.fault.act,
                            f.fault.node,
                            f.fault.hold_ms as f64 / 1000.0
                        );
                    }
                }
            }
            let _ = writeln!(
                s,
                "  transactions: {} committed, {} aborted on purpose, {} aborted after an error, {} outcome unknown; {} new producers",
                t.total(|w| w.committed),
                t.total(|w| w.aborted_on_purpose),
                t.total(|w| w.aborted_after_error),
                t.total(|w| w.unknown),
                t.total(|w| w.new_producers),
            );
            if let Some(line) = t.clients_line() {
                let _ = writeln!(s, "  {line}");
            }
            let mut errors = std::collections::BTreeMap::<&str, u64>::new();
            for w in &t.workers {
                for (code, n) in &w.errors {
                    *errors.entry(code).or_default() += n;
                }
            }
            if !errors.is_empty() {
                let listed: Vec<String> = errors.iter().map(|(c, n)| format!("{c} x{n}")).collect();
                let _ = writeln!(s, "  client errors: {}", listed.join(", "));
            }
            for (w, stats) in t.workers.iter().enumerate() {
                if let Some(h) = &stats.hung {
                    let known = match h.call {
                        "send_offsets_to_transaction" => "; librdkafka ignores this call's timeout when the group coordinator goes down: confluentinc/librdkafka#5456",
                        _ => "",
                    };
                    let _ = writeln!(
                        s,
                        "  client hung: worker {w} in {} since {:.1} s, given up {} s after the workload (its transaction's outcome counted unknown{known})",
                        h.call,
                        h.since_ms as f64 / 1000.0,
                        super::WORKER_STOP.as_secs()
                    );
                }
            }
            let _ = writeln!(s, "  records checked: {}", t.records_checked);
            for what in &t.unchecked {
                let _ = writeln!(s, "  not checked: {what}");
            }
            match (&t.inconclusive, t.kinds().is_empty()) {
                (Some(why), _) => {
                    let _ = writeln!(s, "  INCONCLUSIVE: {why}");
                }
                (None, true) => {
                    let _ = writeln!(s, "  anomalies: none");
                }
                (None, false) => {}
            }
            for (kind, allowed, of) in t.by_kind() {
                let whose = match (allowed, t.control, has_control && control.contains(&kind)) {
                    (true, _, _) => " (allowed: Kafka allows it, never a failure)",
                    (false, true, _) => " (the control's)",
                    (false, false, true) => {
                        " (Apache shows it too: not counted against this target)"
                    }
                    (false, false, false) => "",
                };
                let _ = writeln!(s, "  {} x{}{whose}", kind.name(), of.len());
                for a in of.iter().take(SHOWN) {
                    let _ = writeln!(s, "    {}", a.detail);
                }
                if of.len() > SHOWN {
                    let _ = writeln!(
                        s,
                        "    ... and {} more (--json has them all)",
                        of.len() - SHOWN
                    );
                }
            }
        }
        let _ = writeln!(s, "\n{}", self.verdict.label());
        s
    }

    /// The report as JSON.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The report as JUnit XML: one test case per target.
    pub fn junit(&self) -> String {
        let esc = crate::report::junit::xml;
        let control = control_kinds(&self.targets);
        let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let failing: Vec<&TargetChaos> =
            self.targets.iter().filter(|t| t.fails(&control)).collect();
        let _ = writeln!(
            s,
            "<testsuite name=\"kconform chaos\" tests=\"{}\" failures=\"{}\">",
            self.targets.len(),
            failing.len()
        );
        for t in &self.targets {
            let _ = write!(
                s,
                "  <testcase name=\"{}\" time=\"{:.1}\">",
                esc(&t.name),
                t.wall_secs
            );
            if let (Some(why), false) = (&t.inconclusive, failing.iter().any(|f| f.name == t.name))
            {
                let _ = write!(s, "<skipped message=\"INCONCLUSIVE: {}\"/>", esc(why));
            }
            if failing.iter().any(|f| f.name == t.name) {
                let what: Vec<String> = t
                    .error
                    .iter()
                    .cloned()
                    .chain(
                        t.anomalies
                            .iter()
                            .map(|a| format!("{}: {}", a.kind.name(), a.detail)),
                    )
                    .collect();
                let _ = write!(s, "<failure message=\"{}\"/>", esc(&what.join("\n")));
            }
            s.push_str("</testcase>\n");
        }
        s.push_str("</testsuite>\n");
        s
    }

    /// The report as Markdown: the text, fenced.
    pub fn markdown(&self) -> String {
        format!("## kconform chaos\n\n```\n{}```\n", self.terminal())
    }
}

crate::report::forms::report_forms!(ChaosReport);

#[cfg(test)]
mod tests {
    use super::*;

    fn target(name: &str, control: bool, kinds: &[Kind]) -> TargetChaos {
        let ended = WorkerStats {
            committed: 3,
            ..WorkerStats::default()
        };
        TargetChaos {
            name: name.into(),
            origin: "test".into(),
            control,
            error: None,
            no_faults_because: None,
            faults: Vec::new(),
            input_per_worker: 0,
            workers: vec![ended],
            records_checked: 0,
            anomalies: kinds
                .iter()
                .map(|&kind| Anomaly {
                    placement: None,
                    allowed: false,
                    kind,
                    detail: "x".into(),
                })
                .collect(),
            inconclusive: None,
            unchecked: Vec::new(),
            probe: Vec::new(),
            timeline: Vec::new(),
            wall_secs: 0.0,
        }
    }

    fn judged(targets: Vec<TargetChaos>) -> ChaosReport {
        let shape = Shape {
            workers: 1,
            outputs: 1,
            replication: 1,
        };
        ChaosReport::judge(1, 1, shape, Placement::Together, "r".into(), targets)
    }

    /// Many anomalies of a kind are one group on the page: the count, three examples, the
    /// rest behind a click; an allowed kind is marked so and fails nothing.
    #[test]
    fn the_page_groups_anomalies_by_kind_and_marks_the_allowed() {
        let mut t = target("ref", false, &[Kind::AbortedRead; 5]);
        t.anomalies.push(Anomaly {
            placement: None,
            allowed: true,
            kind: Kind::G0,
            detail: "a cycle".into(),
        });
        let r = judged(vec![t]);
        let page = super::super::html::page(&r);
        assert_eq!(page.matches("<b>aborted-read</b>").count(), 1, "{page}");
        assert!(page.contains("<b>aborted-read</b> × 5"), "{page}");
        assert!(
            page.contains("<details><summary>2 more</summary>"),
            "{page}"
        );
        assert!(page.contains("<b>G0</b> × 1 · allowed: Kafka allows it, never a failure"));
        assert_eq!(
            r.targets[0].kinds().into_iter().collect::<Vec<_>>(),
            vec![Kind::AbortedRead]
        );
        assert!(r
            .terminal()
            .contains("G0 x1 (allowed: Kafka allows it, never a failure)"));
    }

    /// The latency picture: drawn when the timeline says how long transactions took, with a
    /// line each for the median and the 99th percentile; left out when no client said.
    #[test]
    fn the_page_draws_latency_when_the_timeline_has_it() {
        let mut t = target("ref", false, &[]);
        let page = super::super::html::page(&judged(vec![t.clone()]));
        assert!(
            !page.contains("class=\"latency\""),
            "no latency said: {page}"
        );
        let seconds = vec![
            crate::clients::chaos::history::Second {
                committed: 2,
                p50_ms: Some(40),
                p99_ms: Some(400),
                ..Default::default()
            };
            3
        ];
        t.timeline = seconds.clone();
        let page = super::super::html::page(&judged(vec![t]));
        assert!(page.contains("class=\"latency\""), "{page}");
        assert_eq!(page.matches("<polyline").count(), 2, "{page}");
        assert!(page.contains(">400 ms</text>"), "{page}");
        // A second in which nothing ended breaks each line, not bridged across the gap.
        let mut gap = target("ref", false, &[]);
        gap.timeline = seconds;
        gap.timeline[1] = Default::default();
        let page = super::super::html::page(&judged(vec![gap]));
        assert_eq!(page.matches("<polyline").count(), 4, "{page}");
    }

    #[test]
    fn an_anomaly_the_control_shows_too_is_not_the_targets() {
        let both = judged(vec![
            target("ref:3", false, &[Kind::Duplicate]),
            target("apache:3", true, &[Kind::Duplicate]),
        ]);
        assert!(both.passed);
        assert!(
            both.terminal().contains("Apache shows it too"),
            "{}",
            both.terminal()
        );
        let only_ref = judged(vec![
            target("ref:3", false, &[Kind::Duplicate]),
            target("apache:3", true, &[Kind::LostWrite]),
        ]);
        assert!(!only_ref.passed);
        assert!(only_ref.junit().contains("failures=\"1\""));
        // The control's own anomalies do not fail the run.
        assert!(judged(vec![target("apache:3", true, &[Kind::LostWrite])]).passed);
        assert!(!judged(vec![target("ref:3", false, &[Kind::LostWrite])]).passed);
    }

    #[test]
    fn a_target_that_did_not_finish_fails_the_run() {
        let mut t = target("ref:3", false, &[]);
        t.error = Some("the output could not be read".into());
        let r = judged(vec![t]);
        assert!(!r.passed);
        assert!(r
            .terminal()
            .contains("did not finish: the output could not be read"));
    }

    #[test]
    fn a_worker_left_in_a_client_call_is_said_and_its_run_still_judged() {
        let mut t = target("ref:3", false, &[]);
        t.workers[0].hung = Some(super::super::workload::ClientCall {
            call: "send_offsets_to_transaction",
            since_ms: 99_300,
        });
        let r = judged(vec![t]);
        assert!(r.passed, "a client's hang is not the broker's anomaly");
        let text = r.terminal();
        assert!(
            text.contains("client hung: worker 0 in send_offsets_to_transaction since 99.3 s")
                && text.contains("librdkafka#5456"),
            "{text}"
        );
        let json: serde_json::Value = serde_json::from_str(&r.json()).unwrap();
        assert_eq!(
            json["targets"][0]["workers"][0]["hung"]["call"],
            "send_offsets_to_transaction"
        );
    }

    /// A cluster on which no transaction ended says so, with what kept each worker from
    /// beginning, and the run is INCONCLUSIVE, never "anomalies: none" and passed.
    #[test]
    fn a_cluster_where_nothing_ended_is_inconclusive_never_clean() {
        let mut nothing = target("external:3", false, &[]);
        nothing.workers = vec![
            WorkerStats {
                before_first: Some(
                    "init_transactions: Transaction error: Failed to initialize Producer ID: Local: Timed out".into(),
                ),
                errors: [("OperationTimedOut".to_owned(), 12)].into_iter().collect(),
                ..WorkerStats::default()
            },
            WorkerStats::default(),
        ];
        nothing.probe = vec!["FindCoordinator v2: answer unreadable: the response header is v1, but FindCoordinator v2 answers with header v0".into()];
        let r = judged(vec![nothing, target("apache:3", true, &[])]);
        assert!(!r.passed);
        assert_eq!(r.verdict, Verdict::Inconclusive);
        let text = r.terminal();
        // The cluster where nothing ended says no "none" (the control, which ran, does).
        let nothing_part = text.split("\napache:3").next().unwrap_or_default();
        assert!(!nothing_part.contains("anomalies: none"), "{text}");
        assert!(text.contains("anomalies: none"), "the control's: {text}");
        assert!(
            text.contains("INCONCLUSIVE: 0 transaction(s) ended, fewer than the 2 needed")
                && text.contains(
                    "worker 0 never began a transaction (init_transactions: Transaction error"
                )
                && text.contains("asked by kconform: FindCoordinator v2: answer unreadable")
                && text.trim_end().ends_with("INCONCLUSIVE"),
            "{text}"
        );
        assert!(
            r.junit().contains("<skipped message=\"INCONCLUSIVE"),
            "{}",
            r.junit()
        );
        let json: serde_json::Value = serde_json::from_str(&r.json()).unwrap();
        assert_eq!(json["verdict"], "inconclusive");
        // A failure elsewhere still fails the run.
        let mut broken = target("ref:3", false, &[]);
        broken.workers = vec![WorkerStats::default()];
        let failed = judged(vec![broken, target("other", false, &[Kind::LostWrite])]);
        assert_eq!(failed.verdict, Verdict::Failed);
    }
}
