//! Runs a scenario against a target and records a transcript: each step's request and the
//! normalised answer, or why there was none.
//!
//! One run's state is grouped by concern: the connections it holds (`connections`), the
//! cluster as it sees it (`cluster`), the variables and names it reads answers by, what it
//! recorded (`Log`), its share of `--jobs` (`slot`) and, where topics are provisioned, the
//! offsets the scenario's partitions began at (`provisioned`). `steps` takes each step's
//! action; `exchange` sends a request and judges its answer.

mod cluster;
mod conditions;
mod connections;
mod exchange;
mod many;
pub mod plan;
mod provisioned;
mod readback;
pub mod scope;
pub mod session;
mod slot;
mod steps;
pub mod topics;

use std::sync::Arc;
use std::time::Duration;

use kafka_protocol::messages::ApiKey;
use serde_json::Value;

use crate::api::request::{Var, Vars};
use crate::compare::normalise::Normaliser;
use crate::scenario::{Scenario, VersionSpec};
use crate::targets::apache::Release;
use crate::targets::Running;
pub use crate::transcript::{Outcome, StepRecord, Transcript};
pub use many::{disrupts, run_many};

use cluster::Cluster;
use connections::Connections;
use slot::Slot;
use steps::InFlight;

/// The highest version a step that names none is built at.
fn default_max(api: ApiKey) -> i16 {
    crate::api::by_key(api).map_or(0, |a| a.default_max())
}

/// The highest version `"all"` sweeps on a target that serves `served`: Apache 3.7's highest
/// (the versions kaas claims, recorded as unsupported where a target does not serve them) or,
/// for the six transaction APIs, the target's own highest where it is higher and kconform has
/// its definition (EndTxn v5 on Apache 4.4): every version each target serves is sent.
fn sweep_max(api: ApiKey, served: Option<(i16, i16)>) -> i16 {
    let claimed = crate::api::by_key(api).map_or(0, |a| a.apache_max());
    let defined = crate::api::by_key(api)
        .and_then(|a| crate::wire::schema::request_defined_up_to(a.name))
        .unwrap_or(claimed);
    served.map_or(claimed, |(_, max)| claimed.max(max.min(defined)))
}

/// One scenario's run on one target.
struct Run<'a> {
    target: &'a Running,
    /// Every network wait's bound.
    deadline: Duration,
    /// The connections to the target, who logs in on each, and the versions it serves.
    connections: Connections,
    /// The cluster's brokers, the roles bound and the brokers this scenario took down.
    cluster: Cluster,
    /// The scenario's variables: its unique names and what steps captured.
    vars: Vars,
    /// How answers read: unique names, ports and node ids as the scenario names them.
    normaliser: Normaliser,
    /// What the run recorded, and whether it stopped.
    log: Log,
    /// Its share of `--jobs`.
    slot: Slot,
    /// Background requests not yet awaited, in the order they were sent.
    in_flight: Vec<InFlight>,
    /// Where topics are provisioned: what the run does instead of creating them.
    provisioned: provisioned::Provisioned,
    /// Whether the steps' `expect` holds the target: only where it answers as a release the
    /// scenario is written for ([`holds_expectations`]).
    holds_expectations: bool,
    /// Whether an answer malformed only in its response header's version is read past: recorded
    /// as malformed, read under the other version, and the scenario goes on
    /// ([`crate::wire::frame::read_past`]).
    reads_past: bool,
    /// The step's answer that was read past, until the step records it.
    read_past: Option<crate::wire::frame::Malformed>,
}

/// Whether `scenario`'s expectations hold `target`: they are what Apache answers at the
/// releases the scenario is written for, so a target answering as another release (kaas-ref
/// and external brokers answer as 3.7, the release kaas claims) is compared with Apache there,
/// its differences judged by the ledger, and not held to them. Its captures and `until`s
/// still act.
/// `answers_as` is the target's [`Running::answers_as`] (or its spec's).
pub fn holds_expectations(scenario: &Scenario, answers_as: Option<Release>) -> bool {
    scenario
        .apache
        .contains(&answers_as.unwrap_or(Release::CLAIMED))
}

/// What a run recorded: a record per request (sent or not), the expectations that failed, and
/// why it stopped, when it did.
#[derive(Default)]
struct Log {
    records: Vec<StepRecord>,
    failed: Vec<String>,
    stopped: Option<String>,
    /// What a stopped transactional scenario's transactions left in the log ([`readback`]).
    readback: Vec<crate::transcript::TxnRead>,
}

impl Log {
    /// Stops the scenario at `label` (the first cause wins).
    fn stop(&mut self, label: &str, cause: impl std::fmt::Display) {
        if self.stopped.is_none() {
            self.stopped = Some(format!("step '{label}' {cause}"));
        }
    }

    /// Records `label`'s expectation that failed.
    fn fail(&mut self, label: &str, problem: impl std::fmt::Display) {
        self.failed.push(format!("{label}: {problem}"));
    }

    /// Records what a step that sends no request did (slept, or killed, restarted, paused or
    /// resumed a broker).
    fn action(&mut self, label: &str, outcome: Outcome) {
        self.unsent(label, "", None, outcome);
    }

    /// Records a request that was not sent, with why.
    fn unsent(&mut self, label: &str, api: &str, version: Option<i16>, outcome: Outcome) {
        self.records.push(StepRecord {
            encoding: Vec::new(),
            step: label.to_owned(),
            api: api.to_owned(),
            version,
            request: Value::Null,
            outcome,
        });
    }
}

/// How a run treats a target whose topics are provisioned ([`crate::run::topics`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Provisioning {
    /// Why CreateTopics cannot be judged on this target (it refuses it), when it cannot:
    /// then CreateTopics steps under test are not sent either.
    pub refused: Option<String>,
}

/// The deadline a scenario's network waits get unless told otherwise: Apache's own
/// `request.timeout.ms` (30 s), the longest Apache holds an answer back by its defaults, and
/// 5 s for the answer to come. An InitProducerId or EndTxn waits for its transaction-log append
/// to reach every in-sync replica; on a cluster where the scenario before killed a broker, that
/// one stays in sync for up to `replica.lag.time.max.ms` (30 s) or until it is back, and 10 s
/// cut such answers in CI (cluster-end-txn-retried-on-new-coordinator, two runs in a row). It
/// bounds only silence: a broker that answers costs nothing.
pub const DEADLINE: Duration = Duration::from_secs(35);

/// Runs `scenario` against `target`; every wait is bounded by `deadline`. Whatever the target
/// does, the answer is a transcript: a step that fails (no answer, a malformed one, a broken
/// expectation, an `until` that cannot hold, a capture that cannot be made) stops the scenario
/// there, with the cause in [`Transcript::stopped`] and the later steps recorded as skipped.
pub async fn run(scenario: &Scenario, target: &Running, deadline: Duration) -> Transcript {
    run_in_slot(scenario, target, deadline, Slot::unlimited(), None, true).await
}

/// Runs `scenario` as [`run`] does, on topics provisioned beforehand ([`topics`]): its set-up
/// CreateTopics not sent, its topics bound to their fixed names, every log offset read
/// relative to where the scenario began. The fuzzer's sequences run so, on topics they reuse.
pub async fn run_provisioned(
    scenario: &Scenario,
    target: &Running,
    deadline: Duration,
) -> Transcript {
    let provisioning = Some(Provisioning::default());
    run_in_slot(
        scenario,
        target,
        deadline,
        Slot::unlimited(),
        provisioning,
        true,
    )
    .await
}

async fn run_in_slot(
    scenario: &Scenario,
    target: &Running,
    deadline: Duration,
    slot: Slot,
    provisioning: Option<Provisioning>,
    reads_past: bool,
) -> Transcript {
    let began = std::time::Instant::now();
    let mut run = Run::new(scenario, target, deadline, slot, provisioning);
    run.reads_past = reads_past;
    // A security scenario's ACLs, by the super user, before the first step.
    let acls = run.create_acls(scenario).await;
    for step in &scenario.steps {
        match run.log.stopped {
            None => run.step(step).await,
            Some(_) => run.skip(step),
        }
    }
    // The next scenario finds the cluster whole: what the scenario paused is resumed (before
    // the answers it holds are awaited), what it killed restarted below, however it ended.
    for node in std::mem::take(&mut run.cluster.paused) {
        if let Err(e) = target.resume(node).await {
            run.log.failed.push(format!(
                "could not resume broker {node} after the scenario: {e}"
            ));
        }
    }
    // The markers it held go through (before the answers it holds are awaited: one may wait
    // on them).
    for node in std::mem::take(&mut run.cluster.markers_held) {
        if let Err(e) = target.hold_markers(node, false).await {
            run.log.failed.push(format!(
                "could not let the markers to broker {node} through after the scenario: {e}"
            ));
        }
    }
    // The disks it filled are freed (before the answers it holds are awaited: one may wait
    // on a write).
    for node in std::mem::take(&mut run.cluster.disks_full) {
        if let Err(e) = target.fill_disk(node, false).await {
            run.log.failed.push(format!(
                "could not free the disk of broker {node} after the scenario: {e}"
            ));
        }
    }
    // Background steps nobody awaited are recorded at the end, in the order they were sent.
    while !run.in_flight.is_empty() {
        let pending = run.in_flight.remove(0);
        run.land(pending).await;
    }
    if !acls.is_empty() {
        if let Err(e) = crate::targets::acls::delete(&target.bootstrap, deadline, &acls).await {
            run.log
                .failed
                .push(format!("could not delete the scenario's ACLs: {e}"));
        }
    }
    for node in std::mem::take(&mut run.cluster.down) {
        if let Err(e) = target.restart(node).await {
            run.log.failed.push(format!(
                "could not restart broker {node} after the scenario: {e}"
            ));
        }
    }
    // A scenario that stopped after writing transactional records: what each of its
    // transactions left, read back once the cluster is whole again.
    if run.log.stopped.is_some() {
        run.read_back().await;
    }
    // Where a run's time goes (RUST_LOG=kconform=debug): the slowest scenarios of each target.
    tracing::debug!(scenario = %scenario.name, target = %target.name, elapsed_ms = began.elapsed().as_millis() as u64, "scenario done");
    run.transcript(scenario)
}

impl<'a> Run<'a> {
    /// A run of `scenario` on `target` before its first step: each unique name given this
    /// run's value (or, where topics are provisioned, the topic's fixed name).
    fn new(
        scenario: &Scenario,
        target: &'a Running,
        deadline: Duration,
        slot: Slot,
        provisioning: Option<Provisioning>,
    ) -> Run<'a> {
        let nonce = &uuid::Uuid::new_v4().simple().to_string()[..8];
        let provisioned = provisioned::Provisioned::new(scenario, provisioning);
        let mut vars = Vars::new();
        let mut names = Vec::new();
        let mut whole_names = Vec::new();
        for u in &scenario.unique {
            let core = format!("{u}-{}-{nonce}", scenario.name);
            let actual = match (provisioned.name_of(u), scenario.shapes.get(u)) {
                (Some(name), _) => name.to_owned(),
                (None, Some(shape)) => shape.name(&core, nonce),
                (None, None) => core,
            };
            match crate::scenario::Shape::short(&actual) {
                true => whole_names.push((actual.clone(), format!("${{{u}}}"))),
                false => names.push((actual.clone(), format!("${{{u}}}"))),
            }
            vars.insert(u.clone(), Var::Str(actual));
        }
        let mut normaliser = Normaliser::new(names);
        for (actual, placeholder) in whole_names {
            normaliser.add_whole_name(actual, placeholder);
        }
        Run {
            target,
            deadline,
            connections: Connections::new(crate::scenario::logins(scenario)),
            cluster: Cluster::default(),
            vars,
            normaliser,
            log: Log::default(),
            slot,
            in_flight: Vec::new(),
            provisioned,
            holds_expectations: holds_expectations(scenario, target.answers_as),
            reads_past: true,
            read_past: None,
        }
    }

    /// Creates the scenario's ACLs, by the super user; the ACLs made, for deleting at the end
    /// (none, with the scenario stopped, when they could not be made).
    async fn create_acls(&mut self, scenario: &Scenario) -> Vec<crate::targets::acls::AclWire> {
        let acls = scenario
            .acls
            .iter()
            .map(|a| {
                a.wire(|name| {
                    crate::api::request::substitute(
                        &toml::Value::String(name.to_owned()),
                        &self.vars,
                    )
                    .map(|v| v.as_str().unwrap_or_default().to_owned())
                })
            })
            .collect::<Result<Vec<_>, _>>();
        let acls = match acls {
            Ok(acls) => acls,
            Err(e) => {
                self.log.stopped = Some(format!("the scenario's ACLs: {e}"));
                return Vec::new();
            }
        };
        if acls.is_empty() {
            return acls;
        }
        let bootstrap = &self.target.bootstrap;
        if let Err(e) = crate::targets::acls::create(bootstrap, self.deadline, &acls).await {
            self.log.stopped = Some(format!("setting up the scenario's ACLs: {e}"));
        }
        acls
    }

    /// The transcript of the run, its stop (with how many steps it left unsent) among the
    /// failed expectations.
    fn transcript(mut self, scenario: &Scenario) -> Transcript {
        // A stop on a target the scenario's expectations do not hold (EndTxn v5 unsupported,
        // so nothing to capture) is recorded, and judged by the differences it makes.
        if let Some(cause) = self
            .log
            .stopped
            .as_ref()
            .filter(|_| self.holds_expectations)
        {
            let skipped = self
                .log
                .records
                .iter()
                .filter(|r| matches!(r.outcome, Outcome::Skipped(_)))
                .count();
            self.log.failed.push(match skipped {
                0 => format!("stopped: {cause}"),
                n => format!("stopped: {cause}; {n} later step(s) not sent"),
            });
        }
        Transcript {
            scenario: scenario.name.clone(),
            target: self.target.name.clone(),
            steps: self.log.records,
            failed_expectations: self.log.failed,
            stopped: self.log.stopped,
            readback: self.log.readback,
        }
    }
}

/// The versions a step is sent at when it names them (`7`, `"all"`, `"1..=3"`) on a target
/// that serves `served` ([`sweep_max`]); `None` when it names none (the highest both sides
/// serve, known once the target has been asked).
fn named_versions(
    api: ApiKey,
    version: &Option<VersionSpec>,
    served: Option<(i16, i16)>,
) -> Result<Option<Vec<i16>>, String> {
    version
        .as_ref()
        .map(|v| v.expand(sweep_max(api, served)))
        .transpose()
}

/// The labels a step's records carry: the name, or `name@vN` for each version of a sweep.
fn labels(name: &str, versions: &[i16]) -> Vec<String> {
    match versions.len() > 1 {
        true => versions.iter().map(|v| format!("{name}@v{v}")).collect(),
        false => vec![name.to_owned()],
    }
}

/// Told the name of each scenario as it finishes.
pub type Done = Arc<dyn Fn(&str) + Send + Sync>;

/// Replaces the answers of the scenario's `timing` steps by a note: what a snapshot keeps,
/// and what is compared with recorded answers, of a step whose answer depends on timing.
pub fn mask_timing(scenario: &Scenario, transcript: &mut Transcript) {
    for step in &scenario.steps {
        let Some(why) = step.request().and_then(|r| r.timing.as_deref()) else {
            continue;
        };
        for record in transcript
            .steps
            .iter_mut()
            .filter(|r| crate::scenario::step_of(&r.step) == step.name)
        {
            if matches!(record.outcome, Outcome::Response(_)) {
                record.outcome = Outcome::Skipped(format!(
                    "not recorded: the answer depends on timing ({why})"
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(api: ApiKey, served: Option<(i16, i16)>) -> Vec<i16> {
        named_versions(api, &Some(VersionSpec::default()), served)
            .unwrap()
            .unwrap()
    }

    #[test]
    fn a_sweep_sends_every_version_the_target_serves_that_kconform_can_write() {
        // kaas-ref and Apache 3.7: 3.7's versions, as before any later release was known.
        assert_eq!(all(ApiKey::EndTxn, Some((0, 3))), [0, 1, 2, 3]);
        assert_eq!(all(ApiKey::EndTxn, None), [0, 1, 2, 3]);
        // Apache 4.4: its own versions past 3.7's.
        assert_eq!(all(ApiKey::EndTxn, Some((0, 5))), [0, 1, 2, 3, 4, 5]);
        assert_eq!(
            all(ApiKey::TxnOffsetCommit, Some((0, 6))),
            [0, 1, 2, 3, 4, 5, 6]
        );
        // A version no vendored definition has is not swept: nothing could write it.
        assert_eq!(all(ApiKey::EndTxn, Some((0, 9))), [0, 1, 2, 3, 4, 5]);
        // Below what a target serves, 3.7's versions stay (recorded as unsupported there).
        assert_eq!(all(ApiKey::WriteTxnMarkers, Some((1, 2))), [0, 1, 2]);
        // Another API sweeps 3.7's versions whatever the target serves.
        assert_eq!(
            all(ApiKey::Fetch, Some((4, 17))),
            (0..=16).collect::<Vec<_>>()
        );
        // A named version or range is what it says.
        let range = Some(VersionSpec::Named("1..=2".into()));
        assert_eq!(
            named_versions(ApiKey::EndTxn, &range, Some((0, 5))).unwrap(),
            Some(vec![1, 2])
        );
    }
}
