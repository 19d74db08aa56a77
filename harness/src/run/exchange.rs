//! One request of a step sent and its answer judged: built from the step's fields with the
//! variables substituted, sent (in the background, repeated, or again until its `until`
//! holds), and the answer recorded normalised, with its captures, roles and expectations.

use std::time::Duration;

use kafka_protocol::messages::ApiKey;
use serde_json::Value;

use super::conditions::{carries_retriable, decided_record, final_error, mismatches, roles_missed};
use super::slot::UNTIL_LENDS_AFTER;
use super::steps::InFlight;
use super::{Outcome, Run, StepRecord};
use crate::api::request::{self, substitute, Built, Var};
use crate::api::response;
use crate::scenario::Request;
use crate::wire::client::ClientError;
use crate::wire::error_codes;
use crate::wire::frame::{self, Decoded, Malformed};

/// How many other names `renames` tries.
const RENAMES: u32 = 32;

impl Run<'_> {
    /// Sends the step's request at `version` under `label` and records what came of it.
    pub(super) async fn send(
        &mut self,
        step: &Request,
        label: &str,
        api: ApiKey,
        version: i16,
        served: Option<(i16, i16)>,
    ) {
        let mut record = StepRecord {
            encoding: Vec::new(),
            step: label.to_owned(),
            api: step.api.clone(),
            version: Some(version),
            request: Value::Null,
            outcome: Outcome::Skipped(String::new()),
        };
        let fields = match self.fields(step) {
            Ok(fields) => fields,
            Err(e) => {
                // Only a capture that an earlier step could not make leaves a name undefined
                // (load-time checks see to the rest), and that step stopped the scenario.
                record.outcome = Outcome::Skipped(format!("not sent: {e}"));
                self.log.records.push(record);
                self.log.stop(label, format!("could not be built: {e}"));
                return;
            }
        };
        let request_value = serde_json::to_value(&fields).unwrap_or(Value::Null);
        record.request = self.normaliser.normalise(&request_value);
        let mut fields = fields;
        if api == ApiKey::Fetch {
            self.provisioned.rebase_fetch(&mut fields);
        }
        match served {
            Some((min, max)) if (min..=max).contains(&version) => {}
            // Sent all the same: what the target does with a version it does not list.
            _ if step.unserved.is_some() => {}
            other => {
                let (min, max) = other.unwrap_or((-1, -1));
                record.outcome = Outcome::Unsupported { min, max };
                self.log.records.push(record);
                return;
            }
        }
        let request = match request::build_body(api, version, &fields) {
            Ok(request) => request,
            Err(e) => {
                let unknown = matches!(e, request::BuildError::UnknownField { .. });
                let why = format!("cannot build {} v{version}: {e}", step.api);
                record.outcome = Outcome::Unsendable(why.clone());
                self.log.records.push(record);
                if unknown {
                    // A typo in the scenario: no verdict on a request other than the one meant.
                    self.log.stop(label, why);
                }
                return;
            }
        };
        if step.background {
            return self
                .send_in_background(step, label, api, version, request, record)
                .await;
        }
        if step.cut.is_some() {
            return self
                .send_and_cut(step, label, api, version, &request, record)
                .await;
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
            let met = !self.holds_expectations || mismatches(&step.expect, &raw).is_empty();
            if !last && met && until_failed.is_none() {
                continue;
            }
            let mut problem = until_failed;
            if !last && problem.is_none() {
                let broke = format!("broke its expectation at repetition {round} of {repeat}");
                self.log.fail(label, &broke);
                problem = Some(broke);
            }
            if let Some(first) = self.finish(step, label, raw, record) {
                problem.get_or_insert(first);
            }
            if let Some(problem) = problem {
                self.log.stop(label, problem);
            }
            return;
        }
    }

    /// Sends a background step's request on its connection, which the request holds until an
    /// await step (or the end of the scenario) lands its answer. A background step sends one
    /// version once, so its label is its name.
    async fn send_in_background(
        &mut self,
        step: &Request,
        label: &str,
        api: ApiKey,
        version: i16,
        request: Built,
        mut record: StepRecord,
    ) {
        let mut conn = match self.take_open(&step.connection).await {
            Ok(conn) => conn,
            Err(e) => {
                record.outcome = Outcome::NoAnswer(e.to_string());
                self.log.records.push(record);
                self.log.stop(label, format!("got no answer: {e}"));
                return;
            }
        };
        let answer = tokio::spawn(async move {
            let result = conn.exchange(api, version, request.body()).await;
            (conn, result)
        });
        self.in_flight.push(InFlight {
            request: step.clone(),
            label: label.to_owned(),
            version,
            record,
            answer,
        });
    }

    /// Writes the step's request and cuts its connection at once, reading no answer (`cut`):
    /// recorded as cut, with the scenario's reason. The connection's next use opens another.
    async fn send_and_cut(
        &mut self,
        step: &Request,
        label: &str,
        api: ApiKey,
        version: i16,
        request: &Built,
        mut record: StepRecord,
    ) {
        let conn = match self.take_open(&step.connection).await {
            Ok(conn) => conn,
            Err(e) => return self.no_answer(&step.connection, label, e, &mut record),
        };
        match self
            .slot
            .wait(conn.send_and_cut(api, version, request.body()))
            .await
        {
            Ok(()) => {
                record.outcome = Outcome::Cut(step.cut.clone().unwrap_or_default());
                self.log.records.push(record);
            }
            Err(e) => self.no_answer(&step.connection, label, e, &mut record),
        }
    }

    /// Sends the request, repeating it while `until` does not hold and could still come to
    /// hold. `None` when the target gave no usable answer (recorded as such, the scenario
    /// stopped); otherwise the answer and, when `until` gave up, why.
    async fn exchange(
        &mut self,
        step: &Request,
        label: &str,
        api: ApiKey,
        version: i16,
        request: &Built,
        record: &mut StepRecord,
    ) -> Option<(Value, Option<String>)> {
        let budget = Duration::from_millis(step.within_ms.unwrap_or(15_000));
        let started = tokio::time::Instant::now();
        let give_up = started + budget;
        let mut renamed: Option<Built> = None;
        let mut attempt = 0u32;
        let mut polls = 0u32;
        let outcome = loop {
            polls += 1;
            let sent = renamed.as_ref().unwrap_or(request);
            self.read_past = None;
            let result = self
                .send_on(&step.connection, api, version, sent.body())
                .await
                .or_else(|e| self.read_past(api, version, e));
            let raw = match result {
                Err(ClientError::Closed) if step.closes.is_some() => {
                    self.connections.forget(&step.connection);
                    record.outcome = Outcome::Closed(step.closes.clone().unwrap_or_default());
                    self.log.records.push(record.clone());
                    break None;
                }
                Ok(d) => {
                    let tree = self.answer_tree(&d, api, version);
                    record.encoding = d.notes;
                    tree
                }
                Err(e) => {
                    self.no_answer(&step.connection, label, e, record);
                    break None;
                }
            };
            // Closing is an expectation too: a target it does not hold is compared.
            if step.closes.is_some() && self.holds_expectations {
                let why = "the broker answered where the step expects it to close the connection";
                self.log.fail(label, why);
                break Some((raw, Some(why.to_owned())));
            }
            let roles_differ = roles_missed(&step.until_roles, &self.cluster.roles, &raw);
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
                    self.log.fail(label, &why);
                    break Some((raw, Some(why)));
                }
                match self.rename(var, attempt, step, api, version) {
                    Ok(r) => renamed = Some(r),
                    Err(e) => {
                        self.log.fail(label, &e);
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
                self.log.fail(label, &why);
                break Some((raw, Some(why)));
            }
            if let Some(missed) = decided_record(&raw, &step.until) {
                let why = format!(
                    "'until' cannot hold: the record it waits for is there with another value, and a record is not rewritten ({missed})"
                );
                self.log.fail(label, &why);
                break Some((raw, Some(why)));
            }
            if tokio::time::Instant::now() >= give_up {
                // What the last answer still missed, so a slow broker is told from a wrong one.
                let mut missed = mismatches(&step.until, &raw);
                missed.extend(roles_differ);
                let why = format!(
                    "'until' did not hold within {} ms (last answer: {})",
                    budget.as_millis(),
                    missed.join("; ")
                );
                self.log.fail(label, &why);
                break Some((raw, Some(why)));
            }
            if started.elapsed() >= UNTIL_LENDS_AFTER {
                self.slot.lend();
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        tracing::trace!(step = %label, target = %self.target.name, polls, elapsed_ms = started.elapsed().as_millis() as u64, "exchanged");
        self.slot.take_back().await;
        outcome
    }

    /// Gives the unique variable `var` its `attempt`-th other name and builds the step's
    /// request again with it: `renames` looks for a name the cluster places as `until_roles`
    /// asks (a group whose coordinator is not the transaction's, say).
    fn rename(
        &mut self,
        var: &str,
        attempt: u32,
        step: &Request,
        api: ApiKey,
        version: i16,
    ) -> Result<Built, String> {
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
        let fields = self.fields(step)?;
        request::build_body(api, version, &fields).map_err(|e| e.to_string())
    }

    /// The step's request fields with the scenario's variables substituted; why not, when one
    /// is undefined.
    fn fields(&self, step: &Request) -> Result<toml::Table, String> {
        match substitute(&toml::Value::Table(step.fields.clone()), &self.vars)? {
            toml::Value::Table(fields) => Ok(fields),
            _ => unreachable!("a table substitutes to a table"),
        }
    }

    /// The answer as a tree, its log offsets relative to where the scenario began when its
    /// topics are provisioned.
    pub(super) fn answer_tree(&self, decoded: &Decoded, api: ApiKey, version: i16) -> Value {
        let mut raw = response::tree(decoded, api, version);
        self.provisioned
            .rebase_answer(&format!("{api:?}"), &mut raw);
        raw
    }

    /// Records a request that got no usable answer and stops the scenario; the connection is
    /// unusable after it. A request the harness could not encode is the scenario's problem,
    /// the same on every target: recorded, and the scenario goes on.
    pub(super) fn no_answer(
        &mut self,
        connection: &str,
        label: &str,
        e: ClientError,
        record: &mut StepRecord,
    ) {
        self.connections.forget(connection);
        let cause = match e {
            ClientError::Encode { .. } => {
                record.outcome = Outcome::Unsendable(e.to_string());
                self.log.records.push(record.clone());
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
        self.log.records.push(record.clone());
        self.log.stop(label, cause);
    }

    /// Captures, checks the expectations and records the answer; the first problem, if any.
    pub(super) fn finish(
        &mut self,
        step: &Request,
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
                    // A value no transcript records reads as its variable where a later
                    // answer carries it.
                    if response::capture_only(&step.api, path) {
                        self.normaliser
                            .add_whole_name(s.clone(), format!("${{{var}}}"));
                    }
                    self.vars.insert(var.clone(), Var::Str(s.clone()));
                }
                _ => problems.push(format!("nothing to capture at '{path}'")),
            }
        }
        for (role, path) in &step.roles {
            match response::at(&raw, path).and_then(Value::as_i64) {
                Some(node) if node >= 0 => {
                    self.cluster.roles.insert(role.clone(), node as i32);
                    self.normaliser.bind_role(node, role);
                }
                _ => problems.push(format!("no node id at '{path}' to bind the role '{role}'")),
            }
        }
        for (path, role) in &step.expect_roles {
            let holder = self.cluster.roles.get(role).copied();
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
        if self.holds_expectations {
            problems.extend(mismatches(&step.expect, &raw));
        }
        for p in &problems {
            self.log.fail(label, p);
        }
        let mut shown = self.normaliser.normalise(&raw);
        response::strip_capture_only(&step.api, &mut shown);
        for path in &step.not_compared {
            response::replace_at(&mut shown, path, Value::String("not compared".into()));
        }
        record.outcome = match self.read_past.take() {
            // Read past a framing defect: recorded as the malformed answer it is, with the
            // answer so read.
            Some(malformed) => Outcome::Malformed(Malformed {
                read_past_answer: Some(shown),
                ..malformed
            }),
            None => Outcome::Response(shown),
        };
        self.log.records.push(record);
        problems.into_iter().next()
    }

    /// An answer malformed only in its response header's version, read under the other
    /// version (kept to be recorded as malformed when the step records its answer), where the
    /// run reads past such answers; any other error as it is.
    fn read_past(
        &mut self,
        api: ApiKey,
        version: i16,
        e: ClientError,
    ) -> Result<Decoded, ClientError> {
        let ClientError::Malformed(m) = e else {
            return Err(e);
        };
        let Some((decoded, as_header)) =
            frame::read_past(api, version, &m).filter(|_| self.reads_past)
        else {
            return Err(ClientError::Malformed(m));
        };
        self.read_past = Some(Malformed {
            read_past_as_header: Some(as_header),
            ..*m
        });
        Ok(decoded)
    }
}
