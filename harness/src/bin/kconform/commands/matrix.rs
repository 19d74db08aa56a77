//! `kconform matrix`: the brokers file and every other input checked before the first broker
//! is installed; each row certified (`kconform::certify::matrix::row`) and kept as it ends;
//! then the site written from the whole history and the rows run printed, one line each.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use kconform::certify::matrix::brokers::{self, Broker};
use kconform::certify::matrix::history::{self, Run};
use kconform::certify::matrix::row::Certifier;
use kconform::certify::matrix::site;
use kconform::TargetSpec;

use crate::args::MatrixArgs;

/// Runs `kconform matrix`.
pub async fn run(a: MatrixArgs) -> anyhow::Result<ExitCode> {
    let chosen = chosen(&a)?;
    let apaches = apaches(&a)?;
    std::fs::create_dir_all(a.site.join("runs"))
        .with_context(|| format!("--site {}", a.site.display()))?;
    if !a.site_only {
        let certifier = certifier(&a)?;
        let total = chosen.len() * apaches.len();
        let mut n = 0;
        for broker in &chosen {
            for against in &apaches {
                n += 1;
                note!(
                    "kconform: matrix: {} against {against} ({n}/{total})",
                    broker.name
                );
                let run = certifier.row(broker, against).await;
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
    Ok(print_rows(&a, &runs, &chosen, &apaches))
}

/// The brokers of the file that were asked for, the file checked whole.
fn chosen(a: &MatrixArgs) -> anyhow::Result<Vec<Broker>> {
    let all = brokers::load(&a.brokers).map_err(|e| match e {
        brokers::BrokersError::Read { .. } if !a.brokers.exists() => anyhow::anyhow!(
            "{}: no brokers file here: name one with --brokers FILE (the repository's is matrix/brokers.toml)",
            a.brokers.display()
        ),
        e => e.into(),
    })?;
    Ok(brokers::select(all, &a.only, &a.brokers)?)
}

/// The Apaches asked for (3.7.2 by default), each checked.
fn apaches(a: &MatrixArgs) -> anyhow::Result<Vec<String>> {
    let apaches = match a.against.is_empty() {
        true => vec!["apache".to_owned()],
        false => a.against.clone(),
    };
    for x in &apaches {
        let spec = TargetSpec::parse(x)?;
        anyhow::ensure!(
            (spec.is_apache() || spec.is_recorded()) && spec.brokers == 1 && !spec.secured,
            "--against {x}: the matrix judges against Apache of one broker (apache, apache@RELEASE, or apache-recorded: no client workloads then)"
        );
    }
    Ok(apaches)
}

/// How each row's certify runs: this kconform, the arguments passed on.
fn certifier(a: &MatrixArgs) -> anyhow::Result<Certifier> {
    let kconform: PathBuf =
        std::env::current_exe().context("kconform's own path, to run certify")?;
    let backend = clap::ValueEnum::to_possible_value(&a.apache_backend)
        .map_or_else(|| "auto".to_owned(), |v| v.get_name().to_owned());
    let mut arguments = vec!["--apache-backend".to_owned(), backend];
    if let Some(b) = a.budget {
        arguments.extend(["--budget".to_owned(), format!("{}s", b.as_secs())]);
    }
    let list = |js: &[kconform::report::gate::Judge]| {
        js.iter()
            .map(|j| j.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    if !a.judges.is_empty() {
        arguments.extend(["--judge".to_owned(), list(&a.judges)]);
    }
    if !a.skip.is_empty() {
        arguments.extend(["--skip".to_owned(), list(&a.skip)]);
    }
    Ok(Certifier {
        site: a.site.clone(),
        kconform,
        version: match env!("KCONFORM_COMMIT") {
            "" => env!("CARGO_PKG_VERSION").to_owned(),
            commit => format!("{} ({commit})", env!("CARGO_PKG_VERSION")),
        },
        arguments,
        deadline: a.budget.map_or(Duration::from_secs(3600), |b| {
            b * 2 + Duration::from_secs(600)
        }),
    })
}

/// One line per row asked for (its latest run), the site's path; the exit code: 0 no failing
/// cell, 1 one or more, 2 no row.
fn print_rows(a: &MatrixArgs, runs: &[Run], chosen: &[Broker], apaches: &[String]) -> ExitCode {
    let latest = history::latest(runs);
    let mine: Vec<&&Run> = latest
        .iter()
        .filter(|r| chosen.iter().any(|b| b.name == r.broker) && apaches.contains(&r.against))
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
        let bad = match bad.is_empty() {
            true => String::new(),
            false => format!(" [{}]", bad.join(", ")),
        };
        outln!(
            "{:<20} {:<14} {}{bad}",
            run.broker,
            run.against,
            run.summary
        );
    }
    outln!(
        "matrix: {} row(s), {failing} with a failing cell; the site: {}",
        mine.len(),
        a.site.join("index.html").display()
    );
    match (mine.is_empty(), failing) {
        (true, _) => ExitCode::from(2),
        (false, 0) => ExitCode::SUCCESS,
        (false, _) => ExitCode::from(1),
    }
}
