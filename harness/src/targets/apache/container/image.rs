//! The container itself (feature `docker`): the requests testcontainers starts, and the
//! running container kconform drives.

use std::net::SocketAddr;
use std::time::Duration;

use testcontainers_modules::kafka::apache;
use testcontainers_modules::testcontainers::core::{ContainerPort, WaitFor};
use testcontainers_modules::testcontainers::runners::AsyncRunner;
use testcontainers_modules::testcontainers::{
    ContainerAsync, ContainerRequest, GenericImage, ImageExt,
};

use super::super::release::Release;
use super::super::{ApacheError, SETTINGS};
use super::{docker_answers, env_name, START_DEADLINE};

/// The secured broker's container request: the same image and [`SETTINGS`], its own KRaft
/// configuration (the Kafka module's fixes a PLAINTEXT listener), a `CLIENT` listener requiring
/// SASL on `host_port`, an internal `BROKER` listener advertised as `localhost:9093` (markers go
/// through it from inside the container) and the security settings of the JVM backend
/// ([`crate::security::apache_settings`]). Listener names avoid `SASL_`, which the image
/// would want KAFKA_OPTS for. SCRAM users come after the start
/// ([`crate::wire::sasl::upsert_scram_users`]): the image formats storage itself.
pub fn secured_request(host_port: u16, release: &Release) -> ContainerRequest<GenericImage> {
    let image = GenericImage::new("apache/kafka", &release.version())
        .with_wait_for(WaitFor::message_on_stdout(super::super::jvm::READY_LINE));
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
        let host_port = super::super::jvm::free_port()?;
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
    super::super::features::set_transaction_version(
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
}
