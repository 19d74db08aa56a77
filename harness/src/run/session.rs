//! One command's run: every chosen scenario on every target (live, or Apache's recorded
//! answers), then the first two targets compared and every difference classified against the
//! ledger. The binary and the snapshot test both go through here.

use crate::data::Source;
use std::sync::Arc;
use std::time::Duration;

use crate::compare::causes::{FieldClasses, FieldClassesError};
use crate::compare::diff::{self, DiffRow};
use crate::compare::flow::Flows;
use crate::compare::ledger::{Ledger, LedgerError, Verdict};
use crate::report::progress::Progress;
use crate::report::{NotReached, Report, Stale};
use crate::run::{self, Transcript};
use crate::scenario::Scenario;
use crate::targets::apache;
use crate::targets::recorded::{self, RecordedError};
use crate::targets::settings::Differs;
use crate::targets::{Running, TargetError, TargetSpec};

/// Why a run could not happen.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// A target did not start.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// Apache's recorded answers are missing or unreadable.
    #[error(transparent)]
    Recorded(#[from] RecordedError),
    /// The ledger does not load.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The field classes (`field-classes.toml`) do not load.
    #[error(transparent)]
    FieldClasses(#[from] FieldClassesError),
    /// Targets of different sizes: a run compares clusters of one size.
    #[error("--target {0} has {1} broker(s) and --target {2} has {3}: a run compares targets of one size (ref and apache, or ref:N and apache:N)")]
    Sizes(String, usize, String, usize),
    /// A secured target beside one that is not: their scenarios differ.
    #[error("--target {0} requires SASL and --target {1} does not: a run compares secured targets (ref+sasl and apache+sasl) or plain ones")]
    Security(String, String),
}

/// The scenarios written for `brokers` brokers and for secured targets (`secured`) or plain
/// ones, of those chosen.
pub fn sized<'a>(chosen: &[&'a Scenario], brokers: usize, secured: bool) -> Vec<&'a Scenario> {
    chosen
        .iter()
        .copied()
        .filter(|s| s.brokers == brokers && s.secured() == secured)
        .collect()
}

/// What every run of one command shares: where the scenarios and snapshots live, and the
/// deadline of every network wait.
#[derive(Debug, Clone, Copy)]
pub struct Session<'a> {
    /// The scenarios (with `deviations.toml`): built in, or a directory.
    pub scenarios: &'a Source,
    /// Apache's recorded answers: built in, or a directory.
    pub snapshots: &'a Source,
    /// Deadline of every network wait.
    pub deadline: Duration,
    /// Use provisioned topics (`kconform topics`) on every live target, instead of only on
    /// those found to refuse CreateTopics.
    pub provisioned_topics: bool,
    /// Fail on answers that Apache's parser reads but no canonical encoder writes, as a
    /// finding of their own ([`Transcript::hold_to_canonical_encoding`]); off, they are notes.
    pub strict_encoding: bool,
    /// The commands that do faults to an external cluster's brokers (`--fault-cmd`).
    pub faults: &'a crate::targets::faults::FaultCommands,
    /// Stop a scenario at an answer malformed only in its response header's version, instead
    /// of reading past it (recorded as malformed all the same) and going on.
    pub stop_at_malformed: bool,
    /// Clusters of kaas-ref or a kaas build to share the scenarios that kill or pause brokers
    /// out over (1: one cluster, each such scenario after the other): on a broker whose
    /// `until`s do not hold, each waits its minute beside the others instead of after them.
    pub lanes: usize,
}

/// A target's transcripts, and what a reader must know of where they came from.
type Answers = (Vec<Transcript>, Vec<String>, Vec<Differs>);

/// Every difference between two targets' transcripts with its verdict.
pub type Classified = Vec<(DiffRow, Verdict)>;

/// Every difference between two targets' transcripts, classified, and the ledger entries that
/// did not show in the scenarios they list.
pub fn compare(
    ledger: &Ledger,
    chosen: &[&Scenario],
    left: &[Transcript],
    right: &[Transcript],
) -> (Classified, Vec<Stale>) {
    let rows: Classified = left
        .iter()
        .zip(right)
        .flat_map(|(a, b)| diff::diff(a, b))
        .map(|row| {
            let verdict = ledger.classify(&row);
            (row, verdict)
        })
        .collect();
    let ran: Vec<String> = chosen.iter().map(|s| s.name.clone()).collect();
    let stale = ledger
        .stale(&ran, &rows)
        .into_iter()
        .map(|(entry, scenario)| Stale { entry, scenario })
        .collect();
    (rows, stale)
}

/// Of the `stale` entries, those whose scenario stopped (on either side) before a step of the
/// API where the entry shows: not stale, only not reached, with the stop named. The rest stay
/// stale.
pub fn not_reached(
    ledger: &Ledger,
    stale: Vec<Stale>,
    sides: [(&str, &[Transcript]); 2],
) -> (Vec<Stale>, Vec<NotReached>) {
    let mut still = Vec::new();
    let mut unreached = Vec::new();
    for st in stale {
        let apis: Vec<&str> = ledger.entry(&st.entry).map_or(Vec::new(), |e| {
            std::iter::once(e.api.as_str())
                .chain(e.field_differences().filter_map(|f| f.api.as_deref()))
                .collect()
        });
        let stop = sides.iter().find_map(|(target, transcripts)| {
            let t = transcripts.iter().find(|t| t.scenario == st.scenario)?;
            let why = t.stopped.as_deref()?;
            let hid = t.steps.iter().any(|step| {
                matches!(step.outcome, run::Outcome::Skipped(_))
                    && apis.contains(&step.api.as_str())
            });
            hid.then(|| format!("{target}: {why}"))
        });
        match stop {
            Some(stopped) => unreached.push(NotReached {
                entry: st.entry,
                scenario: st.scenario,
                stopped,
            }),
            None => still.push(st),
        }
    }
    (still, unreached)
}

impl Session<'_> {
    /// Apache's recorded transcripts of the chosen scenarios, named as the recorded target
    /// (`apache-recorded`, `apache-recorded@4.4.0+tv2`), and where they come from.
    fn recorded(&self, spec: &TargetSpec, chosen: &[&Scenario]) -> Result<Answers, SessionError> {
        recorded::offered(spec)?;
        let release = spec.answers_as().unwrap_or(apache::Release::CLAIMED);
        let label = recorded::label_of(spec);
        let transcripts = chosen
            .iter()
            .map(|s| {
                let mut t = recorded::read(self.snapshots, (&s.name, &s.digest), &label)?;
                t.target = spec.name();
                Ok(t)
            })
            .collect::<Result<_, RecordedError>>()?;
        let origin = format!(
            "{release}'s answers as recorded in {} (no live broker in this run)",
            self.snapshots.describe()
        );
        Ok((transcripts, vec![origin], Vec::new()))
    }

    /// The copies of `spec`'s cluster beyond the first that the scenarios disrupting its
    /// brokers share out ([`Session::lanes`]): for kaas-ref's cluster in process and for a
    /// build's, as many as there are such scenarios past the first; a copy that does not start
    /// is done without, and logged. Not for Apache (whose answers hold their `until`s in
    /// seconds). A build's copies start one after another: three builds of kaas-ref's binary
    /// started at once on two busy cores did not agree on their members within the 10 s a
    /// start is given; each build cluster names its brokers in a namespace of its own, so
    /// copies do not meet in the hosts file (they did: 84 steps stopped on "Connection refused").
    async fn lanes(
        &self,
        spec: &TargetSpec,
        chosen: &[&Scenario],
        topics: Option<&str>,
    ) -> Vec<Arc<Running>> {
        let ours = matches!(
            spec.kind,
            crate::targets::Kind::Ref | crate::targets::Kind::Build(_)
        );
        let disrupting = chosen.iter().filter(|s| run::disrupts(s)).count();
        if !ours || spec.brokers < 2 || self.lanes < 2 || disrupting < 2 {
            return Vec::new();
        }
        let copies = self.lanes.min(disrupting) - 1;
        let started = match spec.kind {
            crate::targets::Kind::Build(_) => {
                let mut started = Vec::with_capacity(copies);
                for _ in 0..copies {
                    started.push(Running::start_with_topics(spec, topics).await);
                }
                started
            }
            _ => {
                futures::future::join_all(
                    (0..copies).map(|_| Running::start_with_topics(spec, topics)),
                )
                .await
            }
        };
        started
            .into_iter()
            .filter_map(|r| match r {
                Ok(t) => Some(Arc::new(t.with_faults(self.faults.clone()))),
                Err(e) => {
                    tracing::warn!(error = %e, "a copy of the cluster did not start; its share runs on the others");
                    None
                }
            })
            .collect()
    }

    /// Runs the chosen scenarios on a live target: started (or found), checked to answer,
    /// its topics provisioned if it refuses CreateTopics, stopped after; and what to know of it.
    async fn live(
        &self,
        spec: &TargetSpec,
        chosen: &[&Scenario],
        jobs: usize,
        progress: &Arc<dyn Progress>,
        starting: &tokio::sync::Mutex<()>,
    ) -> Result<Answers, SessionError> {
        // One target starts at a time (a cluster just started beside Apache's three JVMs on
        // two cores did not agree on its members in time); their scenarios run side by side.
        let one_at_a_time = starting.lock().await;
        progress.starting(&spec.name());
        // A kaas build is told the run's topics at start (it creates none itself here).
        let topics = match spec.kind {
            crate::targets::Kind::Build(_) => {
                serde_json::to_string(&run::topics::needed(chosen)).ok()
            }
            _ => None,
        };
        let target = Running::start_with_topics(spec, topics.as_deref())
            .await?
            .with_faults(self.faults.clone());
        // One probe says both whether the target answers ApiVersions (one that does not cannot
        // be judged at all: said at once, rather than as every scenario's first failure) and
        // whether it refuses CreateTopics (it then gets the topics provisioned for it).
        let refused = match target.create_topics_refused(self.deadline).await {
            Ok(Some(refused)) => Some(refused),
            Ok(None) => target.topics_by_operator().await,
            Err(e) => {
                target.stop().await;
                return Err(e.into());
            }
        };
        let provisioning =
            (self.provisioned_topics || refused.is_some()).then(|| run::Provisioning {
                refused: refused.clone(),
            });
        let mut notes = vec![target.origin.clone()];
        // A broker kconform did not start: are its settings those the scenarios assume?
        let mut differs = Vec::new();
        if matches!(spec.kind, crate::targets::Kind::External(_)) {
            match target.check_settings(self.deadline).await {
                Ok(checked) => {
                    notes.push(checked.summary());
                    differs = checked.differs;
                }
                Err(e) => notes.push(format!("its settings could not be checked: {e}")),
            }
        }
        // --provisioned-topics on a target that creates topics (Apache beside an operator's
        // broker): the listed topics are created there first, so that both run on them.
        if self.provisioned_topics && refused.is_none() {
            let needed = run::topics::needed(chosen);
            match target.provision(&needed, self.deadline).await {
                Ok(done) => notes.push(format!("--provisioned-topics: {}", done.summary())),
                Err(e) => {
                    target.stop().await;
                    return Err(e.into());
                }
            }
        }
        let target = Arc::new(target);
        let lanes = self.lanes(spec, chosen, topics.as_deref()).await;
        drop(one_at_a_time);
        progress.running(&target.name, chosen.len());
        let watcher = progress.clone();
        let name = target.name.clone();
        let done: run::Done = Arc::new(move |scenario: &str| watcher.done(&name, scenario, ""));
        let has_provisioning = provisioning.is_some();
        let transcripts = run::run_many(
            chosen,
            &target,
            &lanes,
            self.deadline,
            jobs,
            provisioning,
            !self.stop_at_malformed,
            done,
        )
        .await;
        progress.finished(&target.name);
        // A launched broker that died mid-run: its last words go in the report.
        notes.extend(target.post_mortem());
        notes.extend(target.notes());
        if !lanes.is_empty() {
            notes.push(format!(
                "the scenarios that disrupt its brokers ran on {} copies of the cluster side by side",
                lanes.len() + 1
            ));
        }
        for lane in lanes {
            notes.extend(lane.post_mortem());
            if let Ok(lane) = Arc::try_unwrap(lane) {
                lane.stop().await;
            }
        }
        if let Ok(target) = Arc::try_unwrap(target) {
            target.stop().await;
        }
        if has_provisioning {
            let why = match &refused {
                Some(why) => format!("it refuses CreateTopics ({why}): "),
                None => "--provisioned-topics: ".to_owned(),
            };
            let unjudged = match refused {
                Some(_) => " and CreateTopics under test is not judged",
                None => "",
            };
            let not_sent = transcripts
                .iter()
                .flat_map(|t| &t.steps)
                .filter(|s| matches!(s.outcome, run::Outcome::Provisioned(_)))
                .count();
            notes.push(format!(
                "{why}uses the topics `kconform topics` lists; set-up CreateTopics steps are not sent{unjudged}, offsets are read from where each scenario began ({not_sent} CreateTopics requests not sent)"
            ));
        }
        Ok((transcripts, notes, differs))
    }

    /// Runs every chosen scenario on every target, `jobs` at a time per target, with progress
    /// on stderr; with two or more targets, classifies the differences between the first two.
    pub async fn run(
        &self,
        chosen: &[&Scenario],
        specs: &[TargetSpec],
        jobs: usize,
        progress: Arc<dyn Progress>,
    ) -> Result<(Report, Vec<Vec<Transcript>>), SessionError> {
        let mut report = Report {
            targets: specs.iter().map(TargetSpec::name).collect(),
            target_args: specs.iter().map(TargetSpec::arg).collect(),
            ..Default::default()
        };
        if let Some(first) = specs.first() {
            if let Some(other) = specs.iter().find(|s| s.brokers != first.brokers) {
                return Err(SessionError::Sizes(
                    first.name(),
                    first.brokers,
                    other.name(),
                    other.brokers,
                ));
            }
            if let Some(other) = specs.iter().find(|s| s.secured != first.secured) {
                let (secured, plain) = match first.secured {
                    true => (first, other),
                    false => (other, first),
                };
                return Err(SessionError::Security(secured.name(), plain.name()));
            }
        }
        let chosen = &sized(
            chosen,
            specs.first().map_or(1, |s| s.brokers),
            specs.first().is_some_and(|s| s.secured),
        );
        // Recorded answers are read before any broker starts: a scenario with none recorded
        // is refused at once, not after the live targets have run every scenario.
        let recorded: Vec<Option<Answers>> = specs
            .iter()
            .map(|spec| match spec.is_recorded() {
                true => self.recorded(spec, chosen).map(Some),
                false => Ok(None),
            })
            .collect::<Result<_, _>>()?;
        // The ledger and the field classes are read before any broker starts, and with one
        // target too: a file that does not parse is refused, never silently unused.
        let full = Ledger::read(self.scenarios)?;
        let classes = FieldClasses::read(self.scenarios)?;
        // A broker kconform does not start is asked first: one that cannot be reached is said
        // before an Apache beside it starts.
        for spec in specs {
            Running::external_reachable(spec, self.deadline).await?;
        }
        // The live targets run side by side: one waiting out a broker's failover does not hold
        // the other, and one that cannot start is said at once, the others given up.
        let (progress_ref, starting) = (&progress, &tokio::sync::Mutex::new(()));
        let live = futures::future::try_join_all(specs.iter().zip(recorded.iter()).map(
            |(spec, read)| async move {
                match read {
                    Some(_) => Ok(None),
                    None => self
                        .live(spec, chosen, jobs, progress_ref, starting)
                        .await
                        .map(Some),
                }
            },
        ))
        .await?;
        let mut all = Vec::new();
        let mut misconfigured: Vec<(String, Differs)> = Vec::new();
        // One loop over every kind of target: each gives its transcripts and what a reader
        // must know of where they came from.
        for ((spec, read), ran) in specs.iter().zip(recorded).zip(live) {
            let (mut transcripts, notes, differs) = read.or(ran).unwrap_or_default();
            if self.strict_encoding {
                transcripts
                    .iter_mut()
                    .for_each(Transcript::hold_to_canonical_encoding);
            }
            for note in notes {
                report.add_origin(&spec.name(), note);
            }
            misconfigured.extend(differs.into_iter().map(|d| (spec.name(), d)));
            report.add_transcripts(&transcripts);
            all.push(transcripts);
        }
        if specs.iter().any(TargetSpec::is_recorded) {
            // Recorded answers keep no timing-dependent answer: compare without them.
            for transcripts in &mut all {
                for (t, s) in transcripts.iter_mut().zip(chosen.iter()) {
                    run::mask_timing(s, t);
                }
            }
        }
        if all.len() >= 2 {
            let scope = super::scope::ledger_scope(&specs[0], &specs[1]);
            let ledger = scope.ledger(&full);
            if let Some(why) = scope.why() {
                report.add_origin("ledger", why);
            }
            let (rows, stale) = compare(&ledger, chosen, &all[0], &all[1]);
            let stale = match scope.judges_stale() {
                true => stale,
                false => Vec::new(),
            };
            for (row, verdict) in rows {
                let entry = match &verdict {
                    Verdict::Documented(id) => ledger.entry(id),
                    Verdict::Undocumented { .. } => None,
                };
                report.add_difference(row, &verdict, entry);
            }
            let names = &report.targets;
            let (stale, unreached) =
                not_reached(&ledger, stale, [(&names[0], &all[0]), (&names[1], &all[1])]);
            (report.stale, report.not_reached) = (stale, unreached);
            report.group_causes(&classes, &Flows::of(chosen));
            report.mark_configuration(chosen, &misconfigured);
        }
        Ok((report, all))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::StepRecord;

    fn step(name: &str, api: &str, outcome: run::Outcome) -> StepRecord {
        StepRecord {
            step: name.into(),
            api: api.into(),
            version: Some(3),
            request: serde_json::Value::Null,
            outcome,
            encoding: Vec::new(),
        }
    }

    fn transcript(target: &str, stopped: bool) -> Transcript {
        let end = match stopped {
            true => run::Outcome::Skipped("not sent: the scenario stopped".into()),
            false => run::Outcome::Response(serde_json::json!({"error_code": "0 NONE"})),
        };
        Transcript {
            scenario: "s".into(),
            target: target.into(),
            steps: vec![
                step(
                    "init",
                    "InitProducerId",
                    run::Outcome::NoAnswer("closed".into()),
                ),
                step("end", "EndTxn", end),
            ],
            failed_expectations: Vec::new(),
            stopped: stopped.then(|| "step 'init' got no answer: closed".into()),
            readback: Vec::new(),
        }
    }

    /// An entry of the stopped scenario's skipped API is not reached; one whose API was sent
    /// (or whose scenario did not stop) stays stale.
    #[test]
    fn an_entry_hidden_by_a_stop_is_not_reached_not_stale() {
        let entry = |id: &str, api: &str| {
            format!(
                "[[deviation]]\nid = \"{id}\"\napi = \"{api}\"\nfield = \"error_code\"\nkaas = \"1\"\napache = \"2\"\nspec = \"x\"\njava_client = \"Not reached: x\"\nlibrdkafka_client = \"Not reached: x\"\nscenarios = [\"s\"]\n"
            )
        };
        let text = entry("end", "EndTxn") + &entry("init", "InitProducerId");
        let ledger = Ledger::parse(&text, "test").unwrap();
        let stale = |entry: &str| Stale {
            entry: entry.into(),
            scenario: "s".into(),
        };
        let left = [transcript("external", true)];
        let right = [transcript("apache", false)];
        let (still, unreached) = not_reached(
            &ledger,
            vec![stale("end"), stale("init")],
            [("external", &left), ("apache", &right)],
        );
        assert_eq!(still, [stale("init")]);
        assert_eq!(
            unreached,
            [NotReached {
                entry: "end".into(),
                scenario: "s".into(),
                stopped: "external: step 'init' got no answer: closed".into(),
            }]
        );
        // Neither side stopped: stale it stays.
        let (still, unreached) = not_reached(
            &ledger,
            vec![stale("end")],
            [("external", &right), ("apache", &right)],
        );
        assert_eq!((still.len(), unreached.len()), (1, 0));
    }
}
