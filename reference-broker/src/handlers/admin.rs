//! CreateTopics and DeleteTopics.

use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::create_topics_response::CreatableTopicResult;
use kafka_protocol::messages::delete_topics_response::DeletableTopicResult;
use kafka_protocol::messages::{
    CreateTopicsRequest, CreateTopicsResponse, DeleteTopicsRequest, DeleteTopicsResponse, TopicName,
};
use uuid::Uuid;

use super::{sb, Ctx};
use crate::auth::{Operation, Resource};
use crate::errors;
use crate::storage::topic_config::TopicConfig;
use crate::storage::topics::CreateError;

/// Answers CreateTopics.
pub fn create_topics(ctx: &Ctx, req: CreateTopicsRequest) -> CreateTopicsResponse {
    let state = &ctx.state;
    let limits = &state.config.limits;
    let partitions_of = |t: &CreatableTopic| match (t.num_partitions, t.assignments.len()) {
        (-1, 0) => state.config.default_partitions,
        (-1, n) => i32::try_from(n).unwrap_or(i32::MAX),
        (n, _) => n,
    };
    let total: i64 = req
        .topics
        .iter()
        .map(|t| i64::from(partitions_of(t).max(0)))
        .sum();
    let whole_request = limits.check_create_request(req.topics.len(), total);
    let mut results = Vec::new();
    for t in req.topics {
        let name = t.name.0.to_string();
        let mut result = CreatableTopicResult::default()
            .with_name(t.name.clone())
            .with_num_partitions(-1)
            .with_replication_factor(-1);
        let fail = |r: CreatableTopicResult, code, msg: String| {
            r.with_error_code(code).with_error_message(Some(sb(&msg)))
        };
        // Over a bound for the whole request: every topic refused, nothing created.
        if let Err(refusal) = &whole_request {
            results.push(fail(result, refusal.code, refusal.message.clone()));
            continue;
        }
        let partitions = partitions_of(&t);
        let replication = if t.replication_factor == -1 {
            ctx.state.config.default_replication_factor
        } else {
            t.replication_factor
        };
        let registered = ctx.state.membership.alive().len();
        if !ctx.allowed(Operation::Create, Resource::Cluster)
            && !ctx.allowed(Operation::Create, Resource::Topic(&name))
        {
            results.push(fail(
                result,
                errors::TOPIC_AUTHORIZATION_FAILED,
                "Authorization failed.".into(),
            ));
            continue;
        }
        if replication < 1 || replication as usize > registered {
            results.push(fail(
                result,
                errors::INVALID_REPLICATION_FACTOR,
                format!("Unable to replicate the partition {replication} time(s): The target replication factor of {replication} cannot be reached because only {registered} broker(s) are registered."),
            ));
            continue;
        }
        let configs: Vec<(String, Option<String>)> = t
            .configs
            .iter()
            .map(|c| (c.name.to_string(), c.value.as_ref().map(|v| v.to_string())))
            .collect();
        let mut registry = state.topics.write();
        // Apache's order: the name, existence and partitions, then the configs (scenarios
        // topic-config-*).
        let outcome = registry
            .validate(&name, partitions)
            .and_then(|()| {
                limits
                    .check_topic(partitions, &configs)
                    .map_err(CreateError::Limit)
            })
            .and_then(|()| Ok(TopicConfig::from_request(&configs)?))
            .and_then(|config| match req.validate_only {
                true => Ok(Uuid::nil()),
                false => registry
                    .create_with(&name, partitions, config)
                    .map(|t| t.id),
            });
        match outcome {
            Ok(id) => {
                result = result
                    .with_topic_id(if ctx.version >= 7 { id } else { Uuid::nil() })
                    .with_num_partitions(partitions)
                    .with_replication_factor(replication);
                if ctx.version >= 5 {
                    result = result.with_configs(Some(Vec::new()));
                }
                results.push(result);
            }
            Err(e) => {
                let code = match &e {
                    CreateError::Exists(_) => errors::TOPIC_ALREADY_EXISTS,
                    CreateError::InvalidName(_) => errors::INVALID_TOPIC_EXCEPTION,
                    CreateError::InvalidPartitions(_) => errors::INVALID_PARTITIONS,
                    CreateError::InvalidConfig(_) => errors::INVALID_CONFIG,
                    CreateError::Limit(refusal) => refusal.code,
                    CreateError::Io(_) => errors::KAFKA_STORAGE_ERROR,
                };
                results.push(fail(result, code, e.to_string()));
            }
        }
    }
    if ctx.version < 1 {
        results = results
            .into_iter()
            .map(|r| r.with_error_message(None))
            .collect();
    }
    CreateTopicsResponse::default().with_topics(results)
}

/// Answers DeleteTopics.
pub fn delete_topics(ctx: &Ctx, req: DeleteTopicsRequest) -> DeleteTopicsResponse {
    let state = &ctx.state;
    let targets: Vec<(Option<String>, Uuid)> = if ctx.version >= 6 {
        req.topics
            .iter()
            .map(|t| (t.name.as_ref().map(|n| n.0.to_string()), t.topic_id))
            .collect()
    } else {
        req.topic_names
            .iter()
            .map(|n| (Some(n.0.to_string()), Uuid::nil()))
            .collect()
    };
    let too_many = crate::limits::check_count(
        "Topics in one DeleteTopics",
        targets.len(),
        state.config.limits.max_topics_per_request,
        "max-topics-per-request",
    );
    let mut responses = Vec::new();
    for (name, id) in targets {
        if let Err(refusal) = &too_many {
            responses.push(
                DeletableTopicResult::default()
                    .with_name(name.map(|n| TopicName(sb(&n))))
                    .with_topic_id(id)
                    .with_error_code(refusal.code)
                    .with_error_message((ctx.version >= 5).then(|| sb(&refusal.message))),
            );
            continue;
        }
        let mut registry = state.topics.write();
        let name = match name {
            Some(n) => Some(n),
            None => registry.by_id(id).map(|(n, _)| n.to_owned()),
        };
        let mut r = DeletableTopicResult::default()
            .with_name(name.as_ref().map(|n| TopicName(sb(n))))
            .with_topic_id(if ctx.version >= 6 { id } else { Uuid::nil() });
        let code = match &name {
            None => errors::UNKNOWN_TOPIC_ID,
            Some(n) if !ctx.allowed(Operation::Delete, Resource::Topic(n)) => {
                errors::TOPIC_AUTHORIZATION_FAILED
            }
            Some(n) => match registry.delete(n) {
                Ok(Some(deleted)) => {
                    if ctx.version >= 6 {
                        r = r.with_topic_id(deleted);
                    }
                    errors::NONE
                }
                Ok(None) => errors::UNKNOWN_TOPIC_OR_PARTITION,
                Err(e) => {
                    tracing::warn!(error = %e, "delete failed");
                    errors::KAFKA_STORAGE_ERROR
                }
            },
        };
        responses.push(r.with_error_code(code));
    }
    DeleteTopicsResponse::default().with_responses(responses)
}
