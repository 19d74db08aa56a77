//! `kconform clients`: real clients as oracles. Each named workload runs with the Java
//! kafka-clients (3.7.2, or a later release: [`java`]) and with librdkafka ([`librdkafka`]) on
//! two targets; what each client saw ([`transcript`]) is diffed between the targets and every
//! difference is judged against the ledger's client claims ([`judge`]): a wire deviation tells
//! an engineer what differs, this tells them whether their users will notice. [`chaos`] runs librdkafka's
//! exactly-once workload under broker faults and checks what it left (`kconform chaos`).

pub mod chaos;
mod gate;
pub mod html;
pub mod java;
pub mod judge;
pub mod librdkafka;
pub mod placement;
pub mod process;
pub mod programs;
pub mod report;
mod runs;
pub mod streams_eos;
pub mod transcript;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::compare::ledger::Ledger;
use crate::targets::{Running, TargetError, TargetSpec};
use placement::Placement;
use programs::Program;
use report::{ClientsReport, RunRow, TargetRun};
use runs::{plan, run_client, Runners};

/// A client workload: its name (the same in every client) and what it does.
#[derive(Debug, Clone, Copy)]
pub struct Workload {
    /// Its name.
    pub name: &'static str,
    /// What it does, for `--list`.
    pub about: &'static str,
    /// The group it sends offsets for in a transaction, if any: on a cluster, a workload with
    /// one runs with its two coordinators together and apart ([`placement`]).
    pub group: GroupUse,
}

/// Which group a workload's transactions send offsets for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupUse {
    /// None: its transactions hold records only.
    None,
    /// The run's own group ([`WorkloadNames::group`]).
    Own,
    /// The group `""`.
    Empty,
}

/// Every workload, in the order they run.
pub const WORKLOADS: &[Workload] = &[
    Workload {
        name: "eos",
        about: "commit, abort, consume-process-produce with sendOffsetsToTransaction, an idle producer fenced by a second; reads at both isolation levels and the group's offsets",
        group: GroupUse::Own,
    },
    Workload {
        name: "fencing",
        about: "a second producer with the same id starts while the first has an open transaction, commits its own; the first then commits",
        group: GroupUse::None,
    },
    Workload {
        name: "fenced-send",
        about: "a second producer with the same id starts while the first has a transaction open; the first sends again and ends its transaction as its client's documentation says (abort after an abortable error, close after a fatal one); then the second sends and commits",
        group: GroupUse::None,
    },
    Workload {
        name: "abort-redo",
        about: "a transaction of two records aborted, then the work done again in the next transaction, which commits",
        group: GroupUse::None,
    },
    Workload {
        name: "timeout-past",
        about: "a transaction left open past its 2 s timeout, then committed; a new producer afterwards",
        group: GroupUse::None,
    },
    Workload {
        name: "empty-id",
        about: "a transactional producer whose transactional.id is empty",
        group: GroupUse::None,
    },
    Workload {
        name: "unusual-id",
        about: "a transactional id of 300 characters with spaces, '../', and non-ASCII letters",
        group: GroupUse::None,
    },
    Workload {
        name: "timeout-above-max",
        about: "transaction.timeout.ms 900001, above Apache's default transaction.max.timeout.ms",
        group: GroupUse::None,
    },
    Workload {
        name: "mid-transaction-consumer",
        about: "consumers that start reading while a transaction is open and read on after its commit",
        group: GroupUse::None,
    },
    Workload {
        name: "idempotent",
        about: "an idempotent producer (acks=all, retries, five requests in flight) writing 20 records",
        group: GroupUse::None,
    },
    Workload {
        name: "empty-group-offsets",
        about: "sendOffsetsToTransaction for the consumer group \"\"",
        group: GroupUse::Empty,
    },
    Workload {
        name: "group-offsets",
        about: "sendOffsetsToTransaction for the run's own group by its id alone (no member), committed with a record; reads and the group's offsets",
        group: GroupUse::Own,
    },
    Workload {
        name: "stale-generation-offsets",
        about: "sendOffsetsToTransaction with the metadata of a consumer that joined the group and left (a generation and member the group no longer has)",
        group: GroupUse::Own,
    },
];

/// A client library that runs the workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Client {
    /// Java kafka-clients, 3.7.2 or the release `--release` names (the jars the Apache
    /// target caches, compiled with javac).
    Java,
    /// librdkafka, through the rdkafka crate.
    Librdkafka,
    /// One of the ecosystem's other clients, installed on first use ([`programs`]).
    Program(Program),
}

impl Client {
    /// Every client.
    pub const ALL: [Client; 6] = [
        Client::Java,
        Client::Librdkafka,
        Client::Program(Program::KafkaJs),
        Client::Program(Program::Sarama),
        Client::Program(Program::Aiokafka),
        Client::Program(Program::KafkaPython),
    ];

    /// Its name in transcripts and in the ledger.
    pub fn name(self) -> &'static str {
        match self {
            Client::Java => "java",
            Client::Librdkafka => "librdkafka",
            Client::Program(p) => p.name(),
        }
    }

    /// Whether its workload program is written for `workload` (Java and librdkafka run every
    /// workload; the ecosystem's clients those of [`programs::WORKLOADS`]).
    pub fn runs(self, workload: &str) -> bool {
        match self {
            Client::Java | Client::Librdkafka => true,
            Client::Program(_) => programs::WORKLOADS.contains(&workload),
        }
    }
}

/// The provisioned topic of a workload run by a client (one partition), for brokers where
/// clients cannot create topics; `kconform topics` lists them.
pub fn provisioned_topic(client: Client, workload: &str) -> String {
    format!("clients-{}-{workload}-kconform", client.name())
}

/// Every provisioned topic the workloads use, for `kconform topics --clients`.
pub fn provisioned_topics() -> Vec<crate::run::topics::Needed> {
    Client::ALL
        .iter()
        .flat_map(|c| {
            WORKLOADS
                .iter()
                .filter(|w| c.runs(w.name))
                .map(|w| crate::run::topics::Needed {
                    name: provisioned_topic(*c, w.name),
                    partitions: 1,
                    configs: Default::default(),
                })
        })
        .collect()
}

/// Why `clients` could not give a verdict.
#[derive(Debug, thiserror::Error)]
pub enum ClientsError {
    /// A target did not start or does not answer.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// The Java runner could not be built.
    #[error("the Java client cannot run here: {0} (run only librdkafka with --client librdkafka)")]
    Java(java::JavaError),
    /// A workload name nobody wrote.
    #[error("no workload '{0}' (kconform clients --list shows them)")]
    UnknownWorkload(String),
    /// The ledger claims something of a workload that does not exist.
    #[error(
        "the ledger's entry '{0}' claims what workload '{1}' shows, and there is no such workload"
    )]
    LedgerWorkload(String, String),
    /// Recorded answers cannot run a client.
    #[error("{0}: a client needs a live broker (ref, apache or external=HOST:PORT)")]
    NotLive(String),
    /// The workloads log in to no one.
    #[error(
        "{0}: the client workloads use a plain listener; a secured target is not supported yet"
    )]
    Secured(String),
    /// More targets than a comparison takes.
    #[error("clients compares two targets at most; {0} were named")]
    TooManyTargets(usize),
}

/// How the run is told to go.
#[derive(Debug, Clone)]
pub struct ClientsOptions {
    /// The workloads (all when empty).
    pub workloads: Vec<String>,
    /// The clients.
    pub clients: Vec<Client>,
    /// Whether the clients were named (`--client`): then one that cannot be installed fails
    /// the run (its workloads give no transcript); among the default six it is a note.
    pub clients_named: bool,
    /// Use the provisioned topics ([`provisioned_topic`]) instead of creating topics.
    pub provisioned_topics: bool,
    /// The longest one workload may take before it is killed and reported.
    pub deadline: Duration,
    /// On a cluster, how each workload with a group places its transaction and group
    /// coordinators: it runs once per placement named (on one broker, once).
    pub coordinators: Vec<Placement>,
    /// Whose kafka-clients the Java workloads run with (3.7.2, what the ledger's Java claims
    /// are about; a 4.x client asks whether a newer application sees the same).
    pub java_release: crate::targets::apache::Release,
}

/// Installs each of the ecosystem's clients among `clients` (one at a time: each tool prints
/// its own progress poorly, and the first install of all four takes under a minute): those
/// ready, and those that cannot run here with why, for the report to say while the others go
/// on.
async fn install_programs(
    clients: &[Client],
    progress: &dyn crate::report::progress::Progress,
) -> (
    std::collections::BTreeMap<Program, programs::install::Installed>,
    Vec<(Client, String)>,
) {
    let mut installed = std::collections::BTreeMap::new();
    let mut failed = Vec::new();
    for client in clients {
        let Client::Program(p) = *client else {
            continue;
        };
        if !programs::install::is_installed(p) {
            progress.note(&format!(
                "installing {} {} into {}",
                p.name(),
                p.version(),
                programs::install::dir_of(p).display()
            ));
        }
        match tokio::task::spawn_blocking(move || programs::install::install(p)).await {
            Ok(Ok(ready)) => {
                if let Some(took) = ready.installed_in {
                    progress.note(&format!(
                        "installed {} {} in {:.1} s",
                        p.name(),
                        p.version(),
                        took.as_secs_f64()
                    ));
                }
                installed.insert(p, ready);
            }
            Ok(Err(e)) => failed.push((*client, e.to_string())),
            Err(e) => failed.push((*client, format!("its installer ended: {e}"))),
        }
    }
    (installed, failed)
}

/// The baseline: the first Apache target, else the last one named.
fn baseline(specs: &[TargetSpec]) -> usize {
    specs
        .iter()
        .position(|s| s.is_apache() && !s.secured)
        .unwrap_or(specs.len().saturating_sub(1))
}

/// The entries that judge a run on `specs`: against a later Apache than 3.7.2, the changes
/// Apache made up to it document differences too (a 4.x client on a broker that finalizes
/// transaction.version 2), as `kconform run` scopes the ledger; otherwise the whole ledger.
fn judging_ledger(specs: &[TargetSpec], ledger: &Ledger) -> Ledger {
    let base = baseline(specs);
    match specs.len() {
        2 => match crate::run::scope::ledger_scope(&specs[1 - base], &specs[base]) {
            scope @ crate::run::scope::LedgerScope::ClaimsOnly { .. } => scope.ledger(ledger),
            _ => ledger.clone(),
        },
        _ => ledger.clone(),
    }
}

/// Starts `spec` and runs every workload on it with each client (the clients side by side).
async fn run_target(
    spec: &TargetSpec,
    workloads: &[&'static str],
    options: &ClientsOptions,
    runners: Runners,
    progress: Arc<dyn crate::report::progress::Progress>,
) -> Result<(TargetRun, Vec<RunRow>), ClientsError> {
    let name = spec.name();
    progress.note(&format!("starting {name}"));
    let target = Running::start_answering(spec, Duration::from_secs(10)).await?;
    // The workloads' provisioned topics created where the target creates topics (Apache
    // beside an operator's broker); a target that refuses must have them already.
    let provisioned = match options.provisioned_topics {
        true => match target
            .provision(&provisioned_topics(), Duration::from_secs(35))
            .await
        {
            Ok(done) => Some(done.summary()),
            Err(e) => {
                target.stop().await;
                return Err(e.into());
            }
        },
        false => None,
    };
    let started = Instant::now();
    let bootstrap = target.bootstrap_servers();
    let mut threads = Vec::new();
    for client in options.clients.clone() {
        let jobs = plan(&target, client, workloads, options).await;
        let (name, bootstrap, options, runners, progress) = (
            name.clone(),
            bootstrap.clone(),
            options.clone(),
            runners.clone(),
            progress.clone(),
        );
        threads.push(tokio::task::spawn_blocking(move || {
            run_client(
                client,
                &name,
                &bootstrap,
                jobs,
                &options,
                &runners,
                progress.as_ref(),
            )
        }));
    }
    let mut rows = Vec::new();
    for t in threads {
        match t.await {
            Ok(mut r) => rows.append(&mut r),
            Err(e) => rows.push(RunRow {
                client: "?".into(),
                workload: "?".into(),
                target: name.clone(),
                coordinators: None,
                secs: 0.0,
                transcript: None,
                error: Some(format!("a client's thread ended: {e}")),
            }),
        }
    }
    let origin = match provisioned {
        Some(done) => format!("{}; --provisioned-topics: {done}", target.origin),
        None => target.origin.clone(),
    };
    let run = TargetRun {
        name,
        origin,
        wall_secs: started.elapsed().as_secs_f64(),
    };
    target.stop().await;
    Ok((run, rows))
}

/// Runs every workload with every client on each target, then diffs and judges.
pub async fn run(
    specs: &[TargetSpec],
    options: &ClientsOptions,
    ledger: &Ledger,
    progress: Arc<dyn crate::report::progress::Progress>,
) -> Result<ClientsReport, ClientsError> {
    if specs.len() > 2 {
        return Err(ClientsError::TooManyTargets(specs.len()));
    }
    if let Some(s) = specs.iter().find(|s| s.is_recorded()) {
        return Err(ClientsError::NotLive(s.name()));
    }
    if let Some(s) = specs.iter().find(|s| s.secured) {
        return Err(ClientsError::Secured(s.name()));
    }
    let names: Vec<&str> = WORKLOADS.iter().map(|w| w.name).collect();
    if let Some(&(id, w)) = judge::unknown_workloads(ledger, &names).first() {
        return Err(ClientsError::LedgerWorkload(id.into(), w.into()));
    }
    if let Some(w) = options
        .workloads
        .iter()
        .find(|w| !names.contains(&w.as_str()))
    {
        return Err(ClientsError::UnknownWorkload(w.clone()));
    }
    let workloads: Vec<&'static str> = names
        .iter()
        .copied()
        .filter(|n| options.workloads.is_empty() || options.workloads.iter().any(|w| w == n))
        .collect();
    let runner = match options.clients.contains(&Client::Java) {
        true => {
            progress.note(&format!(
                "building the Java workload runner (kafka-clients {})",
                options.java_release.version()
            ));
            let release = options.java_release;
            let built = tokio::task::spawn_blocking(move || java::compile(release))
                .await
                .map_err(|e| ClientsError::Java(java::JavaError::Io(std::io::Error::other(e))))?;
            Some(built.map_err(ClientsError::Java)?)
        }
        false => None,
    };
    let (installed, not_installed) = install_programs(&options.clients, progress.as_ref()).await;
    let mut options = options.clone();
    let skipped: Vec<Client> = not_installed.iter().map(|(c, _)| *c).collect();
    options.clients.retain(|c| !skipped.contains(c));
    let options = &options;
    let runners = Runners {
        java: runner.clone(),
        programs: installed,
    };
    // The targets run side by side, each with its clients side by side: the workloads mostly
    // wait on brokers and timeouts, and each makes its names unique.
    let runs = futures::future::join_all(
        specs
            .iter()
            .map(|spec| run_target(spec, &workloads, options, runners.clone(), progress.clone())),
    )
    .await;
    let mut targets = Vec::new();
    let mut rows = Vec::new();
    for run in runs {
        let (target, mut r) = run?;
        targets.push(target);
        rows.append(&mut r);
    }
    let base = baseline(specs);
    let mut report = ClientsReport::judge(
        targets,
        specs.get(base).map(TargetSpec::name),
        rows,
        &judging_ledger(specs, ledger),
    );
    for (client, why) in &not_installed {
        report.leave_claims_unjudged(
            Some(client.name()),
            format!("{} did not run: {why}", client.name()),
        );
        if options.clients_named {
            report.add_failed_runs(
                specs.iter().map(TargetSpec::name),
                client.name(),
                workloads.iter().filter(|w| client.runs(w)),
                why,
            );
        }
    }
    let claimed = crate::targets::apache::Release::CLAIMED;
    if let Some(r) = specs
        .get(baseline(specs))
        .and_then(TargetSpec::answers_as)
        .filter(|r| *r != claimed)
    {
        report.leave_claims_unjudged(
            None,
            format!(
                "the ledger's claims speak of Apache {}: against {r} they document what they match, and none is judged stale",
                claimed.version()
            ),
        );
    }
    if runner.as_ref().is_some_and(|r| r.release != claimed) {
        report.leave_claims_unjudged(
            Some(Client::Java.name()),
            format!(
                "the Java workloads ran with kafka-clients {}, the ledger's Java claims speak of {}: they document what they match, and none is judged stale",
                options.java_release.version(),
                claimed.version()
            ),
        );
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A change Apache made after 3.7 documents a client's difference against a release that
    /// has it, and not against 3.7.2, whose claims are kaas's alone.
    #[test]
    fn against_a_later_apache_its_changes_judge_too() {
        let ledger = Ledger::parse(
            "[[deviation]]\nid = \"c\"\napi = \"EndTxn\"\napache_since = \"4.0\"\nspec = \"s\"\njava_client = \"j\"\nlibrdkafka_client = \"Not reached: r\"\nscenarios = []\nfield = \"error_code\"\nkaas = \"0\"\napache = \"1\"\n[[deviation.client]]\nclient = \"java\"\nworkload = \"eos\"\nfield = \"commit (fenced producer)\"\nkaas = \"A\"\napache = \"B\"\n",
            "test",
        );
        let ledger = match ledger {
            Ok(l) => l,
            Err(e) => panic!("{e}"),
        };
        let spec = |s: &str| TargetSpec::parse(s).unwrap();
        let claims = |l: &Ledger| l.deviations.iter().map(|d| d.client.len()).sum::<usize>();
        assert_eq!(
            claims(&judging_ledger(
                &[spec("ref"), spec("apache@4.4+tv2")],
                &ledger
            )),
            1
        );
        assert_eq!(
            claims(&judging_ledger(&[spec("ref"), spec("apache")], &ledger)),
            0
        );
    }
}
