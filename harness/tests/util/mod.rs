//! What the harness's integration tests share: the repository root, the one-broker suite, a run
//! of scenarios on one broker beside Apache's recorded answers (the comparison most of them
//! make), and the turn the heaviest tests take one after the other.

#![allow(dead_code)]

pub mod planted;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use kconform::data::Source;
use kconform::report::progress::Quiet;
use kconform::report::Report;
use kconform::run::session::Session;
use kconform::run::Transcript;
use kconform::scenario::Scenario;
use kconform::targets::TargetSpec;

/// The tests that load both cores for minutes (every scenario on every target, franz-go's suite
/// on two brokers) take turns: run side
/// by side they would time each other, not the brokers. Lighter tests run beside them.
static HEAVY: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Waits for the heavy tests' turn, in an async test; the turn lasts while the guard lives.
pub async fn heavy_turn() -> tokio::sync::MutexGuard<'static, ()> {
    HEAVY.lock().await
}

/// [`heavy_turn`] for a test that runs outside a runtime.
pub fn heavy_turn_blocking() -> tokio::sync::MutexGuard<'static, ()> {
    HEAVY.blocking_lock()
}

/// The `kconform` binary as a command whose process dies with the thread that starts it
/// ([`reference_broker::child`]). A test binary killed from outside (a CI timeout, or cargo
/// killed, which leaves its test binary running) otherwise left a `kconform peers` running on
/// for a minute, with the Apache JVM and franz-go suite it had started, loading the machine
/// under the next run: seen here. Each test waits for the command on the thread that started
/// it.
pub fn kconform() -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_kconform"));
    reference_broker::child::dies_with_its_thread(&mut cmd);
    cmd
}

/// What a finished command printed: its standard output, then its standard error.
pub fn printed(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The topics a run needs, as kaas-ref is started with them (for a broker that refuses
/// CreateTopics).
pub fn topic_specs(
    needed: Vec<kconform::run::topics::Needed>,
) -> Vec<reference_broker::config::TopicSpec> {
    needed
        .into_iter()
        .map(|n| reference_broker::config::TopicSpec {
            name: n.name,
            partitions: n.partitions,
            configs: n.configs,
        })
        .collect()
}

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A scenario written in a test: `text` read as the file `<name>.toml` (its name is `name`).
pub fn scenario_from(name: &str, text: &str) -> Scenario {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join(format!("{name}.toml"));
    std::fs::write(&path, text).expect("the scenario written");
    Scenario::load(&path).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Every scenario in the repository.
pub fn scenarios() -> Vec<Scenario> {
    Scenario::load_dir(&root().join("scenarios")).expect("scenarios load")
}

/// Of `all`, the scenarios `kconform run` gives a plain one-broker target beside Apache 3.7.2
/// (live or recorded), slow ones left out: those written for later releases only are judged
/// where a run names one.
pub fn one_broker(all: &[Scenario]) -> Vec<&Scenario> {
    let claimed = kconform::targets::apache::Release::CLAIMED;
    kconform::run::session::sized(&all.iter().collect::<Vec<_>>(), 1, false)
        .into_iter()
        .filter(|s| !s.slow && s.apache.contains(&claimed))
        .collect()
}

/// `chosen` run on `targets`, `jobs` at a time, each network wait bounded by `deadline`, with
/// the repository's scenarios, ledger and snapshots (as `kconform run --scenarios scenarios
/// --snapshots snapshots` runs them): the report and each target's transcripts.
pub async fn run_in_repository(
    chosen: &[&Scenario],
    targets: &[TargetSpec],
    jobs: usize,
    deadline: Duration,
) -> Result<(Report, Vec<Vec<Transcript>>), kconform::run::session::SessionError> {
    let (scenarios, snapshots) = (
        Source::Dir(root().join("scenarios")),
        Source::Dir(root().join("snapshots")),
    );
    let session = Session {
        scenarios: &scenarios,
        snapshots: &snapshots,
        deadline,
        provisioned_topics: false,
        strict_encoding: false,
        stop_at_malformed: false,
        lanes: 1,
        faults: &Default::default(),
    };
    session.run(chosen, targets, jobs, Arc::new(Quiet)).await
}

/// `chosen` run on the broker at `addr`, `jobs` at a time, beside Apache's recorded answers,
/// with the repository's scenarios, ledger and snapshots: the report and both sides'
/// transcripts.
pub async fn beside_recorded(
    addr: SocketAddr,
    chosen: &[&Scenario],
    jobs: usize,
    deadline: Duration,
) -> (Report, Vec<Vec<Transcript>>) {
    run_in_repository(
        chosen,
        &[TargetSpec::external(addr), TargetSpec::RECORDED],
        jobs,
        deadline,
    )
    .await
    .expect("the run reports")
}

/// Asserts that `report` follows the JSON schema `schema` (a report schema's text), naming
/// every place it does not.
pub fn assert_follows_schema(schema: &str, report: &serde_json::Value) {
    let schema: serde_json::Value = serde_json::from_str(schema).expect("the schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("the schema is a schema");
    let errors: Vec<String> = validator
        .iter_errors(report)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}\n{report:#}");
}
