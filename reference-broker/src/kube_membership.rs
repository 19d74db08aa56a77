//! Cluster membership through a Kubernetes API, as a kaas pod has it (`--membership kube`):
//! the brokers are the endpoints of the headless Service's EndpointSlices (watched; an endpoint
//! counts when the API says it is ready), one broker holds the `kaas-controller` Lease
//! (campaigned for every retry period; its `leaseTransitions` is the controller epoch), and
//! each broker says it is ready by setting its pod's `kaas.rs/PartitionsReady` condition.
//! Through the `kube` crate, as kaas does, so that the API kconform serves for a kaas build is
//! tested in CI by a client that speaks as kaas speaks.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, Patch, PatchParams, PostParams};

use crate::cluster::{Peer, Watched};
use crate::kaas_env::KaasEnv;

/// The Lease every kaas broker campaigns for (kaas: `CONTROLLER_LEASE_NAME`).
pub const CONTROLLER_LEASE: &str = "kaas-controller";

/// The pod condition a kaas broker sets once it serves (its readiness gate).
pub const PARTITIONS_READY: &str = "kaas.rs/PartitionsReady";

/// The field manager of kaas-ref's server-side applies.
const MANAGER: &str = "kaas-ref";

/// Why the Kubernetes API could not be used.
#[derive(Debug, thiserror::Error)]
pub enum KubeError {
    /// No client could be made (no KUBECONFIG, no in-cluster service account).
    #[error("no Kubernetes client (KUBECONFIG or an in-cluster service account): {0}")]
    Client(String),
}

/// A client from `KUBECONFIG` (or the pod's service account), as `kube` infers it.
pub async fn client() -> Result<kube::Client, KubeError> {
    kube::Client::try_default()
        .await
        .map_err(|e| KubeError::Client(e.to_string()))
}

/// Starts the watch, the campaign and the readiness patch for the broker `env` describes,
/// serving at `advertised`: `watched` is kept to what the EndpointSlices say.
pub fn spawn(client: kube::Client, env: &KaasEnv, watched: Arc<Watched>) {
    tokio::spawn(watch_endpoints(
        client.clone(),
        env.namespace.clone(),
        env.service.clone(),
        watched.clone(),
    ));
    tokio::spawn(campaign(
        client.clone(),
        env.namespace.clone(),
        env.pod.clone(),
        env.lease_duration,
        env.retry_period,
    ));
    tokio::spawn(mark_ready(
        client.clone(),
        env.namespace.clone(),
        env.pod.clone(),
        watched,
    ));
    tokio::spawn(list_topics(client, env.namespace.clone()));
}

/// The brokers a set of EndpointSlices lists (`kaas-N` hostnames, first address, the port
/// named `kafka`), and the ids of those ready.
pub fn brokers_of<'a>(slices: impl Iterator<Item = &'a EndpointSlice>) -> (Vec<Peer>, Vec<i32>) {
    let mut peers = Vec::new();
    let mut ready = Vec::new();
    for slice in slices {
        let port = slice
            .ports
            .iter()
            .flatten()
            .find(|p| p.name.as_deref() == Some("kafka"))
            .and_then(|p| p.port);
        for endpoint in slice.endpoints.iter().flatten() {
            let id = endpoint
                .hostname
                .as_deref()
                .and_then(|h| h.strip_prefix("kaas-"))
                .and_then(|n| n.parse::<i32>().ok());
            let ip = endpoint
                .addresses
                .first()
                .and_then(|a| a.parse::<std::net::IpAddr>().ok());
            let (Some(id), Some(ip), Some(port)) = (id, ip, port) else {
                continue;
            };
            let Ok(port) = u16::try_from(port) else {
                continue;
            };
            peers.push(Peer {
                id,
                addr: SocketAddr::new(ip, port),
            });
            if endpoint.conditions.as_ref().and_then(|c| c.ready) == Some(true) {
                ready.push(id);
            }
        }
    }
    (peers, ready)
}

/// Keeps `watched` to the Service's EndpointSlices, for as long as the process lives (the
/// watcher re-lists on its own after an error).
async fn watch_endpoints(client: kube::Client, ns: String, service: String, watched: Arc<Watched>) {
    use kube::runtime::watcher::{watcher, Config, Event};
    let api: Api<EndpointSlice> = Api::namespaced(client, &ns);
    let config = Config::default().labels(&format!("kubernetes.io/service-name={service}"));
    let mut stream = watcher(api, config).boxed();
    let mut slices: BTreeMap<String, EndpointSlice> = BTreeMap::new();
    let mut fresh: Option<BTreeMap<String, EndpointSlice>> = None;
    while let Some(event) = stream.next().await {
        let event = match event {
            Ok(event) => event,
            Err(e) => {
                tracing::warn!("EndpointSlice watch: {e}");
                continue;
            }
        };
        let name = |s: &EndpointSlice| s.metadata.name.clone().unwrap_or_default();
        match event {
            Event::Init => fresh = Some(BTreeMap::new()),
            Event::InitApply(s) => {
                fresh.get_or_insert_with(BTreeMap::new).insert(name(&s), s);
            }
            Event::InitDone => slices = fresh.take().unwrap_or_default(),
            Event::Apply(s) => {
                slices.insert(name(&s), s);
            }
            Event::Delete(s) => {
                slices.remove(&name(&s));
            }
        }
        if fresh.is_some() {
            continue;
        }
        let (peers, ready) = brokers_of(slices.values());
        if watched.set(peers.clone(), ready.clone()) {
            let listed: Vec<i32> = peers.iter().map(|p| p.id).collect();
            tracing::info!(?listed, ?ready, "brokers, as the EndpointSlices list them");
        }
    }
}

/// Campaigns for the controller Lease every `retry` for as long as the process lives: takes
/// it when it is missing, released or not renewed within `duration` (a new holder counts one
/// more transition: the controller epoch), renews it while held.
async fn campaign(
    client: kube::Client,
    ns: String,
    me: String,
    duration: Duration,
    retry: Duration,
) {
    let api: Api<Lease> = Api::namespaced(client, &ns);
    let mut held: Option<i32> = None;
    loop {
        match campaign_once(&api, &me, duration).await {
            Ok(epoch) => {
                if epoch != held {
                    match epoch {
                        Some(epoch) => tracing::info!(epoch, "this broker is the controller"),
                        None => tracing::info!("this broker is not the controller"),
                    }
                    held = epoch;
                }
            }
            Err(e) => tracing::warn!("controller Lease: {e}"),
        }
        tokio::time::sleep(retry).await;
    }
}

/// One round of the campaign: the epoch this broker holds the Lease at, or `None`.
async fn campaign_once(
    api: &Api<Lease>,
    me: &str,
    duration: Duration,
) -> kube::Result<Option<i32>> {
    let now = k8s_openapi::jiff::Timestamp::now();
    let Some(lease) = api.get_opt(CONTROLLER_LEASE).await? else {
        let mut lease = Lease::default();
        lease.metadata.name = Some(CONTROLLER_LEASE.into());
        lease.spec = Some(k8s_openapi::api::coordination::v1::LeaseSpec {
            holder_identity: Some(me.into()),
            lease_duration_seconds: Some(duration.as_secs() as i32),
            acquire_time: Some(MicroTime(now)),
            renew_time: Some(MicroTime(now)),
            lease_transitions: Some(1),
            ..Default::default()
        });
        return match api.create(&PostParams::default(), &lease).await {
            Ok(_) => Ok(Some(1)),
            // Another broker created it first: it holds it.
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(None),
            Err(e) => Err(e),
        };
    };
    let spec = lease.spec.unwrap_or_default();
    let holder = spec.holder_identity.unwrap_or_default();
    let transitions = spec.lease_transitions.unwrap_or(0);
    let window = spec
        .lease_duration_seconds
        .map_or(duration, |s| Duration::from_secs(s.max(0) as u64));
    let stale = spec
        .renew_time
        .is_none_or(|MicroTime(at)| now.duration_since(at).as_secs_f64() > window.as_secs_f64());
    let epoch = match holder.as_str() {
        h if h == me => transitions,
        "" => transitions + 1,
        _ if stale => transitions + 1,
        _ => return Ok(None),
    };
    let mut patch = serde_json::json!({
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": CONTROLLER_LEASE},
        "spec": {
            "holderIdentity": me,
            "leaseDurationSeconds": duration.as_secs(),
            "renewTime": MicroTime(now),
            "leaseTransitions": epoch,
        }
    });
    if holder != me {
        patch["spec"]["acquireTime"] = serde_json::json!(MicroTime(now));
    }
    api.patch(
        CONTROLLER_LEASE,
        &PatchParams::apply(MANAGER).force(),
        &Patch::Apply(&patch),
    )
    .await?;
    Ok(Some(epoch))
}

/// Sets this pod's PartitionsReady condition True (server-side apply of `pods/<pod>/status`)
/// once the EndpointSlices have been listed (a broker that does not know its peers yet would
/// route every key to itself), retrying every second until the API takes it.
async fn mark_ready(client: kube::Client, ns: String, pod: String, watched: Arc<Watched>) {
    while !watched.listed() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let api: Api<Pod> = Api::namespaced(client, &ns);
    let patch = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": pod},
        "status": {"conditions": [{
            "type": PARTITIONS_READY,
            "status": "True",
            "reason": "Serving",
            "lastTransitionTime": k8s_openapi::jiff::Timestamp::now().round(k8s_openapi::jiff::Unit::Second).unwrap_or_else(|_| k8s_openapi::jiff::Timestamp::now()),
        }]}
    });
    loop {
        match api
            .patch_status(
                &pod,
                &PatchParams::apply(MANAGER).force(),
                &Patch::Apply(&patch),
            )
            .await
        {
            Ok(_) => {
                tracing::info!("readiness gate: {PARTITIONS_READY}=True");
                return;
            }
            Err(e) => tracing::warn!("readiness gate: {e}; again in 1 s"),
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Lists the namespace's KafkaTopics once, as kaas's topic watch begins: kaas-ref's topics come
/// from `KAAS_TOPICS`, so the list is only logged.
async fn list_topics(client: kube::Client, ns: String) {
    use kube::core::{ApiResource, DynamicObject};
    let resource = ApiResource {
        group: "kaas.rs".into(),
        version: "v1alpha1".into(),
        api_version: "kaas.rs/v1alpha1".into(),
        kind: "KafkaTopic".into(),
        plural: "kafkatopics".into(),
    };
    let api: Api<DynamicObject> = Api::namespaced_with(client, &ns, &resource);
    match api.list(&Default::default()).await {
        Ok(list) => tracing::info!(topics = list.items.len(), "KafkaTopics listed"),
        Err(e) => tracing::warn!("KafkaTopics: {e}"),
    }
}
