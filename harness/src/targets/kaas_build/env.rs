//! What each broker of a build cluster is told: kaas's variables, and the addresses they name.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;

use super::super::kube_api::Seat;
use super::{loopback, SERVICE};

/// The ports every broker uses, each on its own address.
#[derive(Debug, Clone, Copy)]
pub struct Ports {
    /// The Kafka listener.
    pub kafka: u16,
    /// `/readyz`.
    pub health: u16,
    /// The controller heartbeat (kaas's `KAAS_CONTROLLER_HEARTBEAT_ADDR` and
    /// `KAAS_PEER_HEARTBEAT_PORT`).
    pub heartbeat: u16,
}

/// `n` loopback addresses and three ports free on every one of them.
pub fn addresses(n: usize) -> Result<(Vec<Ipv4Addr>, Ports), String> {
    for attempt in 0..40u32 {
        let k = ((std::process::id() + attempt) % 250) as u8 + 1;
        let ips: Vec<Ipv4Addr> = (0..n).map(|i| loopback(k, i)).collect();
        let mut ports = Vec::new();
        while ports.len() < 3 {
            let Some(port) = free_on_all(&ips) else {
                break;
            };
            if !ports.contains(&port) {
                ports.push(port);
            }
        }
        if let [kafka, health, heartbeat] = ports[..] {
            return Ok((
                ips,
                Ports {
                    kafka,
                    health,
                    heartbeat,
                },
            ));
        }
    }
    Err("no port is free on every loopback address 127.77.K.1..N (does this machine route 127.0.0.0/8 to lo?)".into())
}

/// A port the OS picks on the first address that binds on every other too.
fn free_on_all(ips: &[Ipv4Addr]) -> Option<u16> {
    for _ in 0..20 {
        let first = std::net::TcpListener::bind(SocketAddr::from((ips[0], 0))).ok()?;
        let port = first.local_addr().ok()?.port();
        let rest: Option<Vec<_>> = ips[1..]
            .iter()
            .map(|ip| std::net::TcpListener::bind(SocketAddr::from((*ip, port))).ok())
            .collect();
        if rest.is_some() {
            return Some(port);
        }
    }
    None
}

/// Broker `i`'s variables, as a kaas StatefulSet's pod has them.
pub fn broker_env(
    i: usize,
    seat: &Seat,
    ports: &Ports,
    dir: &Path,
    namespace: &str,
    topics_json: &str,
) -> Vec<(String, String)> {
    let ip = seat.kafka.ip();
    let listeners =
        serde_json::json!([{"name": "plain", "addr": seat.kafka.to_string()}]).to_string();
    [
        ("MY_POD_NAME", format!("kaas-{i}")),
        ("KUBECONFIG", dir.join("kubeconfig").display().to_string()),
        ("KAAS_NAMESPACE", namespace.into()),
        ("KAAS_HEADLESS_SVC", SERVICE.into()),
        ("KAAS_POD_NAME_PATTERN", "kaas-%d".into()),
        ("KAAS_DATA_DIR", dir.join("data").display().to_string()),
        (
            "KAAS_CLUSTER_DIR",
            dir.join("data").join("__cluster").display().to_string(),
        ),
        ("KAAS_TOPICS", topics_json.into()),
        ("KAAS_LISTENERS", listeners),
        ("KAAS_HEALTH_ADDR", seat.health.to_string()),
        (
            "KAAS_CONTROLLER_HEARTBEAT_ADDR",
            format!("{ip}:{}", ports.heartbeat),
        ),
        ("KAAS_PEER_HEARTBEAT_PORT", ports.heartbeat.to_string()),
        ("KAAS_AUTH_DISABLED", "true".into()),
        // A broker that stops renewing loses the controller Lease in seconds, not kaas's 15.
        ("KAAS_CONTROLLER_LEASE_DURATION_SECONDS", "6".into()),
        ("KAAS_CONTROLLER_RENEW_DEADLINE_SECONDS", "4".into()),
        ("KAAS_CONTROLLER_RETRY_PERIOD_SECONDS", "1".into()),
        ("KAAS_LOG_FORMAT", "text".into()),
    ]
    .into_iter()
    // A broker that dies prints its stack, which signs a crash by the site in its own code
    // (the fuzzer's last words); a setting of the user's stands.
    .chain(
        std::env::var_os("RUST_BACKTRACE")
            .is_none()
            .then_some(("RUST_BACKTRACE", "1".to_owned())),
    )
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}
