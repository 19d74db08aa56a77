//! OffsetCommit and OffsetFetch, on the offset store and the group coordinator's member checks.

use kafka_protocol::messages::offset_commit_response::{
    OffsetCommitResponsePartition, OffsetCommitResponseTopic,
};
use kafka_protocol::messages::offset_fetch_response::{
    OffsetFetchResponseGroup, OffsetFetchResponsePartition, OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic, OffsetFetchResponseTopics,
};
use kafka_protocol::messages::*;

use super::{sb, Ctx};
use crate::auth::{Operation, Resource};
use crate::errors;
use crate::storage::offsets::Committed;

/// Answers OffsetCommit.
pub fn commit(ctx: &Ctx, req: OffsetCommitRequest) -> OffsetCommitResponse {
    let state = &ctx.state;
    let group_id = req.group_id.0.to_string();
    // Errors of the whole request, answered on every partition.
    let request_error = if !ctx.allowed(Operation::Read, Resource::Group(&group_id)) {
        Some(errors::GROUP_AUTHORIZATION_FAILED)
    } else if ctx.version == 0 {
        // v0 stored offsets in ZooKeeper; Apache 3.7 in KRaft answers every partition
        // UNSUPPORTED_VERSION (scenario group-commit-during-rebalance).
        Some(errors::UNSUPPORTED_VERSION)
    } else {
        None
    };
    // The group coordinator's verdict, for the partitions that pass their own checks (topic
    // authorization and existence come first, as Apache's KafkaApis checks them).
    let group_error = if request_error.is_some() {
        errors::NONE
    } else if group_id.is_empty() {
        errors::INVALID_GROUP_ID
    } else if !state.membership.owns(&group_id) {
        errors::NOT_COORDINATOR
    } else {
        state.groups.validate_commit(
            &group_id,
            &req.member_id,
            req.group_instance_id.as_deref(),
            req.generation_id_or_member_epoch,
        )
    };
    let mut to_commit = Vec::new();
    let mut topics = Vec::new();
    for t in &req.topics {
        let name = t.name.0.to_string();
        let topic_ok = ctx.allowed(Operation::Read, Resource::Topic(&name));
        let mut partitions = Vec::new();
        for p in &t.partitions {
            let code = if let Some(code) = request_error {
                code
            } else if !topic_ok {
                errors::TOPIC_AUTHORIZATION_FAILED
            } else if state.partition(&name, p.partition_index).is_none() {
                errors::UNKNOWN_TOPIC_OR_PARTITION
            } else if group_error != errors::NONE {
                group_error
            } else {
                let leader_epoch = match ctx.version >= 6 {
                    true => p.committed_leader_epoch,
                    false => -1,
                };
                let metadata = p.committed_metadata.as_deref();
                match Committed::from_commit(p.committed_offset, leader_epoch, metadata) {
                    Ok(c) => {
                        to_commit.push(((name.clone(), p.partition_index), c));
                        errors::NONE
                    }
                    Err(code) => code,
                }
            };
            partitions.push(
                OffsetCommitResponsePartition::default()
                    .with_partition_index(p.partition_index)
                    .with_error_code(code),
            );
        }
        topics.push((t.name.clone(), partitions));
    }
    let stored = match to_commit.is_empty() {
        true => Ok(()),
        false => state.offsets.lock().commit(&group_id, to_commit),
    };
    if let Err(e) = &stored {
        tracing::warn!(group = %group_id, error = %e, "offset commit failed");
    }
    let topics = topics
        .into_iter()
        .map(|(name, partitions)| {
            let partitions = match &stored {
                Ok(()) => partitions,
                Err(_) => partitions
                    .into_iter()
                    .map(|p| match p.error_code {
                        errors::NONE => p.with_error_code(errors::COORDINATOR_NOT_AVAILABLE),
                        _ => p,
                    })
                    .collect(),
            };
            OffsetCommitResponseTopic::default()
                .with_name(name)
                .with_partitions(partitions)
        })
        .collect();
    OffsetCommitResponse::default().with_topics(topics)
}

type Fetched = Vec<(String, Vec<(i32, i64, i32, Option<String>, i16)>)>;

fn fetch_group(
    ctx: &Ctx,
    group_id: &str,
    topics: Option<Vec<(String, Vec<i32>)>>,
    require_stable: bool,
) -> (i16, Fetched) {
    if !ctx.allowed(Operation::Describe, Resource::Group(group_id)) {
        return (errors::GROUP_AUTHORIZATION_FAILED, Vec::new());
    }
    if !ctx.state.membership.owns(group_id) {
        return (errors::NOT_COORDINATOR, Vec::new());
    }
    let mut store = ctx.state.offsets.lock();
    let result: std::io::Result<Fetched> = match topics {
        None => store.all(group_id).map(|all| {
            let mut by_topic: std::collections::BTreeMap<String, Vec<_>> = Default::default();
            for ((t, p), c) in all {
                by_topic.entry(t).or_default().push((
                    p,
                    c.offset,
                    c.leader_epoch,
                    c.metadata,
                    errors::NONE,
                ));
            }
            by_topic.into_iter().collect()
        }),
        Some(list) => list
            .into_iter()
            .map(|(t, ps)| {
                let allowed = ctx.allowed(Operation::Describe, Resource::Topic(&t));
                let parts = ps
                    .into_iter()
                    .map(|p| match allowed {
                        false => Ok((
                            p,
                            -1,
                            -1,
                            Some(String::new()),
                            errors::TOPIC_AUTHORIZATION_FAILED,
                        )),
                        true => store.get(group_id, &t, p).map(|c| match c {
                            Some(c) => (p, c.offset, c.leader_epoch, c.metadata, errors::NONE),
                            None => (p, -1, -1, Some(String::new()), errors::NONE),
                        }),
                    })
                    .collect::<std::io::Result<Vec<_>>>()?;
                Ok((t, parts))
            })
            .collect(),
    };
    match result {
        Ok(mut r) => {
            if require_stable {
                for (t, parts) in r.iter_mut() {
                    for part in parts.iter_mut() {
                        // Under the same lock as the read: a commit of staged offsets is
                        // seen whole or not at all.
                        if store.has_staged(group_id, t, part.0) {
                            *part = (
                                part.0,
                                -1,
                                -1,
                                Some(String::new()),
                                errors::UNSTABLE_OFFSET_COMMIT,
                            );
                        }
                    }
                }
            }
            (errors::NONE, r)
        }
        Err(e) => {
            tracing::warn!(group = %group_id, error = %e, "offset fetch failed");
            (errors::COORDINATOR_NOT_AVAILABLE, Vec::new())
        }
    }
}

/// Answers OffsetFetch (v0–7 one group, v8+ a batch of groups).
pub fn fetch(ctx: &Ctx, req: OffsetFetchRequest) -> OffsetFetchResponse {
    let epoch = |e: i32| if ctx.version >= 5 { e } else { -1 };
    if ctx.version >= 8 {
        let groups = req
            .groups
            .iter()
            .map(|g| {
                let topics = g.topics.as_ref().map(|ts| {
                    ts.iter()
                        .map(|t| (t.name.0.to_string(), t.partition_indexes.clone()))
                        .collect()
                });
                let (code, fetched) = fetch_group(ctx, &g.group_id, topics, req.require_stable);
                OffsetFetchResponseGroup::default()
                    .with_group_id(g.group_id.clone())
                    .with_error_code(code)
                    .with_topics(
                        fetched
                            .into_iter()
                            .map(|(t, ps)| {
                                OffsetFetchResponseTopics::default()
                                    .with_name(TopicName(sb(&t)))
                                    .with_partitions(
                                        ps.into_iter()
                                            .map(|(p, o, e, m, c)| {
                                                OffsetFetchResponsePartitions::default()
                                                    .with_partition_index(p)
                                                    .with_committed_offset(o)
                                                    .with_committed_leader_epoch(epoch(e))
                                                    .with_metadata(m.map(|m| sb(&m)))
                                                    .with_error_code(c)
                                            })
                                            .collect(),
                                    )
                            })
                            .collect(),
                    )
            })
            .collect();
        return OffsetFetchResponse::default().with_groups(groups);
    }
    let topics = req.topics.as_ref().map(|ts| {
        ts.iter()
            .map(|t| (t.name.0.to_string(), t.partition_indexes.clone()))
            .collect()
    });
    let require_stable = ctx.version >= 7 && req.require_stable;
    let (code, fetched) = fetch_group(ctx, &req.group_id, topics, require_stable);
    let topics = fetched
        .into_iter()
        .map(|(t, ps)| {
            OffsetFetchResponseTopic::default()
                .with_name(TopicName(sb(&t)))
                .with_partitions(
                    ps.into_iter()
                        .map(|(p, o, e, m, c)| {
                            OffsetFetchResponsePartition::default()
                                .with_partition_index(p)
                                .with_committed_offset(o)
                                .with_committed_leader_epoch(epoch(e))
                                .with_metadata(m.map(|m| sb(&m)))
                                .with_error_code(if ctx.version < 2 && code != errors::NONE {
                                    code
                                } else {
                                    c
                                })
                        })
                        .collect(),
                )
        })
        .collect();
    let resp = OffsetFetchResponse::default().with_topics(topics);
    match ctx.version >= 2 {
        true => resp.with_error_code(code),
        false => resp,
    }
}
