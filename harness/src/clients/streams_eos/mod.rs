//! `kconform streams-eos`: Apache's own exactly-once system test for Kafka Streams
//! (`StreamsEosTest`, from the `kafka-streams` 3.7.2 test jar on Maven Central) as a judge of
//! a broker. Its driver writes input, three `exactly_once_v2` processors (a topology of
//! echo, min, sum, and through a repartition topic, max and count) are added, SIGKILLed and
//! restarted as Apache's own system test does them ([`schedule`]), and its verifier checks
//! that every input record appears exactly once in every output, each running aggregate
//! right after it. Apache runs first: it must PASS, or kconform is wrong, and the targets
//! under test say nothing. Every program's output is kept.

pub mod jars;
pub mod program;
pub mod report;
pub mod schedule;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;

use crate::report::progress::Progress;
use crate::targets::{Running, TargetSpec};
use report::{StreamsEosReport, TargetEos};
use schedule::{Deadlines, Verdict};

/// The topics the programs read and write (fixed names in the test jar).
const TOPICS: [&str; 7] = ["data", "echo", "min", "sum", "repartition", "max", "cnt"];

/// The changelogs of the complex topology's four stores, application id `EosTest`:
/// `EosTestClient` asks for a replication factor of 3, which a smaller cluster refuses, so
/// they are made beforehand with the cluster's (Streams accepts an internal topic that exists
/// with the partitions it wants).
const CHANGELOGS: [&str; 4] = [
    "EosTest-KSTREAM-AGGREGATE-STATE-STORE-0000000003-changelog",
    "EosTest-KSTREAM-AGGREGATE-STATE-STORE-0000000007-changelog",
    "EosTest-KSTREAM-AGGREGATE-STATE-STORE-0000000014-changelog",
    "EosTest-KSTREAM-AGGREGATE-STATE-STORE-0000000018-changelog",
];

/// Partitions of every topic: the verifier pairs `echo-i` with `data-i`, so all are equal.
const PARTITIONS: i32 = 5;

/// How a run is told to go.
#[derive(Debug, Clone)]
pub struct StreamsEosOptions {
    /// The deadlines of each step and of the verifier.
    pub deadlines: Deadlines,
    /// Where every target's programs write (a folder per target).
    pub out: PathBuf,
}

/// Why no run could happen at all.
#[derive(Debug, thiserror::Error)]
pub enum StreamsEosError {
    /// No target.
    #[error("no target to run on")]
    NoTarget,
    /// A target of recorded answers runs no program.
    #[error("{0} is recorded answers, which run no program: streams-eos needs live brokers")]
    NotLive(String),
    /// A secured target: the programs' properties carry no credentials.
    #[error("{0} is secured; the test programs connect without credentials")]
    Secured(String),
    /// The output folder.
    #[error("the output folder {0}: {1}")]
    Out(PathBuf, std::io::Error),
}

/// The topics, made on `bootstrap` with `replication` replicas (those `provisioned` at start
/// may exist already).
async fn create_topics(bootstrap: &str, replication: i32, provisioned: bool) -> Result<(), String> {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .map_err(|e| format!("admin client: {e}"))?;
    let mut topics: Vec<NewTopic> = TOPICS
        .iter()
        .map(|t| NewTopic::new(t, PARTITIONS, TopicReplication::Fixed(replication)))
        .collect();
    topics.extend(CHANGELOGS.iter().map(|t| {
        NewTopic::new(t, PARTITIONS, TopicReplication::Fixed(replication))
            .set("cleanup.policy", "compact")
    }));
    let results = admin
        .create_topics(
            &topics,
            &AdminOptions::new().operation_timeout(Some(Duration::from_secs(30))),
        )
        .await
        .map_err(|e| format!("creating the topics: {e}"))?;
    for result in results {
        match result {
            // Provisioned at start (a kaas build), with the partitions asked for.
            Err((_, rdkafka::types::RDKafkaErrorCode::TopicAlreadyExists)) if provisioned => {}
            Err((topic, code)) => return Err(format!("creating topic {topic}: {code}")),
            Ok(_) => {}
        }
    }
    Ok(())
}

/// The topics as a kaas build is told them at start.
fn needed() -> Vec<crate::targets::provision::Needed> {
    let plain = TOPICS.iter().map(|t| (*t, None));
    let compacted = CHANGELOGS.iter().map(|t| (*t, Some("compact")));
    plain
        .chain(compacted)
        .map(|(name, policy)| crate::targets::provision::Needed {
            name: name.into(),
            partitions: PARTITIONS,
            configs: policy
                .map(|p| [("cleanup.policy".to_owned(), p.to_owned())].into())
                .unwrap_or_default(),
        })
        .collect()
}

/// A folder name for a target: its name with what a path cannot hold replaced.
fn folder(name: &str) -> String {
    name.chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                true => c,
                false => '_',
            },
        )
        .collect()
}

/// The test's jars, resolved the first time a target is up to run them (a run that reaches
/// no target fetches nothing).
async fn resolved(libs: &mut Option<Result<PathBuf, String>>) -> Result<PathBuf, String> {
    if libs.is_none() {
        let got = tokio::task::spawn_blocking(jars::libs).await;
        *libs = Some(match got {
            Ok(Ok(path)) => Ok(path),
            Ok(Err(e)) => Err(e.to_string()),
            Err(e) => Err(e.to_string()),
        });
    }
    libs.clone().unwrap_or_else(|| Err("not resolved".into()))
}

/// The run on one target, whatever happened.
async fn run_target(
    spec: &TargetSpec,
    libs: &mut Option<Result<PathBuf, String>>,
    options: &StreamsEosOptions,
    progress: &dyn Progress,
) -> TargetEos {
    let name = spec.name();
    let started = Instant::now();
    let dir = options.out.join(folder(&name));
    let mut t = TargetEos::new(&name, &dir);
    progress.starting(&name);
    let not_run = |t: &mut TargetEos, why: String| {
        t.outcome.verdict = Verdict::NotRun { why };
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        not_run(&mut t, format!("{}: {e}", dir.display()));
        return t;
    }
    // A kaas build kconform starts is told its topics at start, as chaos tells it its own
    // (topics its clients create were not served in time on a real build).
    let builds = spec.is_kaas_build();
    let topics = builds
        .then(|| serde_json::to_string(&needed()).ok())
        .flatten();
    let started_target =
        Running::start_answering_with_topics(spec, topics.as_deref(), Duration::from_secs(10))
            .await;
    let target = match started_target {
        Ok(target) => target,
        Err(e) => {
            not_run(&mut t, e.to_string());
            return t;
        }
    };
    t.origin = target.origin.clone();
    let bootstrap = target.bootstrap_servers();
    let replication = spec.brokers.min(3) as i32;
    match create_topics(&bootstrap, replication, builds).await {
        Err(e) => not_run(&mut t, e),
        Ok(()) => match resolved(libs).await {
            Err(e) => not_run(&mut t, e),
            Ok(libs) => {
                progress.note(&format!(
                    "{name}: driver and three processors (a few minutes)"
                ));
                let (dir, deadlines) = (dir.clone(), options.deadlines);
                let outcome = tokio::task::spawn_blocking(move || {
                    schedule::run(&libs, &bootstrap, &dir, deadlines)
                })
                .await;
                match outcome {
                    Ok(outcome) => t.outcome = outcome,
                    Err(e) => not_run(&mut t, format!("the schedule ended: {e}")),
                }
            }
        },
    }
    target.stop().await;
    t.wall_secs = started.elapsed().as_secs_f64();
    progress.finished(&name);
    t
}

/// Runs the test on each target in turn (five JVMs each, too many to run side by side on two
/// cores), Apache first where it is one of them.
pub async fn run(
    specs: &[TargetSpec],
    options: &StreamsEosOptions,
    progress: std::sync::Arc<dyn Progress>,
) -> Result<StreamsEosReport, StreamsEosError> {
    if specs.is_empty() {
        return Err(StreamsEosError::NoTarget);
    }
    if let Some(s) = specs.iter().find(|s| s.is_recorded()) {
        return Err(StreamsEosError::NotLive(s.name()));
    }
    if let Some(s) = specs.iter().find(|s| s.secured) {
        return Err(StreamsEosError::Secured(s.name()));
    }
    std::fs::create_dir_all(&options.out)
        .map_err(|e| StreamsEosError::Out(options.out.clone(), e))?;
    let mut order: Vec<&TargetSpec> = specs.iter().filter(|s| s.is_apache()).collect();
    order.extend(specs.iter().filter(|s| !s.is_apache()));
    // The control: the Apache that runs first, when another target is under test beside it.
    let has_control = specs.len() > 1 && order[0].is_apache();
    let mut libs = None;
    let mut targets = Vec::new();
    for (i, spec) in order.into_iter().enumerate() {
        let mut t = run_target(spec, &mut libs, options, progress.as_ref()).await;
        t.control = has_control && i == 0;
        targets.push(t);
    }
    Ok(StreamsEosReport::judge(targets, &options.out))
}
