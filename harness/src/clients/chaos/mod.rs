//! `kconform chaos`: an exactly-once workload of real clients (librdkafka producers doing
//! consume-transform-produce with their offsets in the transaction) under a seeded schedule of
//! faults, on each cluster side by side, then every output partition and group read back and
//! checked for the anomalies Jepsen found in Kafka-compatible systems. Apache, run with the
//! same seed, is the control.
//!
//! The stages, a module each: the fault [`schedule`]; the [`workload`] and the [`history`] it
//! logs; the [`readback`]; the [`checker`]; the [`report`].

pub mod checker;
mod gate;
pub mod history;
pub mod html;
pub mod java_worker;
pub mod jepsen;
mod landed;
pub mod placement;
pub mod probe;
pub mod readback;
pub mod report;
pub mod schedule;
pub mod workload;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::report::progress::Progress;
use crate::targets::faults::{BrokerAct, FaultCommands};
use crate::targets::{Running, TargetSpec};
use report::{ChaosReport, TargetChaos};
use schedule::Schedule;
use workload::{Names, Shape};

/// How long the workers have, once the workload ends, to end the transaction each is in: the
/// longest a transaction's calls take by their own timeouts (a commit asked three times, then
/// an abort) with room to spare.
const WORKER_STOP: Duration = Duration::from_secs(60);

/// How a chaos run is told to go.
#[derive(Debug, Clone)]
pub struct ChaosOptions {
    /// The seed of the fault schedule and of the workers' choices.
    pub seed: u64,
    /// How long the workload runs under faults.
    pub duration: Duration,
    /// How many workers (input partitions, groups, transactional ids).
    pub workers: u32,
    /// How many output partitions.
    pub outputs: i32,
    /// Where each worker's transaction and group coordinators sit.
    pub placement: crate::clients::placement::Placement,
    /// The faults the schedule draws from: [`BrokerAct::Kill`] (each undone by a restart),
    /// [`BrokerAct::Pause`] (each undone by a resume), [`BrokerAct::HoldMarkers`] (each
    /// undone by letting them through), as [`schedule::Kind::Act`]; and
    /// [`schedule::Kind::MoveCoordinator`] (a pause of a worker's coordinator, then a resume).
    pub faults: Vec<schedule::Kind>,
    /// No faults at all (the workload and checker alone).
    pub no_faults: bool,
    /// The commands that do faults to an external cluster.
    pub fault_commands: FaultCommands,
    /// The command line that repeats this run, for the report.
    pub replay: String,
    /// Run on the provisioned topics ([`workload::PROVISIONED_INPUT`] and
    /// [`workload::PROVISIONED_OUTPUT`], `kconform topics --chaos`) instead of creating two
    /// per run: for a broker that refuses CreateTopics.
    pub provisioned_topics: bool,
    /// The clients the workers run on, worker `w` on the `w % n`-th (empty: librdkafka and
    /// Java, where the Java client starts; librdkafka alone, with a note, where it does not).
    pub clients: Vec<ChaosClient>,
}

/// A client the chaos workers run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ChaosClient {
    /// librdkafka, through rdkafka ([`workload`]).
    Librdkafka,
    /// The Java kafka-clients of the release kaas claims ([`java_worker`]).
    Java,
}

/// The clients a run's workers run on, and the Java runner where Java is among them.
#[derive(Debug, Clone)]
struct Clients {
    each: Vec<ChaosClient>,
    java: Option<crate::clients::java::Runner>,
}

impl Clients {
    /// The client worker `w` runs on.
    fn of(&self, w: u32) -> ChaosClient {
        self.each[w as usize % self.each.len()]
    }
}

/// The clients asked for, the Java runner compiled where Java is among them: an error where
/// Java was named and cannot run; librdkafka alone, and why, where it was only the default.
async fn clients(asked: &[ChaosClient]) -> Result<(Clients, Option<String>), ChaosError> {
    let named = !asked.is_empty();
    let each = match named {
        true => asked.to_vec(),
        false => vec![ChaosClient::Librdkafka, ChaosClient::Java],
    };
    if !each.contains(&ChaosClient::Java) {
        return Ok((Clients { each, java: None }, None));
    }
    let compiled = tokio::task::spawn_blocking(java_worker::compile)
        .await
        .map_err(|e| ChaosError::Java(e.to_string()))?;
    match (compiled, named) {
        (Ok(runner), _) => Ok((
            Clients {
                each,
                java: Some(runner),
            },
            None,
        )),
        (Err(e), true) => Err(ChaosError::Java(e.to_string())),
        (Err(e), false) => Ok((
            Clients {
                each: vec![ChaosClient::Librdkafka],
                java: None,
            },
            Some(format!(
                "every worker runs on librdkafka: the Java client cannot run here ({e})"
            )),
        )),
    }
}

/// The provisioned topics `kconform chaos --provisioned-topics` runs on, for `kconform topics
/// --chaos`.
pub fn provisioned_topics() -> Vec<crate::run::topics::Needed> {
    let (inputs, outputs) = workload::PROVISIONED_PARTITIONS;
    [
        (workload::PROVISIONED_INPUT, inputs),
        (workload::PROVISIONED_OUTPUT, outputs),
    ]
    .into_iter()
    .map(|(name, partitions)| crate::run::topics::Needed {
        name: name.into(),
        partitions,
        configs: Default::default(),
    })
    .collect()
}

/// Why a chaos run could not happen at all.
#[derive(Debug, thiserror::Error)]
pub enum ChaosError {
    /// Recorded answers run no client.
    #[error(
        "{0}: chaos needs a live broker (ref, apache, ref:N, apache:N or external:N=HOST:PORT)"
    )]
    NotLive(String),
    /// Secured targets are not supported by the workload.
    #[error(
        "{0}: the chaos workload uses a plain listener; a secured target is not supported yet"
    )]
    Secured(String),
    /// Nothing to run on.
    #[error("no target to run chaos on")]
    NoTarget,
    /// The Java client was asked for and cannot run.
    #[error("the Java client cannot run here: {0} (--client librdkafka runs without it)")]
    Java(String),
}

/// Runs the workload on each target side by side and judges the anomalies.
pub async fn run(
    specs: &[TargetSpec],
    options: &ChaosOptions,
    progress: Arc<dyn Progress>,
) -> Result<ChaosReport, ChaosError> {
    if specs.is_empty() {
        return Err(ChaosError::NoTarget);
    }
    if let Some(s) = specs.iter().find(|s| s.is_recorded()) {
        return Err(ChaosError::NotLive(s.name()));
    }
    if let Some(s) = specs.iter().find(|s| s.secured) {
        return Err(ChaosError::Secured(s.name()));
    }
    let brokers = specs.iter().map(|s| s.brokers).min().unwrap_or(1);
    let shape = Shape {
        workers: options.workers,
        outputs: options.outputs,
        replication: brokers.min(3) as i32,
    };
    // The control is the first Apache, when another target is under test beside it.
    let control = match specs.len() > 1 {
        true => specs.iter().position(TargetSpec::is_apache),
        false => None,
    };
    let (clients, note) = clients(&options.clients).await?;
    let clients = &clients;
    let runs = futures::future::join_all(specs.iter().enumerate().map(|(i, spec)| {
        let progress = progress.clone();
        async move {
            let mut t = run_target(spec, options, shape, clients, progress.as_ref()).await;
            t.control = control == Some(i);
            progress.finished(&t.name);
            t
        }
    }))
    .await;
    let mut report = ChaosReport::judge(
        options.seed,
        options.duration.as_secs(),
        shape,
        options.placement,
        options.replay.clone(),
        runs,
    );
    report.notes.extend(note);
    Ok(report)
}

/// The run on one target, whatever happened: a failure is the report's `error`.
async fn run_target(
    spec: &TargetSpec,
    options: &ChaosOptions,
    shape: Shape,
    clients: &Clients,
    progress: &dyn Progress,
) -> TargetChaos {
    let name = spec.name();
    let started = Instant::now();
    let mut report = TargetChaos {
        name: name.clone(),
        origin: String::new(),
        control: false,
        error: None,
        no_faults_because: None,
        faults: Vec::new(),
        input_per_worker: 0,
        workers: Vec::new(),
        records_checked: 0,
        anomalies: Vec::new(),
        inconclusive: None,
        unchecked: Vec::new(),
        probe: Vec::new(),
        timeline: Vec::new(),
        wall_secs: 0.0,
    };
    progress.starting(&name);
    // A kaas build kconform starts is told the provisioned topics at start and runs on them,
    // as `run` tells it its scenarios' topics: topics its clients create (KafkaTopics through
    // the stand-in Kubernetes API) were not served in time on a real build (the read-back met
    // UnknownPartition), where these are. No flag or variable of the user's is needed.
    // kaas-ref's binary creates topics itself, as in process: only a kaas build is told.
    let builds = spec.is_kaas_build();
    let topics = builds
        .then(|| serde_json::to_string(&provisioned_topics()).ok())
        .flatten();
    let launched =
        Running::start_answering_with_topics(spec, topics.as_deref(), Duration::from_secs(10))
            .await;
    let target = match launched {
        Ok(t) => t.with_faults(options.fault_commands.clone()),
        Err(e) => {
            report.error = Some(e.to_string());
            return report;
        }
    };
    report.origin = target.origin.clone();
    let own;
    let options = match builds && !options.provisioned_topics {
        true => {
            own = ChaosOptions {
                provisioned_topics: true,
                ..options.clone()
            };
            &own
        }
        false => options,
    };
    if let Err(e) = on_target(&target, options, (shape, clients), progress, &mut report).await {
        report.error = Some(e);
    }
    if report.too_few_ended() {
        // Too little to judge: what kconform's own first requests find says why.
        report.probe = probe::first_calls(target.addr, Duration::from_secs(5)).await;
    }
    target.stop().await;
    report.wall_secs = started.elapsed().as_secs_f64();
    report
}

/// The run's names, placed as asked, and its topics ready on `target`: created, or the
/// provisioned ones checked and where each partition ends noted.
async fn ready_topics(
    target: &Running,
    options: &ChaosOptions,
    shape: Shape,
    progress: &dyn Progress,
) -> Result<Names, String> {
    let run = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
    let mut names = match options.provisioned_topics {
        true => Names::provisioned(&run, shape.workers),
        false => Names::new(&run, shape.workers),
    };
    placement::place(target, &mut names, options.placement).await?;
    let bootstrap = target.bootstrap_servers();
    if !options.provisioned_topics {
        progress.note(&format!(
            "{}: creating topics and loading input",
            target.name
        ));
        workload::create_topics(&bootstrap, &names, shape).await?;
        return Ok(names);
    }
    progress.note(&format!(
        "{}: reading the provisioned topics and loading input",
        target.name
    ));
    tokio::task::spawn_blocking(move || {
        workload::provisioned_bases(&bootstrap, &mut names, shape).map(|()| names)
    })
    .await
    .map_err(|e| format!("reading the provisioned topics ended: {e}"))?
}

/// Loads, runs, undoes, reads back and checks on a started target.
async fn on_target(
    target: &Running,
    options: &ChaosOptions,
    (shape, clients): (Shape, &Clients),
    progress: &dyn Progress,
    report: &mut TargetChaos,
) -> Result<(), String> {
    let name = target.name.clone();
    // The acts the target can do; the schedule draws the faults asked for whose acts are
    // among them.
    let acts: Vec<BrokerAct> = target.acts().await;
    let nodes = match options.no_faults {
        true => Vec::new(),
        false => target.node_ids(),
    };
    let schedule = Schedule::plan(
        options.seed,
        options.duration,
        (&nodes, shape.workers),
        &options.faults,
        &acts,
    );
    let none_doable = !options.faults.iter().any(|kind| kind.doable(&acts));
    report.no_faults_because = match (options.no_faults, target.brokers, none_doable) {
        (true, _, _) => Some("--no-faults".into()),
        (false, 1, _) => Some("one broker: faults need a cluster".into()),
        (false, _, true) if options.faults.is_empty() => Some("no fault asked for".into()),
        (false, _, true) => Some(
            "no --fault-cmd for kill/restart, pause/resume or hold_markers/release_markers".into(),
        ),
        _ => None,
    };
    let names = ready_topics(target, options, shape, progress).await?;
    let bootstrap = target.bootstrap_servers();
    report.input_per_worker = {
        let (bootstrap, names, duration) = (bootstrap.clone(), names.clone(), options.duration);
        tokio::task::spawn_blocking(move || {
            workload::load_input(&bootstrap, &names, shape.workers, duration)
        })
        .await
        .map_err(|e| format!("the input loader ended: {e}"))??
    };
    progress.running(&name, 1);
    let started = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let committed = Arc::new(AtomicU64::new(0));
    let workers: Vec<Worker> = (0..shape.workers)
        .map(|w| {
            let run = workload::SharedRun::default();
            let assignment = workload::Assignment {
                w,
                bootstrap: bootstrap.clone(),
                names: names.clone(),
                shape,
                seed: options.seed,
                started,
                stop: stop.clone(),
                committed: committed.clone(),
                run: run.clone(),
            };
            let java = match clients.of(w) {
                ChaosClient::Java => clients.java.clone(),
                ChaosClient::Librdkafka => None,
            };
            let thread = tokio::task::spawn_blocking(move || match java {
                Some(runner) => java_worker::work(&runner, assignment),
                None => workload::work(assignment),
            });
            (thread, run)
        })
        .collect();
    let stop_at = started + options.duration;
    let faults = schedule::execute(
        target,
        &schedule,
        &names.transactional_ids,
        (started, stop_at),
    );
    let ticker = async {
        loop {
            let secs = started.elapsed().as_secs();
            progress.counters(
                &name,
                &format!(
                    "{name}: {secs}/{} s, {} committed",
                    options.duration.as_secs(),
                    committed.load(Ordering::Relaxed)
                ),
            );
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    };
    let done = tokio::select! {
        done = async {
            let done = faults.await;
            tokio::time::sleep_until(stop_at.into()).await;
            done
        } => done,
        // The ticker never ends.
        () = ticker => Vec::new(),
    };
    report.faults = done;
    stop.store(true, Ordering::Relaxed);
    let (history, reads) = ended_workers(workers, report).await?;
    let end_ms = started.elapsed().as_millis() as u64;
    progress.note(&format!("{name}: reading back and checking"));
    let began: std::collections::BTreeSet<u32> = history.iter().map(|t| t.worker).collect();
    let mut read = {
        let (bootstrap, names) = (bootstrap.clone(), names.clone());
        let settle = workload::TRANSACTION_TIMEOUT + Duration::from_secs(30);
        tokio::task::spawn_blocking(move || {
            readback::read_back(&bootstrap, &names, shape, settle, &began)
        })
        .await
        .map_err(|e| format!("the read-back ended: {e}"))??
    };
    placed(target, &names, shape, &mut read).await;
    report.timeline = history::timeline(&history);
    let checked = checker::check(&history, &read);
    report.records_checked = checked.records_checked;
    report.unchecked = read
        .unread_groups
        .iter()
        .map(|(w, why)| {
            format!("w{w}'s group offsets (the reader, librdkafka, could not read them: {why})")
        })
        .collect();
    report.anomalies = checked.anomalies;
    let ops = jepsen::from_chaos::ops(&history, &reads, &read, end_ms);
    report.anomalies.extend(jepsen::check(&ops));
    Ok(())
}

/// A worker's thread, and where it keeps what it did.
type Worker = (
    tokio::task::JoinHandle<Result<(), String>>,
    workload::SharedRun,
);

/// Waits for each worker to end the transaction it is in (told to stop already): one still in
/// a client call a minute later is given up, its thread left behind, and what it did until then
/// kept. Every worker's counts go into `report`; their histories come back, or the first error
/// a worker ended with.
async fn ended_workers(
    workers: Vec<Worker>,
    report: &mut TargetChaos,
) -> Result<(Vec<history::Txn>, BTreeMap<u32, Vec<history::Read>>), String> {
    let mut history = Vec::new();
    let mut reads = BTreeMap::new();
    let mut failed = Vec::new();
    let given_up = tokio::time::Instant::now() + WORKER_STOP;
    // The workers come in their numbers' order (worker w on input partition w).
    for (w, (thread, shared)) in (0u32..).zip(workers) {
        let ended = tokio::time::timeout_at(given_up, thread).await;
        let mut run = shared.lock().unwrap_or_else(|e| e.into_inner()).clone();
        match ended {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(e))) => failed.push(e),
            Ok(Err(e)) => failed.push(format!("a worker's thread ended: {e}")),
            Err(_) => {
                run.stats.hung = Some(run.calling.unwrap_or(workload::ClientCall {
                    call: "no client call",
                    since_ms: 0,
                }));
                if run.history.last().is_some_and(|t| t.ended_ms == 0) {
                    run.stats.unknown += 1;
                }
            }
        }
        reads.insert(w, run.reads);
        history.extend(run.history);
        report.workers.push(run.stats);
    }
    match failed.into_iter().next() {
        Some(e) => Err(e),
        None => Ok((history, reads)),
    }
}

/// Where each worker's transactions are coordinated and each output partition is led, as the
/// cluster names them once every fault is undone, for the findings to say whether a marker was
/// the coordinator's own to write or handed to a peer. What cannot be asked is left out (the
/// findings then say nothing of it), and logged.
async fn placed(target: &Running, names: &Names, shape: Shape, read: &mut checker::Readback) {
    const ASK: Duration = Duration::from_secs(10);
    let nodes = match crate::targets::brokers::of(target.addr, ASK, target.secured).await {
        Ok(nodes) => nodes,
        Err(e) => {
            tracing::warn!(target = %target.name, error = %e, "chaos: brokers not listed");
            return;
        }
    };
    for (w, id) in names
        .transactional_ids
        .iter()
        .enumerate()
        .take(shape.workers as usize)
    {
        match target.coordinator_of(id, true, ASK).await {
            Ok(addr) => {
                if let Some((&node, _)) = nodes.iter().find(|(_, &a)| a == addr) {
                    read.coordinators.insert(w as u32, node);
                }
            }
            Err(e) => {
                tracing::warn!(target = %target.name, error = %e, "chaos: coordinator not named")
            }
        }
    }
    match crate::targets::brokers::leaders(target.addr, ASK, target.secured, &names.output).await {
        Ok(leaders) => read.leaders = leaders,
        Err(e) => tracing::warn!(target = %target.name, error = %e, "chaos: leaders not listed"),
    }
}
