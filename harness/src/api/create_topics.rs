//! CreateTopics: how a scenario step's fields become its request, and its answer the tree a
//! transcript records.

use kafka_protocol::messages::*;
use serde_json::{json, Value};

use super::request::Fields;
use super::response::by_name;

/// CreateTopics's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "CreateTopics",
    key: ApiKey::CreateTopics,
    cap: None,
    codes: &[],
    build,
    read: super::Reading::Typed(read),
};

/// The request at `version` from a step's fields.
fn build(_version: i16, f: &Fields<'_>) -> Result<RequestKind, String> {
    Ok(RequestKind::CreateTopics(
        CreateTopicsRequest::default()
            .with_timeout_ms(f.i32("timeout_ms", 30_000)?)
            .with_validate_only(f.boolean("validate_only", false)?)
            .with_topics(
                f.tables("topics")?
                    .iter()
                    .map(|t| {
                        Ok(create_topics_request::CreatableTopic::default()
                            .with_name(TopicName(t.str("name")?))
                            .with_num_partitions(t.i32("num_partitions", 1)?)
                            .with_replication_factor(t.i16("replication_factor", 1)?)
                            .with_configs(
                                t.tables("configs")?
                                    .iter()
                                    .map(|c| {
                                        Ok(create_topics_request::CreatableTopicConfig::default()
                                            .with_name(c.str("name")?)
                                            .with_value(c.opt_str("value")?))
                                    })
                                    .collect::<Result<_, String>>()?,
                            ))
                    })
                    .collect::<Result<_, String>>()?,
            ),
    ))
}

/// The answer at `version` as a tree, when it is CreateTopics's.
fn read(response: &ResponseKind, _version: i16) -> Option<Value> {
    let ResponseKind::CreateTopics(r) = response else {
        return None;
    };
    Some(json!({
        "throttle_time_ms": r.throttle_time_ms,
        "topics": by_name(r.topics.iter().map(|t| {
            let mut topic = json!({
                "name": t.name.0.as_str(),
                "error_code": t.error_code,
                "num_partitions": t.num_partitions,
                "replication_factor": t.replication_factor,
            });
            // A refusal's message says which config or value was wrong; a success's is
            // null on both brokers (kept out so that every transcript need not carry it).
            if t.error_code != 0 {
                topic["error_message"] = json!(t.error_message.as_ref().map(|m| m.as_str()));
            }
            topic
        }).collect()),
    }))
}
