//! A real Apache Kafka broker as a target (3.7.2, the release kaas claims parity with, unless
//! the target names another [`Release`]), three ways:
//! - `jvm`: the broker's jars from Maven Central, launched as a JVM ([`jvm`]); what the tests
//!   run here.
//! - `container`: the official `apache/kafka` image through testcontainers, where a Docker
//!   engine answers ([`container`]); what users' CI with Docker runs.
//! - a broker kept running between runs by `kconform apache up` ([`daemon`]), for fast
//!   iteration; `--target apache` uses it when it is up.
//!
//! Both launchers configure the broker with [`SETTINGS`], the settings that change answers,
//! which kaas-ref is given too.

pub mod cluster;
pub mod container;
pub mod daemon;
pub mod features;
pub mod jars;
pub mod javac;
pub mod jvm;
pub mod marker_gate;
pub mod parser;
/// The release type lives below every stage (`crate::release`): targets, APIs and reports all
/// name releases.
pub use crate::release;

use std::process::{Command, Stdio};

pub use jvm::ApacheJvm;
pub use release::Release;

/// One broker setting that changes answers: Apache's property and value, how kaas-ref is given
/// it, and what depends on it. `kconform settings` prints the list; the book's "Configured alike" has it too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Setting {
    /// Apache's property (`server.properties`).
    pub property: &'static str,
    /// Its value for one broker ([`cluster_settings`] for a cluster).
    pub value: &'static str,
    /// How kaas-ref is given it, or why it has no such setting.
    pub kaas_ref: &'static str,
    /// What depends on it.
    pub why: &'static str,
}

/// Broker settings that change answers, the same on every backend and, where kaas-ref has the
/// knob, on kaas-ref (`super::ref_config`).
pub const SETTINGS: &[Setting] = &[
    Setting {
        property: "offsets.topic.replication.factor",
        value: "1",
        kaas_ref: "(none: no replicas)",
        why: "one broker: the offsets topic cannot have more replicas",
    },
    Setting {
        property: "offsets.topic.num.partitions",
        value: "1",
        kaas_ref: "--offsets-topic-partitions 1",
        why: "Metadata of __consumer_offsets lists its partitions (metadata-consumer-offsets-internal); one makes loading quick",
    },
    Setting {
        property: "transaction.state.log.replication.factor",
        value: "1",
        kaas_ref: "(none: slot files, no topic)",
        why: "one broker: the transaction state topic cannot have more replicas",
    },
    Setting {
        property: "transaction.state.log.min.isr",
        value: "1",
        kaas_ref: "(none: slot files, no topic)",
        why: "one broker: a transaction-state write needs one replica in sync",
    },
    Setting {
        property: "transaction.state.log.num.partitions",
        value: "1",
        kaas_ref: "(none: slot files, no topic)",
        why: "one partition makes coordinator loading quick",
    },
    Setting {
        property: "transaction.abort.timed.out.transaction.cleanup.interval.ms",
        value: "500",
        kaas_ref: "--txn-reaper-interval-ms 500",
        why: "the reaper scenarios wait seconds for a timed-out transaction to be aborted (Apache's default and kaas's reaper: every 10 s)",
    },
    Setting {
        property: "group.initial.rebalance.delay.ms",
        value: "0",
        kaas_ref: "--group-initial-rebalance-delay-ms 0",
        why: "a lone member's group is ready at once; the group scenarios' JoinGroup answers do not wait 3 s",
    },
    Setting {
        property: "auto.create.topics.enable",
        value: "true",
        kaas_ref: "(its default; --no-auto-create-topics turns it off)",
        why: "Metadata for an unknown topic creates it on both (Apache's default, written down because kaas-ref follows it)",
    },
    Setting {
        property: "num.partitions",
        value: "1",
        kaas_ref: "--default-partitions 1 (its default)",
        why: "topics Metadata creates have one partition on both",
    },
];

/// The settings a target of `brokers` brokers is started with: [`SETTINGS`] for one, the
/// cluster's for more ([`cluster_settings`]). kaas-ref's configuration and the settings check
/// of an external broker read the same list.
pub fn settings_for(brokers: usize) -> Vec<(&'static str, String)> {
    match brokers {
        1 => SETTINGS
            .iter()
            .map(|s| (s.property, s.value.to_owned()))
            .collect(),
        n => cluster_settings(n),
    }
}

/// The settings of a cluster of `brokers` brokers, the one list both clusters (Apache's and
/// kaas-ref's, where it has the knob) are configured from: [`SETTINGS`], with the internal
/// topics replicated as a cluster replicates them (three replicas at most, two in sync for a
/// transaction-state write) and one partition of each per broker, so that transaction and
/// group coordinators spread over the brokers; auto-created topics replicated alike.
pub fn cluster_settings(brokers: usize) -> Vec<(&'static str, String)> {
    let replicas = brokers.clamp(1, 3);
    let per_cluster = [
        ("offsets.topic.replication.factor", replicas),
        ("offsets.topic.num.partitions", brokers.max(1)),
        ("transaction.state.log.replication.factor", replicas),
        (
            "transaction.state.log.min.isr",
            if replicas >= 3 { 2 } else { 1 },
        ),
        ("transaction.state.log.num.partitions", brokers.max(1)),
        ("default.replication.factor", replicas),
        // A killed broker counts as down 3 s after its last heartbeat (default 9 s, beats every
        // 2 s), as a kaas-ref cluster counts a broker down 3 s after its last stamp: the
        // coordinator moves as soon on both clusters, and a kill scenario waits seconds less.
        ("broker.session.timeout.ms", 3000),
        ("broker.heartbeat.interval.ms", 500),
    ]
    .map(|(key, n)| (key, n.to_string()));
    // Leaders move only when a scenario moves them. With the default (true), the controller
    // hands partitions back to their preferred replicas at its imbalance check, 300 s later:
    // seen here, a transaction-state partition went back to a broker 5 min after it had been
    // paused and resumed, so a broker a scenario killed or paused takes its leaderships and
    // transactional ids back in the middle of a later scenario. The likely cause of
    // cluster-end-txn-retried-on-new-coordinator going red in CI (its `until` on the new
    // coordinator ran out) once the pause scenarios made the cluster run longer. kaas has no
    // such timer.
    let per_cluster: Vec<(&'static str, String)> = per_cluster
        .into_iter()
        .chain([("auto.leader.rebalance.enable", "false".to_string())])
        .collect();
    let mut settings: Vec<(&'static str, String)> = SETTINGS
        .iter()
        .map(|s| {
            let own = per_cluster.iter().find(|(key, _)| *key == s.property);
            (
                s.property,
                own.map_or_else(|| s.value.to_owned(), |(_, n)| n.to_string()),
            )
        })
        .collect();
    for (key, value) in per_cluster {
        if !settings.iter().any(|(k, _)| *k == key) {
            settings.push((key, value));
        }
    }
    settings
}

/// The value of one of [`SETTINGS`].
pub fn setting(key: &str) -> Option<&'static str> {
    SETTINGS.iter().find(|s| s.property == key).map(|s| s.value)
}

/// Why Apache could not be started or reached.
#[derive(Debug, thiserror::Error)]
pub enum ApacheError {
    /// `java` or `mvn` is missing.
    #[error("{0} not found on PATH (the jvm backend needs Java 17 and Maven)")]
    Missing(&'static str),
    /// Resolving the jars of a version (the first) failed (why: the second).
    #[error("resolving Apache Kafka {0} jars with Maven failed: {1}")]
    Resolve(String, String),
    /// Formatting or starting failed.
    #[error("Apache Kafka did not start: {reason}\n--- broker log (last lines) ---\n{log}")]
    Start {
        /// Why.
        reason: String,
        /// The end of the broker's output.
        log: String,
    },
    /// `kconform apache up` asked for a release while it keeps another (named).
    #[error(
        "Apache {0} is up already (`kconform apache up` keeps one): `kconform apache down` first"
    )]
    AnotherUp(String),
    /// The container backend failed.
    #[error("the apache/kafka container did not start: {0}")]
    Container(String),
    /// Neither backend can run here.
    #[error("no Apache backend can run here: no Docker engine answers ({docker}) and the jvm backend cannot run ({jvm})")]
    NoBackend {
        /// Why not Docker.
        docker: String,
        /// Why not the JVM.
        jvm: String,
    },
    /// File system.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// How many times a start that lost a port is tried, on fresh ports.
const PORT_TRIES: usize = 3;

impl ApacheError {
    /// Whether the broker stopped because a port the harness picked for it was taken before it
    /// bound it (`free_port` can pick a free port, not hold it: another process, or another
    /// broker starting at the same time, may take it first).
    pub fn lost_a_port(&self) -> bool {
        matches!(self, ApacheError::Start { reason, log }
            if log.contains("Address already in use") || reason.contains("Address already in use"))
    }
}

/// Runs `start` again, on fresh ports, while it fails because a port was taken from under it
/// ([`ApacheError::lost_a_port`]), [`PORT_TRIES`] times at most; any other outcome at once.
pub(crate) fn retrying_lost_ports<T>(
    mut start: impl FnMut() -> Result<T, ApacheError>,
) -> Result<T, ApacheError> {
    let mut tries = 1;
    loop {
        match start() {
            Err(e) if e.lost_a_port() && tries < PORT_TRIES => {
                tracing::warn!(
                    tries,
                    "a port was taken before Apache bound it; starting again on other ports"
                );
                tries += 1;
            }
            other => return other,
        }
    }
}

/// Whether a program runs and reports its version (`java -version`, `mvn --version`).
/// The last `lines` lines of `text`: the end of a log or of a tool's output, for an error.
pub(crate) fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

fn have(program: &str, version_flag: &str) -> bool {
    Command::new(program)
        .arg(version_flag)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether this machine can run the jvm backend.
pub fn available() -> Result<(), ApacheError> {
    if !have("java", "-version") {
        return Err(ApacheError::Missing("java"));
    }
    if !have("mvn", "--version") {
        return Err(ApacheError::Missing("mvn"));
    }
    Ok(())
}

/// Whether the broker at `addr` answers ApiVersions v0 with error 0 within two seconds: the
/// readiness check after its "Kafka Server started" line.
pub fn answers_api_versions(addr: std::net::SocketAddr) -> Result<(), String> {
    use std::io::{Read, Write};
    let deadline = std::time::Duration::from_secs(2);
    let mut s = std::net::TcpStream::connect_timeout(&addr, deadline).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(deadline))
        .and_then(|()| s.set_write_timeout(Some(deadline)))
        .map_err(|e| e.to_string())?;
    // Size 10; API key 18, version 0, correlation id 7, a null client id.
    s.write_all(&[0, 0, 0, 10, 0, 18, 0, 0, 0, 0, 0, 7, 0xff, 0xff])
        .map_err(|e| e.to_string())?;
    let mut head = [0u8; 10];
    s.read_exact(&mut head).map_err(|e| e.to_string())?;
    let correlation = i32::from_be_bytes([head[4], head[5], head[6], head[7]]);
    let error = i16::from_be_bytes([head[8], head[9]]);
    match (correlation, error) {
        (7, 0) => Ok(()),
        (7, e) => Err(format!("ApiVersions answered error {e}")),
        (c, _) => Err(format!("ApiVersions answered correlation id {c}")),
    }
}

/// How to launch Apache (`--apache-backend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// The container when a Docker engine answers, else the JVM.
    #[default]
    Auto,
    /// The broker's jars, launched as a JVM (needs java and mvn).
    Jvm,
    /// The official apache/kafka image through testcontainers (needs Docker).
    Container,
}

impl std::str::FromStr for Backend {
    type Err = String;

    /// `auto`, `jvm` or `container`.
    fn from_str(s: &str) -> Result<Backend, String> {
        match s {
            "auto" => Ok(Backend::Auto),
            "jvm" => Ok(Backend::Jvm),
            "container" => Ok(Backend::Container),
            other => Err(format!("'{other}': expected auto, jvm or container")),
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Backend::Auto => "auto",
            Backend::Jvm => "jvm",
            Backend::Container => "container",
        })
    }
}

impl Backend {
    /// The backend `auto` stands for on this machine, or why none can run: the
    /// container where a Docker engine answers (a 4.x release's transaction version is set
    /// once it runs), else the JVM.
    pub fn resolve(self) -> Result<Backend, ApacheError> {
        match self {
            Backend::Jvm | Backend::Container => Ok(self),
            Backend::Auto => match container::docker_answers() {
                Ok(()) => Ok(Backend::Container),
                Err(docker) => match available() {
                    Ok(()) => Ok(Backend::Jvm),
                    Err(jvm) => Err(ApacheError::NoBackend {
                        docker,
                        jvm: jvm.to_string(),
                    }),
                },
            },
        }
    }

    /// Whether an Apache of `release` can be had here: one kept up by `kconform apache up`,
    /// or one this backend can launch (`auto` resolves); or why not.
    pub fn usable(self, release: &Release) -> Result<(), ApacheError> {
        if daemon::running(release).is_some() {
            return Ok(());
        }
        match self {
            // Resolving auto already probed both backends.
            Backend::Auto => self.resolve().map(|_| ()),
            Backend::Container => container::docker_answers().map_err(ApacheError::Container),
            Backend::Jvm => available(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_have_the_single_broker_transaction_log() {
        assert_eq!(
            setting("transaction.state.log.replication.factor"),
            Some("1")
        );
        assert_eq!(setting("transaction.state.log.min.isr"), Some("1"));
        assert_eq!(setting("no.such.setting"), None);
        // One broker: the same settings (and Apache's default replication of 1).
        let one = cluster_settings(1);
        for s in SETTINGS {
            assert!(
                one.contains(&(s.property, s.value.to_owned())),
                "{}",
                s.property
            );
        }
        assert_eq!(settings_for(1).len(), SETTINGS.len());
        assert_eq!(settings_for(3), cluster_settings(3));
        assert!(one.contains(&("default.replication.factor", "1".into())));
        let three = cluster_settings(3);
        assert!(three.contains(&("transaction.state.log.replication.factor", "3".into())));
        assert!(three.contains(&("transaction.state.log.num.partitions", "3".into())));
    }

    #[test]
    fn a_start_that_lost_a_port_is_tried_again_and_no_other() {
        let lost = || ApacheError::Start {
            reason: "the JVM exited (exit status: 1)".into(),
            log: "Socket server failed to bind to 127.0.0.1:36185: Address already in use.".into(),
        };
        assert!(lost().lost_a_port());
        let mut tries = 0;
        let r: Result<(), _> = retrying_lost_ports(|| {
            tries += 1;
            Err(lost())
        });
        assert!(r.is_err() && tries == PORT_TRIES, "{tries} tries");
        let mut tries = 0;
        let r = retrying_lost_ports(|| {
            tries += 1;
            if tries == 1 {
                Err(lost())
            } else {
                Ok(tries)
            }
        });
        assert_eq!(r.unwrap(), 2);
        let mut tries = 0;
        let r: Result<(), _> = retrying_lost_ports(|| {
            tries += 1;
            Err(ApacheError::Start {
                reason: "not ready within 90s".into(),
                log: String::new(),
            })
        });
        assert!(r.is_err() && tries == 1, "another failure is not retried");
    }

    #[test]
    fn explicit_backends_resolve_to_themselves() {
        assert_eq!(Backend::Jvm.resolve().unwrap(), Backend::Jvm);
        assert_eq!(Backend::Container.resolve().unwrap(), Backend::Container);
    }
}

#[cfg(test)]
mod readiness_tests {
    use super::*;

    #[test]
    fn api_versions_readiness_reads_the_answer() {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for (i, stream) in listener.incoming().take(2).enumerate() {
                let mut s = stream.unwrap();
                let mut req = [0u8; 14];
                s.read_exact(&mut req).unwrap();
                let error: u8 = if i == 0 { 35 } else { 0 };
                // size 6: correlation id 7, then the error code.
                s.write_all(&[0, 0, 0, 6, 0, 0, 0, 7, 0, error]).unwrap();
            }
        });
        assert_eq!(
            answers_api_versions(addr).unwrap_err(),
            "ApiVersions answered error 35"
        );
        assert_eq!(answers_api_versions(addr), Ok(()));
    }
}
