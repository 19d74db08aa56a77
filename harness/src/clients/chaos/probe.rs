//! Why chaos workers never began: kconform asks the broker what a transactional client asks
//! first (FindCoordinator for a transactional id, at every version from v1, the first with a
//! key type, to the highest the broker lists), reads
//! each answer as Apache's parser reads it, and names each it cannot read or that refuses. A
//! client says only that it timed out ("Timed out waiting for operation to finish"); an
//! INCONCLUSIVE run then says which answer stopped it.

use std::net::SocketAddr;
use std::time::Duration;

use kafka_protocol::messages::find_coordinator_request::FindCoordinatorRequest;
use kafka_protocol::messages::{ApiKey, RequestKind, ResponseKind};
use kafka_protocol::protocol::StrBytes;

use crate::compare::signature::first_reading;
use crate::wire::client::{ClientError, Connection};

/// What kconform's own first requests found wrong on the broker at `addr`, one line each
/// (`FindCoordinator v2: answer unreadable: the response header is v1, but ...`); empty when
/// every answer read well and found a coordinator. Each version is asked on a connection of
/// its own (an unreadable answer leaves its connection out of step), each wait bounded by
/// `deadline`.
pub async fn first_calls(addr: SocketAddr, deadline: Duration) -> Vec<String> {
    let versions = match Connection::connect(addr, deadline).await {
        Ok(mut conn) => match conn.api_versions().await {
            Ok(listed) => listed
                .into_iter()
                .find(|(api, ..)| *api == ApiKey::FindCoordinator as i16)
                // v0 has no key type: it finds group coordinators only.
                .map(|(_, low, high)| low.max(1)..=high),
            Err(e) => return vec![format!("ApiVersions: {e}")],
        },
        Err(e) => return vec![e.to_string()],
    };
    let Some(versions) = versions else {
        return vec!["ApiVersions lists no FindCoordinator".into()];
    };
    let mut found = Vec::new();
    for version in versions {
        if let Some(wrong) = find_coordinator(addr, version, deadline).await {
            found.push(format!("FindCoordinator v{version}: {wrong}"));
        }
    }
    found
}

/// What is wrong with the answer to a FindCoordinator of a transactional id at `version`, if
/// anything.
async fn find_coordinator(addr: SocketAddr, version: i16, deadline: Duration) -> Option<String> {
    let key = StrBytes::from_static_str("kconform-chaos-probe");
    let request = match version {
        ..=3 => FindCoordinatorRequest::default()
            .with_key(key)
            .with_key_type(1),
        _ => FindCoordinatorRequest::default()
            .with_coordinator_keys(vec![key])
            .with_key_type(1),
    };
    let mut conn = match Connection::connect(addr, deadline).await {
        Ok(conn) => conn,
        Err(e) => return Some(e.to_string()),
    };
    let answer = conn
        .send(
            ApiKey::FindCoordinator,
            version,
            &RequestKind::FindCoordinator(request),
        )
        .await;
    match answer {
        Ok(ResponseKind::FindCoordinator(r)) => {
            let code = match r.coordinators.first() {
                Some(c) if version >= 4 => c.error_code,
                _ => r.error_code,
            };
            (code != 0).then(|| format!("answered error {code}"))
        }
        Ok(_) => Some("answered with another API's response".into()),
        Err(ClientError::Malformed(m)) => {
            Some(format!("answer unreadable: {}", first_reading(&m.problem)))
        }
        Err(e) => Some(e.to_string()),
    }
}
