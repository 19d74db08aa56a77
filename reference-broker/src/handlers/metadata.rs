//! Metadata: one broker, leader of every partition; unknown topics auto-created when the
//! request and the configuration allow it, answered LEADER_NOT_AVAILABLE that first time, as
//! Apache answers while its controller creates the topic.

use kafka_protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::{BrokerId, MetadataRequest, MetadataResponse, TopicName};
use uuid::Uuid;

use super::{sb, Ctx};
use crate::auth::{Operation, Resource};
use crate::errors;
use std::sync::atomic::Ordering;

use crate::storage::topics::{valid_topic_name, Topic, CONSUMER_OFFSETS};

/// Apache's "authorized operations not requested" value.
const OPS_NOT_REQUESTED: i32 = i32::MIN;

fn describe(ctx: &Ctx, name: &str, topic: &Topic) -> MetadataResponseTopic {
    describe_partitions(ctx, name, topic.id, topic.partitions.len() as i32)
}

/// `__consumer_offsets` as Apache shows it: internal, `offsets.topic.num.partitions`
/// partitions led by this broker, an id stable for the cluster.
fn describe_offsets_topic(ctx: &Ctx) -> MetadataResponseTopic {
    // Derived from the cluster id, so it is the same on every answer and after a restart.
    let fnv = |seed: u64| {
        format!("{}/{CONSUMER_OFFSETS}", ctx.state.cluster_id)
            .bytes()
            .fold(seed, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            })
    };
    let id = uuid::Builder::from_u128(
        u128::from(fnv(0xcbf2_9ce4_8422_2325)) << 64 | u128::from(fnv(0x8422_2325_cbf2_9ce4)),
    )
    .with_version(uuid::Version::Random)
    .into_uuid();
    describe_partitions(
        ctx,
        CONSUMER_OFFSETS,
        id,
        ctx.state.config.offsets_topic_partitions,
    )
    .with_is_internal(true)
}

fn describe_partitions(ctx: &Ctx, name: &str, id: Uuid, count: i32) -> MetadataResponseTopic {
    let membership = &ctx.state.membership;
    // On a shared volume every broker can serve every partition: all are replicas, those
    // alive in sync, the rest offline (a broker alone: itself).
    let alive = membership.alive();
    let replicas: Vec<BrokerId> = membership.peers().iter().map(|p| BrokerId(p.id)).collect();
    let isr: Vec<BrokerId> = replicas
        .iter()
        .copied()
        .filter(|b| alive.contains(&b.0))
        .collect();
    let offline: Vec<BrokerId> = replicas
        .iter()
        .copied()
        .filter(|b| !alive.contains(&b.0))
        .collect();
    let partitions = (0..count)
        .map(|p| {
            let partition = MetadataResponsePartition::default()
                .with_partition_index(p)
                .with_leader_epoch(0)
                .with_replica_nodes(replicas.clone())
                .with_isr_nodes(isr.clone())
                .with_offline_replicas(if ctx.version >= 5 {
                    offline.clone()
                } else {
                    Vec::new()
                });
            match membership.leader(name, p) {
                Some(leader) => partition.with_leader_id(BrokerId(leader.id)),
                None => partition
                    .with_error_code(errors::LEADER_NOT_AVAILABLE)
                    .with_leader_id(BrokerId(-1)),
            }
        })
        .collect();
    MetadataResponseTopic::default()
        .with_name(Some(TopicName(sb(name))))
        .with_topic_id(if ctx.version >= 10 { id } else { Uuid::nil() })
        .with_partitions(partitions)
        .with_topic_authorized_operations(OPS_NOT_REQUESTED)
}

fn error_topic(ctx: &Ctx, name: Option<&str>, id: Uuid, code: i16) -> MetadataResponseTopic {
    MetadataResponseTopic::default()
        .with_error_code(code)
        .with_name(name.map(|n| TopicName(sb(n))))
        .with_topic_id(if ctx.version >= 10 { id } else { Uuid::nil() })
        .with_topic_authorized_operations(OPS_NOT_REQUESTED)
}

/// Answers Metadata.
pub fn handle(ctx: &Ctx, req: MetadataRequest) -> MetadataResponse {
    let state = &ctx.state;
    // v0: an empty list means all topics; v1+: null means all.
    let requested = match (&req.topics, ctx.version) {
        (None, _) => None,
        (Some(t), 0) if t.is_empty() => None,
        (Some(t), _) => Some(t.clone()),
    };
    let allow_create =
        state.config.auto_create_topics && (ctx.version < 4 || req.allow_auto_topic_creation);
    let mut topics = Vec::new();
    // What this one request may still auto-create (`crate::limits`): topics beyond it are
    // answered as unknown, uncreated.
    let limits = &state.config.limits;
    let mut creatable = limits.max_topics_per_request.min(
        usize::try_from(
            limits.max_partitions_per_request / i64::from(state.config.default_partitions.max(1)),
        )
        .unwrap_or(usize::MAX),
    );
    match requested {
        None => {
            if state.offsets_topic.load(Ordering::Relaxed)
                && ctx.allowed(Operation::Describe, Resource::Topic(CONSUMER_OFFSETS))
            {
                topics.push(describe_offsets_topic(ctx));
            }
            let registry = state.topics.read();
            for (name, topic) in registry.iter() {
                if ctx.allowed(Operation::Describe, Resource::Topic(name)) {
                    topics.push(describe(ctx, name, topic));
                }
            }
        }
        Some(list) => {
            for t in list {
                let name = match (&t.name, t.topic_id) {
                    (Some(n), _) => n.0.to_string(),
                    (None, id) => {
                        let registry = state.topics.read();
                        match registry.by_id(id) {
                            Some((n, _)) => n.to_owned(),
                            None => {
                                topics.push(error_topic(ctx, None, id, errors::UNKNOWN_TOPIC_ID));
                                continue;
                            }
                        }
                    }
                };
                if !ctx.allowed(Operation::Describe, Resource::Topic(&name)) {
                    topics.push(error_topic(
                        ctx,
                        Some(&name),
                        Uuid::nil(),
                        errors::TOPIC_AUTHORIZATION_FAILED,
                    ));
                    continue;
                }
                if name == CONSUMER_OFFSETS {
                    let shown = state.offsets_topic.load(Ordering::Relaxed);
                    topics.push(match shown {
                        true => describe_offsets_topic(ctx),
                        false
                            if allow_create
                                && ctx.allowed(Operation::Create, Resource::Cluster) =>
                        {
                            state.offsets_topic.store(true, Ordering::Relaxed);
                            error_topic(ctx, Some(&name), Uuid::nil(), errors::LEADER_NOT_AVAILABLE)
                        }
                        false => error_topic(
                            ctx,
                            Some(&name),
                            Uuid::nil(),
                            errors::UNKNOWN_TOPIC_OR_PARTITION,
                        ),
                    });
                    continue;
                }
                let mut registry = state.topics.write();
                if let Some(topic) = registry.get(&name) {
                    topics.push(describe(ctx, &name, topic));
                } else if !valid_topic_name(&name) {
                    topics.push(error_topic(
                        ctx,
                        Some(&name),
                        Uuid::nil(),
                        errors::INVALID_TOPIC_EXCEPTION,
                    ));
                } else if allow_create
                    && creatable > 0
                    && ctx.allowed(Operation::Create, Resource::Cluster)
                {
                    creatable -= 1;
                    let code = match registry.create(&name, state.config.default_partitions) {
                        Ok(_) => errors::LEADER_NOT_AVAILABLE,
                        Err(e) => {
                            tracing::warn!(topic = %name, error = %e, "auto-create failed");
                            errors::UNKNOWN_TOPIC_OR_PARTITION
                        }
                    };
                    topics.push(error_topic(ctx, Some(&name), Uuid::nil(), code));
                } else {
                    topics.push(error_topic(
                        ctx,
                        Some(&name),
                        Uuid::nil(),
                        errors::UNKNOWN_TOPIC_OR_PARTITION,
                    ));
                }
            }
        }
    }
    let me = state.config.broker_id;
    // The brokers up now, as Apache lists its registered brokers.
    let alive = state.membership.alive();
    let brokers = state
        .membership
        .peers()
        .iter()
        .filter(|p| alive.contains(&p.id))
        .map(|p| {
            MetadataResponseBroker::default()
                .with_node_id(BrokerId(p.id))
                .with_host(sb(&p.addr.ip().to_string()))
                .with_port(i32::from(p.addr.port()))
        })
        .collect();
    MetadataResponse::default()
        .with_brokers(brokers)
        .with_cluster_id(if ctx.version >= 2 {
            Some(sb(&state.cluster_id))
        } else {
            None
        })
        .with_controller_id(BrokerId(if ctx.version >= 1 { me } else { -1 }))
        .with_topics(topics)
        .with_cluster_authorized_operations(OPS_NOT_REQUESTED)
}
