//! The Java kafka-clients workload runner (`harness/java/KconformClient.java`): compiled with
//! `javac` against the kafka-clients jar of an Apache release the Apache target caches (3.7.2,
//! or a 4.x client beside it: `kconform clients --release 4.4`; no other build tool at
//! run time), then run as `java KconformClient WORKLOAD BOOTSTRAP RUN_ID [TOPIC]`, which prints
//! what the client saw as one JSON object ([`ClientTranscript`]). The same workload on kaas-ref
//! and on Apache tells whether a Java application would notice a difference.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use super::placement::WorkloadNames;
use super::process::{self, ProcessError};
use super::transcript::ClientTranscript;
use crate::targets::apache::javac::CompileError;
use crate::targets::apache::release::Logging;
use crate::targets::apache::{self, ApacheError, Release};

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

/// The runner, compiled against one release's kafka-clients.
#[derive(Debug, Clone)]
pub struct Runner {
    /// The compiled classes.
    pub classes: PathBuf,
    /// Whose kafka-clients they were compiled against and run with.
    pub release: Release,
    /// The JVM flags that keep the client's logging off its standard output, where the
    /// transcript goes (Log4j 1 for 3.x, Log4j 2 for 4.x, which otherwise logs errors there).
    logging: Vec<String>,
}

/// The runner compiled against `release`'s kafka-clients, compiling it first when this source
/// has not been compiled against them yet.
pub fn compile(release: Release) -> Result<Runner, JavaError> {
    compile_program("KconformClient", SOURCE, release)
}

/// The program `class` (its `source`) compiled against `release`'s kafka-clients, compiling it
/// first when this source has not been compiled against them yet: the workload runner, or the
/// chaos worker (`harness/java/KconformChaos.java`).
pub fn compile_program(class: &str, source: &str, release: Release) -> Result<Runner, JavaError> {
    let classes = apache::javac::compile(class, source, &release).map_err(|e| match e {
        CompileError::Setup(e) => JavaError::Setup(e),
        CompileError::Javac(e) => JavaError::Compile(e),
        CompileError::Io(e) => JavaError::Io(e),
    })?;
    let logging = match release.logging() {
        Logging::Log4j1 => vec![
            "-Dlog4j.configuration=file:/dev/null".to_owned(),
            "-Dlog4j.defaultInitOverride=true".to_owned(),
        ],
        Logging::Log4j2 => {
            let off = classes.with_file_name("log4j2-off.properties");
            std::fs::write(&off, "rootLogger.level = OFF\n")?;
            vec![format!("-Dlog4j2.configurationFile={}", off.display())]
        }
    };
    Ok(Runner {
        classes,
        release,
        logging,
    })
}

impl Runner {
    /// The command that runs `class` of these classes, its client's logging kept off its
    /// standard output.
    pub fn command(&self, class: &str) -> Result<Command, JavaError> {
        let class_path = apache::javac::class_path(&self.classes, &self.release)?;
        let mut command = Command::new("java");
        command
            .args(apache::jvm::JVM_FLAGS)
            .args(&self.logging)
            .arg("-cp")
            .arg(class_path)
            .arg(class);
        Ok(command)
    }
}

/// Runs `workload` against `bootstrap` with the transactional id and group of `names` (its
/// other names made unique by `run_id`; on `topic` when one is provisioned), killing it after
/// `deadline`; the transcript it printed.
pub fn run(
    runner: &Runner,
    workload: &str,
    bootstrap: &str,
    run_id: &str,
    names: &WorkloadNames,
    topic: Option<&str>,
    deadline: Duration,
) -> Result<ClientTranscript, JavaError> {
    let failed = |reason: String| JavaError::Run {
        workload: workload.into(),
        reason,
    };
    let mut command = runner.command("KconformClient")?;
    command
        .args([workload, bootstrap, run_id])
        .args([&names.transactional_id, &names.group])
        .args(topic);
    let (printed, tail) = process::output(command, deadline).map_err(|e| match e {
        ProcessError::Timeout(deadline) => JavaError::Timeout {
            workload: workload.into(),
            deadline,
        },
        ProcessError::Io(e) => JavaError::Io(e),
        failed_run @ ProcessError::Failed { .. } => failed(failed_run.to_string()),
    })?;
    serde_json::from_str(printed.trim()).map_err(|e| {
        failed(format!(
            "its output is no transcript ({e}): {printed:?}\n{tail}"
        ))
    })
}
