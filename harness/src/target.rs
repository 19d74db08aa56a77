//! Brokers the harness can drive. A target may take seconds to start and is shared by many
//! scenarios, so starting and stopping are separate from using it.

use std::net::SocketAddr;

use reference_broker::{Broker, BrokerConfig, BrokerHandle};

use crate::apache::{self, container::ApacheContainer, ApacheJvm, Backend};

/// Why a target could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// The broker did not start.
    #[error("{target}: did not start: {reason}")]
    Start {
        /// Target name.
        target: String,
        /// Why.
        reason: String,
    },
    /// The broker does not answer ApiVersions.
    #[error("{target} at {addr} cannot be reached: {reason}")]
    Unreachable {
        /// Target name.
        target: String,
        /// Its address.
        addr: SocketAddr,
        /// Why.
        reason: String,
    },
    /// A target specification that does not parse.
    #[error("unknown target '{0}' (expected ref, apache, apache-recorded or external=HOST:PORT)")]
    Unknown(String),
}

/// What a target specification names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetSpec {
    /// The bundled reference broker, in process.
    Ref,
    /// A real Apache Kafka 3.7: the broker `kconform apache up` keeps running, or one launched
    /// for the run by the backend given.
    Apache(Backend),
    /// A Kafka-compatible broker that is already running.
    External(SocketAddr),
    /// Apache's recorded answers (`snapshots/<scenario>__apache.snap`), for a machine where
    /// no Apache can run.
    Recorded,
}

impl TargetSpec {
    /// Parses `ref`, `apache`, `apache-recorded` or `external=HOST:PORT`.
    pub fn parse(s: &str) -> Result<TargetSpec, TargetError> {
        match s.split_once('=') {
            None if s == "ref" => Ok(TargetSpec::Ref),
            None if s == "apache" => Ok(TargetSpec::Apache(Backend::Auto)),
            None if s == "apache-recorded" => Ok(TargetSpec::Recorded),
            Some(("external", addr)) => {
                use std::net::ToSocketAddrs;
                addr.to_socket_addrs()
                    .ok()
                    .and_then(|mut a| a.next())
                    .map(TargetSpec::External)
                    .ok_or_else(|| TargetError::Unknown(s.to_owned()))
            }
            _ => Err(TargetError::Unknown(s.to_owned())),
        }
    }

    /// The short name used in reports and snapshot file names.
    pub fn name(&self) -> String {
        match self {
            TargetSpec::Ref => "ref".into(),
            TargetSpec::Apache(_) => "apache".into(),
            TargetSpec::Recorded => "apache-recorded".into(),
            TargetSpec::External(_) => "external".into(),
        }
    }
}

/// A started target.
#[derive(Debug)]
pub struct Running {
    /// Its name.
    pub name: String,
    /// The bootstrap address.
    pub addr: SocketAddr,
    /// How the target was found or started, for the report.
    pub origin: String,
    held: Held,
}

/// What the harness holds of a target: the broker it started (to stop it), or nothing (a
/// broker that runs on its own: external, or kept up by `kconform apache up`).
#[derive(Debug)]
enum Held {
    /// Borrowed: not the harness's to stop.
    Nothing,
    /// kaas-ref, in process.
    Ref(BrokerHandle),
    /// Apache launched as a JVM.
    Jvm(ApacheJvm),
    /// Apache in a container (boxed: the container handle is large).
    Container(Box<ApacheContainer>),
}

impl Running {
    /// Starts (or, for an external broker or a running `kconform apache up`, just names) a
    /// target.
    pub async fn start(spec: &TargetSpec) -> Result<Running, TargetError> {
        let name = spec.name();
        let failed = |reason: String| TargetError::Start {
            target: name.clone(),
            reason,
        };
        let mut running = Running {
            name: name.clone(),
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            origin: String::new(),
            held: Held::Nothing,
        };
        match spec {
            TargetSpec::Ref => {
                let reaper =
                    apache::setting("transaction.abort.timed.out.transaction.cleanup.interval.ms")
                        .and_then(|ms| ms.parse().ok())
                        .unwrap_or(500);
                let offsets_partitions = apache::setting("offsets.topic.num.partitions")
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(1);
                let broker = Broker::start(BrokerConfig {
                    txn_reaper_interval: std::time::Duration::from_millis(reaper),
                    offsets_topic_partitions: offsets_partitions,
                    ..BrokerConfig::for_tests()
                })
                .await
                .map_err(|e| failed(e.to_string()))?;
                running.addr = broker.addr();
                running.origin = "kaas-ref, in process".into();
                running.held = Held::Ref(broker);
            }
            TargetSpec::Apache(backend) => {
                if let Some(d) = apache::daemon::running() {
                    running.addr = d.addr;
                    running.origin = format!(
                        "Apache Kafka {} kept up by `kconform apache up` (pid {})",
                        d.version, d.pid
                    );
                    return Ok(running);
                }
                match backend.resolve().map_err(|e| failed(e.to_string()))? {
                    Backend::Container => {
                        let c = ApacheContainer::start()
                            .await
                            .map_err(|e| failed(e.to_string()))?;
                        running.addr = c.addr;
                        running.origin = format!(
                            "Apache Kafka {} in the apache/kafka container",
                            apache::KAFKA_VERSION
                        );
                        running.held = Held::Container(Box::new(c));
                    }
                    _ => {
                        let jvm = tokio::task::spawn_blocking(ApacheJvm::start)
                            .await
                            .map_err(|e| failed(e.to_string()))?
                            .map_err(|e| failed(e.to_string()))?;
                        running.addr = jvm.addr;
                        running.origin = format!(
                            "Apache Kafka {} launched as a JVM, started in {:.1} s",
                            apache::KAFKA_VERSION,
                            jvm.start_time.as_secs_f64()
                        );
                        running.held = Held::Jvm(jvm);
                    }
                }
            }
            TargetSpec::Recorded => {
                return Err(failed(
                    "recorded answers are read from snapshots, not started".into(),
                ))
            }
            TargetSpec::External(addr) => {
                running.addr = *addr;
                running.origin = format!("an external broker at {addr}");
            }
        }
        Ok(running)
    }

    /// Whether the target answers ApiVersions within `deadline`: a target that does not cannot
    /// be judged at all (the one failure that ends a run).
    pub async fn reachable(&self, deadline: std::time::Duration) -> Result<(), TargetError> {
        self.versions(deadline).await.map(|_| ())
    }

    /// A connection to the target and the versions it serves ((key, min, max) per API), or why
    /// it is unreachable.
    async fn versions(
        &self,
        deadline: std::time::Duration,
    ) -> Result<(crate::client::Connection, Vec<(i16, i16, i16)>), TargetError> {
        let unreachable = |reason: String| TargetError::Unreachable {
            target: self.name.clone(),
            addr: self.addr,
            reason,
        };
        let mut conn = crate::client::Connection::connect(self.addr, deadline)
            .await
            .map_err(|e| unreachable(e.to_string()))?;
        let served = conn
            .api_versions()
            .await
            .map_err(|e| unreachable(format!("ApiVersions v0 got {e}")))?;
        Ok((conn, served))
    }

    /// Whether the target refuses CreateTopics, and how: asked with a validate-only CreateTopics
    /// (nothing is created) of a probe topic. `Some` when the API is not served or the answer is
    /// an authorization or policy refusal. A target that does not answer ApiVersions first is
    /// [`TargetError::Unreachable`], as with [`Running::reachable`].
    pub async fn create_topics_refused(
        &self,
        deadline: std::time::Duration,
    ) -> Result<Option<String>, TargetError> {
        use kafka_protocol::messages::ApiKey;
        let (mut conn, served) = self.versions(deadline).await?;
        let Some(&(_, min, max)) = served
            .iter()
            .find(|(k, _, _)| *k == ApiKey::CreateTopics as i16)
        else {
            return Ok(Some("it does not serve CreateTopics".into()));
        };
        let version = max.min(7);
        if version < min.max(1) {
            return Ok(Some(format!("it serves CreateTopics v{min}-{max} only")));
        }
        let fields: toml::Table = toml::from_str(
            "validate_only = true\ntopics = [{ name = \"kconform-probe\", num_partitions = 1, replication_factor = 1 }]",
        )
        .expect("a constant table");
        let request = crate::request::build(ApiKey::CreateTopics, version, &fields)
            .expect("the probe builds");
        let answer = match conn.send(ApiKey::CreateTopics, version, &request).await {
            Ok(answer) => answer,
            // No usable answer says nothing of a refusal: the scenarios' own CreateTopics steps
            // will meet the same and report it.
            Err(e) => {
                tracing::warn!(target = %self.name, "a validate-only CreateTopics got {e}");
                return Ok(None);
            }
        };
        let raw = crate::response::to_value(&answer, version);
        let code = crate::response::at(&raw, "topics.0.error_code")
            .and_then(serde_json::Value::as_i64)
            .unwrap_or(0) as i16;
        // TOPIC_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED, POLICY_VIOLATION.
        Ok(matches!(code, 29 | 31 | 44).then(|| {
            format!(
                "{} to a validate-only CreateTopics",
                crate::errors::label(code)
            )
        }))
    }

    /// Why the target may have stopped answering: for a broker the harness launched that has
    /// exited, its exit status and the end of its log.
    pub fn post_mortem(&self) -> Option<String> {
        let Held::Jvm(jvm) = &self.held else {
            return None;
        };
        let status = jvm.exited()?;
        Some(format!(
            "Apache exited ({status}); its log ends:\n{}",
            jvm.log_tail(40)
        ))
    }

    /// Stops the target if the harness started it.
    pub async fn stop(self) {
        match self.held {
            Held::Nothing => {}
            Held::Container(c) => c.stop().await,
            Held::Jvm(mut jvm) => {
                let _ = tokio::task::spawn_blocking(move || jvm.stop()).await;
            }
            Held::Ref(b) => {
                let data_dir = b.data_dir().to_owned();
                b.shutdown().await;
                let _ = std::fs::remove_dir_all(data_dir);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_specs_parse() {
        assert_eq!(TargetSpec::parse("ref").unwrap(), TargetSpec::Ref);
        assert_eq!(
            TargetSpec::parse("apache").unwrap(),
            TargetSpec::Apache(Backend::Auto)
        );
        assert_eq!(
            TargetSpec::parse("external=127.0.0.1:9092").unwrap(),
            TargetSpec::External("127.0.0.1:9092".parse().unwrap())
        );
        assert!(TargetSpec::parse("apache-ish").is_err());
        assert!(TargetSpec::parse("external=nowhere").is_err());
    }
}
