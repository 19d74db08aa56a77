//! Each step's action taken: a request sent at each version it names (or recorded as not
//! sent, and why), a pause, a background answer awaited, a broker killed, restarted, paused or resumed; and,
//! once the scenario has stopped, the steps after it recorded as skipped.

use std::time::Duration;

use kafka_protocol::messages::ApiKey;

use super::{default_max, labels, named_versions, Outcome, Run, StepRecord};
use crate::api::request;
use crate::scenario::{Action, Request, Step};
use crate::wire::client::{ClientError, Connection};
use crate::wire::frame;

/// A background step's request on its way: the answer arrives in `answer`, with the
/// connection it went out on.
pub(super) struct InFlight {
    pub(super) request: Request,
    /// The step's name (a background step sends one version once), which an await names.
    pub(super) label: String,
    pub(super) version: i16,
    pub(super) record: StepRecord,
    pub(super) answer: tokio::task::JoinHandle<(Connection, Result<frame::Decoded, ClientError>)>,
}

impl Run<'_> {
    /// Takes the step's action.
    pub(super) async fn step(&mut self, step: &Step) {
        let name = step.name.as_str();
        match &step.action {
            Action::Await(awaited) => {
                // Load-time checks make sure it is in flight.
                if let Some(i) = self.in_flight.iter().position(|f| &f.label == awaited) {
                    let pending = self.in_flight.remove(i);
                    self.land(pending).await;
                }
            }
            Action::Sleep(ms) => {
                tokio::time::sleep(Duration::from_millis(*ms)).await;
                self.log.action(name, Outcome::Slept(*ms));
            }
            Action::Broker(act, broker) => self.act(name, *act, broker).await,
            Action::Request(r) => self.request(name, r).await,
        }
    }

    /// Records every request of `step` as not sent (a pause is not taken, an await lands at
    /// the end).
    pub(super) fn skip(&mut self, step: &Step) {
        if matches!(step.action, Action::Await(_)) {
            return;
        }
        self.record_unsent(&step.name, step.request(), self.skipped_note());
    }

    /// Records every request a step would have sent (each version of a sweep under its own
    /// label, as a sent one is) as not sent, with `outcome`.
    pub(super) fn record_unsent(
        &mut self,
        name: &str,
        request: Option<&Request>,
        outcome: Outcome,
    ) {
        let api_name = request.map_or("", |r| r.api.as_str());
        let versions = request
            .and_then(|r| Some((request::api_key(&r.api)?, &r.version)))
            .and_then(|(api, version)| {
                named_versions(api, version, self.connections.served_if_known(api))
                    .ok()
                    .flatten()
            })
            .unwrap_or_default();
        if versions.is_empty() {
            return self.log.unsent(name, api_name, None, outcome);
        }
        for (label, version) in labels(name, &versions).iter().zip(&versions) {
            self.log
                .unsent(label, api_name, Some(*version), outcome.clone());
        }
    }

    /// A request step: routed to its broker, sent at each version it names (or the highest
    /// both sides serve), unless topics are provisioned and it creates or judges them.
    async fn request(&mut self, name: &str, request: &Request) {
        let routed = match self.routed(request).await {
            Ok(routed) => routed,
            Err(e) => return self.stop_unsent(name, request, format!("cannot be routed: {e}")),
        };
        let request = &routed;
        // Load-time checks make sure the API is known and the versions parse.
        let api_name = request.api.as_str();
        let Some(api) = request::api_key(api_name) else {
            let cause = format!("names an unknown API '{api_name}'");
            return self.stop_unsent(name, request, cause);
        };
        if api == ApiKey::CreateTopics && self.provisioned.active() {
            if request.creates_topics {
                return self.provisioned_setup(name, request).await;
            }
            if let Some(why) = self.provisioned.refused() {
                let note = format!("not sent: CreateTopics itself is not judged here ({why})");
                return self.record_unsent(name, Some(request), Outcome::Provisioned(note));
            }
        }
        let served = match self.served(api).await {
            Ok(served) => served,
            Err(e) => {
                let cause = format!("could not learn the versions served: ApiVersions got {e}");
                return self.stop_unsent(name, request, cause);
            }
        };
        let versions = match named_versions(api, &request.version, served) {
            Ok(Some(v)) => v,
            Ok(None) => vec![served.map_or(default_max(api), |(_, max)| max.min(default_max(api)))],
            Err(e) => return self.stop_unsent(name, request, e),
        };
        for (label, version) in labels(name, &versions).iter().zip(versions) {
            if self.log.stopped.is_some() {
                let why = "not sent: the scenario stopped at an earlier version of this step";
                let outcome = Outcome::Skipped(why.into());
                self.log.unsent(label, api_name, Some(version), outcome);
                continue;
            }
            self.send(request, label, api, version, served).await;
        }
    }

    /// Stops the scenario at this request step, with `cause`, and records its requests as
    /// not sent.
    fn stop_unsent(&mut self, name: &str, request: &Request, cause: impl std::fmt::Display) {
        self.log.stop(name, cause);
        self.record_unsent(name, Some(request), self.skipped_note());
    }

    /// The outcome of a request not sent because the scenario stopped (at the step named).
    fn skipped_note(&self) -> Outcome {
        let at = self
            .log
            .stopped
            .as_deref()
            .and_then(|s| s.split(' ').nth(1));
        Outcome::Skipped(format!(
            "not sent: the scenario stopped at {}",
            at.unwrap_or("an earlier step")
        ))
    }

    /// Records a background step's answer (its connection back in the pool unless it failed),
    /// with the step's captures and expectations. The client's deadline bounds the wait.
    pub(super) async fn land(&mut self, pending: InFlight) {
        let InFlight {
            request,
            label,
            version,
            mut record,
            answer,
        } = pending;
        match self.slot.wait(answer).await {
            Ok((conn, Ok(decoded))) => {
                self.connections.put(&request.connection, conn);
                let api = request::api_key(&request.api).unwrap_or(ApiKey::ApiVersions);
                let raw = self.answer_tree(&decoded, api, version);
                record.encoding = decoded.notes;
                if let Some(problem) = self.finish(&request, &label, raw, record) {
                    self.log.stop(&label, problem);
                } else if let Some(why) = &request.raced {
                    tracing::debug!(step = %label, "answered before the kill it raced");
                    if let Some(last) = self.log.records.last_mut() {
                        last.outcome = Outcome::Raced(why.clone());
                    }
                }
            }
            Ok((_, Err(ClientError::Closed))) if request.raced.is_some() => {
                // The broker died first: as good an outcome of the race as its answer.
                tracing::debug!(step = %label, "cut off by the kill it raced");
                self.connections.forget(&request.connection);
                record.outcome = Outcome::Raced(request.raced.clone().unwrap_or_default());
                self.log.records.push(record);
            }
            Ok((_, Err(e))) => self.no_answer(&request.connection, &label, e, &mut record),
            Err(e) => {
                let cause = format!("the request task failed: {e}");
                record.outcome = Outcome::NoAnswer(cause.clone());
                self.log.records.push(record);
                self.log.stop(&label, cause);
            }
        }
    }
}
