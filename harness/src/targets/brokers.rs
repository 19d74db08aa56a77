//! A cluster's brokers as its own Metadata lists them: how cluster scenarios find the broker a
//! role names, whatever numbers and ports each cluster gave its brokers.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use kafka_protocol::messages::{ApiKey, MetadataRequest, RequestKind, ResponseKind};

use crate::wire::client::Connection;

/// The Metadata version asked: one every Apache 3.7 broker and kaas-ref serve, with broker
/// racks and no topic ids to give.
const VERSION: i16 = 9;

/// The brokers the broker at `bootstrap` lists (node id → address), within `deadline`.
/// `secured`: the broker wants a login first (the super user's).
pub async fn of(
    bootstrap: SocketAddr,
    deadline: Duration,
    secured: bool,
) -> Result<BTreeMap<i32, SocketAddr>, String> {
    let listed = advertised(bootstrap, deadline, secured).await?;
    Ok(listed
        .into_iter()
        .map(|(node, (_, addr))| (node, addr))
        .collect())
}

/// [`of`], with the host each broker is advertised under as the answer gives it (a name
/// where a kaas build advertises one: the answers a scenario reads name it so).
pub async fn advertised(
    bootstrap: SocketAddr,
    deadline: Duration,
    secured: bool,
) -> Result<BTreeMap<i32, (String, SocketAddr)>, String> {
    // An empty topic list: brokers only.
    let metadata = metadata(bootstrap, deadline, secured, Some(Vec::new())).await?;
    let mut nodes = BTreeMap::new();
    for broker in &metadata.brokers {
        let host = broker.host.to_string();
        let port = u16::try_from(broker.port)
            .map_err(|_| format!("broker {} lists port {}", broker.node_id.0, broker.port))?;
        let addr = resolve(&host, port, deadline)
            .await
            .map_err(|e| format!("broker {}: {e}", broker.node_id.0))?;
        nodes.insert(broker.node_id.0, (host, addr));
    }
    Ok(nodes)
}

/// The partitions the broker at `bootstrap` lists as not whole: without a leader, or with
/// fewer replicas in sync than assigned (`topic-partition: isr 1 of 3`), internal topics
/// included. A restarted broker that is listed again may still be catching up; until it is
/// back in sync, a write that needs every in-sync replica can wait on it.
pub async fn unsettled(
    bootstrap: SocketAddr,
    deadline: Duration,
    secured: bool,
) -> Result<Vec<String>, String> {
    // No topic list: every topic.
    let metadata = metadata(bootstrap, deadline, secured, None).await?;
    Ok(short_partitions(&metadata, true))
}

/// What keeps broker `node` from being back in sync, as the broker at `peer` sees it: not
/// listed among the brokers, or a replica of a partition whose ISR it is not in. A broker just
/// resumed from a pause answers Metadata from a cache as old as its pause, so it is asked of
/// its peers.
pub async fn lagging(
    peer: SocketAddr,
    node: i32,
    deadline: Duration,
    secured: bool,
) -> Result<Vec<String>, String> {
    let metadata = metadata(peer, deadline, secured, None).await?;
    Ok(lagging_in(&metadata, node))
}

fn lagging_in(metadata: &kafka_protocol::messages::MetadataResponse, node: i32) -> Vec<String> {
    if !metadata.brokers.iter().any(|b| b.node_id.0 == node) {
        return vec![format!("broker {node} not listed")];
    }
    let mut behind = Vec::new();
    for topic in &metadata.topics {
        let name = topic.name.as_ref().map_or("?", |n| n.0.as_str());
        for p in &topic.partitions {
            let replica = p.replica_nodes.iter().any(|r| r.0 == node);
            if replica && !p.isr_nodes.iter().any(|r| r.0 == node) {
                behind.push(format!("{name}-{}: {node} not in sync", p.partition_index));
            }
        }
    }
    behind
}

/// Of `topics`, the partitions (or topics) the broker at `bootstrap` does not yet serve: a
/// topic unknown or in error, a partition without a leader. Empty once a client can use them
/// all, as it can only a moment after they were created.
pub async fn unsettled_topics(
    bootstrap: SocketAddr,
    deadline: Duration,
    secured: bool,
    topics: &[String],
) -> Result<Vec<String>, String> {
    use kafka_protocol::messages::{metadata_request::MetadataRequestTopic, TopicName};
    let asked = topics
        .iter()
        .map(|t| MetadataRequestTopic::default().with_name(Some(TopicName(t.clone().into()))))
        .collect();
    let metadata = metadata(bootstrap, deadline, secured, Some(asked)).await?;
    let mut short: Vec<String> = metadata
        .topics
        .iter()
        .filter(|t| t.error_code != 0 || t.partitions.is_empty())
        .map(|t| {
            let name = t.name.as_ref().map_or("?", |n| n.0.as_str());
            format!("{name}: {}", crate::wire::error_codes::label(t.error_code))
        })
        .collect();
    short.extend(short_partitions(&metadata, false));
    Ok(short)
}

/// How many partitions the broker at `bootstrap` lists for `topic` (an internal topic's count
/// is the broker's setting, which only its Metadata tells).
pub async fn partition_count(
    bootstrap: SocketAddr,
    deadline: Duration,
    secured: bool,
    topic: &str,
) -> Result<i32, String> {
    Ok(leaders(bootstrap, deadline, secured, topic).await?.len() as i32)
}

/// The leader of each partition of `topic` (partition → node id, -1 for none), as the broker
/// at `bootstrap` lists them: where an exactly-once finding says which broker wrote a
/// partition's markers, beside the transaction's coordinator.
pub async fn leaders(
    bootstrap: SocketAddr,
    deadline: Duration,
    secured: bool,
    topic: &str,
) -> Result<BTreeMap<i32, i32>, String> {
    use kafka_protocol::messages::{metadata_request::MetadataRequestTopic, TopicName};
    let asked =
        vec![MetadataRequestTopic::default().with_name(Some(TopicName(topic.to_owned().into())))];
    let metadata = metadata(bootstrap, deadline, secured, Some(asked)).await?;
    match metadata.topics.first() {
        Some(t) if t.error_code == 0 && !t.partitions.is_empty() => Ok(t
            .partitions
            .iter()
            .map(|p| (p.partition_index, p.leader_id.0))
            .collect()),
        Some(t) => Err(format!(
            "Metadata of {topic}: {}",
            crate::wire::error_codes::label(t.error_code)
        )),
        None => Err(format!("Metadata lists no {topic}")),
    }
}

/// The node id of the broker at `bootstrap`, as its own Metadata names it (the broker listed
/// at that address; else the first listed).
pub async fn node_id_at(
    bootstrap: SocketAddr,
    deadline: Duration,
    secured: bool,
) -> Result<i32, String> {
    let metadata = metadata(bootstrap, deadline, secured, Some(Vec::new())).await?;
    let at = |b: &&kafka_protocol::messages::metadata_response::MetadataResponseBroker| {
        b.port == i32::from(bootstrap.port())
            && (b.host.as_str() == bootstrap.ip().to_string() || b.host.as_str() == "localhost")
    };
    metadata
        .brokers
        .iter()
        .find(at)
        .or_else(|| metadata.brokers.first())
        .map(|b| b.node_id.0)
        .ok_or_else(|| "Metadata lists no broker".to_owned())
}

/// A connection to the broker at `addr`, logged in as the super user where it is `secured`.
pub(crate) async fn connect(
    addr: SocketAddr,
    deadline: Duration,
    secured: bool,
) -> Result<Connection, String> {
    match secured {
        true => crate::wire::sasl::super_user(addr, deadline).await,
        false => Connection::connect(addr, deadline)
            .await
            .map_err(|e| e.to_string()),
    }
}

/// The address of a broker a Metadata or FindCoordinator answer names, within `deadline`.
pub(crate) async fn resolve(
    host: &str,
    port: u16,
    deadline: Duration,
) -> Result<SocketAddr, String> {
    tokio::time::timeout(deadline, tokio::net::lookup_host((host, port)))
        .await
        .map_err(|_| format!("resolving {host} took longer than {deadline:?}"))?
        .map_err(|e| format!("{host}:{port}: {e}"))?
        .next()
        .ok_or_else(|| format!("{host}:{port} resolves to nothing"))
}

/// The Metadata answer of the broker at `bootstrap` for `topics`, within `deadline`.
async fn metadata(
    bootstrap: SocketAddr,
    deadline: Duration,
    secured: bool,
    topics: Option<Vec<kafka_protocol::messages::metadata_request::MetadataRequestTopic>>,
) -> Result<kafka_protocol::messages::MetadataResponse, String> {
    let mut conn = connect(bootstrap, deadline, secured)
        .await
        .map_err(|e| format!("Metadata: {e}"))?;
    let request = RequestKind::Metadata(MetadataRequest::default().with_topics(topics));
    let answer = conn
        .send(ApiKey::Metadata, VERSION, &request)
        .await
        .map_err(|e| format!("Metadata v{VERSION} got {e}"))?;
    match answer {
        ResponseKind::Metadata(metadata) => Ok(metadata),
        _ => Err(format!("Metadata v{VERSION} got another API's answer")),
    }
}

/// The partitions of one Metadata answer without a leader and, with `in_sync`, those with fewer
/// replicas in sync than assigned: [`unsettled`]'s judgement, and with `in_sync` off
/// [`unsettled_topics`]'s.
fn short_partitions(
    metadata: &kafka_protocol::messages::MetadataResponse,
    in_sync: bool,
) -> Vec<String> {
    let mut short = Vec::new();
    for topic in &metadata.topics {
        let name = topic.name.as_ref().map_or("?", |n| n.0.as_str());
        for p in &topic.partitions {
            let at = format!("{name}-{}", p.partition_index);
            if p.leader_id.0 < 0 {
                short.push(format!("{at}: no leader"));
            } else if in_sync && p.isr_nodes.len() < p.replica_nodes.len() {
                short.push(format!(
                    "{at}: isr {} of {}",
                    p.isr_nodes.len(),
                    p.replica_nodes.len()
                ));
            }
        }
    }
    short
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::metadata_response::{
        MetadataResponsePartition, MetadataResponseTopic,
    };
    use kafka_protocol::messages::{BrokerId, MetadataResponse, TopicName};
    use kafka_protocol::protocol::StrBytes;

    fn partition(
        index: i32,
        leader: i32,
        replicas: &[i32],
        isr: &[i32],
    ) -> MetadataResponsePartition {
        MetadataResponsePartition::default()
            .with_partition_index(index)
            .with_leader_id(BrokerId(leader))
            .with_replica_nodes(replicas.iter().copied().map(BrokerId).collect())
            .with_isr_nodes(isr.iter().copied().map(BrokerId).collect())
    }

    #[test]
    fn a_partition_without_leader_or_with_a_short_isr_is_unsettled() {
        let topic = MetadataResponseTopic::default()
            .with_name(Some(TopicName(StrBytes::from_static_str(
                "__transaction_state",
            ))))
            .with_partitions(vec![
                partition(0, 1, &[0, 1, 2], &[0, 1, 2]),
                partition(1, 2, &[0, 1, 2], &[1, 2]),
                partition(2, -1, &[0, 1, 2], &[]),
            ]);
        let metadata = MetadataResponse::default().with_topics(vec![topic]);
        assert_eq!(
            short_partitions(&metadata, true),
            [
                "__transaction_state-1: isr 2 of 3",
                "__transaction_state-2: no leader"
            ]
        );
        // Where only a leader is waited for (topics just created), a short ISR is not short.
        assert_eq!(
            short_partitions(&metadata, false),
            ["__transaction_state-2: no leader"]
        );
    }

    #[test]
    fn a_broker_is_lagging_until_listed_and_in_every_isr_it_belongs_to() {
        use kafka_protocol::messages::metadata_response::MetadataResponseBroker;
        let topic = MetadataResponseTopic::default()
            .with_name(Some(TopicName(StrBytes::from_static_str("t"))))
            .with_partitions(vec![
                partition(0, 0, &[0, 1, 2], &[0, 2]),
                partition(1, 0, &[0, 2], &[0, 2]),
            ]);
        let brokers = |ids: &[i32]| {
            ids.iter()
                .map(|id| MetadataResponseBroker::default().with_node_id(BrokerId(*id)))
                .collect()
        };
        let metadata = MetadataResponse::default()
            .with_topics(vec![topic])
            .with_brokers(brokers(&[0, 1, 2]));
        assert_eq!(lagging_in(&metadata, 1), ["t-0: 1 not in sync"]);
        // In the ISR of both partitions it replicates: back. Broker 1 is not t-1's replica.
        assert!(lagging_in(&metadata, 2).is_empty());
        let unlisted = metadata.clone().with_brokers(brokers(&[0, 2]));
        assert_eq!(lagging_in(&unlisted, 1), ["broker 1 not listed"]);
    }

    #[test]
    fn whole_partitions_are_settled() {
        let topic = MetadataResponseTopic::default()
            .with_name(Some(TopicName(StrBytes::from_static_str("t"))))
            .with_partitions(vec![partition(0, 0, &[0, 1, 2], &[2, 0, 1])]);
        let metadata = MetadataResponse::default().with_topics(vec![topic]);
        assert!(short_partitions(&metadata, true).is_empty());
    }
}
