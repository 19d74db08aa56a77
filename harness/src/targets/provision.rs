//! Provisioned topics created on a target that can create them: with `--provisioned-topics`,
//! a run compares a broker whose topics an operator created against one (Apache, kaas-ref)
//! that has never heard of them, so kconform creates them there first. A target that refuses
//! CreateTopics is told so and left alone: its operator provisions it (`kconform topics`).

use std::collections::BTreeMap;

use kafka_protocol::messages::ApiKey;
use serde::Serialize;

use super::{Running, TargetError};
use crate::wire::error_codes;

/// A topic a run needs: the form `kconform topics --json` prints and `kaas-ref --topics` reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Needed {
    /// Its fixed name.
    pub name: String,
    /// Partitions.
    pub partitions: i32,
    /// Topic configs it must have (name → value), when it needs any.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub configs: BTreeMap<String, String>,
}

/// What creating the provisioned topics on a target came to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Provisioned {
    /// Topics created now.
    pub created: usize,
    /// Topics that were there already (TOPIC_ALREADY_EXISTS).
    pub existed: usize,
    /// Why the target creates none, when it refuses (an authorization or policy error, or no
    /// CreateTopics at all): the topics must have been provisioned by its operator.
    pub refused: Option<String>,
    /// Topics it could not create for another reason: `name: code`.
    pub failed: Vec<String>,
}

impl Provisioned {
    /// One line for the report: "created 12 provisioned topics (3 there already)".
    pub fn summary(&self) -> String {
        if let Some(why) = &self.refused {
            return format!("creates no topics ({why}): the provisioned topics must exist there");
        }
        let mut line = format!(
            "created {} provisioned topic(s) ({} there already)",
            self.created, self.existed
        );
        if !self.failed.is_empty() {
            line.push_str(&format!(
                "; could not create {}: {}",
                self.failed.len(),
                self.failed.join(", ")
            ));
        }
        line
    }
}

/// The topics per CreateTopics request (Apache takes any number; a broker with a smaller
/// frame limit takes these).
const PER_REQUEST: usize = 50;

impl Running {
    /// Creates `needed` on the target (replicated as the target's default, -1), counting those
    /// that exist already; a refusal is reported, not an error.
    pub async fn provision(
        &self,
        needed: &[Needed],
        deadline: std::time::Duration,
    ) -> Result<Provisioned, TargetError> {
        let (mut conn, served) = self.versions(deadline).await?;
        let mut out = Provisioned::default();
        // v4+ takes replication factor -1: the broker's default, a cluster's replication.
        let version = match Running::version_to_send(&served, ApiKey::CreateTopics, 4, 7) {
            Ok(version) => version,
            Err(why) => {
                out.refused = Some(why);
                return Ok(out);
            }
        };
        for chunk in needed.chunks(PER_REQUEST) {
            let fields = request_fields(chunk, deadline);
            let request = crate::api::request::build(ApiKey::CreateTopics, version, &fields)
                .map_err(|e| TargetError::Provision(e.to_string()))?;
            let answer = conn
                .send(ApiKey::CreateTopics, version, &request)
                .await
                .map_err(|e| TargetError::Provision(format!("CreateTopics got {e}")))?;
            let raw = crate::api::response::to_value(&answer, version);
            for (i, topic) in chunk.iter().enumerate() {
                let code = crate::api::response::at(&raw, &format!("topics.{i}.error_code"))
                    .and_then(serde_json::Value::as_i64)
                    .unwrap_or(-1) as i16;
                match code {
                    0 => out.created += 1,
                    36 => out.existed += 1,
                    refusal if super::refuses_creation(refusal) => {
                        out.refused = Some(format!(
                            "CreateTopics answered {}",
                            error_codes::label(code)
                        ));
                        return Ok(out);
                    }
                    other => {
                        out.failed
                            .push(format!("{}: {}", topic.name, error_codes::label(other)))
                    }
                }
            }
        }
        if out.created > 0 {
            self.await_leaders(needed, deadline).await?;
        }
        Ok(out)
    }

    /// Deletes `names` on the target (topics kconform made for itself and no longer needs);
    /// how many it deleted. A broker that refuses DeleteTopics, or any topic it could not
    /// delete, is an error naming why.
    pub async fn delete_topics(
        &self,
        names: &[String],
        deadline: std::time::Duration,
    ) -> Result<usize, TargetError> {
        use kafka_protocol::messages::{
            delete_topics_request::DeleteTopicState, DeleteTopicsRequest, RequestKind,
            ResponseKind, TopicName,
        };
        let (mut conn, served) = self.versions(deadline).await?;
        let version = Running::version_to_send(&served, ApiKey::DeleteTopics, 1, 6)
            .map_err(TargetError::Provision)?;
        let mut deleted = 0;
        for chunk in names.chunks(PER_REQUEST) {
            let topic_names = chunk.iter().map(|n| TopicName(n.clone().into()));
            let request = DeleteTopicsRequest::default()
                .with_timeout_ms(deadline.as_millis().min(30_000) as i32);
            // v6 names each topic in a record of its own (it may give an id instead).
            let request = match version >= 6 {
                true => request.with_topics(
                    topic_names
                        .map(|n| DeleteTopicState::default().with_name(Some(n)))
                        .collect(),
                ),
                false => request.with_topic_names(topic_names.collect()),
            };
            let answer = conn
                .send(
                    ApiKey::DeleteTopics,
                    version,
                    &RequestKind::DeleteTopics(request),
                )
                .await
                .map_err(|e| TargetError::Provision(format!("DeleteTopics got {e}")))?;
            let ResponseKind::DeleteTopics(answer) = answer else {
                return Err(TargetError::Provision(
                    "DeleteTopics: another API's answer".into(),
                ));
            };
            let refused: Vec<String> = answer
                .responses
                .iter()
                .filter(|r| r.error_code != 0)
                .map(|r| {
                    let name = r.name.as_ref().map_or("?", |n| n.0.as_str());
                    format!("{name}: {}", error_codes::label(r.error_code))
                })
                .collect();
            if !refused.is_empty() {
                return Err(TargetError::Provision(format!(
                    "could not delete {}",
                    refused.join(", ")
                )));
            }
            deleted += answer.responses.len();
        }
        Ok(deleted)
    }

    /// Waits (within `deadline`) until every partition of `needed` has a leader: a client that
    /// asks for a topic created a moment ago can be told NOT_LEADER_OR_FOLLOWER.
    async fn await_leaders(
        &self,
        needed: &[Needed],
        deadline: std::time::Duration,
    ) -> Result<(), TargetError> {
        let names: Vec<String> = needed.iter().map(|n| n.name.clone()).collect();
        let end = std::time::Instant::now() + deadline;
        loop {
            let short = super::brokers::unsettled_topics(self.addr, deadline, self.secured, &names)
                .await
                .map_err(TargetError::Provision)?;
            match short.first() {
                None => return Ok(()),
                Some(first) if std::time::Instant::now() >= end => {
                    return Err(TargetError::Provision(format!(
                        "{} partition(s) still without a leader after {deadline:?}, {first} among them",
                        short.len()
                    )))
                }
                Some(_) => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
            }
        }
    }
}

/// The CreateTopics request of `topics`.
fn request_fields(topics: &[Needed], deadline: std::time::Duration) -> toml::Table {
    let topics: Vec<toml::Value> = topics
        .iter()
        .map(|t| {
            let configs: Vec<toml::Value> = t
                .configs
                .iter()
                .map(|(name, value)| {
                    toml::Value::Table(toml::Table::from_iter([
                        ("name".to_owned(), toml::Value::from(name.as_str())),
                        ("value".to_owned(), toml::Value::from(value.as_str())),
                    ]))
                })
                .collect();
            toml::Value::Table(toml::Table::from_iter([
                ("name".to_owned(), toml::Value::from(t.name.as_str())),
                ("num_partitions".to_owned(), toml::Value::from(t.partitions)),
                ("replication_factor".to_owned(), toml::Value::from(-1)),
                ("configs".to_owned(), toml::Value::Array(configs)),
            ]))
        })
        .collect();
    toml::Table::from_iter([
        ("topics".to_owned(), toml::Value::Array(topics)),
        (
            "timeout_ms".to_owned(),
            toml::Value::from(deadline.as_millis().min(30_000) as i64),
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_names_every_topic_with_its_partitions_and_configs() {
        let needed = [Needed {
            name: "t-x-kconform".into(),
            partitions: 3,
            configs: BTreeMap::from([("cleanup.policy".into(), "compact".into())]),
        }];
        let fields = request_fields(&needed, std::time::Duration::from_secs(35));
        let built = crate::api::request::build(ApiKey::CreateTopics, 7, &fields).unwrap();
        let kafka_protocol::messages::RequestKind::CreateTopics(built) = built else {
            panic!("a CreateTopics request: {built:?}");
        };
        assert_eq!(built.topics[0].name.0.as_str(), "t-x-kconform");
        assert_eq!(built.topics[0].replication_factor, -1);
        assert_eq!(built.topics[0].configs[0].value.as_deref(), Some("compact"));
        assert_eq!(fields["timeout_ms"].as_integer(), Some(30_000));
        let t = &fields["topics"].as_array().unwrap()[0];
        assert_eq!(t["num_partitions"].as_integer(), Some(3));
        assert_eq!(t["configs"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn the_version_sent_is_the_highest_served_or_the_reason_there_is_none() {
        let served = [(ApiKey::CreateTopics as i16, 0, 3)];
        assert_eq!(
            Running::version_to_send(&served, ApiKey::CreateTopics, 1, 7),
            Ok(3)
        );
        assert_eq!(
            Running::version_to_send(&served, ApiKey::CreateTopics, 4, 7),
            Err("it serves CreateTopics v0-3 only".into())
        );
        assert_eq!(
            Running::version_to_send(&served, ApiKey::DescribeConfigs, 0, 4),
            Err("it does not serve DescribeConfigs".into())
        );
    }

    #[test]
    fn a_summary_says_what_was_done_or_why_not() {
        let done = Provisioned {
            created: 2,
            existed: 1,
            ..Provisioned::default()
        };
        assert_eq!(
            done.summary(),
            "created 2 provisioned topic(s) (1 there already)"
        );
        let refused = Provisioned {
            refused: Some("CreateTopics answered 29 TOPIC_AUTHORIZATION_FAILED".into()),
            ..Provisioned::default()
        };
        assert!(refused.summary().contains("must exist there"));
    }
}
