//! Runs a scenario against a target and records a transcript: each step's request and the
//! normalised answer, or why there was none.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use kafka_protocol::messages::ApiKey;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::client::{ClientError, Connection};
use crate::normalise::Normaliser;
use crate::request::{self, substitute, Var, Vars};
use crate::response;
use crate::scenario::{Scenario, Step, VersionSpec};
use crate::target::Running;

/// What one step got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The normalised response.
    Response(Value),
    /// The target does not serve this version of the API.
    Unsupported {
        /// Lowest version served (-1: the API is not served at all).
        min: i16,
        /// Highest version served.
        max: i16,
    },
    /// No answer: the connection closed, the deadline passed, or the answer did not decode.
    NoAnswer(String),
    /// A pause.
    Slept(u64),
}

/// One step as run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// Step name (with `@vN` when a version sweep expanded it).
    pub step: String,
    /// API name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api: String,
    /// Version sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<i16>,
    /// The request fields, with unique names back as placeholders.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub request: Value,
    /// What came back.
    pub outcome: Outcome,
}

/// A scenario's run against one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transcript {
    /// Scenario name.
    pub scenario: String,
    /// Target name.
    pub target: String,
    /// Steps, in order.
    pub steps: Vec<StepRecord>,
    /// Expectations that did not hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_expectations: Vec<String>,
}

/// Why a scenario could not be run at all.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A step that cannot be built.
    #[error("{scenario}, step '{step}': {reason}")]
    Step {
        /// Scenario.
        scenario: String,
        /// Step.
        step: String,
        /// Why.
        reason: String,
    },
    /// The target could not be reached.
    #[error("{scenario}: {reason}")]
    Connect {
        /// Scenario.
        scenario: String,
        /// Why.
        reason: ClientError,
    },
}

/// The highest version the harness builds a request at when a step names none: Apache 3.7's,
/// except AddPartitionsToTxn v4, the broker-only batched form, which scenarios do not describe.
fn default_max(api: ApiKey) -> i16 {
    match api {
        ApiKey::AddPartitionsToTxn => 3,
        // Fetch 13 and later name topics by id, which scenarios do not carry.
        ApiKey::Fetch => 12,
        // OffsetFetch 8 and later batch groups; scenarios name one group, so the plain shape.
        ApiKey::OffsetFetch => 7,
        other => apache_max(other),
    }
}

/// Apache 3.7's highest version of each scenario API: what "all" sweeps.
fn apache_max(api: ApiKey) -> i16 {
    match api {
        ApiKey::InitProducerId => 4,
        ApiKey::AddPartitionsToTxn => 4,
        ApiKey::AddOffsetsToTxn => 3,
        ApiKey::EndTxn => 3,
        ApiKey::WriteTxnMarkers => 1,
        ApiKey::TxnOffsetCommit => 3,
        ApiKey::CreateTopics => 7,
        ApiKey::FindCoordinator => 4,
        ApiKey::Metadata => 12,
        ApiKey::Produce => 10,
        ApiKey::Fetch => 16,
        ApiKey::ListOffsets => 8,
        ApiKey::OffsetFetch => 9,
        ApiKey::JoinGroup => 9,
        ApiKey::SyncGroup => 5,
        ApiKey::Heartbeat => 4,
        ApiKey::LeaveGroup => 5,
        ApiKey::OffsetCommit => 9,
        ApiKey::DeleteGroups => 2,
        ApiKey::ApiVersions => 3,
        _ => 0,
    }
}

/// A background step's request on its way: the answer arrives in `answer`, with the
/// connection it went out on.
struct InFlight {
    step: Step,
    label: String,
    version: i16,
    record: StepRecord,
    answer: tokio::task::JoinHandle<(
        Connection,
        Result<kafka_protocol::messages::ResponseKind, crate::client::ClientError>,
    )>,
}

struct Run<'a> {
    scenario: &'a Scenario,
    in_flight: Vec<InFlight>,
    target: &'a Running,
    deadline: Duration,
    connections: HashMap<String, Connection>,
    served: Option<HashMap<i16, (i16, i16)>>,
    vars: Vars,
    normaliser: Normaliser,
    records: Vec<StepRecord>,
    failed: Vec<String>,
}

/// Runs `scenario` against `target`; every wait is bounded by `deadline`.
pub async fn run(
    scenario: &Scenario,
    target: &Running,
    deadline: Duration,
) -> Result<Transcript, RunError> {
    let nonce = &uuid::Uuid::new_v4().simple().to_string()[..8];
    let mut vars = Vars::new();
    let mut names = Vec::new();
    for u in &scenario.unique {
        let actual = format!("{u}-{}-{nonce}", scenario.name);
        names.push((actual.clone(), format!("${{{u}}}")));
        vars.insert(u.clone(), Var::Str(actual));
    }
    let mut run = Run {
        scenario,
        in_flight: Vec::new(),
        target,
        deadline,
        connections: HashMap::new(),
        served: None,
        vars,
        normaliser: Normaliser::new(names),
        records: Vec::new(),
        failed: Vec::new(),
    };
    for step in &scenario.steps {
        run.step(step).await?;
    }
    // Background steps nobody awaited are recorded at the end, in the order they were sent.
    while !run.in_flight.is_empty() {
        let pending = run.in_flight.remove(0);
        run.land(pending).await;
    }
    Ok(Transcript {
        scenario: scenario.name.clone(),
        target: target.name.clone(),
        steps: run.records,
        failed_expectations: run.failed,
    })
}

impl Run<'_> {
    fn step_error(&self, step: &str, reason: impl Into<String>) -> RunError {
        RunError::Step {
            scenario: self.scenario.name.clone(),
            step: step.to_owned(),
            reason: reason.into(),
        }
    }

    async fn connection(&mut self, name: &str) -> Result<&mut Connection, RunError> {
        if !self.connections.contains_key(name) {
            let c = Connection::connect(self.target.addr, self.deadline)
                .await
                .map_err(|reason| RunError::Connect {
                    scenario: self.scenario.name.clone(),
                    reason,
                })?;
            self.connections.insert(name.to_owned(), c);
        }
        Ok(self.connections.get_mut(name).expect("inserted"))
    }

    /// The (min, max) versions the target serves of `api`, asking ApiVersions once per run.
    async fn served(&mut self, api: ApiKey) -> Result<Option<(i16, i16)>, RunError> {
        if self.served.is_none() {
            let versions = self
                .connection("__api_versions")
                .await?
                .api_versions()
                .await
                .map_err(|reason| RunError::Connect {
                    scenario: self.scenario.name.clone(),
                    reason,
                })?;
            self.served = Some(versions.into_iter().map(|(k, a, b)| (k, (a, b))).collect());
        }
        Ok(self
            .served
            .as_ref()
            .and_then(|served| served.get(&(api as i16)).copied()))
    }

    async fn step(&mut self, step: &Step) -> Result<(), RunError> {
        if let Some(awaited) = &step.await_step {
            // Load-time checks make sure it is in flight.
            if let Some(i) = self.in_flight.iter().position(|f| &f.step.name == awaited) {
                let pending = self.in_flight.remove(i);
                self.land(pending).await;
            }
            return Ok(());
        }
        if let Some(ms) = step.sleep_ms {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            self.records.push(StepRecord {
                step: step.name.clone(),
                api: String::new(),
                version: None,
                request: Value::Null,
                outcome: Outcome::Slept(ms),
            });
            return Ok(());
        }
        let api_name = step
            .api
            .as_deref()
            .ok_or_else(|| self.step_error(&step.name, "no api and no sleep_ms"))?;
        let api = request::api_key(api_name)
            .ok_or_else(|| self.step_error(&step.name, format!("unknown api '{api_name}'")))?;
        let served = self.served(api).await?;
        let versions: Vec<i16> = match &step.version {
            Some(VersionSpec::One(v)) => vec![*v],
            Some(VersionSpec::Named(n)) if n == "all" => (0..=apache_max(api)).collect(),
            Some(VersionSpec::Named(n)) => match n.split_once("..=") {
                Some((a, b)) => match (a.trim().parse::<i16>(), b.trim().parse::<i16>()) {
                    (Ok(a), Ok(b)) if a <= b => (a..=b).collect(),
                    _ => return Err(self.step_error(&step.name, format!("version range '{n}'"))),
                },
                None => {
                    return Err(self.step_error(
                        &step.name,
                        format!("version '{n}': use a number, \"all\" or \"A..=B\""),
                    ))
                }
            },
            None => match served {
                Some((_, max)) => vec![max.min(default_max(api))],
                None => vec![default_max(api)],
            },
        };
        let sweep = versions.len() > 1;
        for version in versions {
            let label = match sweep {
                true => format!("{}@v{version}", step.name),
                false => step.name.clone(),
            };
            self.send(step, &label, api, api_name, version, served)
                .await?;
        }
        Ok(())
    }

    async fn send(
        &mut self,
        step: &Step,
        label: &str,
        api: ApiKey,
        api_name: &str,
        version: i16,
        served: Option<(i16, i16)>,
    ) -> Result<(), RunError> {
        let fields = substitute(&toml::Value::Table(step.request.clone()), &self.vars)
            .map_err(|e| self.step_error(label, e))?;
        let toml::Value::Table(fields) = fields else {
            unreachable!("a table substitutes to a table")
        };
        let request_value = serde_json::to_value(&fields).unwrap_or(Value::Null);
        let request_value = self.normaliser.normalise(&request_value);
        let mut record = StepRecord {
            step: label.to_owned(),
            api: api_name.to_owned(),
            version: Some(version),
            request: request_value,
            outcome: Outcome::NoAnswer(String::new()),
        };
        match served {
            Some((min, max)) if (min..=max).contains(&version) => {}
            other => {
                let (min, max) = other.unwrap_or((-1, -1));
                record.outcome = Outcome::Unsupported { min, max };
                self.records.push(record);
                return Ok(());
            }
        }
        let request =
            request::build(api, version, &fields).map_err(|e| self.step_error(label, e))?;
        if step.background {
            self.connection(&step.connection).await?;
            let mut conn = self
                .connections
                .remove(&step.connection)
                .expect("connected above");
            let answer = tokio::spawn(async move {
                let result = conn.send(api, version, &request).await;
                (conn, result)
            });
            self.in_flight.push(InFlight {
                step: step.clone(),
                label: label.to_owned(),
                version,
                record,
                answer,
            });
            return Ok(());
        }
        let repeat = step.repeat.unwrap_or(1).max(1);
        for round in 1..=repeat {
            let Some(raw) = self
                .exchange(step, label, api, version, &request, &mut record)
                .await?
            else {
                return Ok(());
            };
            let last = round == repeat;
            if !last && mismatches(&step.expect, &raw).is_empty() {
                continue;
            }
            if !last {
                self.failed.push(format!(
                    "{label}: expectation broke at repetition {round} of {repeat}"
                ));
            }
            self.finish(step, label, raw, record);
            break;
        }
        Ok(())
    }

    /// Sends the request, repeating it while `until` does not hold; `None` when the target
    /// gave no answer (recorded as such).
    async fn exchange(
        &mut self,
        step: &Step,
        label: &str,
        api: ApiKey,
        version: i16,
        request: &kafka_protocol::messages::RequestKind,
        record: &mut StepRecord,
    ) -> Result<Option<Value>, RunError> {
        let give_up =
            tokio::time::Instant::now() + Duration::from_millis(step.within_ms.unwrap_or(15_000));
        loop {
            let result = self
                .connection(&step.connection)
                .await?
                .send(api, version, request)
                .await;
            let raw = match result {
                Ok(r) => response::to_value(&r, version),
                Err(e) => {
                    // The connection is unusable after a failure; the next step reconnects.
                    self.connections.remove(&step.connection);
                    record.outcome = Outcome::NoAnswer(e.to_string());
                    self.records.push(record.clone());
                    return Ok(None);
                }
            };
            if mismatches(&step.until, &raw).is_empty() {
                return Ok(Some(raw));
            }
            if tokio::time::Instant::now() >= give_up {
                self.failed
                    .push(format!("{label}: 'until' did not hold in time"));
                return Ok(Some(raw));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
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
        match answer.await {
            Ok((conn, Ok(response))) => {
                self.connections.insert(step.connection.clone(), conn);
                let raw = response::to_value(&response, version);
                self.finish(&step, &label, raw, record);
            }
            Ok((_, Err(e))) => {
                record.outcome = Outcome::NoAnswer(e.to_string());
                self.records.push(record);
            }
            Err(e) => {
                record.outcome = Outcome::NoAnswer(format!("the request task failed: {e}"));
                self.records.push(record);
            }
        }
    }

    /// Captures, checks the expectations and records the answer.
    fn finish(&mut self, step: &Step, label: &str, raw: Value, mut record: StepRecord) {
        for (var, path) in &step.capture {
            match response::at(&raw, path) {
                Some(Value::Number(n)) if n.as_i64().is_some() => {
                    self.vars
                        .insert(var.clone(), Var::Int(n.as_i64().expect("checked")));
                }
                Some(Value::String(s)) => {
                    self.vars.insert(var.clone(), Var::Str(s.clone()));
                }
                _ => self
                    .failed
                    .push(format!("{label}: nothing to capture at '{path}'")),
            }
        }
        for mismatch in mismatches(&step.expect, &raw) {
            self.failed.push(format!("{label}: {mismatch}"));
        }
        record.outcome = Outcome::Response(self.normaliser.normalise(&raw));
        self.records.push(record);
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

/// Why a batch of scenarios stopped: a scenario that could not run, with the target's post
/// mortem when it died.
#[derive(Debug, thiserror::Error)]
#[error("{error}{}", post_mortem.as_deref().map(|p| format!("\n{p}")).unwrap_or_default())]
pub struct BatchError {
    /// The first scenario error.
    pub error: RunError,
    /// The target's exit status and log, when it exited.
    pub post_mortem: Option<String>,
}

/// Runs `scenarios` on one target, `jobs` at a time (each makes its names unique, so they
/// share the broker), ticking `progress` as each finishes; the transcripts come back in the
/// scenarios' order.
pub async fn run_many(
    scenarios: &[&Scenario],
    target: &std::sync::Arc<Running>,
    deadline: Duration,
    jobs: usize,
    progress: &indicatif::ProgressBar,
) -> Result<Vec<Transcript>, BatchError> {
    let permits = std::sync::Arc::new(tokio::sync::Semaphore::new(jobs.max(1)));
    let mut set = tokio::task::JoinSet::new();
    for (i, s) in scenarios.iter().enumerate() {
        let (s, target, permits, progress) = (
            (*s).clone(),
            target.clone(),
            permits.clone(),
            progress.clone(),
        );
        set.spawn(async move {
            let _permit = permits.acquire_owned().await;
            progress.set_message(s.name.clone());
            let t = run(&s, &target, deadline).await;
            progress.inc(1);
            (i, t)
        });
    }
    let mut out = Vec::new();
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok((i, Ok(t))) => out.push((i, t)),
            Ok((_, Err(error))) => {
                return Err(BatchError {
                    error,
                    post_mortem: target.post_mortem(),
                })
            }
            // A scenario task panicked: a harness bug, shown as it is.
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }
    out.sort_by_key(|(i, _)| *i);
    Ok(out.into_iter().map(|(_, t)| t).collect())
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
