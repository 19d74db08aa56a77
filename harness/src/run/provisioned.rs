//! A run on a target whose topics are provisioned ([`super::topics`]): the scenario's topics
//! bound to their fixed names, its set-up CreateTopics replaced by asking where each partition
//! ends, and its offsets read relative to that.

use kafka_protocol::messages::ApiKey;
use serde_json::Value;

use super::topics::{self, Bases, Needed};
use super::{default_max, Outcome, Provisioning, Run};
use crate::api::{request, response};
use crate::scenario::{Request, Scenario};
use crate::wire::client::Body;
use crate::wire::error_codes;

/// The longest a provisioned partition's base waits for an earlier transaction's markers.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(15);

/// What a run does where topics are provisioned; nothing where they are not.
pub(super) struct Provisioned {
    /// How the target treats CreateTopics; `None` where topics are not provisioned.
    provisioning: Option<Provisioning>,
    /// The scenario's provisioned topics: var → what it needs.
    needed: Vec<(String, Needed)>,
    /// Where each of them ended when the scenario began.
    bases: Bases,
}

impl Provisioned {
    /// For `scenario`'s run, under `provisioning` (`None`: topics are not provisioned).
    pub(super) fn new(scenario: &Scenario, provisioning: Option<Provisioning>) -> Provisioned {
        let needed = match provisioning {
            Some(_) => topics::of(scenario),
            None => Vec::new(),
        };
        Provisioned {
            provisioning,
            needed,
            bases: Bases::new(),
        }
    }

    /// The fixed name of the topic `${var}`, when it is provisioned.
    pub(super) fn name_of(&self, var: &str) -> Option<&str> {
        let (_, needed) = self.needed.iter().find(|(v, _)| v == var)?;
        Some(&needed.name)
    }

    /// Whether the target's topics are provisioned.
    pub(super) fn active(&self) -> bool {
        self.provisioning.is_some()
    }

    /// Why CreateTopics cannot be judged on the target, when it cannot.
    pub(super) fn refused(&self) -> Option<&str> {
        self.provisioning.as_ref()?.refused.as_deref()
    }

    /// Where `topic`-`partition` ended when the scenario began (0 where topics are not
    /// provisioned): where a read-back starts.
    pub(super) fn base_of(&self, topic: &str, partition: i32) -> i64 {
        self.bases
            .get(&(topic.to_owned(), partition))
            .copied()
            .unwrap_or(0)
    }

    /// A Fetch's offsets made absolute ([`topics::rebase_fetch`]).
    pub(super) fn rebase_fetch(&self, fields: &mut toml::Table) {
        if !self.bases.is_empty() {
            topics::rebase_fetch(fields, &self.bases);
        }
    }

    /// An answer's offsets made relative ([`topics::rebase_answer`]).
    pub(super) fn rebase_answer(&self, api: &str, raw: &mut Value) {
        if !self.bases.is_empty() {
            topics::rebase_answer(api, raw, &self.bases);
        }
    }
}

impl Run<'_> {
    /// A set-up CreateTopics on a broker whose topics are provisioned: not sent; instead, where
    /// each partition's log ends now, so the scenario reads only what it writes.
    pub(super) async fn provisioned_setup(&mut self, name: &str, step: &Request) {
        let created: Vec<String> = step
            .fields
            .get("topics")
            .and_then(toml::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| crate::scenario::topic_var(t).map(str::to_owned))
            .collect();
        let needed: Vec<Needed> = self
            .provisioned
            .needed
            .iter()
            .filter(|(var, _)| created.contains(var))
            .map(|(_, n)| n.clone())
            .collect();
        let names: Vec<&str> = needed.iter().map(|n| n.name.as_str()).collect();
        let note = format!("not sent: provisioned beforehand ({})", names.join(", "));
        self.record_unsent(name, Some(step), Outcome::Provisioned(note));
        let version = match self.served(ApiKey::ListOffsets).await {
            Ok(Some((min, max))) if min <= 1 && max >= 1 => max.min(default_max(ApiKey::ListOffsets)),
            Ok(_) => {
                return self.log.stop(name, "needs ListOffsets v1+ to learn where the provisioned topics end, which the broker does not serve")
            }
            Err(e) => {
                return self.log.stop(
                    name,
                    format!("could not learn the versions served: ApiVersions got {e}"),
                )
            }
        };
        // On a cluster each partition is asked of its leader (another broker answers
        // NOT_LEADER_OR_FOLLOWER), on a connection of the step's own, routed there.
        let base = step
            .connection
            .split('@')
            .next()
            .unwrap_or(&step.connection);
        let clustered = self.target.brokers > 1 && self.nodes().await.is_ok();
        for n in needed {
            let leaders = match clustered {
                true => crate::targets::brokers::leaders(
                    self.target.addr,
                    self.deadline,
                    self.target.secured,
                    &n.name,
                )
                .await
                .unwrap_or_default(),
                false => Default::default(),
            };
            for partition in 0..n.partitions {
                let connection = match leaders.get(&partition) {
                    Some(node) if *node >= 0 => format!("{base}@{node}"),
                    _ => step.connection.clone(),
                };
                if let Err(e) = self
                    .learn_base(&connection, &n.name, partition, version)
                    .await
                {
                    return self.log.stop(name, e);
                }
            }
        }
    }

    /// Asks where one provisioned partition's log ends (ListOffsets, latest) and keeps it as
    /// the partition's base, once no earlier transaction holds it open: where the last stable
    /// offset is below the high watermark (an earlier scenario's or run's markers still to come,
    /// as a kaas cluster writes a peer's markers up to a poll later), the base would be taken
    /// before those markers and every offset after it read too high ("LSO 4, expected 2" on a
    /// second run). It waits up to [`SETTLE`] for the two to meet, then takes the high
    /// watermark.
    async fn learn_base(
        &mut self,
        connection: &str,
        topic: &str,
        partition: i32,
        version: i16,
    ) -> Result<(), String> {
        // A topic created a moment ago has a leader before the leader serves it (Apache
        // answers NOT_LEADER_OR_FOLLOWER or UNKNOWN_TOPIC_OR_PARTITION meanwhile).
        let give_up = std::time::Instant::now() + self.deadline;
        let settled_by = std::time::Instant::now() + SETTLE;
        let (code, offset) = loop {
            let (code, offset) = self
                .end_of(connection, (topic, partition), version, "read_uncommitted")
                .await?;
            let now = std::time::Instant::now();
            if matches!(code, Some(3 | 5 | 6)) && now < give_up {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
            if code == Some(0) && version >= 2 && now < settled_by {
                let (stable_code, stable) = self
                    .end_of(connection, (topic, partition), version, "read_committed")
                    .await?;
                if stable_code == Some(0) && stable < offset {
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    continue;
                }
            }
            break (code, offset);
        };
        match (code, offset) {
            (Some(0), Some(offset)) if offset >= 0 => {
                self.provisioned
                    .bases
                    .insert((topic.to_owned(), partition), offset);
                Ok(())
            }
            _ => {
                let code = code.map_or("no answer".into(), |c| error_codes::label(c as i16));
                Err(format!("found no provisioned partition {topic} {partition} ({code}): create the topics `kconform topics` lists"))
            }
        }
    }

    /// Where `topic`-`partition` ends for a reader of `isolation` (ListOffsets, latest): the
    /// error code and offset of the answer.
    async fn end_of(
        &mut self,
        connection: &str,
        (topic, partition): (&str, i32),
        version: i16,
        isolation: &str,
    ) -> Result<(Option<i64>, Option<i64>), String> {
        let mut fields: toml::Table = [
            ("topic".to_owned(), toml::Value::String(topic.to_owned())),
            (
                "partition".to_owned(),
                toml::Value::Integer(partition.into()),
            ),
            ("timestamp".to_owned(), toml::Value::Integer(-1)),
        ]
        .into_iter()
        .collect();
        // ListOffsets v2 is the first with an isolation level (before it, read_uncommitted).
        if version >= 2 {
            fields.insert(
                "isolation_level".to_owned(),
                toml::Value::String(isolation.to_owned()),
            );
        }
        let request = request::build(ApiKey::ListOffsets, version, &fields)
            .map_err(|e| format!("cannot ask where {topic} ends: {e}"))?;
        let answer = self
            .send_on(
                connection,
                ApiKey::ListOffsets,
                version,
                Body::Typed(&request),
            )
            .await;
        let raw = match answer {
            Ok(d) => response::tree(&d, ApiKey::ListOffsets, version),
            Err(e) => {
                self.connections.forget(connection);
                return Err(format!("could not learn where {topic} ends: {e}"));
            }
        };
        Ok((
            response::at(&raw, "topics.0.partitions.0.error_code").and_then(Value::as_i64),
            response::at(&raw, "topics.0.partitions.0.offset").and_then(Value::as_i64),
        ))
    }
}
