//! A Kubernetes API served by kconform, for a kaas build run as a cluster on one machine: kaas
//! turns cluster mode on only when it can reach one, and reads four objects from it (the
//! `kaas-controller` Lease, its Service's EndpointSlices, its pod's status, KafkaTopics, which
//! a broker also makes when a client creates a topic). This
//! serves those in one namespace over plain HTTP, decides each broker's endpoint ready as a
//! kubelet would (its Kafka port answers, its `/readyz` answers 200 and its pod's
//! `kaas.rs/PartitionsReady` condition is True), and answers every other request with a 404
//! Status, counted and named in the run's notes: a kaas release that reads a new object is
//! named, not a hang.

mod probe;
mod routes;
pub mod store;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

pub use store::Seat;
use store::{Change, Store};

/// The condition a kaas broker sets on its pod once its partitions are ready.
pub const PARTITIONS_READY: &str = "kaas.rs/PartitionsReady";

/// The Lease kaas's brokers campaign for; its `leaseTransitions` is the controller epoch.
pub const CONTROLLER_LEASE: &str = "kaas-controller";

/// What the server's tasks share.
#[derive(Debug)]
pub struct Shared {
    store: Mutex<Store>,
    changes: tokio::sync::broadcast::Sender<Change>,
    unserved: Mutex<BTreeMap<String, u64>>,
}

impl Shared {
    fn store(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts a request the stand-in does not serve, by method and path (a name in a path
    /// kept: `GET /api/v1/namespaces/kaas/configmaps/x`).
    fn unserved(&self, method: &axum::http::Method, path: &str) {
        tracing::warn!(%method, path, "the stand-in Kubernetes API does not serve this");
        *self
            .unserved
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(format!("{method} {path}"))
            .or_default() += 1;
    }
}

/// The holder of a Lease and its transitions (the controller epoch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseHolder {
    /// `holderIdentity` (`kaas-1`; empty when released).
    pub holder: String,
    /// `leaseTransitions`.
    pub transitions: i32,
}

/// The stand-in, serving until dropped.
#[derive(Debug)]
pub struct KubeApi {
    addr: SocketAddr,
    shared: Arc<Shared>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

/// Why the stand-in could not start.
#[derive(Debug, thiserror::Error)]
#[error("the stand-in Kubernetes API: {0}")]
pub struct KubeApiError(String);

impl KubeApi {
    /// Serves the objects of a cluster of `seats` in `namespace`, its Service `service`, on
    /// a free port of 127.0.0.1, and probes each seat's readiness from now on.
    pub async fn start(
        namespace: &str,
        service: &str,
        seats: Vec<Seat>,
    ) -> Result<KubeApi, KubeApiError> {
        let shared = Arc::new(Shared {
            store: Mutex::new(Store::new(namespace, service, seats)),
            changes: tokio::sync::broadcast::channel(256).0,
            unserved: Mutex::new(BTreeMap::new()),
        });
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|e| KubeApiError(format!("could not listen: {e}")))?;
        let addr = listener
            .local_addr()
            .map_err(|e| KubeApiError(e.to_string()))?;
        let serving = shared.clone();
        let app = axum::Router::new()
            .fallback(move |method, uri, body| routes::handle(serving.clone(), method, uri, body));
        let server = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::warn!("the stand-in Kubernetes API stopped: {e}");
            }
        });
        let prober = tokio::spawn(probe::run(shared.clone()));
        Ok(KubeApi {
            addr,
            shared,
            tasks: vec![server, prober],
        })
    }

    /// Where it serves (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A kubeconfig naming it (its namespace the context's), for `KUBECONFIG`.
    pub fn kubeconfig(&self) -> String {
        let ns = self.shared.store().namespace.clone();
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: kconform\n  cluster:\n    server: {url}\ncontexts:\n- name: kconform\n  context:\n    cluster: kconform\n    namespace: {ns}\n    user: kconform\ncurrent-context: kconform\nusers:\n- name: kconform\n  user:\n    token: kconform\n",
            url = self.url()
        )
    }

    /// Writes [`KubeApi::kubeconfig`] to `path`.
    pub fn write_kubeconfig(&self, path: &Path) -> std::io::Result<()> {
        std::fs::write(path, self.kubeconfig())
    }

    /// Which brokers' endpoints are ready now, in seat order.
    pub fn ready(&self) -> Vec<bool> {
        self.shared.store().ready()
    }

    /// The controller Lease's holder and epoch, once a broker has taken it.
    pub fn controller(&self) -> Option<LeaseHolder> {
        let store = self.shared.store();
        let spec = store.lease(CONTROLLER_LEASE)?.spec.clone()?;
        Some(LeaseHolder {
            holder: spec.holder_identity.unwrap_or_default(),
            transitions: spec.lease_transitions.unwrap_or(0),
        })
    }

    /// A broker's pod as new: its conditions gone, as a StatefulSet's pod made again after it
    /// was killed (the broker started again sets its own).
    pub fn pod_replaced(&self, pod: &str) {
        self.shared.store().reset_pod(pod);
    }

    /// The requests it did not serve, as `METHOD PATH` with how many times each.
    pub fn unserved(&self) -> Vec<(String, u64)> {
        self.shared
            .unserved
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(k, n)| (k.clone(), *n))
            .collect()
    }

    /// What a run's notes say of the requests it did not serve: nothing when it served all.
    pub fn unserved_note(&self) -> Option<String> {
        let unserved = self.unserved();
        if unserved.is_empty() {
            return None;
        }
        let total: u64 = unserved.iter().map(|(_, n)| n).sum();
        let listed: Vec<String> = unserved
            .iter()
            .map(|(what, n)| format!("{what} x{n}"))
            .collect();
        Some(format!(
            "the stand-in Kubernetes API answered {total} request(s) it does not serve with 404 (the broker may read an object kconform does not stand in for): {}",
            listed.join(", ")
        ))
    }
}

impl Drop for KubeApi {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn get(api: &KubeApi, method: &str, path: &str) -> (String, String) {
        let mut stream = tokio::net::TcpStream::connect(api.addr).await.unwrap();
        let request = format!(
            "{method} {path} HTTP/1.1\r\nhost: k\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
        (
            head.lines().next().unwrap_or("").to_owned(),
            body.to_owned(),
        )
    }

    fn seat(i: usize) -> Seat {
        Seat {
            pod: format!("kaas-{i}"),
            kafka: format!("127.0.0.1:{}", 1 + i).parse().unwrap(),
            health: format!("127.0.0.1:{}", 1 + i).parse().unwrap(),
        }
    }

    /// What a broker reads is served; anything else is a 404 Status, counted and named, so a
    /// kaas release that reads a new object shows in the run's notes instead of hanging.
    #[tokio::test]
    async fn what_is_not_stood_in_for_is_a_404_status_named_in_the_notes() {
        let api = KubeApi::start("kconform", "kaas", vec![seat(0), seat(1)])
            .await
            .unwrap();
        let (line, body) = get(&api, "GET", "/apis/discovery.k8s.io/v1/namespaces/kconform/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dkaas").await;
        assert!(line.contains("200"), "{line}");
        let list: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(list["items"][0]["endpoints"][1]["hostname"], "kaas-1");
        assert_eq!(
            list["items"][0]["endpoints"][1]["conditions"]["ready"],
            false
        );
        let (line, _) = get(
            &api,
            "GET",
            "/apis/coordination.k8s.io/v1/namespaces/kconform/leases/kaas-controller",
        )
        .await;
        assert!(
            line.contains("404"),
            "a Lease not made yet is not found: {line}"
        );
        assert_eq!(api.unserved_note(), None, "served requests are not counted");
        for _ in 0..2 {
            let (line, body) = get(
                &api,
                "GET",
                "/api/v1/namespaces/kconform/configmaps/kaas-config",
            )
            .await;
            assert!(line.contains("404"), "{line}");
            let status: serde_json::Value = serde_json::from_str(&body).unwrap();
            assert_eq!(
                (status["kind"].as_str(), status["code"].as_i64()),
                (Some("Status"), Some(404))
            );
        }
        get(
            &api,
            "GET",
            "/apis/coordination.k8s.io/v1/namespaces/elsewhere/leases/x",
        )
        .await;
        let note = api.unserved_note().expect("counted");
        assert!(note.contains("3 request(s)"), "{note}");
        assert!(
            note.contains("GET /api/v1/namespaces/kconform/configmaps/kaas-config x2"),
            "{note}"
        );
        assert!(note.contains("namespaces/elsewhere/leases/x x1"), "{note}");
    }
}
