//! The objects the stand-in Kubernetes API holds, with their resource versions, and the
//! changes its watches are sent: Leases (any name), one EndpointSlice for the brokers' Service,
//! the brokers' Pods (their status conditions), and the KafkaTopics the brokers make (a
//! CreateTopics on a kaas broker in cluster mode posts one; its brokers watch them and serve
//! the topic, as they would beside kaas's operator). Pure state, no I/O.

use std::collections::BTreeMap;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::discovery::v1::{Endpoint, EndpointConditions, EndpointPort, EndpointSlice};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::DeepMerge;

/// A broker as the API lists it: its pod, and where its endpoint points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seat {
    /// The pod's name and the endpoint's hostname (`kaas-N`).
    pub pod: String,
    /// Its Kafka listener, on an address of its own.
    pub kafka: std::net::SocketAddr,
    /// Where its `/readyz` answers.
    pub health: std::net::SocketAddr,
}

/// The kinds a watch can be on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watched {
    /// `discovery.k8s.io/v1` EndpointSlices.
    EndpointSlices,
    /// `kaas.rs/v1alpha1` KafkaTopics.
    KafkaTopics,
}

/// One change a watch is sent: its kind, the event's type and the object as JSON.
#[derive(Debug, Clone)]
pub struct Change {
    /// What it is a change of.
    pub kind: Watched,
    /// `ADDED`, `MODIFIED` or `DELETED`.
    pub event: &'static str,
    /// The object after it.
    pub object: serde_json::Value,
    /// The object's resource version after it.
    pub version: u64,
}

/// The objects, and the resource version of the newest change.
#[derive(Debug)]
pub struct Store {
    /// The namespace every object is in.
    pub namespace: String,
    /// The Service whose EndpointSlice lists the brokers.
    pub service: String,
    version: u64,
    leases: BTreeMap<String, Lease>,
    pods: BTreeMap<String, Pod>,
    slice: EndpointSlice,
    seats: Vec<Seat>,
    /// KafkaTopics by name, as JSON (a custom resource kaas defines: no type here).
    topics: BTreeMap<String, serde_json::Value>,
}

/// Why a request on an object could not be done, as a Kubernetes Status says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// HTTP code (404, 409, 400).
    pub code: u16,
    /// The Status reason (`NotFound`, `AlreadyExists`, `BadRequest`).
    pub reason: &'static str,
    /// What was wrong.
    pub message: String,
}

fn refusal(code: u16, reason: &'static str, message: String) -> Refusal {
    Refusal {
        code,
        reason,
        message,
    }
}

impl Store {
    /// The objects of a cluster of `seats`, their endpoints not ready yet, no Lease.
    pub fn new(namespace: &str, service: &str, seats: Vec<Seat>) -> Store {
        let mut store = Store {
            namespace: namespace.into(),
            service: service.into(),
            version: 1,
            leases: BTreeMap::new(),
            pods: BTreeMap::new(),
            slice: EndpointSlice::default(),
            seats,
            topics: BTreeMap::new(),
        };
        for seat in store.seats.clone() {
            store.reset_pod(&seat.pod);
        }
        store.slice = store.slice_of(&vec![false; store.seats.len()]);
        store
    }

    /// The resource version of the newest change.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The brokers' seats.
    pub fn seats(&self) -> &[Seat] {
        &self.seats
    }

    fn bump(&mut self) -> u64 {
        self.version += 1;
        self.version
    }

    fn meta(&mut self, name: &str, created: Option<&ObjectMeta>) -> ObjectMeta {
        let version = self.bump();
        ObjectMeta {
            name: Some(name.into()),
            namespace: Some(self.namespace.clone()),
            resource_version: Some(version.to_string()),
            uid: created
                .and_then(|m| m.uid.clone())
                .or_else(|| Some(uuid::Uuid::new_v4().to_string())),
            ..Default::default()
        }
    }

    /// The Lease of that name.
    pub fn lease(&self, name: &str) -> Option<&Lease> {
        self.leases.get(name)
    }

    /// Creates a Lease; 409 when one of its name exists.
    pub fn create_lease(&mut self, mut lease: Lease) -> Result<Lease, Refusal> {
        let name = lease.metadata.name.clone().unwrap_or_default();
        if name.is_empty() {
            return Err(refusal(
                400,
                "BadRequest",
                "a Lease needs metadata.name".into(),
            ));
        }
        if self.leases.contains_key(&name) {
            return Err(refusal(
                409,
                "AlreadyExists",
                format!("leases.coordination.k8s.io \"{name}\" already exists"),
            ));
        }
        let annotations = lease.metadata.annotations.take();
        lease.metadata = ObjectMeta {
            annotations,
            ..self.meta(&name, None)
        };
        self.leases.insert(name, lease.clone());
        Ok(lease)
    }

    /// A server-side apply of a Lease: the fields given merged into it (made when missing).
    pub fn apply_lease(&mut self, name: &str, applied: Lease) -> Lease {
        let mut lease = self.leases.get(name).cloned().unwrap_or_default();
        let before = lease.metadata.clone();
        lease.merge_from(applied);
        let annotations = lease.metadata.annotations.take();
        lease.metadata = ObjectMeta {
            annotations,
            ..self.meta(name, Some(&before))
        };
        self.leases.insert(name.into(), lease.clone());
        lease
    }

    /// A server-side apply of a pod's status (its conditions merged by type): 404 for a pod
    /// that is none of the brokers'.
    pub fn apply_pod_status(&mut self, name: &str, applied: Pod) -> Result<Pod, Refusal> {
        let Some(mut pod) = self.pods.get(name).cloned() else {
            return Err(refusal(
                404,
                "NotFound",
                format!("pods \"{name}\" not found"),
            ));
        };
        let before = pod.metadata.clone();
        if let Some(status) = applied.status {
            pod.status.merge_from(Some(status));
        }
        pod.metadata = self.meta(name, Some(&before));
        self.pods.insert(name.into(), pod.clone());
        Ok(pod)
    }

    /// Whether the pod's condition of that type is True.
    pub fn condition(&self, pod: &str, kind: &str) -> bool {
        self.pods
            .get(pod)
            .and_then(|p| p.status.as_ref())
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| cs.iter().any(|c| c.type_ == kind && c.status == "True"))
    }

    /// The pod as a new one is: no conditions (a broker started again patches its own).
    pub fn reset_pod(&mut self, name: &str) {
        let pod = Pod {
            metadata: self.meta(name, None),
            ..Default::default()
        };
        self.pods.insert(name.into(), pod);
    }

    /// Makes the KafkaTopic `object` (a broker's POST): named by its `metadata.name`, refused
    /// when one of that name is there; the object as made and the change a watch is sent.
    pub fn create_topic(
        &mut self,
        mut object: serde_json::Value,
    ) -> Result<(serde_json::Value, Change), Refusal> {
        let name = object["metadata"]["name"]
            .as_str()
            .filter(|n| !n.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| refusal(400, "BadRequest", "a KafkaTopic needs metadata.name".into()))?;
        if self.topics.contains_key(&name) {
            return Err(refusal(
                409,
                "AlreadyExists",
                format!("kafkatopics.kaas.rs \"{name}\" already exists"),
            ));
        }
        let meta = self.meta(&name, None);
        let version = self.version;
        let Some(fields) = object.as_object_mut() else {
            return Err(refusal(
                400,
                "BadRequest",
                "a KafkaTopic is an object".into(),
            ));
        };
        let mut metadata = fields
            .remove("metadata")
            .and_then(|m| m.as_object().cloned())
            .unwrap_or_default();
        if let Ok(serde_json::Value::Object(made)) = serde_json::to_value(&meta) {
            metadata.extend(made);
        }
        fields.insert("metadata".into(), metadata.into());
        fields.insert("apiVersion".into(), "kaas.rs/v1alpha1".into());
        fields.insert("kind".into(), "KafkaTopic".into());
        self.topics.insert(name, object.clone());
        let change = Change {
            kind: Watched::KafkaTopics,
            event: "ADDED",
            object: object.clone(),
            version,
        };
        Ok((object, change))
    }

    /// Every KafkaTopic, by name.
    pub fn topics(&self) -> Vec<serde_json::Value> {
        self.topics.values().cloned().collect()
    }

    /// The EndpointSlice, as listed.
    pub fn slice(&self) -> &EndpointSlice {
        &self.slice
    }

    /// Sets which brokers' endpoints are ready; the change a watch is sent, if any.
    pub fn set_ready(&mut self, ready: &[bool]) -> Option<Change> {
        let next = self.slice_of(ready);
        if next.endpoints == self.slice.endpoints {
            return None;
        }
        self.slice = next;
        let version = self.bump();
        self.slice.metadata.resource_version = Some(version.to_string());
        Some(Change {
            kind: Watched::EndpointSlices,
            event: "MODIFIED",
            object: serde_json::to_value(&self.slice).unwrap_or_default(),
            version,
        })
    }

    /// Which endpoints are ready now, in seat order.
    pub fn ready(&self) -> Vec<bool> {
        self.slice
            .endpoints
            .iter()
            .flatten()
            .map(|e| e.conditions.as_ref().and_then(|c| c.ready) == Some(true))
            .collect()
    }

    fn slice_of(&self, ready: &[bool]) -> EndpointSlice {
        let port = self.seats.first().map_or(9092, |s| s.kafka.port());
        let endpoints = self
            .seats
            .iter()
            .zip(ready)
            .map(|(seat, ready)| Endpoint {
                addresses: vec![seat.kafka.ip().to_string()],
                hostname: Some(seat.pod.clone()),
                conditions: Some(EndpointConditions {
                    ready: Some(*ready),
                    serving: Some(*ready),
                    terminating: Some(false),
                }),
                target_ref: Some(k8s_openapi::api::core::v1::ObjectReference {
                    kind: Some("Pod".into()),
                    name: Some(seat.pod.clone()),
                    namespace: Some(self.namespace.clone()),
                    ..Default::default()
                }),
                ..Default::default()
            })
            .collect();
        let labels = [
            ("kubernetes.io/service-name", self.service.as_str()),
            ("endpointslice.kubernetes.io/managed-by", "kconform"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        EndpointSlice {
            metadata: ObjectMeta {
                name: Some(format!("{}-kconform", self.service)),
                namespace: Some(self.namespace.clone()),
                labels: Some(labels),
                resource_version: self
                    .slice
                    .metadata
                    .resource_version
                    .clone()
                    .or(Some("1".into())),
                ..Default::default()
            },
            address_type: "IPv4".into(),
            endpoints: Some(endpoints),
            ports: Some(vec![EndpointPort {
                name: Some("kafka".into()),
                port: Some(i32::from(port)),
                protocol: Some("TCP".into()),
                ..Default::default()
            }]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seats() -> Vec<Seat> {
        (0..2)
            .map(|i| Seat {
                pod: format!("kaas-{i}"),
                kafka: format!("127.0.0.{}:9092", i + 2).parse().unwrap(),
                health: format!("127.0.0.{}:8080", i + 2).parse().unwrap(),
            })
            .collect()
    }

    #[test]
    fn a_lease_is_created_once_and_applied_fields_merge_into_it() {
        let mut store = Store::new("ns", "kaas", seats());
        let mut lease = Lease::default();
        lease.metadata.name = Some("kaas-controller".into());
        lease.spec = Some(k8s_openapi::api::coordination::v1::LeaseSpec {
            holder_identity: Some("kaas-0".into()),
            lease_transitions: Some(1),
            lease_duration_seconds: Some(15),
            ..Default::default()
        });
        store.create_lease(lease.clone()).unwrap();
        assert_eq!(store.create_lease(lease).unwrap_err().code, 409);
        let moved = Lease {
            spec: Some(k8s_openapi::api::coordination::v1::LeaseSpec {
                holder_identity: Some("kaas-1".into()),
                lease_transitions: Some(2),
                ..Default::default()
            }),
            ..Default::default()
        };
        let after = store.apply_lease("kaas-controller", moved);
        let spec = after.spec.unwrap();
        assert_eq!(spec.holder_identity.as_deref(), Some("kaas-1"));
        assert_eq!(spec.lease_transitions, Some(2));
        assert_eq!(
            spec.lease_duration_seconds,
            Some(15),
            "a field not applied stays"
        );
    }

    #[test]
    fn a_pod_condition_is_merged_by_type_and_readiness_changes_are_sent_once() {
        let mut store = Store::new("ns", "kaas", seats());
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "kaas-1"},
            "status": {"conditions": [{"type": "kaas.rs/PartitionsReady", "status": "True"}]}
        }))
        .unwrap();
        store.apply_pod_status("kaas-1", pod.clone()).unwrap();
        assert!(store.condition("kaas-1", "kaas.rs/PartitionsReady"));
        assert!(!store.condition("kaas-0", "kaas.rs/PartitionsReady"));
        assert_eq!(store.apply_pod_status("kaas-7", pod).unwrap_err().code, 404);
        let before = store.version();
        let change = store.set_ready(&[false, true]).expect("a change");
        assert!(change.version > before);
        assert_eq!(store.ready(), [false, true]);
        assert!(
            store.set_ready(&[false, true]).is_none(),
            "no change, nothing sent"
        );
        store.reset_pod("kaas-1");
        assert!(!store.condition("kaas-1", "kaas.rs/PartitionsReady"));
    }

    /// A broker's KafkaTopic is made once (a second of the same name is 409, as CreateTopics
    /// then answers TOPIC_ALREADY_EXISTS), listed, and sent to watches as ADDED.
    #[test]
    fn a_kafka_topic_is_made_once_listed_and_watched() {
        let mut store = Store::new("kconform", "kaas", seats());
        let posted = serde_json::json!({
            "metadata": {"name": "orders", "namespace": "kconform"},
            "spec": {"topicName": "orders", "partitions": 3}
        });
        let (made, change) = store.create_topic(posted.clone()).unwrap();
        assert_eq!(made["kind"], "KafkaTopic");
        assert_eq!(made["spec"]["partitions"], 3);
        assert_eq!(
            made["metadata"]["resourceVersion"].as_str(),
            Some(store.version().to_string().as_str())
        );
        assert_eq!((change.kind, change.event), (Watched::KafkaTopics, "ADDED"));
        assert_eq!(store.topics(), [made]);
        let again = store.create_topic(posted).unwrap_err();
        assert_eq!((again.code, again.reason), (409, "AlreadyExists"));
        let nameless = store
            .create_topic(serde_json::json!({"spec": {}}))
            .unwrap_err();
        assert_eq!(nameless.code, 400);
    }
}
