//! `kconform apache up|down|status`: one Apache broker kept running between runs, so that
//! iterating on a scenario costs its own run time, not a broker start each time. The broker
//! is the jvm backend's, of the release asked for (3.7.2 unless `--release` names another),
//! started in its own session (it outlives the command), its state in `<cache>/apache-up/`:
//! `state.json` (pid, address, release), `broker.log`, data. A target of the same release
//! (`--target apache`, `apache@4.4`...) uses it while it is up; every scenario makes its names
//! unique, so earlier runs do not disturb later ones. One is kept at a time.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::jvm::{self, READY_LINE};
use super::{ApacheError, Release};

/// What `up` wrote down about the broker it started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Daemon {
    /// The JVM's process id.
    pub pid: u32,
    /// The client address.
    pub addr: SocketAddr,
    /// The release it runs, as `apache@` names it (`3.7.2`, `4.4.0+tv2`).
    pub version: String,
    /// When it was started (Unix seconds).
    pub started_at: u64,
}

/// `<cache>/apache-up`.
pub fn dir() -> PathBuf {
    super::jars::cache_root().join("apache-up")
}

fn state_path() -> PathBuf {
    dir().join("state.json")
}

/// Whether `pid` is a live Kafka broker JVM (not a recycled pid).
fn is_broker(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|c| String::from_utf8_lossy(&c).contains("kafka.Kafka"))
        .unwrap_or(false)
}

/// The broker `up` started, when it is still running, whatever its release.
pub fn running_any() -> Option<Daemon> {
    let text = std::fs::read_to_string(state_path()).ok()?;
    let daemon: Daemon = serde_json::from_str(&text).ok()?;
    is_broker(daemon.pid).then_some(daemon)
}

/// The broker `up` started, when it is still running and runs `release`.
pub fn running(release: &Release) -> Option<Daemon> {
    running_any().filter(|d| d.version == release.label())
}

/// Starts a broker of `release` unless one is up; returns it and whether it was started now.
/// One of another release up is a refusal: it would be stopped under a run using it.
pub fn up(release: &Release) -> Result<(Daemon, bool), ApacheError> {
    if let Some(d) = running_any() {
        if d.version != release.label() {
            return Err(ApacheError::AnotherUp(d.version));
        }
        return Ok((d, false));
    }
    let dir = dir();
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let (mut cmd, port) = jvm::prepare(&dir, false, release)?;
    let log_path = dir.join("broker.log");
    let log = std::fs::File::create(&log_path)?;
    cmd.stdout(log.try_clone()?)
        .stderr(log)
        .stdin(Stdio::null());
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: setsid is async-signal-safe; it puts the broker in its own session so that
        // it outlives this command and its terminal.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
    }
    let child = cmd.spawn()?;
    let daemon = Daemon {
        pid: child.id(),
        addr: SocketAddr::from(([127, 0, 0, 1], port)),
        version: release.label(),
        started_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
    };
    std::fs::write(
        state_path(),
        serde_json::to_string_pretty(&daemon).map_err(std::io::Error::other)?,
    )?;
    let started = Instant::now();
    loop {
        let log = std::fs::read_to_string(&log_path).unwrap_or_default();
        if log.contains(READY_LINE) && super::answers_api_versions(daemon.addr).is_ok() {
            return Ok((daemon, true));
        }
        let alive = is_broker(daemon.pid);
        if !alive || started.elapsed() > jvm::START_DEADLINE {
            let reason = match alive {
                true => format!("not ready within {:?}", jvm::START_DEADLINE),
                false => "the JVM exited".into(),
            };
            let _ = down();
            return Err(ApacheError::Start {
                reason,
                log: super::tail(&log, 40),
            });
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Stops the broker `up` started (SIGTERM, then SIGKILL after 15 s) and removes its
/// directory; returns whether one was running.
pub fn down() -> Result<bool, ApacheError> {
    let was = running_any();
    if let Some(d) = &was {
        let pid = d.pid as libc::pid_t;
        // SAFETY: signalling a process we started, checked to still be a Kafka broker.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
        let end = Instant::now() + Duration::from_secs(15);
        while is_broker(d.pid) && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(100));
        }
        if is_broker(d.pid) {
            // SAFETY: as above.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
    match std::fs::remove_dir_all(dir()) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
        _ => {}
    }
    Ok(was.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_file_round_trips_and_a_dead_pid_is_not_a_broker() {
        let d = Daemon {
            pid: 1,
            addr: "127.0.0.1:9092".parse().unwrap(),
            version: Release::CLAIMED.label(),
            started_at: 0,
        };
        let text = serde_json::to_string(&d).unwrap();
        assert_eq!(serde_json::from_str::<Daemon>(&text).unwrap(), d);
        // pid 1 is init, not a broker; this process is not one either.
        assert!(!is_broker(1));
        assert!(!is_broker(std::process::id()));
    }
}
