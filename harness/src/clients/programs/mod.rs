//! The ecosystem's other transactional producers as oracles: KafkaJS, sarama, aiokafka and
//! kafka-python, four implementations of KIP-98 and KIP-360 that kaas's users run beside the
//! Java client and librdkafka. Each is a small program in the client's own language
//! (`harness/clients/`), installed by kconform into its cache on first use ([`install`]) at a
//! pinned version, run as a process per workload; it prints each call's outcome, and kconform
//! reads the topic back itself through librdkafka ([`super::librdkafka::Readback`]), so every
//! client's transcript observes alike.

pub mod install;

use std::process::Command;
use std::time::Duration;

use serde::Deserialize;

use super::librdkafka::Readback;
use super::placement::WorkloadNames;
use super::process::{self, ProcessError};
use super::transcript::{Call, ClientTranscript};

/// The workloads the programs are written for (a subset of [`super::WORKLOADS`]: a producer's
/// fencing, its own recovery, an abort and redo, the timeout reaper, offsets in a transaction).
pub const WORKLOADS: &[&str] = &[
    "fencing",
    "fenced-send",
    "abort-redo",
    "timeout-past",
    "group-offsets",
];

/// One of the ecosystem's clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Program {
    /// KafkaJS (npm `kafkajs`).
    KafkaJs,
    /// sarama (Go module `github.com/IBM/sarama`).
    Sarama,
    /// aiokafka (PyPI `aiokafka`).
    Aiokafka,
    /// kafka-python (PyPI `kafka-python`).
    KafkaPython,
}

impl Program {
    /// All four.
    pub const ALL: [Program; 4] = [
        Program::KafkaJs,
        Program::Sarama,
        Program::Aiokafka,
        Program::KafkaPython,
    ];

    /// Its name in transcripts and in the ledger.
    pub fn name(self) -> &'static str {
        match self {
            Program::KafkaJs => "kafkajs",
            Program::Sarama => "sarama",
            Program::Aiokafka => "aiokafka",
            Program::KafkaPython => "kafka-python",
        }
    }

    /// The version kconform installs: the one the ledger's claims about it speak of.
    pub fn version(self) -> &'static str {
        match self {
            Program::KafkaJs => "2.2.4",
            Program::Sarama => "v1.61.1",
            Program::Aiokafka => "0.14.0",
            Program::KafkaPython => "3.0.12",
        }
    }
}

/// Why a program's run gave no transcript.
#[derive(Debug, thiserror::Error)]
pub enum ProgramError {
    /// The topic could not be set up or read.
    #[error(transparent)]
    Topic(#[from] super::librdkafka::RdkafkaError),
    /// The program failed, hung or could not start.
    #[error("the {client} workload {workload}: {source}")]
    Run {
        /// The client.
        client: &'static str,
        /// The workload.
        workload: String,
        /// What happened.
        source: ProcessError,
    },
    /// It printed something other than its calls.
    #[error(
        "the {client} workload {workload} printed no transcript ({reason}): {printed:?}\n{tail}"
    )]
    Output {
        /// The client.
        client: &'static str,
        /// The workload.
        workload: String,
        /// Why it does not read.
        reason: String,
        /// What it printed.
        printed: String,
        /// The end of its standard error.
        tail: String,
    },
}

/// What a program prints.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Printed {
    calls: Vec<Call>,
}

/// Runs `workload` with an installed program against `bootstrap` (on `topic` when one is
/// provisioned), killing it after `deadline`: its calls, and what readers read after it.
pub fn run(
    installed: &install::Installed,
    workload: &str,
    bootstrap: &str,
    run_id: &str,
    names: &WorkloadNames,
    topic: Option<&str>,
    deadline: Duration,
) -> Result<ClientTranscript, ProgramError> {
    let client = installed.program.name();
    let readback = Readback::prepare(client, bootstrap, run_id, names, topic)?;
    let mut command = Command::new(&installed.command[0]);
    command
        .args(&installed.command[1..])
        .args([
            workload,
            bootstrap,
            readback.topic(),
            &names.transactional_id,
            &names.group,
        ])
        .arg((readback.base() + 1).to_string())
        .envs(installed.env.iter().map(|(k, v)| (k, v)));
    let (printed, tail) =
        process::output(command, deadline).map_err(|source| ProgramError::Run {
            client,
            workload: workload.into(),
            source,
        })?;
    let mut calls = serde_json::from_str::<Printed>(printed.trim())
        .map_err(|e| ProgramError::Output {
            client,
            workload: workload.into(),
            reason: e.to_string(),
            printed: printed.clone(),
            tail,
        })?
        .calls;
    let mut observed = readback.observe();
    // A workload that sends offsets for the run's own group ends by observing them.
    let own_group = super::WORKLOADS
        .iter()
        .any(|w| w.name == workload && w.group == super::GroupUse::Own);
    if own_group {
        let (call, offsets) = readback.group_offsets(&names.group);
        calls.push(call);
        observed.insert("group_offsets".into(), offsets);
    }
    Ok(ClientTranscript {
        workload: workload.into(),
        client: client.into(),
        calls,
        observed,
    })
}
