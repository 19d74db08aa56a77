//! `kconform matrix`: each broker of the brokers file installed, started and certified
//! against each Apache asked for, each certification a `kconform certify` of its own (a
//! process: one broker that crashes kconform's judges leaves the others' rows whole), each run
//! kept in the site's history as it ends, then the site written from the whole history.
//! Every input is checked before the first broker is installed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context as _;
use kconform::matrix::brokers::{self, Broker, Claim, LedgerChoice, Start};
use kconform::matrix::cell::{self, Cell, Word};
use kconform::matrix::history::{self, Run};
use kconform::matrix::{site, started};
use kconform::TargetSpec;

use crate::args::MatrixArgs;

/// Runs `kconform matrix`.
pub async fn run(a: MatrixArgs) -> anyhow::Result<ExitCode> {
    let all = brokers::load(&a.brokers).map_err(|e| match e {
        brokers::BrokersError::Read { .. } if !a.brokers.exists() => anyhow::anyhow!(
            "{}: no brokers file here: name one with --brokers FILE (the repository's is matrix/brokers.toml)",
            a.brokers.display()
        ),
        e => e.into(),
    })?;
    let chosen = brokers::select(all, &a.only, &a.brokers)?;
    let against = match a.against.is_empty() {
        true => vec!["apache".to_owned()],
        false => a.against.clone(),
    };
    for x in &against {
        let spec = TargetSpec::parse(x)?;
        anyhow::ensure!(
            spec.is_apache() && !spec.is_recorded() && spec.brokers == 1,
            "--against {x}: the matrix judges against a live Apache of one broker (apache or apache@RELEASE)"
        );
    }
    std::fs::create_dir_all(a.site.join("runs"))
        .with_context(|| format!("--site {}", a.site.display()))?;
    let exe = std::env::current_exe().context("kconform's own path, to run certify")?;
    if !a.site_only {
        let total = chosen.len() * against.len();
        for (i, broker) in chosen.iter().enumerate() {
            for (j, against) in against.iter().enumerate() {
                note!(
                    "kconform: matrix: {} against {against} ({}/{total})",
                    broker.name,
                    i * against.len() + j + 1
                );
                let run = certify_one(&a, &exe, broker, against).await;
                history::keep(&a.site, &run)?;
                note!(
                    "kconform: matrix: {} against {against}: {} ({:.0} s)",
                    broker.name,
                    run.summary,
                    run.secs
                );
            }
        }
    }
    let (runs, unreadable) = history::read(&a.site)?;
    let notes: Vec<String> = unreadable
        .iter()
        .map(|p| format!("left out of the history, not a run this kconform reads: {p}"))
        .collect();
    for n in &notes {
        note!("kconform: matrix: {n}");
    }
    site::write(&a.site, &runs, &notes)
        .with_context(|| format!("writing the site in {}", a.site.display()))?;
    let latest = history::latest(&runs);
    let mine: Vec<&&Run> = latest
        .iter()
        .filter(|r| chosen.iter().any(|b| b.name == r.broker) && against.contains(&r.against))
        .collect();
    let mut failing = 0;
    for run in &mine {
        let bad: Vec<String> = run
            .cells
            .iter()
            .filter(|c| c.word.fails())
            .map(|c| format!("{} {}", c.column, c.word.label()))
            .collect();
        failing += usize::from(!bad.is_empty());
        outln!(
            "{:<20} {:<14} {}{}",
            run.broker,
            run.against,
            run.summary,
            match bad.is_empty() {
                true => String::new(),
                false => format!(" [{}]", bad.join(", ")),
            }
        );
    }
    outln!(
        "matrix: {} row(s), {failing} with a failing cell; the site: {}",
        mine.len(),
        a.site.join("index.html").display()
    );
    Ok(match (mine.is_empty(), failing) {
        (true, _) => ExitCode::from(2),
        (false, 0) => ExitCode::SUCCESS,
        (false, _) => ExitCode::from(1),
    })
}

/// One broker against one Apache: installed, started, asked whether it serves transactions,
/// certified; every failure a cell that says so, never a missing row.
async fn certify_one(a: &MatrixArgs, exe: &Path, broker: &Broker, against: &str) -> Run {
    let began = Instant::now();
    let mut run = Run {
        schema_version: history::SCHEMA_VERSION,
        kconform_version: env!("CARGO_PKG_VERSION").to_owned(),
        broker: broker.name.clone(),
        broker_version: broker.version.clone(),
        against: against.to_owned(),
        started: SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        secs: 0.0,
        transaction_apis: None,
        cells: Vec::new(),
        summary: String::new(),
        page: None,
        certificate: None,
        log: None,
    };
    let stem = run.stem();
    let log = a.site.join(format!("{stem}.log"));
    if let Some(dir) = log.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    run.log = Some(format!("{stem}.log"));
    let install_dir = kconform::targets::apache::jars::cache_root()
        .join("matrix")
        .join(&broker.name);
    let _ = std::fs::create_dir_all(&install_dir);
    let result = certify_started(a, exe, broker, against, &mut run, &install_dir, &log).await;
    if let Err(why) = result {
        run.cells.push(Cell {
            column: "start".into(),
            word: Word::CouldNotStart,
            why: why.clone(),
        });
        run.summary = format!("COULD NOT START: {why}");
    }
    run.secs = began.elapsed().as_secs_f64();
    run
}

/// [`certify_one`] past the install: the broker started (when it is a command), its claim
/// checked, certify run on it. Err: it could not be installed or started.
async fn certify_started(
    a: &MatrixArgs,
    exe: &Path,
    broker: &Broker,
    against: &str,
    run: &mut Run,
    install_dir: &Path,
    log: &Path,
) -> Result<(), String> {
    if let Some(install) = &broker.install {
        started::install(install, install_dir, log).map_err(|e| e.to_string())?;
    }
    let data = tempfile::tempdir().map_err(|e| format!("a data folder: {e}"))?;
    let (target, _running) = match &broker.start {
        Start::Target(t) => (t.clone(), None),
        Start::Command(command) => {
            let port = reference_broker::ports::free_port([127, 0, 0, 1].into())
                .map_err(|e| format!("a free port: {e}"))?;
            let ready = Duration::from_secs(broker.ready_secs);
            let s = started::start(command, port, data.path(), install_dir, ready, log)
                .await
                .map_err(|e| e.to_string())?;
            run.transaction_apis = Some(started::transaction_apis(&s.advertised));
            (format!("external={}", s.addr), Some(s))
        }
    };
    if broker.transactions == Claim::None {
        match run.transaction_apis.as_deref() {
            Some([]) => {
                run.cells.push(Cell {
                    column: "transactions".into(),
                    word: Word::NotServed,
                    why: "advertises none of the transaction APIs (22, 24 to 28), as its documentation says".into(),
                });
                run.summary = "NOT SERVED: refuses transactions cleanly".into();
                return Ok(());
            }
            Some(apis) => run.cells.push(Cell {
                column: "transactions".into(),
                word: Word::Undocumented,
                why: format!("advertises the transaction APIs {apis:?}, though its documentation claims none: certified as any broker"),
            }),
            None => {}
        }
    }
    let ledger_dir = tempfile::tempdir().map_err(|e| format!("a ledger folder: {e}"))?;
    let scenarios =
        ledger(&broker.ledger, ledger_dir.path()).map_err(|e| format!("its ledger: {e}"))?;
    let stem = run.stem();
    let (json, page) = (format!("{stem}.certificate.json"), format!("{stem}.html"));
    let tail = certify(
        a,
        exe,
        &target,
        against,
        scenarios.as_deref(),
        &json,
        &page,
        install_dir,
        log,
    )
    .await;
    match std::fs::read_to_string(a.site.join(&json))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
    {
        Some(certificate) => {
            run.cells.extend(cell::of_certificate(&certificate));
            let findings = certificate["findings"].as_array().map_or(0, Vec::len);
            run.summary = format!(
                "{}: {findings} finding(s)",
                certificate["verdict"]
                    .as_str()
                    .unwrap_or("?")
                    .to_uppercase()
            );
            run.certificate = Some(json);
            run.page = a.site.join(&page).exists().then_some(page);
        }
        None => {
            run.cells.push(Cell {
                column: "certify".into(),
                word: Word::CouldNotRun,
                why: tail.clone(),
            });
            run.summary = format!("COULD NOT RUN: {tail}");
        }
    }
    Ok(())
}

/// The `--scenarios` folder that makes `choice` certify's ledger (none: the built-in one).
fn ledger(choice: &LedgerChoice, dir: &Path) -> std::io::Result<Option<PathBuf>> {
    let path = dir.join("deviations.toml");
    match choice {
        LedgerChoice::BuiltIn => return Ok(None),
        LedgerChoice::None => std::fs::write(
            &path,
            "# This broker's documentation states no deviation from Apache.\ndeviation = []\n",
        )?,
        LedgerChoice::File(file) => {
            std::fs::copy(file, &path)?;
        }
    }
    Ok(Some(dir.to_owned()))
}

/// Runs `kconform certify` on `target`, its JSON and page into the site, its output appended to
/// `log`, given up past its deadline: the last lines it printed.
#[allow(clippy::too_many_arguments)]
async fn certify(
    a: &MatrixArgs,
    exe: &Path,
    target: &str,
    against: &str,
    scenarios: Option<&Path>,
    json: &str,
    page: &str,
    install_dir: &Path,
    log: &Path,
) -> String {
    let mut command = tokio::process::Command::new(exe);
    command
        .arg("certify")
        .args(["--target", target, "--against", against, "--quiet"])
        .arg("--json")
        .arg(a.site.join(json))
        .arg("--html")
        .arg(a.site.join(page))
        .arg("--findings")
        .arg(install_dir.join("fuzz-findings"))
        .arg("--apache-backend")
        .arg(
            clap::ValueEnum::to_possible_value(&a.apache_backend)
                .map_or_else(|| "auto".to_owned(), |v| v.get_name().to_owned()),
        )
        .kill_on_drop(true);
    if let Some(dir) = scenarios {
        command.arg("--scenarios").arg(dir);
    }
    if let Some(b) = a.budget {
        command.args(["--budget", &format!("{}s", b.as_secs())]);
    }
    let list = |js: &[kconform::report::gate::Judge]| {
        js.iter()
            .map(|j| j.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    if !a.judges.is_empty() {
        command.args(["--judge", &list(&a.judges)]);
    }
    if !a.skip.is_empty() {
        command.args(["--skip", &list(&a.skip)]);
    }
    let open = || {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
    };
    match (open(), open()) {
        (Ok(out), Ok(err)) => {
            command.stdout(out).stderr(err);
        }
        _ => return format!("its log {} could not be opened", log.display()),
    }
    let deadline = a.budget.map_or(Duration::from_secs(3600), |b| {
        b * 2 + Duration::from_secs(600)
    });
    let ended = match command.spawn() {
        Ok(mut child) => match tokio::time::timeout(deadline, child.wait()).await {
            Ok(Ok(status)) => status.to_string(),
            Ok(Err(e)) => format!("certify: {e}"),
            Err(_) => format!(
                "certify did not end within {} min; killed",
                deadline.as_secs() / 60
            ),
        },
        Err(e) => format!("certify could not start: {e}"),
    };
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let last: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    format!(
        "{ended}: {}",
        last[last.len().saturating_sub(2)..].join(" | ")
    )
}
