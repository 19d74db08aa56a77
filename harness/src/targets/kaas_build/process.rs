//! One broker process of a build cluster: started with its variables, its output appended to
//! its log, killed, started again, signalled.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use super::BuildError;

/// A broker's process, running or not.
#[derive(Debug)]
pub struct Broker {
    bin: PathBuf,
    env: Vec<(String, String)>,
    args: Vec<String>,
    log: PathBuf,
    child: Option<std::process::Child>,
}

impl Broker {
    /// A broker not started yet.
    pub fn new(bin: &Path, env: Vec<(String, String)>, args: Vec<String>, log: PathBuf) -> Broker {
        Broker {
            bin: bin.into(),
            env,
            args,
            log,
            child: None,
        }
    }

    /// Its Kafka address (from `KAAS_LISTENERS`).
    pub fn kafka(&self) -> SocketAddr {
        self.env
            .iter()
            .find(|(k, _)| k == "KAAS_LISTENERS")
            .and_then(|(_, v)| serde_json::from_str::<serde_json::Value>(v).ok())
            .and_then(|v| v[0]["addr"].as_str().and_then(|a| a.parse().ok()))
            .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// Its log.
    pub fn log(&self) -> &Path {
        &self.log
    }

    /// Starts it; why not, in one line.
    pub fn spawn(&mut self) -> Result<(), String> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .map_err(|e| format!("its log {}: {e}", self.log.display()))?;
        let err = log.try_clone().map_err(|e| e.to_string())?;
        let mut command = std::process::Command::new(&self.bin);
        // Killed with the (long-lived) runtime thread that starts it: a kconform killed does
        // not leave its brokers running.
        reference_broker::child::dies_with_its_thread(&mut command);
        let child = command
            .args(&self.args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(std::process::Stdio::null())
            .stdout(log)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot be run: {e}"))?;
        self.child = Some(child);
        Ok(())
    }

    /// Whether it runs (started, not exited).
    pub fn running(&mut self) -> bool {
        self.child.is_some() && self.exited().is_none()
    }

    /// How it exited, when it has.
    pub fn exited(&mut self) -> Option<String> {
        let status = self.child.as_mut()?.try_wait().ok()??;
        Some(status.to_string())
    }

    /// Kills it (SIGKILL; SIGCONT first, for one paused) and waits for it.
    pub async fn kill(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let _ = child.kill();
        let _ = tokio::task::spawn_blocking(move || child.wait()).await;
    }

    /// Sends it `signal`.
    pub fn signal(&mut self, signal: i32) -> Result<(), BuildError> {
        let Some(child) = self.child.as_ref() else {
            return Err(BuildError::Broker("it does not run".into()));
        };
        crate::targets::stop_signal::send(child.id(), signal)
            .map_err(|e| BuildError::Broker(format!("signal {signal}: {e}")))
    }

    /// How many hold or release signals its log says it took, and whether the last held the
    /// markers (kaas-ref logs "markers queued for this broker held=true|false", with or
    /// without colours).
    pub fn marker_acks(&self) -> (usize, Option<bool>) {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let acks: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("markers queued for this broker"))
            .collect();
        let last = acks.last().map(|l| l.trim_end().ends_with("true"));
        (acks.len(), last)
    }

    /// The last `lines` lines of its log.
    pub fn log_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
