//! A cluster's brokers as its own Metadata lists them: how cluster scenarios find the broker a
//! role names, whatever numbers and ports each cluster gave its brokers.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use kafka_protocol::messages::{ApiKey, MetadataRequest, RequestKind, ResponseKind};

use crate::client::Connection;

/// The Metadata version asked: one every Apache 3.7 broker and kaas-ref serve, with broker
/// racks and no topic ids to give.
const VERSION: i16 = 9;

/// The brokers the broker at `bootstrap` lists (node id → address), within `deadline`.
pub async fn of(
    bootstrap: SocketAddr,
    deadline: Duration,
) -> Result<BTreeMap<i32, SocketAddr>, String> {
    let mut conn = Connection::connect(bootstrap, deadline)
        .await
        .map_err(|e| format!("Metadata: {e}"))?;
    let request = RequestKind::Metadata(MetadataRequest::default().with_topics(Some(Vec::new())));
    let answer = conn
        .send(ApiKey::Metadata, VERSION, &request)
        .await
        .map_err(|e| format!("Metadata v{VERSION} got {e}"))?;
    let ResponseKind::Metadata(metadata) = answer else {
        return Err(format!("Metadata v{VERSION} got another API's answer"));
    };
    let mut nodes = BTreeMap::new();
    for broker in &metadata.brokers {
        let host = broker.host.to_string();
        let port = u16::try_from(broker.port)
            .map_err(|_| format!("broker {} lists port {}", broker.node_id.0, broker.port))?;
        let addr = tokio::time::timeout(deadline, tokio::net::lookup_host((host.as_str(), port)))
            .await
            .map_err(|_| format!("resolving {host} took longer than {deadline:?}"))?
            .map_err(|e| format!("broker {} at {host}:{port}: {e}", broker.node_id.0))?
            .next()
            .ok_or_else(|| {
                format!(
                    "broker {} at {host}:{port} resolves to nothing",
                    broker.node_id.0
                )
            })?;
        nodes.insert(broker.node_id.0, addr);
    }
    Ok(nodes)
}
