//! Runs a scenario against a target and records a transcript: each step's request and the
//! normalised answer, or why there was none.

pub mod plan;
pub mod session;
pub mod topics;

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use kafka_protocol::messages::ApiKey;
use serde_json::Value;

use std::sync::Arc;

use kafka_protocol::messages::{RequestKind, ResponseKind};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::api::request::{self, substitute, Var, Vars};
use crate::api::response;
use crate::compare::normalise::Normaliser;
use crate::scenario::{BrokerRef, Scenario, Step, VersionSpec};
use crate::targets::Running;
pub use crate::transcript::{Outcome, StepRecord, Transcript};
use crate::wire::client::{ClientError, Connection};
use crate::wire::error_codes;
use crate::wire::frame;

/// The highest version a step that names none is built at.
fn default_max(api: ApiKey) -> i16 {
    crate::api::by_key(api).map_or(0, |a| a.default_max())
}

/// Apache 3.7's highest version of an API: what "all" sweeps.
fn apache_max(api: ApiKey) -> i16 {
    crate::api::by_key(api).map_or(0, |a| a.apache_max())
}

/// A background step's request on its way: the answer arrives in `answer`, with the
/// connection it went out on.
struct InFlight {
    step: Step,
    label: String,
    version: i16,
    record: StepRecord,
    answer: tokio::task::JoinHandle<(Connection, Result<frame::Decoded, ClientError>)>,
}

/// How long a request may wait before its scenario gives its `--jobs` slot to another: a
/// broker that stalls must not hold every slot for a deadline each, one after the other.
const LONG_WAIT: Duration = Duration::from_secs(1);

/// How many other names `renames` tries.
const RENAMES: u32 = 32;

/// How long an `until` may keep being refused before its scenario lends its `--jobs` slot.
const UNTIL_LENDS_AFTER: Duration = Duration::from_millis(300);

/// A scenario's share of `--jobs`: held while it works, handed back while it waits long on
/// a broker, taken again when the answer comes.
struct Slot {
    permits: Option<Arc<Semaphore>>,
    held: Option<OwnedSemaphorePermit>,
}

impl Slot {
    /// A slot that never waits (a scenario run on its own).
    fn unlimited() -> Slot {
        Slot {
            permits: None,
            held: None,
        }
    }

    /// Waits for `work`, releasing the slot once it has waited [`LONG_WAIT`].
    async fn wait<F: std::future::Future>(&mut self, work: F) -> F::Output {
        let Some(permits) = self.permits.clone() else {
            return work.await;
        };
        tokio::pin!(work);
        tokio::select! {
            biased;
            out = &mut work => return out,
            _ = tokio::time::sleep(LONG_WAIT) => {}
        }
        self.held = None;
        let out = work.await;
        self.held = permits.acquire_owned().await.ok();
        out
    }

    /// Lends the slot for a wait the scenario measures itself (an `until` that keeps being
    /// refused): a broker that answers every request with a retriable error must not make the
    /// scenarios wait out their budgets one `--jobs` batch after another.
    fn lend(&mut self) {
        if self.permits.is_some() {
            self.held = None;
        }
    }

    /// Takes the slot back after [`Slot::lend`] (at once when it was never lent).
    async fn take_back(&mut self) {
        if let (Some(permits), None) = (&self.permits, &self.held) {
            self.held = permits.clone().acquire_owned().await.ok();
        }
    }
}

struct Run<'a> {
    in_flight: Vec<InFlight>,
    target: &'a Running,
    deadline: Duration,
    connections: HashMap<String, Connection>,
    served: Option<HashMap<i16, (i16, i16)>>,
    vars: Vars,
    normaliser: Normaliser,
    records: Vec<StepRecord>,
    failed: Vec<String>,
    stopped: Option<String>,
    slot: Slot,
    provisioning: Option<Provisioning>,
    /// The scenario's provisioned topics: var → what it needs.
    provisioned: Vec<(String, topics::Needed)>,
    bases: topics::Bases,
    /// A cluster's brokers: node id → address, from the target's Metadata (asked once, at the
    /// first step that needs it).
    nodes: Option<std::collections::BTreeMap<i32, std::net::SocketAddr>>,
    /// Roles bound by `roles`: role → node id.
    roles: BTreeMap<String, i32>,
    /// Brokers this scenario killed and has not restarted.
    down: std::collections::BTreeSet<i32>,
    /// On a secured target, who each connection logs in as: connection → (user, mechanism).
    logins: BTreeMap<String, (String, String)>,
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
    run_in_slot(scenario, target, deadline, Slot::unlimited(), None).await
}

async fn run_in_slot(
    scenario: &Scenario,
    target: &Running,
    deadline: Duration,
    slot: Slot,
    provisioning: Option<Provisioning>,
) -> Transcript {
    let nonce = &uuid::Uuid::new_v4().simple().to_string()[..8];
    let provisioned = match provisioning {
        Some(_) => topics::of(scenario),
        None => Vec::new(),
    };
    let mut vars = Vars::new();
    let mut names = Vec::new();
    for u in &scenario.unique {
        let actual = match provisioned.iter().find(|(var, _)| var == u) {
            Some((_, needed)) => needed.name.clone(),
            None => format!("{u}-{}-{nonce}", scenario.name),
        };
        names.push((actual.clone(), format!("${{{u}}}")));
        vars.insert(u.clone(), Var::Str(actual));
    }
    let mut run = Run {
        in_flight: Vec::new(),
        target,
        deadline,
        connections: HashMap::new(),
        served: None,
        vars,
        normaliser: Normaliser::new(names),
        records: Vec::new(),
        failed: Vec::new(),
        stopped: None,
        slot,
        provisioning,
        provisioned,
        bases: topics::Bases::new(),
        nodes: None,
        roles: BTreeMap::new(),
        down: Default::default(),
        logins: crate::scenario::logins(scenario),
    };
    // A security scenario's ACLs, by the super user, before the first step.
    let acls = match scenario
        .acls
        .iter()
        .map(|a| {
            a.wire(|name| {
                crate::api::request::substitute(&toml::Value::String(name.to_owned()), &run.vars)
                    .map(|v| v.as_str().unwrap_or_default().to_owned())
            })
        })
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(acls) => acls,
        Err(e) => {
            run.stopped = Some(format!("the scenario's ACLs: {e}"));
            Vec::new()
        }
    };
    if !acls.is_empty() && run.stopped.is_none() {
        if let Err(e) = crate::targets::acls::create(&target.bootstrap, deadline, &acls).await {
            run.stopped = Some(format!("setting up the scenario's ACLs: {e}"));
        }
    }
    for step in &scenario.steps {
        match run.stopped.clone() {
            None => run.step(step).await,
            Some(_) => run.skip(step),
        }
    }
    // Background steps nobody awaited are recorded at the end, in the order they were sent.
    while !run.in_flight.is_empty() {
        let pending = run.in_flight.remove(0);
        run.land(pending).await;
    }
    if !acls.is_empty() {
        if let Err(e) = crate::targets::acls::delete(&target.bootstrap, deadline, &acls).await {
            run.failed
                .push(format!("could not delete the scenario's ACLs: {e}"));
        }
    }
    // The next scenario finds the cluster whole.
    for node in std::mem::take(&mut run.down) {
        if let Err(e) = target.restart(node).await {
            run.failed.push(format!(
                "could not restart broker {node} after the scenario: {e}"
            ));
        }
    }
    if let Some(cause) = &run.stopped {
        let skipped = run
            .records
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::Skipped(_)))
            .count();
        run.failed.push(match skipped {
            0 => format!("stopped: {cause}"),
            n => format!("stopped: {cause}; {n} later step(s) not sent"),
        });
    }
    Transcript {
        scenario: scenario.name.clone(),
        target: target.name.clone(),
        steps: run.records,
        failed_expectations: run.failed,
        stopped: run.stopped,
    }
}

/// The versions a step is sent at when it names them (`7`, `"all"`, `"1..=3"`); `None` when it
/// names none (the highest both sides serve, known once the target has been asked).
fn named_versions(api: ApiKey, version: &Option<VersionSpec>) -> Result<Option<Vec<i16>>, String> {
    version
        .as_ref()
        .map(|v| v.expand(apache_max(api)))
        .transpose()
}

/// The labels a step's records carry: the name, or `name@vN` for each version of a sweep.
fn labels(step: &Step, versions: &[i16]) -> Vec<String> {
    match versions.len() > 1 {
        true => versions
            .iter()
            .map(|v| format!("{}@v{v}", step.name))
            .collect(),
        false => vec![step.name.clone()],
    }
}

impl Run<'_> {
    /// Stops the scenario at `label` (the first cause wins).
    fn stop(&mut self, label: &str, cause: impl std::fmt::Display) {
        if self.stopped.is_none() {
            self.stopped = Some(format!("step '{label}' {cause}"));
        }
    }

    /// Records every request of `step` as not sent (a pause is not taken, an await lands at
    /// the end).
    fn skip(&mut self, step: &Step) {
        if step.await_step.is_some() {
            return;
        }
        let why = format!(
            "not sent: the scenario stopped at {}",
            self.stopped
                .as_deref()
                .and_then(|s| s.split(' ').nth(1))
                .unwrap_or("an earlier step")
        );
        self.record_unsent(step, Outcome::Skipped(why));
    }

    /// Records every request `step` would have sent (each version of a sweep under its own
    /// label, as a sent one is) as not sent, with `outcome`.
    fn record_unsent(&mut self, step: &Step, outcome: Outcome) {
        let api_name = step.api.as_deref().unwrap_or_default();
        let versions = request::api_key(api_name)
            .and_then(|api| named_versions(api, &step.version).ok().flatten())
            .unwrap_or_default();
        if versions.is_empty() {
            return self.push_unsent(&step.name, api_name, None, outcome);
        }
        for (label, version) in labels(step, &versions).iter().zip(&versions) {
            self.push_unsent(label, api_name, Some(*version), outcome.clone());
        }
    }

    fn push_unsent(&mut self, label: &str, api: &str, version: Option<i16>, outcome: Outcome) {
        self.records.push(StepRecord {
            encoding: Vec::new(),
            step: label.to_owned(),
            api: api.to_owned(),
            version,
            request: Value::Null,
            outcome,
        });
    }

    async fn connection(&mut self, name: &str) -> Result<&mut Connection, ClientError> {
        if !self.connections.contains_key(name) {
            let addr = self.addr_of(name);
            let mut c = Connection::connect(addr, self.deadline).await?;
            let base = name.split('@').next().unwrap_or(name);
            if let Some((user, mechanism)) = self.logins.get(base).filter(|_| self.target.secured) {
                if user != crate::security::NOBODY {
                    let password = crate::security::password(user).unwrap_or_default();
                    crate::wire::sasl::authenticate(&mut c, mechanism, user, password).await?;
                }
            }
            self.connections.insert(name.to_owned(), c);
        }
        Ok(self.connections.get_mut(name).expect("inserted"))
    }

    /// Where a connection goes: a routed one (`name@node`) to that broker; any other to the
    /// target's bootstrap, or in a cluster to the lowest broker up.
    fn addr_of(&self, key: &str) -> std::net::SocketAddr {
        let routed = key
            .rsplit_once('@')
            .and_then(|(_, n)| n.parse::<i32>().ok())
            .or_else(|| self.any_up());
        routed
            .and_then(|n| self.nodes.as_ref()?.get(&n).copied())
            .unwrap_or(self.target.addr)
    }

    /// The lowest node id up, once the cluster's brokers are known.
    fn any_up(&self) -> Option<i32> {
        self.nodes
            .as_ref()?
            .keys()
            .copied()
            .find(|n| !self.down.contains(n))
    }

    /// The cluster's brokers, asked of the target's Metadata at the first need.
    async fn nodes(&mut self) -> Result<(), String> {
        if self.nodes.is_some() {
            return Ok(());
        }
        let nodes =
            crate::targets::brokers::of(self.target.addr, self.deadline, self.target.secured)
                .await?;
        for (node, addr) in &nodes {
            self.normaliser
                .learn_port(i64::from(addr.port()), i64::from(*node));
        }
        if nodes.len() != self.target.brokers {
            return Err(format!(
                "the target's Metadata lists {} brokers ({:?}), the scenario needs {}",
                nodes.len(),
                nodes.keys().collect::<Vec<_>>(),
                self.target.brokers
            ));
        }
        self.nodes = Some(nodes);
        Ok(())
    }

    /// The node a step's broker reference names now: among the brokers up, or (to restart
    /// one) among those this scenario killed.
    async fn resolve(&mut self, broker: &BrokerRef) -> Result<i32, String> {
        self.resolve_among(broker, false).await
    }

    async fn resolve_among(&mut self, broker: &BrokerRef, down: bool) -> Result<i32, String> {
        self.nodes().await?;
        let nodes = self.nodes.as_ref().expect("known");
        let node = match broker.role() {
            None => match broker {
                BrokerRef::Node(n) => *n,
                BrokerRef::Role(_) => unreachable!("a role has a name"),
            },
            Some((role, negated)) => {
                let holder = *self
                    .roles
                    .get(role)
                    .ok_or_else(|| format!("the role '{role}' is not bound yet"))?;
                match negated {
                    false => holder,
                    true => nodes
                        .keys()
                        .copied()
                        .find(|n| *n != holder && self.down.contains(n) == down)
                        .ok_or_else(|| match down {
                            false => format!("no broker up but the {role}"),
                            true => format!("no broker down but the {role}"),
                        })?,
                }
            }
        };
        match nodes.contains_key(&node) {
            true => Ok(node),
            false => Err(format!(
                "{broker} is node {node}, which the cluster does not have"
            )),
        }
    }

    /// The step as sent: in a cluster, its connection named after the broker it goes to
    /// (`main@2`), so that each broker gets its own.
    async fn routed(&mut self, step: &Step) -> Result<Step, String> {
        if self.target.brokers < 2 {
            return Ok(step.clone());
        }
        let node = match &step.broker {
            Some(broker) => self.resolve(broker).await?,
            None => {
                self.nodes().await?;
                self.any_up().ok_or("no broker of the cluster is up")?
            }
        };
        Ok(Step {
            connection: format!("{}@{node}", step.connection),
            ..step.clone()
        })
    }

    /// A `kill` or `restart` step: acts on the broker it names, and records what it did.
    async fn act(&mut self, step: &Step) {
        let (broker, kill) = match (&step.kill, &step.restart) {
            (Some(b), _) => (b.clone(), true),
            (_, Some(b)) => (b.clone(), false),
            _ => unreachable!("a kill or restart step"),
        };
        let node = match self.resolve_among(&broker, !kill).await {
            Ok(node) => node,
            Err(e) => return self.stop(&step.name, format!("cannot find {broker}: {e}")),
        };
        let done = match kill {
            true => self.target.kill(node).await,
            false => self.target.restart(node).await,
        };
        if let Err(e) = done {
            return self.stop(&step.name, e);
        }
        let suffix = format!("@{node}");
        self.connections.retain(|key, _| !key.ends_with(&suffix));
        match kill {
            true => self.down.insert(node),
            false => self.down.remove(&node),
        };
        self.records.push(StepRecord {
            encoding: Vec::new(),
            step: step.name.clone(),
            api: String::new(),
            version: None,
            request: Value::Null,
            outcome: Outcome::Broker(format!(
                "{} {broker}",
                if kill { "killed" } else { "restarted" }
            )),
        });
    }

    /// Sends `request` on the named connection (connecting first if need be), lending the
    /// scenario's slot while the answer is long in coming.
    async fn send_on(
        &mut self,
        connection: &str,
        api: ApiKey,
        version: i16,
        request: &RequestKind,
    ) -> Result<frame::Decoded, ClientError> {
        self.connection(connection).await?;
        let conn = self.connections.get_mut(connection).expect("connected");
        self.slot.wait(conn.exchange(api, version, request)).await
    }

    /// The (min, max) versions the target serves of `api`, asking ApiVersions once per run.
    async fn served(&mut self, api: ApiKey) -> Result<Option<(i16, i16)>, ClientError> {
        if self.served.is_none() {
            if self.target.brokers > 1 {
                // In a cluster, to a broker up (the bootstrap may be the one killed).
                let _ = self.nodes().await;
            }
            self.connection("__api_versions").await?;
            let conn = self
                .connections
                .get_mut("__api_versions")
                .expect("connected");
            let versions = self.slot.wait(conn.api_versions()).await?;
            self.served = Some(versions.into_iter().map(|(k, a, b)| (k, (a, b))).collect());
        }
        Ok(self
            .served
            .as_ref()
            .and_then(|served| served.get(&(api as i16)).copied()))
    }

    async fn step(&mut self, step: &Step) {
        if let Some(awaited) = &step.await_step {
            // Load-time checks make sure it is in flight.
            if let Some(i) = self.in_flight.iter().position(|f| &f.step.name == awaited) {
                let pending = self.in_flight.remove(i);
                self.land(pending).await;
            }
            return;
        }
        if let Some(ms) = step.sleep_ms {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            self.records.push(StepRecord {
                encoding: Vec::new(),
                step: step.name.clone(),
                api: String::new(),
                version: None,
                request: Value::Null,
                outcome: Outcome::Slept(ms),
            });
            return;
        }
        if step.kill.is_some() || step.restart.is_some() {
            return self.act(step).await;
        }
        let routed = match self.routed(step).await {
            Ok(routed) => routed,
            Err(e) => {
                self.stop(&step.name, format!("cannot be routed: {e}"));
                return self.skip(step);
            }
        };
        let step = &routed;
        // Load-time checks make sure the API is known and the versions parse.
        let api_name = step.api.as_deref().unwrap_or_default();
        let Some(api) = request::api_key(api_name) else {
            self.stop(&step.name, format!("names an unknown API '{api_name}'"));
            return self.skip(step);
        };
        if api == ApiKey::CreateTopics {
            if let Some(provisioning) = self.provisioning.clone() {
                if step.creates_topics {
                    return self.provisioned_setup(step).await;
                }
                if let Some(why) = &provisioning.refused {
                    let note = format!("not sent: CreateTopics itself is not judged here ({why})");
                    return self.mark_provisioned(step, &note);
                }
            }
        }
        let served = match self.served(api).await {
            Ok(served) => served,
            Err(e) => {
                self.stop(
                    &step.name,
                    format!("could not learn the versions served: ApiVersions got {e}"),
                );
                return self.skip(step);
            }
        };
        let versions = match named_versions(api, &step.version) {
            Ok(Some(v)) => v,
            Ok(None) => vec![served.map_or(default_max(api), |(_, max)| max.min(default_max(api)))],
            Err(e) => {
                self.stop(&step.name, e);
                return self.skip(step);
            }
        };
        for (label, version) in labels(step, &versions).iter().zip(versions) {
            if self.stopped.is_some() {
                self.push_unsent(
                    label,
                    api_name,
                    Some(version),
                    Outcome::Skipped(
                        "not sent: the scenario stopped at an earlier version of this step".into(),
                    ),
                );
                continue;
            }
            self.send(step, label, api, api_name, version, served).await;
        }
    }

    async fn send(
        &mut self,
        step: &Step,
        label: &str,
        api: ApiKey,
        api_name: &str,
        version: i16,
        served: Option<(i16, i16)>,
    ) {
        let mut record = StepRecord {
            encoding: Vec::new(),
            step: label.to_owned(),
            api: api_name.to_owned(),
            version: Some(version),
            request: Value::Null,
            outcome: Outcome::Skipped(String::new()),
        };
        let fields = match substitute(&toml::Value::Table(step.request.clone()), &self.vars) {
            Ok(toml::Value::Table(fields)) => fields,
            Ok(_) => unreachable!("a table substitutes to a table"),
            Err(e) => {
                // Only a capture that an earlier step could not make leaves a name undefined
                // (load-time checks see to the rest), and that step stopped the scenario.
                record.outcome = Outcome::Skipped(format!("not sent: {e}"));
                self.records.push(record);
                self.stop(label, format!("could not be built: {e}"));
                return;
            }
        };
        let request_value = serde_json::to_value(&fields).unwrap_or(Value::Null);
        record.request = self.normaliser.normalise(&request_value);
        let mut fields = fields;
        if api == ApiKey::Fetch && !self.bases.is_empty() {
            topics::rebase_fetch(&mut fields, &self.bases);
        }
        match served {
            Some((min, max)) if (min..=max).contains(&version) => {}
            other => {
                let (min, max) = other.unwrap_or((-1, -1));
                record.outcome = Outcome::Unsupported { min, max };
                self.records.push(record);
                return;
            }
        }
        let request = match request::build(api, version, &fields) {
            Ok(request) => request,
            Err(e) => {
                let unknown = matches!(e, request::BuildError::UnknownField { .. });
                let why = format!("cannot build {api_name} v{version}: {e}");
                record.outcome = Outcome::Unsendable(why.clone());
                self.records.push(record);
                if unknown {
                    // A typo in the scenario: no verdict on a request other than the one meant.
                    self.stop(label, why);
                }
                return;
            }
        };
        if step.background {
            if let Err(e) = self.connection(&step.connection).await {
                record.outcome = Outcome::NoAnswer(e.to_string());
                self.records.push(record);
                self.stop(label, format!("got no answer: {e}"));
                return;
            }
            let mut conn = self
                .connections
                .remove(&step.connection)
                .expect("connected above");
            let answer = tokio::spawn(async move {
                let result = conn.exchange(api, version, &request).await;
                (conn, result)
            });
            self.in_flight.push(InFlight {
                step: step.clone(),
                label: label.to_owned(),
                version,
                record,
                answer,
            });
            return;
        }
        let repeat = step.repeat.unwrap_or(1).max(1);
        for round in 1..=repeat {
            let Some((raw, until_failed)) = self
                .exchange(step, label, api, version, &request, &mut record)
                .await
            else {
                return;
            };
            let last = round == repeat;
            if !last && mismatches(&step.expect, &raw).is_empty() && until_failed.is_none() {
                continue;
            }
            let mut problem = until_failed;
            if !last && problem.is_none() {
                let broke = format!("broke its expectation at repetition {round} of {repeat}");
                self.failed.push(format!("{label}: {broke}"));
                problem = Some(broke);
            }
            if let Some(first) = self.finish(step, label, raw, record) {
                problem.get_or_insert(first);
            }
            if let Some(problem) = problem {
                self.stop(label, problem);
            }
            return;
        }
    }

    /// Sends the request, repeating it while `until` does not hold and could still come to
    /// hold. `None` when the target gave no usable answer (recorded as such, the scenario
    /// stopped); otherwise the answer and, when `until` gave up, why.
    async fn exchange(
        &mut self,
        step: &Step,
        label: &str,
        api: ApiKey,
        version: i16,
        request: &RequestKind,
        record: &mut StepRecord,
    ) -> Option<(Value, Option<String>)> {
        let budget = Duration::from_millis(step.within_ms.unwrap_or(15_000));
        let started = tokio::time::Instant::now();
        let give_up = started + budget;
        let mut renamed: Option<RequestKind> = None;
        let mut attempt = 0u32;
        let outcome = loop {
            let result = self
                .send_on(
                    &step.connection,
                    api,
                    version,
                    renamed.as_ref().unwrap_or(request),
                )
                .await;
            let raw = match result {
                Err(ClientError::Closed) if step.closes.is_some() => {
                    self.connections.remove(&step.connection);
                    record.outcome = Outcome::Closed(step.closes.clone().unwrap_or_default());
                    self.records.push(record.clone());
                    break None;
                }
                Ok(d) => {
                    record.encoding = d.notes;
                    self.answer_tree(&d.response, api, version)
                }
                Err(e) => {
                    self.no_answer(&step.connection, label, e, record);
                    break None;
                }
            };
            if step.closes.is_some() {
                let why = "the broker answered where the step expects it to close the connection";
                self.failed.push(format!("{label}: {why}"));
                break Some((raw, Some(why.to_owned())));
            }
            let roles_differ = self.roles_missed(&step.until_roles, &raw);
            if mismatches(&step.until, &raw).is_empty() && roles_differ.is_empty() {
                // A fuzzed step waits out what a client waits out, then takes what comes.
                let waits = step.retry_retriable && carries_retriable(&raw);
                if !waits || tokio::time::Instant::now() >= give_up {
                    break Some((raw, None));
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
            if let (Some(var), false) = (&step.renames, roles_differ.is_empty()) {
                // Another name for the variable, and the request again with it.
                attempt += 1;
                if attempt > RENAMES {
                    let why = format!(
                        "'until_roles' did not hold for any of {RENAMES} names of ${{{var}}}: {}",
                        roles_differ.join(", ")
                    );
                    self.failed.push(format!("{label}: {why}"));
                    break Some((raw, Some(why)));
                }
                match self.rename(var, attempt, step, api, version) {
                    Ok(r) => renamed = Some(r),
                    Err(e) => {
                        self.failed.push(format!("{label}: {e}"));
                        break Some((raw, Some(e)));
                    }
                }
                continue;
            }
            if let Some(code) = final_error(&raw, &step.until) {
                let why = format!(
                    "'until' cannot hold: the answer carries {}, which retrying cannot change",
                    error_codes::label(code)
                );
                self.failed.push(format!("{label}: {why}"));
                break Some((raw, Some(why)));
            }
            if tokio::time::Instant::now() >= give_up {
                let why = format!("'until' did not hold within {} ms", budget.as_millis());
                self.failed.push(format!("{label}: {why}"));
                break Some((raw, Some(why)));
            }
            if started.elapsed() >= UNTIL_LENDS_AFTER {
                self.slot.lend();
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        self.slot.take_back().await;
        outcome
    }

    /// The conditions of `until_roles` (path → role or `not-<role>`) the answer misses.
    fn roles_missed(&self, wanted: &BTreeMap<String, String>, raw: &Value) -> Vec<String> {
        wanted
            .iter()
            .filter_map(|(path, role)| {
                let node = response::at(raw, path).and_then(Value::as_i64);
                let (name, negated) = match role.strip_prefix("not-") {
                    Some(r) => (r, true),
                    None => (role.as_str(), false),
                };
                let holder = self.roles.get(name).map(|n| i64::from(*n));
                let holds = node.is_some() && holder.is_some() && (node == holder) != negated;
                (!holds).then(|| format!("{path} is {node:?}, wanted {role} ({holder:?})"))
            })
            .collect()
    }

    /// Gives the unique variable `var` its `attempt`-th other name and builds the step's
    /// request again with it: `renames` looks for a name the cluster places as `until_roles`
    /// asks (a group whose coordinator is not the transaction's, say).
    fn rename(
        &mut self,
        var: &str,
        attempt: u32,
        step: &Step,
        api: ApiKey,
        version: i16,
    ) -> Result<RequestKind, String> {
        let Some(Var::Str(current)) = self.vars.get(var).cloned() else {
            return Err(format!("${{{var}}} is no name to vary"));
        };
        let base = current
            .rsplit_once("~")
            .map_or(current.as_str(), |(b, _)| b);
        let next = format!("{base}~{attempt}");
        self.normaliser
            .add_name(next.clone(), format!("${{{var}}}"));
        self.vars.insert(var.to_owned(), Var::Str(next));
        let fields = match substitute(&toml::Value::Table(step.request.clone()), &self.vars) {
            Ok(toml::Value::Table(fields)) => fields,
            Ok(_) => unreachable!("a table substitutes to a table"),
            Err(e) => return Err(e.to_string()),
        };
        request::build(api, version, &fields).map_err(|e| e.to_string())
    }

    /// The answer as a tree, its log offsets relative to where the scenario began when its
    /// topics are provisioned.
    fn answer_tree(&self, response: &ResponseKind, api: ApiKey, version: i16) -> Value {
        let mut raw = response::to_value(response, version);
        if !self.bases.is_empty() {
            topics::rebase_answer(&format!("{api:?}"), &mut raw, &self.bases);
        }
        raw
    }

    /// Records each request of `step` as not sent because topics are provisioned.
    fn mark_provisioned(&mut self, step: &Step, note: &str) {
        self.record_unsent(step, Outcome::Provisioned(note.to_owned()));
    }

    /// A set-up CreateTopics on a broker whose topics are provisioned: not sent; instead, where
    /// each partition's log ends now, so the scenario reads only what it writes.
    async fn provisioned_setup(&mut self, step: &Step) {
        let created: Vec<String> = step
            .request
            .get("topics")
            .and_then(toml::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| crate::scenario::topic_var(t).map(str::to_owned))
            .collect();
        let needed: Vec<topics::Needed> = self
            .provisioned
            .iter()
            .filter(|(var, _)| created.contains(var))
            .map(|(_, n)| n.clone())
            .collect();
        let names: Vec<&str> = needed.iter().map(|n| n.name.as_str()).collect();
        self.mark_provisioned(
            step,
            &format!("not sent: provisioned beforehand ({})", names.join(", ")),
        );
        let version = match self.served(ApiKey::ListOffsets).await {
            Ok(Some((min, max))) if min <= 1 && max >= 1 => max.min(default_max(ApiKey::ListOffsets)),
            Ok(_) => {
                return self.stop(&step.name, "needs ListOffsets v1+ to learn where the provisioned topics end, which the broker does not serve")
            }
            Err(e) => {
                return self.stop(
                    &step.name,
                    format!("could not learn the versions served: ApiVersions got {e}"),
                )
            }
        };
        for n in needed {
            for partition in 0..n.partitions {
                let fields: toml::Table = [
                    ("topic".to_owned(), toml::Value::String(n.name.clone())),
                    (
                        "partition".to_owned(),
                        toml::Value::Integer(partition.into()),
                    ),
                    ("timestamp".to_owned(), toml::Value::Integer(-1)),
                ]
                .into_iter()
                .collect();
                let request = match request::build(ApiKey::ListOffsets, version, &fields) {
                    Ok(r) => r,
                    Err(e) => {
                        return self
                            .stop(&step.name, format!("cannot ask where {} ends: {e}", n.name))
                    }
                };
                let answer = self
                    .send_on(&step.connection, ApiKey::ListOffsets, version, &request)
                    .await;
                let raw = match answer {
                    Ok(d) => response::to_value(&d.response, version),
                    Err(e) => {
                        self.connections.remove(&step.connection);
                        return self.stop(
                            &step.name,
                            format!("could not learn where {} ends: {e}", n.name),
                        );
                    }
                };
                let code =
                    response::at(&raw, "topics.0.partitions.0.error_code").and_then(Value::as_i64);
                let offset =
                    response::at(&raw, "topics.0.partitions.0.offset").and_then(Value::as_i64);
                match (code, offset) {
                    (Some(0), Some(offset)) if offset >= 0 => {
                        self.bases.insert((n.name.clone(), partition), offset);
                    }
                    _ => {
                        let code =
                            code.map_or("no answer".into(), |c| error_codes::label(c as i16));
                        return self.stop(
                            &step.name,
                            format!("found no provisioned partition {} {partition} ({code}): create the topics `kconform topics` lists", n.name),
                        );
                    }
                }
            }
        }
    }

    /// Records a request that got no usable answer and stops the scenario; the connection is
    /// unusable after it. A request the harness could not encode is the scenario's problem,
    /// the same on every target: recorded, and the scenario goes on.
    fn no_answer(
        &mut self,
        connection: &str,
        label: &str,
        e: ClientError,
        record: &mut StepRecord,
    ) {
        self.connections.remove(connection);
        let cause = match e {
            ClientError::Encode { .. } => {
                record.outcome = Outcome::Unsendable(e.to_string());
                self.records.push(record.clone());
                return;
            }
            ClientError::Malformed(m) => {
                let cause = format!("got a malformed answer: {}", m.summary());
                record.outcome = Outcome::Malformed(*m);
                cause
            }
            other => {
                record.outcome = Outcome::NoAnswer(other.to_string());
                format!("got no answer: {other}")
            }
        };
        self.records.push(record.clone());
        self.stop(label, cause);
    }

    /// Records a background step's answer (its connection back in the pool unless it failed),
    /// with the step's captures and expectations. The client's deadline bounds the wait.
    async fn land(&mut self, pending: InFlight) {
        let InFlight {
            step,
            label,
            version,
            mut record,
            answer,
        } = pending;
        match self.slot.wait(answer).await {
            Ok((conn, Ok(decoded))) => {
                self.connections.insert(step.connection.clone(), conn);
                let api = request::api_key(step.api.as_deref().unwrap_or_default())
                    .unwrap_or(ApiKey::ApiVersions);
                let raw = self.answer_tree(&decoded.response, api, version);
                record.encoding = decoded.notes;
                if let Some(problem) = self.finish(&step, &label, raw, record) {
                    self.stop(&label, problem);
                } else if let Some(why) = &step.raced {
                    tracing::debug!(step = %label, "answered before the kill it raced");
                    if let Some(last) = self.records.last_mut() {
                        last.outcome = Outcome::Raced(why.clone());
                    }
                }
            }
            Ok((_, Err(ClientError::Closed))) if step.raced.is_some() => {
                // The broker died first: as good an outcome of the race as its answer.
                tracing::debug!(step = %label, "cut off by the kill it raced");
                self.connections.remove(&step.connection);
                record.outcome = Outcome::Raced(step.raced.clone().unwrap_or_default());
                self.records.push(record);
            }
            Ok((_, Err(e))) => self.no_answer(&step.connection, &label, e, &mut record),
            Err(e) => {
                let cause = format!("the request task failed: {e}");
                record.outcome = Outcome::NoAnswer(cause.clone());
                self.records.push(record);
                self.stop(&label, cause);
            }
        }
    }

    /// Captures, checks the expectations and records the answer; the first problem, if any.
    fn finish(
        &mut self,
        step: &Step,
        label: &str,
        raw: Value,
        mut record: StepRecord,
    ) -> Option<String> {
        let mut problems = Vec::new();
        for (var, path) in &step.capture {
            match response::at(&raw, path) {
                Some(Value::Number(n)) if n.as_i64().is_some() => {
                    self.vars
                        .insert(var.clone(), Var::Int(n.as_i64().expect("checked")));
                }
                Some(Value::String(s)) => {
                    self.vars.insert(var.clone(), Var::Str(s.clone()));
                }
                _ => problems.push(format!("nothing to capture at '{path}'")),
            }
        }
        for (role, path) in &step.roles {
            match response::at(&raw, path).and_then(Value::as_i64) {
                Some(node) if node >= 0 => {
                    self.roles.insert(role.clone(), node as i32);
                    self.normaliser.bind_role(node, role);
                }
                _ => problems.push(format!("no node id at '{path}' to bind the role '{role}'")),
            }
        }
        for (path, role) in &step.expect_roles {
            let holder = self.roles.get(role).copied();
            match (response::at(&raw, path).and_then(Value::as_i64), holder) {
                (Some(node), Some(holder)) if node == i64::from(holder) => {
                    self.normaliser.bind_role(node, role);
                }
                (found, _) => problems.push(format!(
                    "{path} is {}, expected the {role} (node {})",
                    found.map_or("no node id".to_owned(), |n| format!("node {n}")),
                    holder.map_or("unbound".to_owned(), |h| h.to_string())
                )),
            }
        }
        problems.extend(mismatches(&step.expect, &raw));
        for p in &problems {
            self.failed.push(format!("{label}: {p}"));
        }
        let mut shown = self.normaliser.normalise(&raw);
        for path in &step.not_compared {
            response::replace_at(&mut shown, path, Value::String("not compared".into()));
        }
        record.outcome = Outcome::Response(shown);
        self.records.push(record);
        problems.into_iter().next()
    }
}

/// An error code in the answer that no retry can change, when `until` does not ask for it:
/// a non-zero code that is not retriable ([`error_codes::retriable`]) and not OPERATION_NOT_ATTEMPTED
/// (55: the broker did not try this partition because another failed, perhaps retriably).
fn final_error(raw: &Value, until: &BTreeMap<String, toml::Value>) -> Option<i16> {
    let wanted: Vec<i64> = until.values().filter_map(toml::Value::as_integer).collect();
    let mut codes = Vec::new();
    error_codes(raw, &mut codes);
    codes.into_iter().find(|&c| {
        c != 0 && c != 55 && !error_codes::retriable(c) && !wanted.contains(&i64::from(c))
    })
}

/// Whether an answer carries an error code a client retries ([`error_codes::retriable`]).
fn carries_retriable(raw: &Value) -> bool {
    let mut codes = Vec::new();
    error_codes(raw, &mut codes);
    codes.into_iter().any(error_codes::retriable)
}

fn error_codes(v: &Value, out: &mut Vec<i16>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.ends_with("error_code"), v.as_i64()) {
                    (true, Some(c)) => out.push(c as i16),
                    _ => error_codes(v, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|v| error_codes(v, out)),
        _ => {}
    }
}

/// The conditions (field path → value) an answer does not meet, each as "path is X, expected
/// Y": what `until` waits out and `expect` reports. A missing field is null.
fn mismatches(conditions: &BTreeMap<String, toml::Value>, raw: &Value) -> Vec<String> {
    conditions
        .iter()
        .filter_map(|(path, expected)| {
            let expected = serde_json::to_value(expected).unwrap_or(Value::Null);
            let found = response::at(raw, path).cloned().unwrap_or(Value::Null);
            (found != expected).then(|| format!("{path} is {found}, expected {expected}"))
        })
        .collect()
}

/// Told the name of each scenario as it finishes.
pub type Done = Arc<dyn Fn(&str) + Send + Sync>;

/// Replaces the answers of the scenario's `timing` steps by a note: what a snapshot keeps,
/// and what is compared with recorded answers, of a step whose answer depends on timing.
pub fn mask_timing(scenario: &Scenario, transcript: &mut Transcript) {
    for step in scenario.steps.iter().filter(|s| s.timing.is_some()) {
        let why = step.timing.as_deref().unwrap_or_default();
        for record in transcript.steps.iter_mut().filter(|r| {
            r.step == step.name
                || r.step
                    .strip_prefix(&step.name)
                    .is_some_and(|v| v.starts_with("@v"))
        }) {
            if matches!(record.outcome, Outcome::Response(_)) {
                record.outcome = Outcome::Skipped(format!(
                    "not recorded: the answer depends on timing ({why})"
                ));
            }
        }
    }
}

/// Whether a scenario kills or restarts brokers, or is a security scenario: it then runs alone
/// on its target, after the others, so that no other scenario meets a broker it took down or
/// a permission it gave (the users are the same for every scenario, and an ACL such as WRITE
/// on any topic changes what the idempotent InitProducerId answers everyone).
pub fn disrupts(scenario: &Scenario) -> bool {
    scenario
        .steps
        .iter()
        .any(|s| s.kill.is_some() || s.restart.is_some())
        || scenario.secured()
}

/// Runs `scenarios` on one target, `jobs` at a time (each makes its names unique, so they
/// share the broker; a scenario waiting long on an answer lends its slot to another), then
/// those that kill brokers one at a time, telling `done` as each finishes; the transcripts
/// come back in the scenarios' order, one per scenario, whatever the target did.
pub async fn run_many(
    scenarios: &[&Scenario],
    target: &Arc<Running>,
    deadline: Duration,
    jobs: usize,
    provisioning: Option<Provisioning>,
    done: Done,
) -> Vec<Transcript> {
    let (alone, shared): (Vec<_>, Vec<_>) =
        scenarios.iter().enumerate().partition(|(_, s)| disrupts(s));
    let mut out = Vec::new();
    {
        let batch = shared;
        let permits = Arc::new(Semaphore::new(jobs.max(1)));
        let mut set = tokio::task::JoinSet::new();
        for (i, s) in batch {
            let (s, target, permits, done, provisioning) = (
                (*s).clone(),
                target.clone(),
                permits.clone(),
                done.clone(),
                provisioning.clone(),
            );
            set.spawn(async move {
                let held = permits.clone().acquire_owned().await.ok();
                let slot = Slot {
                    permits: Some(permits),
                    held,
                };
                let t = run_in_slot(&s, &target, deadline, slot, provisioning).await;
                done(&s.name);
                (i, t)
            });
        }
        while let Some(joined) = set.join_next().await {
            match joined {
                Ok(done) => out.push(done),
                // A scenario task panicked: a harness bug, shown as it is.
                Err(e) => std::panic::resume_unwind(e.into_panic()),
            }
        }
    }
    // One after the other, never lending a slot: a scenario that kills a broker must not meet
    // another's kill, nor another meet its dead broker.
    for (i, s) in alone {
        let t = run_in_slot(s, target, deadline, Slot::unlimited(), provisioning.clone()).await;
        done(&s.name);
        out.push((i, t));
    }
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, t)| t).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn mismatches_name_each_condition_an_answer_misses() {
        let raw = json!({"error_code": 51, "results": [{"code": 0}]});
        let mut conditions = BTreeMap::new();
        conditions.insert("results.0.code".to_owned(), toml::Value::Integer(0));
        assert!(mismatches(&conditions, &raw).is_empty());
        conditions.insert("error_code".to_owned(), toml::Value::Integer(0));
        conditions.insert("missing".to_owned(), toml::Value::Integer(1));
        assert_eq!(
            mismatches(&conditions, &raw),
            [
                "error_code is 51, expected 0",
                "missing is null, expected 1"
            ]
        );
    }
}
