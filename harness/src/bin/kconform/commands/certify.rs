//! `kconform certify`: every judge that applies to one broker, one after the other, each
//! turned into its part of one certificate (`kconform::certify`), held to one baseline. Every
//! input is checked before the first broker starts.

use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use kconform::certify::plan::{self, Ask, Planned};
use kconform::certify::{Certificate, Judged};
use kconform::report::gate::Judge;
use kconform::TargetSpec;

use crate::args::{CertifyArgs, TargetArgs};
use crate::progress::{self, Bars};

/// Runs `kconform certify`.
pub async fn run(a: CertifyArgs) -> anyhow::Result<ExitCode> {
    let target = TargetSpec::parse(&a.target)?;
    let (against, recorded_because) =
        kconform::targets::choice::against(a.against.as_deref(), a.apache_backend.into())?;
    let ask = Ask {
        only: a.judges.clone(),
        skip: a.skip.clone(),
    };
    let plan = plan::plan(target, against, &ask)?;
    let baseline = super::before_work(&a.gate, &a.files, a.html.as_ref())?;
    // The scenarios and the ledger load now, so that a bad file is refused before any broker.
    let source = a.scenarios.source();
    kconform::Scenario::load_all(&source)?;
    let ledger = kconform::compare::ledger::Ledger::read(&source)?;
    if let Some(why) = &recorded_because {
        note!("kconform: no live Apache ({why}); judging against Apache's recorded answers");
    }
    for l in &plan.left_out {
        note!("kconform: certify leaves out {}: {}", l.judge, l.why);
    }
    let started = Instant::now();
    let parts = run_judges(&a, &plan, started, &ledger).await;
    let mut certificate = Certificate::new(
        a.target.clone(),
        against.name(),
        parts,
        baseline.as_ref(),
        started.elapsed().as_secs_f64(),
    );
    certificate.budget_secs = a.budget.map(|b| b.as_secs());
    if let Some(why) = recorded_because {
        certificate
            .notes
            .push(format!("judged against Apache's recorded answers: {why}"));
    }
    out!("{}", certificate.terminal());
    write(&a, &certificate)?;
    super::save_baseline(&a.gate, baseline.as_ref(), &certificate.gated())?;
    let passed = super::holds(&a.gate, baseline.as_ref(), certificate.passed());
    Ok(super::verdict(passed))
}

/// Each judge planned, one after the other, then those left out.
async fn run_judges(
    a: &CertifyArgs,
    plan: &plan::Plan,
    started: Instant,
    ledger: &kconform::compare::ledger::Ledger,
) -> Vec<Judged> {
    let mut parts: Vec<Judged> = Vec::new();
    for (i, planned) in plan.run.iter().enumerate() {
        let after: Vec<Judge> = plan.run[i + 1..].iter().map(|p| p.judge).collect();
        let remaining = a.budget.map(|b| b.saturating_sub(started.elapsed()));
        let against = planned
            .against
            .map_or(String::new(), |s| format!(" against {}", s.name()));
        note!(
            "kconform: certify: {} on {}{against} ({}/{})",
            planned.judge,
            planned.target.name(),
            i + 1,
            plan.run.len()
        );
        let part = judge(a, planned, remaining, &after, ledger).await;
        note!(
            "kconform: certify: {} took {:.0} s",
            planned.judge,
            part.secs
        );
        let on = planned.target.name();
        parts.push(part.on(on, planned.against.map(|s| s.name())));
    }
    for l in &plan.left_out {
        parts.push(Judged::left_out(l.judge, &l.why));
    }
    parts
}

/// The files asked for.
fn write(a: &CertifyArgs, certificate: &Certificate) -> anyhow::Result<()> {
    a.files.files().write(certificate)?;
    if let Some(path) = &a.html {
        let page = kconform::certify::html::page(certificate);
        std::fs::write(path, page).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// One judge's part: run, or could not run with the reason.
async fn judge(
    a: &CertifyArgs,
    planned: &Planned,
    remaining: Option<Duration>,
    after: &[Judge],
    ledger: &kconform::compare::ledger::Ledger,
) -> Judged {
    let started = Instant::now();
    let secs = |s: Instant| s.elapsed().as_secs_f64();
    let ran = match planned.judge {
        Judge::Scenarios | Judge::ClusterScenarios => scenarios(a, planned).await,
        Judge::Clients => {
            let workloads = kconform::clients::WORKLOADS.len();
            let deadline = plan::client_deadline(remaining, after, workloads);
            clients(planned, ledger, deadline).await
        }
        Judge::Chaos => {
            let share = plan::share(Judge::Chaos, remaining, after);
            chaos(a, planned, share.duration)
                .await
                .map(|j| j.noting(share.over_budget))
        }
        Judge::Fuzz => {
            let share = plan::share(Judge::Fuzz, remaining, after);
            fuzz(a, planned, share.duration)
                .await
                .map(|j| j.noting(share.over_budget))
        }
        Judge::Peers => peers(a, planned).await,
    };
    match ran {
        Ok(mut part) => {
            part.secs = secs(started);
            part
        }
        Err(e) => Judged::could_not_run(planned.judge, &format!("{e:#}"), secs(started)),
    }
}

/// Copies of a cluster kconform starts (kaas-ref's or a build's) that certify shares the
/// disrupting cluster scenarios out over (`kconform run --lanes`; see `Session::lanes`).
const LANES: u64 = 4;

/// The pair of targets a planned judge compares.
fn pair(planned: &Planned) -> Vec<TargetSpec> {
    std::iter::once(planned.target)
        .chain(planned.against)
        .collect()
}

/// The scenarios of the planned shape.
async fn scenarios(a: &CertifyArgs, planned: &Planned) -> anyhow::Result<Judged> {
    let on = TargetArgs {
        targets: Vec::new(),
        fault_cmds: Vec::new(),
        snapshots: None,
        brokers: None,
        sasl: false,
        deadline_ms: kconform::run::DEADLINE.as_millis() as u64,
        provisioned_topics: false,
        strict_encoding: false,
        stop_at_malformed: false,
        lanes: LANES,
        apache_backend: a.apache_backend,
    };
    let specs = pair(planned);
    let started = Instant::now();
    let (report, transcripts) =
        super::session::compare_on(&a.scenarios, &on, &specs, &[], false, 4).await?;
    let all: Vec<_> = transcripts.into_iter().flatten().collect();
    Ok(Judged::scenarios(
        planned.judge,
        &report,
        &all,
        started.elapsed().as_secs_f64(),
    ))
}

/// The client workloads, every client, each placement on a cluster, each workload given up at
/// `deadline`.
async fn clients(
    planned: &Planned,
    ledger: &kconform::compare::ledger::Ledger,
    deadline: Duration,
) -> anyhow::Result<Judged> {
    use kconform::clients::placement::Placement;
    let options = kconform::clients::ClientsOptions {
        workloads: Vec::new(),
        clients: kconform::clients::Client::ALL.to_vec(),
        clients_named: false,
        provisioned_topics: false,
        deadline,
        coordinators: vec![Placement::Together, Placement::Apart],
        java_release: kconform::targets::apache::Release::CLAIMED,
    };
    let started = Instant::now();
    let report =
        kconform::clients::run(&pair(planned), &options, ledger, Arc::new(Bars::default())).await?;
    Ok(Judged::clients(&report, started.elapsed().as_secs_f64()))
}

/// The exactly-once workload under kills and pauses for `duration`.
async fn chaos(a: &CertifyArgs, planned: &Planned, duration: Duration) -> anyhow::Result<Judged> {
    use kconform::clients::chaos::schedule::Kind;
    use kconform::targets::faults::BrokerAct;
    let specs = pair(planned);
    let replay = format!(
        "kconform chaos --seed {} --duration {}s {}",
        a.seed,
        duration.as_secs(),
        specs
            .iter()
            .map(|s| format!("--target {}", s.arg()))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let options = kconform::clients::chaos::ChaosOptions {
        seed: a.seed,
        duration,
        workers: 3,
        outputs: 3,
        placement: kconform::clients::placement::Placement::Together,
        faults: vec![Kind::Act(BrokerAct::Kill), Kind::Act(BrokerAct::Pause)],
        no_faults: false,
        fault_commands: Default::default(),
        replay,
        provisioned_topics: false,
        clients: Vec::new(),
    };
    let started = Instant::now();
    let report = kconform::clients::chaos::run(&specs, &options, Arc::new(Bars::default())).await?;
    Ok(Judged::chaos(&report, started.elapsed().as_secs_f64()))
}

/// The live-wire fuzzing of the target's decoders for `duration`, no oracle, into a findings
/// folder of this run's own (so that every finding of this run is this run's).
async fn fuzz(a: &CertifyArgs, planned: &Planned, duration: Duration) -> anyhow::Result<Judged> {
    use kconform::fuzz::campaign::{self, Campaign, Mode};
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let findings = a.findings.join(format!("run-{stamp}"));
    std::fs::create_dir_all(&findings)
        .with_context(|| format!("creating {}", findings.display()))?;
    let shard = kconform::fuzz::shard::Shard::default();
    let start = campaign::start(&findings, false, Some(a.seed), shard)?;
    let deadline = Duration::from_millis(10_000);
    let options = kconform::fuzz::FuzzOptions {
        duration,
        seed: start.seed,
        max_actions: 8,
        findings,
        deadline,
        shrink_runs: 40,
        jobs: 16,
        stop_after_findings: None,
        first_sequence: start.first_sequence,
        shard,
        sequences: None,
    };
    let source = a.scenarios.source();
    let fuzzing = Campaign::new(Mode::Frames, options, start.first_frame, &source)?;
    let started = Instant::now();
    let (running, mut keeper) = fuzzed(planned, deadline).await?;
    let bar = progress::fuzzing(duration);
    let line = Arc::new(Bars::with_counters(bar.clone(), duration));
    let report = fuzzing
        .run(
            &running[0],
            None,
            &mut keeper,
            Vec::new(),
            line,
            Arc::new(AtomicBool::new(false)),
        )
        .await;
    bar.finish_and_clear();
    for t in running {
        t.stop().await;
    }
    keeper.stop().await;
    Ok(Judged::fuzz(&report?, started.elapsed().as_secs_f64()))
}

/// The broker the fuzz judge sends frames to, and what brings it back when it dies: a kaas
/// build kconform starts as a cluster of one and restarts (a crash pinned, and the run goes
/// on); another target as it starts, not brought back (the run ends at its first crash).
async fn fuzzed(
    planned: &Planned,
    deadline: Duration,
) -> anyhow::Result<(
    Vec<kconform::targets::Running>,
    kconform::fuzz::wire::keeper::Keeper,
)> {
    use kconform::fuzz::wire::keeper::{Keeper, Revive};
    if let kconform::targets::Kind::Build(bin) = &planned.target.kind {
        let unknown = ([127, 0, 0, 1], 0).into();
        let mut keeper = Keeper::new(
            Revive::Build(bin.to_path_buf()),
            unknown,
            None,
            RESTART_WAIT,
        );
        keeper.start().await?;
        let spec = TargetSpec::external(keeper.addr());
        let running = kconform::fuzz::campaign::start_all(&[spec], deadline).await?;
        return Ok((running, keeper));
    }
    let running = kconform::fuzz::campaign::start_all(&[planned.target], deadline).await?;
    let keeper = Keeper::cannot(running[0].addr);
    Ok((running, keeper))
}

/// How long the fuzz judge waits for a build it restarts to answer again.
const RESTART_WAIT: Duration = Duration::from_secs(60);

/// franz-go's suite, the tests CI runs.
async fn peers(a: &CertifyArgs, planned: &Planned) -> anyhow::Result<Judged> {
    use kconform::peers::judge::Allowlist;
    let options = kconform::peers::PeersOptions {
        run: kconform::peers::suite::RunOptions {
            run:
                "^(TestTxnEtl|TestGroupETL|TestGroupSimple|TestClient_Produce.*|TestConsumeRegex)$"
                    .into(),
            records: 20_000,
            timeout: Duration::from_secs(900),
            parallel: None,
        },
        concurrent: false,
        floor_secs: 1.0,
    };
    let source = a.scenarios.source();
    let name = "peers-allowlist.toml";
    let allowlist = Allowlist::parse(&source.read(name)?, &source.place(name))?;
    let started = Instant::now();
    let report = kconform::peers::run(
        &pair(planned),
        &options,
        allowlist,
        Arc::new(Bars::default()),
    )
    .await?;
    Ok(Judged::peers(&report, started.elapsed().as_secs_f64()))
}
