//! A broker of the matrix installed and started by its entry's commands: the install run to
//! its end, the broker started in a process group of its own on a port kconform gives it, with
//! its data in a folder kconform gives it, waited for until it answers ApiVersions (the
//! transaction APIs it advertises kept), and stopped with its whole group when dropped. What
//! either printed goes to a log beside the broker's pages, and a failure says its last lines.

use std::fs::File;
use std::io::Write as _;
use std::net::SocketAddr;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::wire::client::Connection;

/// How long an install may take.
const INSTALL_DEADLINE: Duration = Duration::from_secs(30 * 60);

/// Why a broker could not be had.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Its install command failed.
    #[error("its install failed ({status}): {tail}")]
    Install {
        /// How it ended.
        status: String,
        /// The log's last lines.
        tail: String,
    },
    /// Its command could not start, or ended, or never answered.
    #[error("it did not start: {why}{}", if .tail.is_empty() { String::new() } else { format!(": {}", .tail) })]
    Start {
        /// What happened.
        why: String,
        /// The log's last lines.
        tail: String,
    },
    /// Its log could not be written.
    #[error("its log {path}: {source}")]
    Log {
        /// The log.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// A broker running from its entry's command; stopped (its process group killed, its standard
/// input closed) when dropped.
pub struct Started {
    child: Child,
    /// Where it serves.
    pub addr: SocketAddr,
    /// The APIs it advertised: key, lowest and highest version.
    pub advertised: Vec<(i16, i16, i16)>,
}

impl Drop for Started {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        kill_group(self.child.id());
        let _ = self.child.wait();
    }
}

/// SIGKILL to the process group `leader` leads (a broker or an install, and all they started).
fn kill_group(leader: u32) {
    // SAFETY: kill(2) on a process group; no memory is touched.
    unsafe { libc::kill(-(leader as i32), libc::SIGKILL) };
}

/// `command` with `{port}`, `{data_dir}` and `{install_dir}` filled in (`{brokers_dir}`, the
/// brokers file's folder, is filled in when the file is read).
pub fn fill(command: &str, port: u16, data_dir: &Path, install_dir: &Path) -> String {
    command
        .replace("{port}", &port.to_string())
        .replace("{data_dir}", &data_dir.display().to_string())
        .replace("{install_dir}", &install_dir.display().to_string())
}

/// Runs `install` (`sh -c`, in `install_dir`) to its end, its output appended to `log`; its
/// whole process group killed past [`INSTALL_DEADLINE`].
pub async fn install(install: &str, install_dir: &Path, log: &Path) -> Result<(), StartError> {
    std::fs::create_dir_all(install_dir).map_err(|source| StartError::Log {
        path: install_dir.to_owned(),
        source,
    })?;
    let script = fill(install, 0, install_dir, install_dir);
    let mut command = shell(&script, log)?;
    command.current_dir(install_dir).stdin(Stdio::null());
    let mut child = tokio::process::Command::from(command)
        .spawn()
        .map_err(|e| StartError::Install {
            status: format!("sh could not start: {e}"),
            tail: String::new(),
        })?;
    let status = match tokio::time::timeout(INSTALL_DEADLINE, child.wait()).await {
        Ok(Ok(status)) if status.success() => return Ok(()),
        Ok(Ok(status)) => status.to_string(),
        Ok(Err(e)) => format!("its status could not be read: {e}"),
        Err(_) => {
            if let Some(pid) = child.id() {
                kill_group(pid);
            }
            let _ = child.wait().await;
            format!("did not end within {} min", INSTALL_DEADLINE.as_secs() / 60)
        }
    };
    Err(StartError::Install {
        status,
        tail: tail(log),
    })
}

/// Starts `command` (filled in) on 127.0.0.1:`port` and waits up to `ready` for it to answer
/// ApiVersions; its output goes to `log`.
pub async fn start(
    command: &str,
    port: u16,
    data_dir: &Path,
    install_dir: &Path,
    ready: Duration,
    log: &Path,
) -> Result<Started, StartError> {
    std::fs::create_dir_all(data_dir).map_err(|source| StartError::Log {
        path: data_dir.to_owned(),
        source,
    })?;
    let script = fill(command, port, data_dir, install_dir);
    let child = shell(&script, log)?
        .current_dir(install_dir)
        .stdin(Stdio::piped())
        .spawn()
        .map_err(|e| StartError::Start {
            why: format!("sh could not start: {e}"),
            tail: String::new(),
        })?;
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut started = Started {
        child,
        addr,
        advertised: Vec::new(),
    };
    let until = Instant::now() + ready;
    let mut last = String::from("nothing answered");
    while Instant::now() < until {
        if let Ok(Some(status)) = started.child.try_wait() {
            return Err(StartError::Start {
                why: format!("its command ended ({status})"),
                tail: tail(log),
            });
        }
        match advertised(addr, Duration::from_secs(5)).await {
            Ok(apis) => {
                started.advertised = apis;
                return Ok(started);
            }
            Err(why) => last = why,
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    Err(StartError::Start {
        why: format!(
            "no ApiVersions answer within {} s ({last})",
            ready.as_secs()
        ),
        tail: tail(log),
    })
}

/// The APIs the broker at `addr` advertises, within `deadline`: asked as today's clients ask
/// (ApiVersions v3, as the Java client and librdkafka do), then as old ones do (v0) where v3
/// gets no usable answer, as a client falls back.
pub async fn advertised(
    addr: SocketAddr,
    deadline: Duration,
) -> Result<Vec<(i16, i16, i16)>, String> {
    let v3 = ask(addr, deadline, 3).await;
    match v3 {
        Ok(apis) => Ok(apis),
        Err(v3) => ask(addr, deadline, 0)
            .await
            .map_err(|v0| format!("ApiVersions v3: {v3}; v0: {v0}")),
    }
}

/// ApiVersions at `version` on a fresh connection: the APIs, or why none.
async fn ask(
    addr: SocketAddr,
    deadline: Duration,
    version: i16,
) -> Result<Vec<(i16, i16, i16)>, String> {
    let mut connection = Connection::connect(addr, deadline)
        .await
        .map_err(|e| e.to_string())?;
    let r = connection
        .api_versions_at(version)
        .await
        .map_err(|e| e.to_string())?;
    match r.error_code {
        0 => Ok(r
            .api_keys
            .iter()
            .map(|k| (k.api_key, k.min_version, k.max_version))
            .collect()),
        code => Err(format!("error code {code}")),
    }
}

/// The transaction APIs among `advertised`.
pub fn transaction_apis(advertised: &[(i16, i16, i16)]) -> Vec<i16> {
    advertised
        .iter()
        .map(|(key, _, _)| *key)
        .filter(|key| {
            crate::api::TRANSACTION_KEYS
                .iter()
                .any(|k| *k as i16 == *key)
        })
        .collect()
}

/// `sh -c script`, leading a process group of its own, its output appended to `log`.
fn shell(script: &str, log: &Path) -> Result<Command, StartError> {
    let (mut out, err) = log_files(log).map_err(|source| StartError::Log {
        path: log.to_owned(),
        source,
    })?;
    let _ = writeln!(out, "$ {script}");
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(script)
        .stdout(out)
        .stderr(err)
        .process_group(0);
    Ok(command)
}

/// `log` opened twice for appending: a process's standard output and its standard error.
pub fn log_files(log: &Path) -> std::io::Result<(File, File)> {
    let open = || {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
    };
    Ok((open()?, open()?))
}

/// The last lines of `log`, on one line.
pub fn tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(3)..].join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The placeholders are filled, each wherever it stands.
    #[test]
    fn placeholders_are_filled() {
        assert_eq!(
            fill(
                "b --port {port} --dir {data_dir} --bin {install_dir}/b {port}",
                9,
                Path::new("/d"),
                Path::new("/i")
            ),
            "b --port 9 --dir /d --bin /i/b 9"
        );
    }

    /// A failing install is refused with its status and its last lines; one that works is done.
    #[tokio::test]
    async fn a_failing_install_says_its_status_and_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        install("echo fetched; touch done", &dir.path().join("i"), &log)
            .await
            .unwrap();
        assert!(dir.path().join("i/done").exists());
        let err = install(
            "echo no such package >&2; exit 3",
            &dir.path().join("i"),
            &log,
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(err.contains("exit status: 3"), "{err}");
        assert!(err.contains("no such package"), "{err}");
    }

    /// A command that ends at once, and one that never answers, are refused, named.
    #[tokio::test]
    async fn a_broker_that_ends_or_never_answers_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let port = reference_broker::ports::free_port([127, 0, 0, 1].into()).unwrap();
        let (data, inst) = (dir.path().join("d"), dir.path().join("i"));
        std::fs::create_dir_all(&inst).unwrap();
        let refused = |command: &'static str, ready: u64| {
            let (data, inst, log) = (data.clone(), inst.clone(), log.clone());
            async move {
                let started = start(
                    command,
                    port,
                    &data,
                    &inst,
                    Duration::from_secs(ready),
                    &log,
                );
                started.await.err().unwrap().to_string()
            }
        };
        let ended = refused("echo bad flag {port} >&2; exit 2", 5).await;
        assert!(
            ended.contains("its command ended") && ended.contains("bad flag"),
            "{ended}"
        );
        let silent = refused("sleep 30 # {port}", 1).await;
        assert!(
            silent.contains("no ApiVersions answer within 1 s"),
            "{silent}"
        );
    }

    /// Only the six transaction APIs count as such.
    #[test]
    fn the_transaction_apis_are_the_six() {
        let apis = [(18, 0, 3), (22, 0, 4), (23, 0, 4), (28, 0, 3)];
        assert_eq!(transaction_apis(&apis), [22, 28]);
    }
}
