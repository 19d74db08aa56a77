//! One of Apache's test programs as a process kconform runs: `StreamsEosTest` with its
//! properties file and command, its output (standard output and error together) written to a
//! file as it comes, so that nothing is lost when it is killed or kconform is, and read back
//! for the markers the programs print (`StateChange: REBALANCING -> RUNNING`, `processed N
//! records`, `ALL-RECORDS-DELIVERED`). Every wait has a deadline; a process still running
//! when its handle goes is killed.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The class every command runs through.
const MAIN: &str = "org.apache.kafka.streams.tests.StreamsEosTest";

/// A running (or ended) test program.
#[derive(Debug)]
pub struct Program {
    /// How the report names it: `processor 2 (restarted)`.
    pub name: String,
    /// Its output file.
    pub out: PathBuf,
    child: Child,
    /// How it ended, once it did.
    ended: Option<ExitStatus>,
}

/// Why a wait ended without what it waited for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missed {
    /// The program ended first (its exit status).
    Ended(String),
    /// The deadline came first.
    Deadline,
}

impl Program {
    /// Starts `java … StreamsEosTest PROPS COMMAND` from `libs`, its output into `out`.
    pub fn start(
        libs: &Path,
        props: &Path,
        command: &str,
        name: &str,
        out: &Path,
    ) -> std::io::Result<Program> {
        let file = File::create(out)?;
        let child = Command::new("java")
            .args([
                "-Xmx256m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-cp",
            ])
            .arg(format!("{}/*", libs.display()))
            .arg(MAIN)
            .arg(props)
            .arg(command)
            .stdin(Stdio::null())
            .stdout(file.try_clone()?)
            .stderr(file)
            .spawn()?;
        Ok(Program {
            name: name.to_owned(),
            out: out.to_owned(),
            child,
            ended: None,
        })
    }

    /// Its output so far, line by line.
    pub fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.out)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// Whether it has ended, and how.
    pub fn ended(&mut self) -> Option<ExitStatus> {
        if self.ended.is_none() {
            self.ended = self.child.try_wait().ok().flatten();
        }
        self.ended
    }

    /// Waits until a line from `from` on satisfies `wanted`; its index.
    pub fn wait_for(
        &mut self,
        from: usize,
        deadline: Instant,
        wanted: impl Fn(&str) -> bool,
    ) -> Result<usize, Missed> {
        loop {
            let lines = self.lines();
            if let Some(i) = lines.iter().skip(from).position(|l| wanted(l)) {
                return Ok(from + i);
            }
            if let Some(status) = self.ended() {
                // What it wrote before it ended is all there is.
                let lines = self.lines();
                if let Some(i) = lines.iter().skip(from).position(|l| wanted(l)) {
                    return Ok(from + i);
                }
                return Err(Missed::Ended(status.to_string()));
            }
            if Instant::now() >= deadline {
                return Err(Missed::Deadline);
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Sends `signal` (SIGKILL, SIGTERM).
    pub fn signal(&mut self, signal: i32) {
        if self.ended().is_none() {
            // SAFETY: kill(2) on the child's own pid; no memory is involved.
            unsafe {
                libc::kill(self.child.id() as i32, signal);
            }
        }
    }

    /// Waits for it to end until `deadline`; how it ended, or `None`.
    pub fn wait_end(&mut self, deadline: Instant) -> Option<ExitStatus> {
        loop {
            if let Some(status) = self.ended() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        if self.ended().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
