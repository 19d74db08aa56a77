//! Brings a broker that stopped answering back, so that a night of fuzzing survives its
//! crashes: by a command the user gives (`--restart-cmd`: `systemctl restart kaas`, `kubectl
//! delete pod kaas-0`, a script), or by owning the broker's process (`--broker-cmd`: kconform
//! starts it, keeps its output as the broker's log, kills and starts it again). Either way it
//! then waits until the broker answers ApiVersions again. What the broker said as it died is
//! read from its log ([`Keeper::dying_words`]): the output of a process kconform owns, or the
//! file `--broker-log` names.

use std::io::{Read, Seek, SeekFrom};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::broker_log::{self, OwnedLog};
use crate::targets::kaas_build::BuildCluster;
use crate::wire::client::Connection;

/// How much of a broker's log, at most, is read for its last words.
const LOG_TAIL: u64 = 64 * 1024;

/// How a broker that stopped answering is brought back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revive {
    /// It cannot be: the run ends at the first crash.
    Cannot,
    /// This shell command brings it back (the broker runs on its own).
    Command(String),
    /// kconform runs the broker: this shell command starts it, and a crashed one is killed
    /// (its whole process group) and started again.
    Own(String),
    /// kconform runs this kaas build as a cluster of one ([`BuildCluster`]: its variables, its
    /// Kubernetes API, its log), and starts it again when it dies (`--target build=PATH`).
    Build(PathBuf),
}

/// Why a broker could not be brought back.
#[derive(Debug, thiserror::Error)]
pub enum KeeperError {
    /// The command could not be run.
    #[error("{what} '{command}' could not be run: {error}")]
    Spawn {
        /// `--restart-cmd` or `--broker-cmd`.
        what: &'static str,
        /// The command.
        command: String,
        /// Why.
        error: std::io::Error,
    },
    /// The restart command failed.
    #[error("--restart-cmd '{command}' failed ({status}){output}")]
    Failed {
        /// The command.
        command: String,
        /// Its exit status.
        status: String,
        /// The end of what it printed.
        output: String,
    },
    /// The broker did not answer in time.
    #[error("the broker at {addr} did not answer ApiVersions within {waited:?} of {how}{log}")]
    NotBack {
        /// Where it was asked.
        addr: SocketAddr,
        /// How long kconform waited.
        waited: Duration,
        /// What was done.
        how: String,
        /// The end of its log, where one is kept.
        log: String,
    },
    /// The log file.
    #[error("the broker's log {0}: {1}")]
    Log(String, std::io::Error),
    /// The kaas build could not be started, or started again.
    #[error("the build: {0}")]
    Build(String),
}

/// Keeps a broker answering: see the module documentation.
#[derive(Debug)]
pub struct Keeper {
    how: Revive,
    addr: SocketAddr,
    wait: Duration,
    log: Option<PathBuf>,
    /// The output of the broker kconform owns, kept as its log (at `log`).
    owned_log: Option<OwnedLog>,
    /// Where the broker's current life starts in its log.
    life_from: u64,
    child: Option<Child>,
    /// The kaas build kconform runs ([`Revive::Build`]), once started.
    cluster: Option<BuildCluster>,
    /// How the owned process ended, once it has.
    ended: Option<String>,
    /// Restarts done.
    pub restarts: u64,
    /// Time spent bringing the broker back.
    pub restarting: Duration,
    /// Why the next restart is made (the caller says so before it asks for one).
    pub purpose: &'static str,
    /// Restarts and their time, by why they were made: what a run's time restarting went on.
    pub why: std::collections::BTreeMap<&'static str, (u64, Duration)>,
}

/// Why a restart is made when nobody said otherwise: the broker stopped answering.
pub const STOPPED_ANSWERING: &str = "the broker stopped answering";

impl Keeper {
    /// A keeper of the broker at `addr`, reviving it `how`, waiting up to `wait` for it to
    /// answer; its log is `log` (for [`Revive::Own`], where the process's output goes).
    pub fn new(how: Revive, addr: SocketAddr, log: Option<PathBuf>, wait: Duration) -> Keeper {
        Keeper {
            how,
            addr,
            wait,
            log,
            owned_log: None,
            life_from: 0,
            child: None,
            cluster: None,
            ended: None,
            restarts: 0,
            restarting: Duration::ZERO,
            purpose: STOPPED_ANSWERING,
            why: Default::default(),
        }
    }

    /// A keeper that cannot revive anything: the run ends at the first crash.
    pub fn cannot(addr: SocketAddr) -> Keeper {
        Keeper::new(Revive::Cannot, addr, None, Duration::ZERO)
    }

    /// Whether a broker that stopped answering can be brought back.
    pub fn can_revive(&self) -> bool {
        self.how != Revive::Cannot
    }

    /// Whether there is a log to read the broker's last words from.
    pub fn has_log(&self) -> bool {
        self.log.is_some()
    }

    /// The broker's log, if one is kept or named.
    pub fn log_path(&self) -> Option<&Path> {
        self.log.as_deref()
    }

    /// Starts the broker kconform owns and waits until it answers (nothing to do for the
    /// other ways: that broker runs already). Not counted as a restart.
    pub async fn start(&mut self) -> Result<(), KeeperError> {
        match self.how.clone() {
            Revive::Own(command) => {
                self.spawn(&command)?;
                self.answering(&format!("starting '{command}'")).await?;
            }
            Revive::Build(bin) => {
                let cluster = BuildCluster::start(&bin, 1, None, Vec::new())
                    .await
                    .map_err(|e| KeeperError::Build(e.to_string()))?;
                self.addr = cluster.addrs()[0];
                self.log = Some(cluster.dir().join("kaas-0.log"));
                self.cluster = Some(cluster);
                self.answering(&format!("starting {}", bin.display()))
                    .await?;
            }
            Revive::Cannot | Revive::Command(_) => {}
        }
        self.life_from = self.log_len();
        Ok(())
    }

    /// Where the broker listens: for [`Revive::Build`], known once it started.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Brings the broker back: kills the process kconform owns (alive or not) and starts it
    /// again, or runs the restart command; then waits until it answers ApiVersions.
    pub async fn revive(&mut self) -> Result<(), KeeperError> {
        let started = Instant::now();
        let how = match self.how.clone() {
            Revive::Cannot => {
                return Err(KeeperError::NotBack {
                    addr: self.addr,
                    waited: Duration::ZERO,
                    how: "nothing: no --restart-cmd or --broker-cmd was given".into(),
                    log: String::new(),
                })
            }
            Revive::Own(command) => {
                self.kill().await;
                self.spawn(&command)?;
                format!("starting '{command}' again")
            }
            Revive::Command(command) => {
                run_restart_command(&command, self.wait).await?;
                format!("running '{command}'")
            }
            Revive::Build(bin) => {
                let Some(cluster) = self.cluster.as_mut() else {
                    return Err(KeeperError::Build("the build was never started".into()));
                };
                let _ = cluster.kill(0).await;
                cluster
                    .restart(0)
                    .await
                    .map_err(|e| KeeperError::Build(e.to_string()))?;
                format!("starting {} again", bin.display())
            }
        };
        self.answering(&how).await?;
        self.life_from = self.log_len();
        self.restarts += 1;
        self.restarting += started.elapsed();
        let why = self.why.entry(self.purpose).or_default();
        why.0 += 1;
        why.1 += started.elapsed();
        Ok(())
    }

    /// What the broker wrote to its log in its current life (the last 64 KiB of it), and how
    /// its owned process ended if it has: where its last words are.
    pub fn dying_words(&mut self) -> String {
        let ended = self.exit_status().is_some();
        if let (true, Some(log)) = (ended, &mut self.owned_log) {
            // Its last words may still be in the pipes.
            log.settle(Duration::from_secs(1));
        }
        let mut text = self.read_log_from(self.life_from);
        if let Some(status) = self.exit_status() {
            text.push_str(&format!("\n[kconform: the broker's process {status}]\n"));
        }
        text
    }

    /// Where the log ends now: [`Keeper::log_since`] reads what comes after.
    pub fn log_mark(&self) -> u64 {
        self.log_len()
    }

    /// What the log gained since `mark` (the last 64 KiB of it).
    pub fn log_since(&self, mark: u64) -> String {
        self.read_log_from(mark)
    }

    /// Stops the broker kconform owns.
    pub async fn stop(&mut self) {
        self.kill().await;
        if let Some(cluster) = self.cluster.take() {
            cluster.stop().await;
        }
    }

    fn spawn(&mut self, command: &str) -> Result<(), KeeperError> {
        let spawn_error = |error| KeeperError::Spawn {
            what: "--broker-cmd",
            command: command.to_owned(),
            error,
        };
        if let (None, Some(path)) = (&self.owned_log, &self.log) {
            let log = OwnedLog::open(path, broker_log::KEEP)
                .map_err(|e| KeeperError::Log(path.display().to_string(), e))?;
            self.owned_log = Some(log);
        }
        let (out, err) = match self.owned_log {
            Some(_) => (Stdio::piped(), Stdio::piped()),
            None => (Stdio::null(), Stdio::null()),
        };
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(command)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        // A Rust broker prints a stack backtrace as it dies, which signs its crash by the
        // site in its own code ([`super::last_words`]); a setting of the user's stands.
        if std::env::var_os("RUST_BACKTRACE").is_none() {
            cmd.env("RUST_BACKTRACE", "1");
        }
        {
            use std::os::unix::process::CommandExt;
            // Its own process group, so that a kill reaches what the shell started too.
            cmd.process_group(0);
        }
        reference_broker::child::dies_with_its_thread(&mut cmd);
        let mut child = cmd.spawn().map_err(spawn_error)?;
        if let Some(log) = &mut self.owned_log {
            if let Some(out) = child.stdout.take() {
                log.copy(out);
            }
            if let Some(err) = child.stderr.take() {
                log.copy(err);
            }
        }
        self.child = Some(child);
        self.ended = None;
        Ok(())
    }

    /// Kills the owned process's group and reaps it.
    async fn kill(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let group = child.id() as i32;
        // SAFETY: kill(2) with a negative pid signals that process group; no memory is shared.
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
        for _ in 0..100 {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tracing::warn!("the broker's process {group} did not end within 2 s of SIGKILL");
    }

    /// How the owned process ended ("was killed by signal 6 (SIGABRT)"), once it has.
    fn exit_status(&mut self) -> Option<String> {
        if self.ended.is_none() {
            let status = self.child.as_mut()?.try_wait().ok()??;
            self.ended = Some(describe_exit(status));
        }
        self.ended.clone()
    }

    /// Waits until the broker answers ApiVersions, or `wait` passes, or the owned process
    /// ends.
    async fn answering(&mut self, how: &str) -> Result<(), KeeperError> {
        let started = Instant::now();
        loop {
            let probe = Duration::from_millis(1000);
            if let Ok(mut conn) = Connection::connect(self.addr, probe).await {
                if conn.api_versions().await.is_ok() {
                    return Ok(());
                }
            }
            let ended = self.exit_status();
            if ended.is_some() || started.elapsed() >= self.wait {
                let tail = self.read_log_from(self.life_from);
                let tail: Vec<&str> = tail.lines().rev().take(10).collect();
                let mut log = String::new();
                if let Some(status) = ended {
                    log.push_str(&format!(" (its process {status})"));
                }
                if !tail.is_empty() {
                    let lines: Vec<&str> = tail.into_iter().rev().collect();
                    log.push_str(&format!("; its log ends:\n{}", lines.join("\n")));
                }
                return Err(KeeperError::NotBack {
                    addr: self.addr,
                    waited: started.elapsed(),
                    how: how.to_owned(),
                    log,
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn log_len(&self) -> u64 {
        if let Some(log) = &self.owned_log {
            return log.mark();
        }
        self.log
            .as_ref()
            .and_then(|p| std::fs::metadata(p).ok())
            .map_or(0, |m| m.len())
    }

    fn read_log_from(&self, from: u64) -> String {
        if let Some(log) = &self.owned_log {
            return log.since(from);
        }
        let Some(path) = &self.log else {
            return String::new();
        };
        let Ok(mut file) = std::fs::File::open(path) else {
            return String::new();
        };
        let len = file.metadata().map_or(0, |m| m.len());
        // A log that was rotated or truncated since: read what there is.
        let from = match from > len {
            true => 0,
            false => from.max(len.saturating_sub(LOG_TAIL)),
        };
        let mut bytes = Vec::new();
        if file.seek(SeekFrom::Start(from)).is_ok() {
            let _ = file.take(LOG_TAIL).read_to_end(&mut bytes);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        if let Some(child) = &self.child {
            // SAFETY: as in `kill`.
            unsafe {
                libc::kill(-(child.id() as i32), libc::SIGKILL);
            }
        }
    }
}

/// A process's end in words: "exited with status 2", "was killed by signal 6 (SIGABRT)".
pub fn describe_exit(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal} ({})", signal_name(signal)),
        (None, None) => "ended".into(),
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGABRT => "SIGABRT",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        _ => "signal",
    }
}

/// Runs the restart command through `sh -c`, within `wait`; a failure says its status and
/// the end of its output.
async fn run_restart_command(command: &str, wait: Duration) -> Result<(), KeeperError> {
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    let run = cmd.output();
    let output = match tokio::time::timeout(wait, run).await {
        Ok(Ok(output)) => output,
        Ok(Err(error)) => {
            return Err(KeeperError::Spawn {
                what: "--restart-cmd",
                command: command.to_owned(),
                error,
            })
        }
        Err(_) => {
            return Err(KeeperError::Failed {
                command: command.to_owned(),
                status: format!("still running after {wait:?}"),
                output: String::new(),
            })
        }
    };
    if output.status.success() {
        return Ok(());
    }
    let mut said = String::from_utf8_lossy(&output.stdout).into_owned();
    said.push_str(&String::from_utf8_lossy(&output.stderr));
    let tail: Vec<&str> = said.lines().rev().take(5).collect();
    Err(KeeperError::Failed {
        command: command.to_owned(),
        status: describe_exit(output.status),
        output: match tail.is_empty() {
            true => String::new(),
            false => format!(
                "; it printed:\n{}",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            ),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A broker kconform owns is started, killed and started again; what it printed in its
    /// current life is its last words, with how its process ended.
    #[tokio::test]
    async fn an_owned_broker_is_brought_back_and_its_last_words_read() {
        let dir = tempfile::tempdir().unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        // Not a broker: a process that prints and dies; it never answers ApiVersions.
        let mut keeper = Keeper::new(
            Revive::Own("echo 'thread panicked at src/x.rs:1:2:'; echo boom; kill -ABRT $$".into()),
            addr,
            Some(dir.path().join("broker.log")),
            Duration::from_secs(2),
        );
        let e = keeper.start().await.unwrap_err().to_string();
        assert!(e.contains("did not answer ApiVersions"), "{e}");
        assert!(e.contains("SIGABRT"), "{e}");
        assert!(e.contains("boom"), "{e}");
        let words = keeper.dying_words();
        assert!(
            words.contains("boom") && words.contains("SIGABRT"),
            "{words}"
        );
    }

    #[tokio::test]
    async fn a_failing_restart_command_says_why() {
        let addr = "127.0.0.1:9".parse().unwrap();
        let mut keeper = Keeper::new(
            Revive::Command("echo no such unit >&2; exit 5".into()),
            addr,
            None,
            Duration::from_secs(5),
        );
        let e = keeper.revive().await.unwrap_err().to_string();
        assert!(e.contains("exited with status 5"), "{e}");
        assert!(e.contains("no such unit"), "{e}");
        let e = Keeper::cannot(addr).revive().await.unwrap_err().to_string();
        assert!(e.contains("no --restart-cmd or --broker-cmd"), "{e}");
    }
}
