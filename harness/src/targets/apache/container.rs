//! The `container` backend: the official `apache/kafka` image (the JVM one, not
//! `kafka-native`) at the target's [`Release`] through testcontainers, configured with the same
//! [`SETTINGS`] as the JVM backend. Chosen by `--apache-backend container`, or by `auto` when a
//! Docker engine answers. No machine the tests run on has one, so the tests check the request
//! this module builds and the engine probe; the start itself runs in users' CI.

use std::net::SocketAddr;
use std::time::Duration;

use testcontainers_modules::kafka::apache;
use testcontainers_modules::testcontainers::core::{ContainerPort, WaitFor};
use testcontainers_modules::testcontainers::runners::AsyncRunner;
use testcontainers_modules::testcontainers::{
    ContainerAsync, ContainerRequest, GenericImage, ImageExt,
};

use super::release::Release;
use super::{ApacheError, SETTINGS};

/// How long pulling and starting the image may take.
pub const START_DEADLINE: Duration = Duration::from_secs(300);

/// The environment variable the image reads a broker setting from
/// (`transaction.state.log.min.isr` → `KAFKA_TRANSACTION_STATE_LOG_MIN_ISR`; the image reads
/// `__` as `_` and `___` as `-`).
pub fn env_name(setting: &str) -> String {
    let escaped = setting
        .replace('_', "__")
        .replace('-', "___")
        .replace('.', "_");
    format!("KAFKA_{}", escaped.to_uppercase())
}

/// The secured broker's container request: the same image and [`SETTINGS`], its own KRaft
/// configuration (the Kafka module's fixes a PLAINTEXT listener), a `CLIENT` listener requiring
/// SASL on `host_port`, an internal `BROKER` listener advertised as `localhost:9093` (markers go
/// through it from inside the container) and the security settings of the JVM backend
/// ([`crate::security::apache_settings`]). Listener names avoid `SASL_`, which the image
/// would want KAFKA_OPTS for. SCRAM users come after the start
/// ([`crate::wire::sasl::upsert_scram_users`]): the image formats storage itself.
pub fn secured_request(host_port: u16, release: &Release) -> ContainerRequest<GenericImage> {
    let image = GenericImage::new("apache/kafka", &release.version())
        .with_wait_for(WaitFor::message_on_stdout(super::jvm::READY_LINE));
    let mut settings: Vec<(String, String)> = vec![
        ("node.id".into(), "1".into()),
        ("process.roles".into(), "broker,controller".into()),
        ("controller.quorum.voters".into(), "1@localhost:9094".into()),
        (
            "listeners".into(),
            "CLIENT://0.0.0.0:9092,BROKER://0.0.0.0:9093,CONTROLLER://0.0.0.0:9094".into(),
        ),
        (
            "advertised.listeners".into(),
            format!("CLIENT://127.0.0.1:{host_port},BROKER://localhost:9093"),
        ),
        (
            "listener.security.protocol.map".into(),
            "CLIENT:SASL_PLAINTEXT,BROKER:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT".into(),
        ),
        ("inter.broker.listener.name".into(), "BROKER".into()),
        ("controller.listener.names".into(), "CONTROLLER".into()),
    ];
    settings.extend(
        SETTINGS
            .iter()
            .map(|s| (s.property.to_owned(), s.value.to_owned())),
    );
    settings.extend(crate::security::apache_settings(&["client", "broker"]));
    let mut request = image
        .with_mapped_port(host_port, ContainerPort::Tcp(9092))
        .with_startup_timeout(START_DEADLINE);
    for (key, value) in settings {
        request = request.with_env_var(env_name(&key), value);
    }
    request
}

/// The container request: the JVM image, the release's tag, [`SETTINGS`] as environment.
pub fn request(release: &Release) -> ContainerRequest<apache::Kafka> {
    let mut request = apache::Kafka::default()
        .with_jvm_image()
        .with_tag(release.version())
        .with_startup_timeout(START_DEADLINE);
    for s in SETTINGS {
        request = request.with_env_var(env_name(s.property), s.value);
    }
    request
}

/// A running container; removed when dropped.
pub struct ApacheContainer {
    /// The client address (the image advertises 127.0.0.1 and the mapped port).
    pub addr: SocketAddr,
    _container: Running,
}

/// The container, of the Kafka module's image or of the secured generic one.
enum Running {
    Plain(ContainerAsync<apache::Kafka>),
    Secured(ContainerAsync<GenericImage>),
}

impl std::fmt::Debug for ApacheContainer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApacheContainer")
            .field("addr", &self.addr)
            .finish()
    }
}

impl ApacheContainer {
    /// Stops and removes the container.
    pub async fn stop(self) {
        let removed = match self._container {
            Running::Plain(c) => c.rm().await,
            Running::Secured(c) => c.rm().await,
        };
        if let Err(e) = removed {
            tracing::warn!(error = %e, "removing the Apache container failed");
        }
    }

    /// Pulls (once) and starts the image; returns once the broker logged "Kafka Server
    /// started".
    pub async fn start(release: &Release) -> Result<ApacheContainer, ApacheError> {
        docker_answers().map_err(ApacheError::Container)?;
        let container = request(release)
            .start()
            .await
            .map_err(|e| ApacheError::Container(e.to_string()))?;
        let port = container
            .get_host_port_ipv4(ContainerPort::Tcp(9092))
            .await
            .map_err(|e| ApacheError::Container(e.to_string()))?;
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        if release.has_transaction_version_feature() {
            let mut conn = crate::wire::client::Connection::connect(addr, Duration::from_secs(30))
                .await
                .map_err(|e| ApacheError::Container(e.to_string()))?;
            give_transaction_version(release, &mut conn).await?;
        }
        Ok(ApacheContainer {
            addr,
            _container: Running::Plain(container),
        })
    }

    /// Starts the secured broker ([`secured_request`]) and gives its users SCRAM credentials.
    pub async fn start_secured(release: &Release) -> Result<ApacheContainer, ApacheError> {
        docker_answers().map_err(ApacheError::Container)?;
        let host_port = super::jvm::free_port()?;
        let container = secured_request(host_port, release)
            .start()
            .await
            .map_err(|e| ApacheError::Container(e.to_string()))?;
        let addr = SocketAddr::from(([127, 0, 0, 1], host_port));
        crate::wire::sasl::upsert_scram_users(addr, Duration::from_secs(30))
            .await
            .map_err(ApacheError::Container)?;
        if release.has_transaction_version_feature() {
            let mut conn = crate::wire::sasl::super_user(addr, Duration::from_secs(30))
                .await
                .map_err(ApacheError::Container)?;
            give_transaction_version(release, &mut conn).await?;
        }
        Ok(ApacheContainer {
            addr,
            _container: Running::Secured(container),
        })
    }
}

/// Gives a release with the `transaction.version` feature (4.x) the level asked for: the image
/// formats its own storage with its release's defaults, so the level is set once the broker
/// runs, through the Admin API ([`super::features`]), and checked finalized before any
/// scenario. `conn` is a connection allowed to (the super user's, on a secured broker); the
/// callers open one only for a release that has the feature.
async fn give_transaction_version(
    release: &Release,
    conn: &mut crate::wire::client::Connection,
) -> Result<(), ApacheError> {
    super::features::set_transaction_version(
        conn,
        i16::from(release.transaction_version),
        Duration::from_secs(30),
    )
    .await
    .map_err(|why| {
        ApacheError::Container(format!(
            "{release}: the image's transaction.version could not be set: {why}"
        ))
    })
}

/// The Docker engine's socket: `DOCKER_HOST` when it names a unix socket, else the default.
fn docker_socket() -> Result<std::path::PathBuf, String> {
    match std::env::var("DOCKER_HOST") {
        Ok(host) => match host.strip_prefix("unix://") {
            Some(path) => Ok(path.into()),
            // A TCP engine: testcontainers speaks to it; trust it is there.
            None if host.starts_with("tcp://") => Err(String::new()),
            None => Err(format!(
                "DOCKER_HOST={host} is not a unix:// or tcp:// address"
            )),
        },
        Err(_) => Ok("/var/run/docker.sock".into()),
    }
}

/// Whether a Docker engine answers `GET /_ping` within two seconds, or why not.
pub fn docker_answers() -> Result<(), String> {
    match docker_socket() {
        Ok(path) => ping(&path),
        Err(e) if e.is_empty() => Ok(()),
        Err(e) => Err(e),
    }
}

/// `GET /_ping` on the engine socket at `path`.
fn ping(path: &std::path::Path) -> Result<(), String> {
    use std::io::{Read, Write};
    let mut stream = std::os::unix::net::UnixStream::connect(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let deadline = Some(Duration::from_secs(2));
    stream
        .set_read_timeout(deadline)
        .and_then(|()| stream.set_write_timeout(deadline))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    // Something that answers (and closes) before it has read the request leaves the write
    // failing (a broken pipe) with its answer already there to read: that answer says more.
    let sent = stream.write_all(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n");
    let mut answer = String::new();
    let _ = (&stream).take(4096).read_to_string(&mut answer);
    if let (Err(e), true) = (sent, answer.is_empty()) {
        return Err(format!("{}: {e}", path.display()));
    }
    match answer.starts_with("HTTP/1.") && answer.contains(" 200 ") {
        true => Ok(()),
        false => Err(format!(
            "{} answered {:?}",
            path.display(),
            answer.lines().next().unwrap_or("nothing")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request's environment, after checking it is the pinned image with [`SETTINGS`].
    fn pinned_with_settings<I: testcontainers_modules::testcontainers::Image>(
        r: &ContainerRequest<I>,
    ) -> std::collections::HashMap<String, String> {
        assert_eq!(r.descriptor(), "apache/kafka:3.7.2");
        let env: std::collections::HashMap<String, String> = r
            .env_vars()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        for s in SETTINGS {
            assert_eq!(
                env.get(&env_name(s.property)).map(String::as_str),
                Some(s.value),
                "{}",
                s.property
            );
        }
        env
    }

    #[test]
    fn the_request_is_the_pinned_jvm_image_with_the_shared_settings() {
        let r = request(&Release::CLAIMED);
        let env = pinned_with_settings(&r);
        assert_eq!(
            env.get("KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR")
                .map(String::as_str),
            Some("1")
        );
        // The module's own KRaft settings survive ours.
        assert_eq!(
            env.get("KAFKA_PROCESS_ROLES").map(String::as_str),
            Some("broker,controller")
        );
        assert_eq!(r.startup_timeout(), Some(START_DEADLINE));
    }

    #[test]
    fn a_release_is_its_image_tag() {
        let r38 = Release::parse("3.8").unwrap();
        assert_eq!(request(&r38).descriptor(), "apache/kafka:3.8.1");
        let tv2 = Release::parse("4.4+tv2").unwrap();
        assert_eq!(request(&tv2).descriptor(), "apache/kafka:4.4.0");
    }

    #[test]
    fn env_names_follow_the_image_convention() {
        assert_eq!(
            env_name("transaction.abort.timed.out.transaction.cleanup.interval.ms"),
            "KAFKA_TRANSACTION_ABORT_TIMED_OUT_TRANSACTION_CLEANUP_INTERVAL_MS"
        );
        assert_eq!(
            env_name("listener.name.client.scram-sha-512.sasl.jaas.config"),
            "KAFKA_LISTENER_NAME_CLIENT_SCRAM___SHA___512_SASL_JAAS_CONFIG"
        );
        assert_eq!(env_name("a_b.c"), "KAFKA_A__B_C");
    }

    #[test]
    fn the_secured_request_carries_the_jvm_backends_security_on_its_own_listeners() {
        let r = secured_request(19092, &Release::CLAIMED);
        let env = pinned_with_settings(&r);
        for (key, value) in crate::security::apache_settings(&["client", "broker"]) {
            assert_eq!(env.get(&env_name(&key)), Some(&value), "{key}");
        }
        assert_eq!(
            env.get("KAFKA_ADVERTISED_LISTENERS").map(String::as_str),
            Some("CLIENT://127.0.0.1:19092,BROKER://localhost:9093")
        );
        assert_eq!(
            env.get("KAFKA_LISTENER_SECURITY_PROTOCOL_MAP")
                .map(String::as_str),
            Some("CLIENT:SASL_PLAINTEXT,BROKER:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT")
        );
        assert!(
            env.keys().all(|k| !k.contains("SASL_PLAINTEXT")),
            "no listener named SASL_…: the image would want KAFKA_OPTS"
        );
        assert_eq!(
            env.get("KAFKA_ALLOW_EVERYONE_IF_NO_ACL_FOUND")
                .map(String::as_str),
            Some("false")
        );
        assert_eq!(r.startup_timeout(), Some(START_DEADLINE));
    }

    #[test]
    fn a_missing_engine_is_reported_with_its_socket() {
        // A socket path that cannot exist: the probe names it instead of hanging.
        let dir = tempfile::tempdir().unwrap();
        let e = ping(&dir.path().join("docker.sock")).unwrap_err();
        assert!(e.contains("docker.sock"), "{e}");
        // Something that is not an engine answering on the socket, at once and without reading
        // the request: whether the probe's write fails first (a broken pipe) is a race, tried
        // a few times, and either way the answer is what the probe reports.
        for i in 0..20 {
            let path = dir.path().join(format!("not-docker-{i}.sock"));
            let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
            std::thread::spawn(move || {
                use std::io::Write;
                if let Ok((mut s, _)) = listener.accept() {
                    let _ = s.write_all(b"HTTP/1.0 404 Not Found\r\n\r\n");
                }
            });
            let e = ping(&path).unwrap_err();
            assert!(e.contains("404"), "{e}");
        }
    }
}
