//! The Java kafka-clients 3.7 workload runner (`harness/java/KconformClient.java`): compiled
//! with `javac` against the kafka-clients jar the Apache target caches (no other build tool at
//! run time), then run as `java KconformClient WORKLOAD BOOTSTRAP RUN_ID [TOPIC]`, which prints
//! what the client saw as one JSON object ([`ClientTranscript`]). The same workload on kaas-ref
//! and on Apache tells whether a Java application would notice a difference.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::placement::WorkloadNames;
use super::transcript::ClientTranscript;
use crate::targets::apache::javac::CompileError;
use crate::targets::apache::{self, ApacheError};

/// The program's source, built into kconform so that it runs from any directory.
const SOURCE: &str = include_str!("../../java/KconformClient.java");

/// Why a workload did not give a transcript.
#[derive(Debug, thiserror::Error)]
pub enum JavaError {
    /// No Java or no jars.
    #[error(transparent)]
    Setup(#[from] ApacheError),
    /// javac refused the program.
    #[error("javac failed:\n{0}")]
    Compile(String),
    /// The program could not start, failed, or printed no transcript.
    #[error("the Java workload {workload} failed: {reason}")]
    Run {
        /// The workload.
        workload: String,
        /// Why, with the end of its standard error.
        reason: String,
    },
    /// The workload ran past its deadline and was killed.
    #[error("the Java workload {workload} did not finish within {deadline:?}")]
    Timeout {
        /// The workload.
        workload: String,
        /// The deadline.
        deadline: Duration,
    },
    /// Local files.
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
}

/// The compiled classes, compiling them first when this source has not been compiled yet.
pub fn compile() -> Result<PathBuf, JavaError> {
    apache::javac::compile("KconformClient", SOURCE).map_err(|e| match e {
        CompileError::Setup(e) => JavaError::Setup(e),
        CompileError::Javac(e) => JavaError::Compile(e),
        CompileError::Io(e) => JavaError::Io(e),
    })
}

/// Runs `workload` against `bootstrap` with the transactional id and group of `names` (its
/// other names made unique by `run_id`; on `topic` when one is provisioned), killing it after
/// `deadline`; the transcript it printed.
pub fn run(
    classes: &Path,
    workload: &str,
    bootstrap: &str,
    run_id: &str,
    names: &WorkloadNames,
    topic: Option<&str>,
    deadline: Duration,
) -> Result<ClientTranscript, JavaError> {
    let class_path = apache::javac::class_path(classes)?;
    let failed = |reason: String| JavaError::Run {
        workload: workload.into(),
        reason,
    };
    let err_file = tempfile::NamedTempFile::new()?;
    let mut child = Command::new("java")
        .arg("-Dlog4j.configuration=file:/dev/null")
        .arg("-Dlog4j.defaultInitOverride=true")
        .arg("-cp")
        .arg(class_path)
        .args(["KconformClient", workload, bootstrap, run_id])
        .args([&names.transactional_id, &names.group])
        .args(topic)
        .stdout(Stdio::piped())
        .stderr(err_file.reopen()?)
        .spawn()?;
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(JavaError::Timeout {
                workload: workload.into(),
                deadline,
            });
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let printed = reader.join().unwrap_or_default();
    let stderr = std::fs::read_to_string(err_file.path()).unwrap_or_default();
    let tail = apache::jvm::tail(&stderr, 20);
    if !status.success() {
        return Err(failed(format!("{status}\n{tail}")));
    }
    serde_json::from_str(printed.trim()).map_err(|e| {
        failed(format!(
            "its output is no transcript ({e}): {printed:?}\n{tail}"
        ))
    })
}
