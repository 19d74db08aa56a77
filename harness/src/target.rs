//! Brokers the harness can drive. A target may take seconds to start and is shared by many
//! scenarios, so starting and stopping are separate from using it.

use std::net::SocketAddr;

use reference_broker::{Broker, BrokerConfig, BrokerHandle};

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
    /// A target specification that does not parse.
    #[error("unknown target '{0}' (expected ref, apache or external=HOST:PORT)")]
    Unknown(String),
}

/// What a target specification names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetSpec {
    /// The bundled reference broker, in process.
    Ref,
    /// A real Apache Kafka 3.7, launched as a JVM.
    Apache,
    /// A Kafka-compatible broker that is already running.
    External(SocketAddr),
}

impl TargetSpec {
    /// Parses `ref` or `external=HOST:PORT`.
    pub fn parse(s: &str) -> Result<TargetSpec, TargetError> {
        match s.split_once('=') {
            None if s == "ref" => Ok(TargetSpec::Ref),
            None if s == "apache" => Ok(TargetSpec::Apache),
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
            TargetSpec::Apache => "apache".into(),
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
    broker: Option<BrokerHandle>,
    apache: Option<crate::apache::ApacheJvm>,
}

impl Running {
    /// Starts (or, for an external broker, just names) a target.
    pub async fn start(spec: &TargetSpec) -> Result<Running, TargetError> {
        match spec {
            TargetSpec::Ref => {
                let broker = Broker::start(BrokerConfig {
                    txn_reaper_interval: std::time::Duration::from_millis(500),
                    ..BrokerConfig::for_tests()
                })
                .await
                .map_err(|e| TargetError::Start {
                    target: "ref".into(),
                    reason: e.to_string(),
                })?;
                Ok(Running {
                    name: "ref".into(),
                    addr: broker.addr(),
                    broker: Some(broker),
                    apache: None,
                })
            }
            TargetSpec::Apache => {
                let jvm = tokio::task::spawn_blocking(crate::apache::ApacheJvm::start)
                    .await
                    .map_err(|e| TargetError::Start {
                        target: "apache".into(),
                        reason: e.to_string(),
                    })?
                    .map_err(|e| TargetError::Start {
                        target: "apache".into(),
                        reason: e.to_string(),
                    })?;
                Ok(Running {
                    name: "apache".into(),
                    addr: jvm.addr,
                    broker: None,
                    apache: Some(jvm),
                })
            }
            TargetSpec::External(addr) => Ok(Running {
                name: "external".into(),
                addr: *addr,
                broker: None,
                apache: None,
            }),
        }
    }

    /// Why the target may have stopped answering: for a broker the harness launched that has
    /// exited, its exit status and the end of its log.
    pub fn post_mortem(&self) -> Option<String> {
        let jvm = self.apache.as_ref()?;
        let status = jvm.exited()?;
        Some(format!(
            "Apache exited ({status}); its log ends:\n{}",
            jvm.log_tail(40)
        ))
    }

    /// Stops the target if the harness started it.
    pub async fn stop(mut self) {
        if let Some(mut jvm) = self.apache.take() {
            let _ = tokio::task::spawn_blocking(move || jvm.stop()).await;
        }
        if let Some(b) = self.broker {
            let data_dir = b.data_dir().to_owned();
            b.shutdown().await;
            let _ = std::fs::remove_dir_all(data_dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_specs_parse() {
        assert_eq!(TargetSpec::parse("ref").unwrap(), TargetSpec::Ref);
        assert_eq!(TargetSpec::parse("apache").unwrap(), TargetSpec::Apache);
        assert_eq!(
            TargetSpec::parse("external=127.0.0.1:9092").unwrap(),
            TargetSpec::External("127.0.0.1:9092".parse().unwrap())
        );
        assert!(TargetSpec::parse("apache-ish").is_err());
        assert!(TargetSpec::parse("external=nowhere").is_err());
    }
}
