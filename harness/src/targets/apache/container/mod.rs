//! The `container` backend: the official `apache/kafka` image (the JVM one, not
//! `kafka-native`) at the target's [`Release`](super::Release) through testcontainers,
//! configured with the same [`SETTINGS`](super::SETTINGS) as the JVM backend. Chosen by `--apache-backend container`, or by `auto` when a
//! Docker engine answers. No machine the tests run on has one, so the tests check the request
//! this module builds and the engine probe; the start itself runs in users' CI. The container
//! (testcontainers and the Docker client under it) is the `docker` feature's, on by default; a
//! build without it has the probe and a one-line refusal in its place.

use std::time::Duration;

#[cfg(feature = "docker")]
mod image;
#[cfg(not(feature = "docker"))]
mod without;

#[cfg(feature = "docker")]
pub use image::{request, secured_request, ApacheContainer};
#[cfg(not(feature = "docker"))]
pub use without::ApacheContainer;

/// What a build without the `docker` feature says where the container backend is asked for.
pub const WITHOUT_DOCKER: &str = "this kconform was built without the `docker` feature (cargo build --features docker): Apache runs as a JVM only";

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
    if cfg!(not(feature = "docker")) {
        return Err(WITHOUT_DOCKER.into());
    }
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
