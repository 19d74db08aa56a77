//! The HTTP side of the stand-in Kubernetes API: which paths it serves (what a kaas broker
//! asks, nothing more), answered from the [`super::store::Store`]; every other request a 404
//! Status, counted by method and path so a kaas release that reads a new object is named.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::http::{Method, StatusCode, Uri};
use axum::response::Response;

use super::store::{Change, Refusal, Watched};
use super::Shared;

/// The longest request body read (a Lease or a pod status is a few hundred bytes).
const MAX_BODY: usize = 1 << 20;

/// Every request: routed by method and path.
pub async fn handle(shared: Arc<Shared>, method: Method, uri: Uri, body: Body) -> Response {
    let path = uri.path().to_owned();
    let query = uri.query().unwrap_or("").to_owned();
    let body = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(body) => body,
        Err(e) => {
            return status(
                400,
                "BadRequest",
                &format!("the body could not be read: {e}"),
            )
        }
    };
    let ns = shared
        .store
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .namespace
        .clone();
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let route = match parts.as_slice() {
        ["apis", "coordination.k8s.io", "v1", "namespaces", n, "leases"] if *n == ns => {
            Route::Leases
        }
        ["apis", "coordination.k8s.io", "v1", "namespaces", n, "leases", name] if *n == ns => {
            Route::Lease(name.to_string())
        }
        ["apis", "discovery.k8s.io", "v1", "namespaces", n, "endpointslices"] if *n == ns => {
            Route::List(Watched::EndpointSlices)
        }
        ["apis", "kaas.rs", "v1alpha1", "namespaces", n, "kafkatopics"] if *n == ns => {
            Route::List(Watched::KafkaTopics)
        }
        ["api", "v1", "namespaces", n, "pods", name, "status"] if *n == ns => {
            Route::PodStatus(name.to_string())
        }
        _ => Route::None,
    };
    match (route, &method) {
        (Route::Leases, &Method::POST) => create_lease(&shared, &body),
        (Route::Lease(name), &Method::GET) => get_lease(&shared, &name),
        (Route::Lease(name), &Method::PATCH) => apply_lease(&shared, &name, &body),
        (Route::PodStatus(name), &Method::PATCH) => apply_pod_status(&shared, &name, &body),
        (Route::List(Watched::KafkaTopics), &Method::POST) => create_topic(&shared, &body),
        (Route::List(kind), &Method::GET) => {
            match param(&query, "watch").is_some_and(|w| w == "true" || w == "1") {
                true => watch(&shared, kind, &query),
                false => list(&shared, kind, &query),
            }
        }
        _ => {
            shared.unserved(&method, &path);
            status(
                404,
                "NotFound",
                &format!("kconform's stand-in Kubernetes API does not serve {method} {path}"),
            )
        }
    }
}

/// What a path names.
enum Route {
    Leases,
    Lease(String),
    List(Watched),
    PodStatus(String),
    None,
}

/// A query parameter's value, percent-decoded where it matters (`=`, `/`).
fn param(query: &str, key: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == key).then(|| {
            v.replace("%3D", "=")
                .replace("%3d", "=")
                .replace("%2F", "/")
                .replace("%2f", "/")
                .replace('+', " ")
        })
    })
}

/// A JSON answer.
fn json(code: u16, value: &serde_json::Value) -> Response {
    Response::builder()
        .status(StatusCode::from_u16(code).unwrap_or(StatusCode::OK))
        .header("content-type", "application/json")
        .body(Body::from(value.to_string()))
        .unwrap_or_default()
}

/// A Kubernetes Status answer.
fn status(code: u16, reason: &str, message: &str) -> Response {
    json(
        code,
        &serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Failure", "message": message, "reason": reason, "code": code,
        }),
    )
}

fn refused(r: Refusal) -> Response {
    status(r.code, r.reason, &r.message)
}

fn typed<T: serde::de::DeserializeOwned>(body: &Bytes, what: &str) -> Result<T, Box<Response>> {
    serde_json::from_slice(body)
        .map_err(|e| Box::new(status(400, "BadRequest", &format!("not a {what}: {e}"))))
}

fn create_lease(shared: &Shared, body: &Bytes) -> Response {
    let lease = match typed(body, "Lease") {
        Ok(lease) => lease,
        Err(answer) => return *answer,
    };
    let made = shared.store().create_lease(lease);
    match made {
        Ok(lease) => json(201, &serde_json::to_value(lease).unwrap_or_default()),
        Err(r) => refused(r),
    }
}

fn get_lease(shared: &Shared, name: &str) -> Response {
    match shared.store().lease(name) {
        Some(lease) => json(200, &serde_json::to_value(lease).unwrap_or_default()),
        None => status(
            404,
            "NotFound",
            &format!("leases.coordination.k8s.io \"{name}\" not found"),
        ),
    }
}

fn apply_lease(shared: &Shared, name: &str, body: &Bytes) -> Response {
    match typed(body, "Lease") {
        Ok(lease) => json(
            200,
            &serde_json::to_value(shared.store().apply_lease(name, lease)).unwrap_or_default(),
        ),
        Err(answer) => *answer,
    }
}

fn apply_pod_status(shared: &Shared, name: &str, body: &Bytes) -> Response {
    let pod = match typed(body, "Pod") {
        Ok(pod) => pod,
        Err(answer) => return *answer,
    };
    let applied = shared.store().apply_pod_status(name, pod);
    match applied {
        Ok(pod) => json(200, &serde_json::to_value(pod).unwrap_or_default()),
        Err(r) => refused(r),
    }
}

/// A broker's KafkaTopic (CreateTopics in cluster mode): made, and sent to every watch.
fn create_topic(shared: &Shared, body: &Bytes) -> Response {
    let object: serde_json::Value = match typed(body, "KafkaTopic") {
        Ok(object) => object,
        Err(answer) => return *answer,
    };
    let made = shared.store().create_topic(object);
    match made {
        Ok((object, change)) => {
            // No watch open is no error: a broker lists before it watches.
            let _ = shared.changes.send(change);
            json(201, &object)
        }
        Err(r) => refused(r),
    }
}

/// The objects of `kind` a label selector picks: the slice when it names the Service (or no
/// selector is given); every KafkaTopic.
fn items(shared: &Shared, kind: Watched, query: &str) -> (Vec<serde_json::Value>, u64) {
    let store = shared.store();
    let items = match (kind, picks(&store.service, kind, query)) {
        (_, false) => Vec::new(),
        (Watched::KafkaTopics, true) => store.topics(),
        (Watched::EndpointSlices, true) => {
            vec![serde_json::to_value(store.slice()).unwrap_or_default()]
        }
    };
    (items, store.version())
}

/// Whether a list or watch of `kind` with this query's label selector picks its objects: the
/// brokers' EndpointSlice with no selector or the Service's name; KafkaTopics always.
fn picks(service: &str, kind: Watched, query: &str) -> bool {
    match kind {
        Watched::KafkaTopics => true,
        Watched::EndpointSlices => param(query, "labelSelector")
            .is_none_or(|s| s.is_empty() || s == format!("kubernetes.io/service-name={service}")),
    }
}

fn list(shared: &Shared, kind: Watched, query: &str) -> Response {
    let (items, version) = items(shared, kind, query);
    let (api_version, list_kind) = match kind {
        Watched::EndpointSlices => ("discovery.k8s.io/v1", "EndpointSliceList"),
        Watched::KafkaTopics => ("kaas.rs/v1alpha1", "KafkaTopicList"),
    };
    json(
        200,
        &serde_json::json!({
            "apiVersion": api_version, "kind": list_kind,
            "metadata": {"resourceVersion": version.to_string()},
            "items": items,
        }),
    )
}

/// A watch: what changed since the version asked for, then each change as it comes, one JSON
/// event a line, until `timeoutSeconds` (at most 5 minutes) have passed.
fn watch(shared: &Arc<Shared>, kind: Watched, query: &str) -> Response {
    let since: u64 = param(query, "resourceVersion")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let timeout = param(query, "timeoutSeconds")
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(300)
        .min(300);
    let receiver = shared.changes.subscribe();
    let (items, _) = items(shared, kind, query);
    let mut first: Vec<Bytes> = items
        .into_iter()
        .filter(|item| {
            item["metadata"]["resourceVersion"]
                .as_str()
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
                > since
        })
        .map(|object| line("MODIFIED", object))
        .collect();
    first.reverse();
    let picked = picks(&shared.store().service, kind, query);
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(timeout);
    let stream = futures::stream::unfold(
        (first, receiver),
        move |(mut first, mut receiver)| async move {
            if let Some(next) = first.pop() {
                return Some((Ok::<_, std::convert::Infallible>(next), (first, receiver)));
            }
            loop {
                let change: Change = match tokio::time::timeout_at(deadline, receiver.recv()).await
                {
                    Err(_) => return None,
                    Ok(Err(tokio::sync::broadcast::error::RecvError::Closed)) => return None,
                    Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => continue,
                    Ok(Ok(change)) => change,
                };
                if change.kind == kind && picked && change.version > since {
                    return Some((Ok(line(change.event, change.object)), (first, receiver)));
                }
            }
        },
    );
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "application/json")
        .body(Body::from_stream(stream))
        .unwrap_or_default()
}

fn line(event: &str, object: serde_json::Value) -> Bytes {
    let mut text = serde_json::json!({"type": event, "object": object}).to_string();
    text.push('\n');
    Bytes::from(text)
}
