//! Each client's runs on one broker: the jobs planned (names drawn until the coordinators sit
//! as asked), then run, an in-process workload given up at its deadline as a program is killed
//! at its own.

use std::time::{Duration, Instant};

use super::placement::{self, Placement, WorkloadNames};
use super::programs::{self, Program};
use super::report::RunRow;
use super::transcript::ClientTranscript;
use super::{java, librdkafka, provisioned_topic, Client, ClientsOptions, GroupUse, WORKLOADS};
use crate::targets::Running;

/// One run of a workload by a client, planned: where its coordinators sit and the run id
/// whose names put them there, or why no id would.
#[derive(Debug, Clone)]
pub(super) struct Job {
    workload: &'static str,
    coordinators: Option<Placement>,
    run_id: Result<String, String>,
    /// The topic kconform made for it, on a cluster: one partition led apart from its
    /// transaction coordinator ([`placement::place_apart_from_leader`]).
    topic: Option<String>,
}

/// Each run `client` makes on `target`: every workload once, or on a cluster a workload with
/// a group once per placement, its names drawn until its coordinators sit so.
pub(super) async fn plan(
    target: &Running,
    client: Client,
    workloads: &[&'static str],
    options: &ClientsOptions,
) -> Vec<Job> {
    let mut jobs = Vec::new();
    for name in workloads.iter().filter(|w| client.runs(w)) {
        let group = WORKLOADS
            .iter()
            .find(|w| w.name == *name)
            .map_or(GroupUse::None, |w| w.group);
        let placements: Vec<Option<Placement>> = match (target.brokers > 1, group) {
            (true, GroupUse::Own | GroupUse::Empty) => {
                options.coordinators.iter().copied().map(Some).collect()
            }
            _ => vec![None],
        };
        if target.brokers > 1 && group == GroupUse::None && !options.provisioned_topics {
            match placement::place_apart_from_leader(target, client, name).await {
                Ok((run_id, topic)) => {
                    // Apart: its transaction coordinator hands the markers to the partition's
                    // leader, another broker (claims name it so, as they do a group's).
                    jobs.push(Job {
                        workload: name,
                        coordinators: Some(Placement::Apart),
                        run_id: Ok(run_id),
                        topic: Some(topic),
                    });
                    continue;
                }
                Err(why) => tracing::warn!(workload = name, %why, "clients: run left to chance"),
            }
        }
        for coordinators in placements {
            let placement = coordinators.unwrap_or(Placement::Any);
            jobs.push(Job {
                workload: name,
                coordinators,
                run_id: placement::place_run(target, client, group, placement).await,
                topic: None,
            });
        }
    }
    jobs
}

/// What runs each client's workloads: the compiled Java runner, the installed programs.
#[derive(Debug, Clone, Default)]
pub(super) struct Runners {
    pub(super) java: Option<java::Runner>,
    pub(super) programs: std::collections::BTreeMap<Program, programs::install::Installed>,
}

/// How many of a client's runs go side by side on one broker: librdkafka's (threads of this
/// process, mostly waiting) five, a program's three, the Java runner's (a JVM each) one. On a
/// broker that hangs a client's calls, its runs wait out their deadlines together rather than
/// in turn (on a real kaas build, librdkafka's fifteen runs each waited out their deadline:
/// 452 s of a clients judge that took 455, one after another).
fn side_by_side(client: Client) -> usize {
    match client {
        Client::Librdkafka => 5,
        Client::Program(_) => 3,
        Client::Java => 1,
    }
}

/// Runs `jobs` with one client on one broker, [`side_by_side`] at a time; the rows come back
/// in the jobs' order.
pub(super) fn run_client(
    client: Client,
    target: &str,
    bootstrap: &str,
    jobs: Vec<Job>,
    options: &ClientsOptions,
    runners: &Runners,
    progress: &(dyn crate::report::progress::Progress + Sync),
) -> Vec<RunRow> {
    let width = side_by_side(client).min(jobs.len()).max(1);
    let mut shares: Vec<Vec<(usize, Job)>> = (0..width).map(|_| Vec::new()).collect();
    for (i, job) in jobs.into_iter().enumerate() {
        shares[i % width].push((i, job));
    }
    let mut rows: Vec<(usize, RunRow)> = std::thread::scope(|scope| {
        let handles: Vec<_> = shares
            .into_iter()
            .map(|share| {
                scope.spawn(move || {
                    share
                        .into_iter()
                        .map(|(i, job)| {
                            let row =
                                run_job(client, target, bootstrap, job, options, runners, progress);
                            (i, row)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
                h.join().unwrap_or_else(|_| {
                    vec![(
                        usize::MAX,
                        RunRow {
                            client: client.name().into(),
                            workload: "?".into(),
                            target: target.into(),
                            coordinators: None,
                            secs: 0.0,
                            transcript: None,
                            error: Some("a thread running its workloads ended".into()),
                        },
                    )]
                })
            })
            .collect()
    });
    rows.sort_by_key(|(i, _)| *i);
    rows.into_iter().map(|(_, row)| row).collect()
}

/// Runs one job: its workload with the client on the broker, the row it leaves.
fn run_job(
    client: Client,
    target: &str,
    bootstrap: &str,
    job: Job,
    options: &ClientsOptions,
    runners: &Runners,
    progress: &(dyn crate::report::progress::Progress + Sync),
) -> RunRow {
    let workload = job.workload;
    let topic = options
        .provisioned_topics
        .then(|| provisioned_topic(client, workload))
        .or(job.topic.clone());
    let started = Instant::now();
    let runner = runners.java.as_ref();
    let result: Result<ClientTranscript, String> = match (&job.run_id, client, runner) {
        (Err(why), _, _) => Err(format!("its coordinators could not be placed: {why}")),
        (Ok(run_id), Client::Java, Some(runner)) => java::run(
            runner,
            workload,
            bootstrap,
            run_id,
            &WorkloadNames::of(client, run_id),
            topic.as_deref(),
            options.deadline,
        )
        .map_err(|e| e.to_string()),
        (Ok(_), Client::Java, None) => Err("the Java runner was not built".into()),
        (Ok(run_id), Client::Program(p), _) => match runners.programs.get(&p) {
            Some(installed) => programs::run(
                installed,
                workload,
                bootstrap,
                run_id,
                &WorkloadNames::of(client, run_id),
                topic.as_deref(),
                options.deadline,
            )
            .map_err(|e| e.to_string()),
            None => Err(format!("{} is not installed", p.name())),
        },
        (Ok(run_id), Client::Librdkafka, _) => {
            librdkafka_within(options.deadline, workload, bootstrap, run_id, topic.clone())
        }
    };
    let how = match &result {
        Ok(_) => "ran".to_owned(),
        Err(e) => format!(
            "gave no transcript: {}",
            e.lines().next().unwrap_or_default()
        ),
    };
    let label = match job.coordinators {
        Some(p) => format!("{} {workload} (coordinators {})", client.name(), p.name()),
        None => format!("{} {workload}", client.name()),
    };
    progress.done(target, &label, &how);
    let (transcript, error) = match result {
        Ok(t) => (Some(t), None),
        Err(e) => (None, Some(e)),
    };
    RunRow {
        client: client.name().into(),
        workload: workload.into(),
        target: target.into(),
        coordinators: job.coordinators,
        secs: started.elapsed().as_secs_f64(),
        transcript,
        error,
    }
}

/// A librdkafka workload, given up after `deadline` as a program's is killed: librdkafka runs
/// in this process, and a call can hang past its own timeout (a consumer's close against a
/// group coordinator that never answers: on a real kaas build stale-generation-offsets held
/// the clients judge for minutes). Its thread is left to end on its own.
fn librdkafka_within(
    deadline: Duration,
    workload: &'static str,
    bootstrap: &str,
    run_id: &str,
    topic: Option<String>,
) -> Result<ClientTranscript, String> {
    let (bootstrap, run_id) = (bootstrap.to_owned(), run_id.to_owned());
    given_up_after(
        deadline,
        &format!("librdkafka workload {workload}"),
        move || {
            let names = WorkloadNames::of(Client::Librdkafka, &run_id);
            librdkafka::run(workload, &bootstrap, &run_id, &names, topic.as_deref())
                .map_err(|e| e.to_string())
        },
    )
}

/// `work` on a thread of its own, its result if it ends within `deadline`, else why not.
fn given_up_after<T: Send + 'static>(
    deadline: Duration,
    what: &str,
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name(what.to_owned())
        .spawn(move || {
            let _ = tx.send(work());
        })
        .map_err(|e| format!("{what}: its thread could not start: {e}"))?;
    rx.recv_timeout(deadline).unwrap_or_else(|_| {
        Err(format!(
            "{what} did not end within {} s (a call hung past its own timeout); given up",
            deadline.as_secs()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workload that hangs is given up at its deadline, named; one that ends is its result.
    #[test]
    fn a_hung_in_process_workload_is_given_up_at_its_deadline() {
        let hung = given_up_after(
            Duration::from_millis(200),
            "librdkafka workload eos",
            || {
                std::thread::sleep(Duration::from_secs(30));
                Ok(())
            },
        );
        let e = hung.unwrap_err();
        assert!(
            e.starts_with("librdkafka workload eos did not end within 0 s"),
            "{e}"
        );
        assert_eq!(given_up_after(Duration::from_secs(5), "x", || Ok(7)), Ok(7));
    }
}
