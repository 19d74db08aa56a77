//! The ecosystem's clients installed where kconform keeps its cache
//! (`~/.cache/kconform/clients/NAME-VERSION/`), each at its pinned version, by its own
//! ecosystem's tool: npm for KafkaJS, pip into a private directory for aiokafka and
//! kafka-python, the Go module proxy and `go build` for sarama. Installed once (under a lock,
//! so concurrent runs wait rather than race), then each run only writes the workload program
//! again, and rebuilds sarama's when its source changed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::Program;
use crate::targets::apache::jars::{cache_root, CacheLock};

/// The workload programs, built into kconform so that it runs from any directory.
const KAFKAJS: &str = include_str!("../../../clients/kafkajs.js");
const SARAMA: &str = include_str!("../../../clients/sarama/main.go");
const AIOKAFKA: &str = include_str!("../../../clients/kconform_aiokafka.py");
const KAFKA_PYTHON: &str = include_str!("../../../clients/kconform_kafka_python.py");

/// A client ready to run.
#[derive(Debug, Clone)]
pub struct Installed {
    /// Which.
    pub program: Program,
    /// The command that runs its workload program (the workload's arguments follow).
    pub command: Vec<String>,
    /// What its environment needs (`PYTHONPATH` for the private directory).
    pub env: Vec<(String, String)>,
    /// How long installing took, when this call installed it.
    pub installed_in: Option<Duration>,
}

/// Why a client cannot run here.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// A tool its ecosystem needs is not on this machine.
    #[error("{client} needs {tool}, which is not on this machine")]
    NoTool {
        /// The client.
        client: &'static str,
        /// The tool (`node`, `npm`, `python3`, `go`).
        tool: &'static str,
    },
    /// An installation step failed.
    #[error("installing {client} {version}: `{step}` failed: {reason}")]
    Step {
        /// The client.
        client: &'static str,
        /// Its version.
        version: &'static str,
        /// The command.
        step: String,
        /// The end of what it said.
        reason: String,
    },
    /// The cache could not be written or locked.
    #[error("installing {client}: {reason}")]
    Cache {
        /// The client.
        client: &'static str,
        /// Why.
        reason: String,
    },
}

/// Whether `tool` runs here.
fn has(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs one installation step in `dir`.
fn step(program: Program, dir: &Path, command: &mut Command) -> Result<(), InstallError> {
    let shown = format!("{command:?}").replace('"', "");
    let failed = |reason: String| InstallError::Step {
        client: program.name(),
        version: program.version(),
        step: shown.clone(),
        reason,
    };
    let out = command
        .current_dir(dir)
        .output()
        .map_err(|e| failed(e.to_string()))?;
    match out.status.success() {
        true => Ok(()),
        false => Err(failed(format!(
            "{}\n{}",
            out.status,
            crate::targets::apache::tail(&String::from_utf8_lossy(&out.stderr), 10)
        ))),
    }
}

/// The directory of `program` in kconform's cache.
pub fn dir_of(program: Program) -> PathBuf {
    cache_root()
        .join("clients")
        .join(format!("{}-{}", program.name(), program.version()))
}

/// The package each Python and JavaScript client installs, as its tool names it.
fn package(program: Program) -> String {
    match program {
        Program::KafkaJs => format!("kafkajs@{}", program.version()),
        Program::Aiokafka => format!("aiokafka=={}", program.version()),
        Program::KafkaPython => format!("kafka-python=={}", program.version()),
        Program::Sarama => format!("github.com/IBM/sarama@{}", program.version()),
    }
}

/// The file whose text says which package is installed in `dir`, written last.
fn marker(dir: &Path) -> PathBuf {
    dir.join(".kconform-package")
}

/// Whether `program`'s package is installed in kconform's cache (what [`install`] then only
/// checks), so that a caller can say before a first install that it will take a while.
pub fn is_installed(program: Program) -> bool {
    std::fs::read_to_string(marker(&dir_of(program))).is_ok_and(|m| m == package(program))
}

/// The package installed into `dir` (once: a marker says it is done).
fn install_package(program: Program, dir: &Path) -> Result<bool, InstallError> {
    if is_installed(program) {
        return Ok(false);
    }
    let need = |tool: &'static str| match has(tool) {
        true => Ok(()),
        false => Err(InstallError::NoTool {
            client: program.name(),
            tool,
        }),
    };
    match program {
        Program::KafkaJs => {
            need("node")?;
            need("npm")?;
            step(
                program,
                dir,
                Command::new("npm")
                    .args(["install", "--prefix", ".", "--no-audit", "--no-fund"])
                    .args(["--no-package-lock", "--loglevel=error"])
                    .arg(package(program)),
            )?;
        }
        Program::Aiokafka | Program::KafkaPython => {
            need("python3")?;
            step(
                program,
                dir,
                Command::new("python3")
                    .args(["-m", "pip", "install", "--target", "site", "--quiet"])
                    .args(["--disable-pip-version-check", "--no-warn-script-location"])
                    .arg(package(program)),
            )?;
        }
        Program::Sarama => {
            let go = go(program)?;
            let module = format!(
                "module kconform-sarama\n\ngo 1.22\n\nrequire github.com/IBM/sarama {}\n",
                program.version()
            );
            write(program, &dir.join("go.mod"), &module)?;
            write(program, &dir.join("main.go"), SARAMA)?;
            step(program, dir, go_command(&go).args(["mod", "tidy"]))?;
        }
    }
    write(program, &marker(dir), &package(program))?;
    Ok(true)
}

fn go(program: Program) -> Result<PathBuf, InstallError> {
    crate::peers::suite::go().map_err(|_| InstallError::NoTool {
        client: program.name(),
        tool: "go",
    })
}

/// `go` run with the toolchain on this machine (never one downloaded for a go.mod line).
fn go_command(go: &Path) -> Command {
    let mut c = Command::new(go);
    c.env("GOTOOLCHAIN", "local").env("GOFLAGS", "-mod=mod");
    c
}

fn write(program: Program, path: &Path, text: &str) -> Result<(), InstallError> {
    std::fs::write(path, text).map_err(|e| InstallError::Cache {
        client: program.name(),
        reason: format!("{}: {e}", path.display()),
    })
}

/// `program` installed (on first use: a few seconds for npm and pip, about 15 s for sarama's
/// modules and build), its workload program written, and how to run it.
pub fn install(program: Program) -> Result<Installed, InstallError> {
    let dir = dir_of(program);
    let cache = |e: std::io::Error| InstallError::Cache {
        client: program.name(),
        reason: format!("{}: {e}", dir.display()),
    };
    std::fs::create_dir_all(&dir).map_err(cache)?;
    let _lock = CacheLock::take(&dir.join(".kconform-lock")).map_err(|e| InstallError::Cache {
        client: program.name(),
        reason: e.to_string(),
    })?;
    let started = Instant::now();
    let mut fresh = install_package(program, &dir)?;
    let path = |p: &Path| p.display().to_string();
    let (command, env) = match program {
        Program::KafkaJs => {
            write(program, &dir.join("kafkajs.js"), KAFKAJS)?;
            (vec!["node".into(), path(&dir.join("kafkajs.js"))], vec![])
        }
        Program::Aiokafka | Program::KafkaPython => {
            let (file, source) = match program {
                Program::Aiokafka => ("kconform_aiokafka.py", AIOKAFKA),
                _ => ("kconform_kafka_python.py", KAFKA_PYTHON),
            };
            write(program, &dir.join(file), source)?;
            let env = vec![("PYTHONPATH".to_owned(), path(&dir.join("site")))];
            (vec!["python3".into(), path(&dir.join(file))], env)
        }
        Program::Sarama => {
            let binary = dir.join("kconform-sarama");
            let built = std::fs::read_to_string(dir.join("main.go.built")).unwrap_or_default();
            if built != SARAMA || !binary.is_file() {
                let go = go(program)?;
                write(program, &dir.join("main.go"), SARAMA)?;
                step(
                    program,
                    &dir,
                    go_command(&go).args(["build", "-o", "kconform-sarama", "."]),
                )?;
                write(program, &dir.join("main.go.built"), SARAMA)?;
                fresh = true;
            }
            (vec![path(&binary)], vec![])
        }
    };
    Ok(Installed {
        program,
        command,
        env,
        installed_in: fresh.then(|| started.elapsed()),
    })
}
