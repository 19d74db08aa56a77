//! One module per command, each taking its arguments and giving an exit code; [`dispatch`]
//! hands each command to its module. What several share lives here: the targets chosen, and
//! the exit code of a verdict.

mod apache;
mod certify;
mod chaos;
mod clients;
mod coverage;
mod fuzz;
mod kaas;
mod ledger;
mod list;
mod matrix;
mod peers;
mod proxy;
mod replay_frame;
mod repro;
mod run;
mod session;
mod settings;
mod streams_eos;
mod topics;

use std::process::ExitCode;

use kconform::targets::apache::Backend;
use kconform::targets::TargetSpec;

use crate::args::Command;

/// Runs `command`.
pub async fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Run(a) => run::run(a).await,
        Command::Certify(a) => certify::run(a).await,
        Command::Matrix(a) => matrix::run(a).await,
        Command::Repro(a) => repro::run(a).await,
        Command::Coverage(a) => coverage::run(a).await,
        Command::Peers(a) => peers::run(a).await,
        Command::Clients(a) => clients::run(a).await,
        Command::Chaos(a) => chaos::run(a).await,
        Command::StreamsEos(a) => streams_eos::run(a).await,
        Command::Fuzz(a) => fuzz::run(a).await,
        Command::ReplayFrame(a) => replay_frame::run(a).await,
        Command::Proxy(a) => proxy::run(a).await,
        Command::Topics(a) => topics::run(a).await,
        Command::List(a) => list::run(a),
        Command::Apache(a) => apache::run(a).await,
        Command::Kaas(a) => kaas::run(a).await,
        Command::Ledger(a) => ledger::run(a),
        Command::Settings(a) => settings::run(a).await,
    }
}

/// The targets named, or kaas-ref beside Apache of the shape asked for; when only Apache's
/// recorded answers can stand in for it here, says so and why.
pub fn targets(
    named: &[String],
    backend: Backend,
    brokers: Option<u64>,
    sasl: bool,
) -> anyhow::Result<Vec<TargetSpec>> {
    let choice = kconform::targets::choice::choose(named, backend, brokers, sasl)?;
    if let Some(why) = choice.recorded_because {
        note!(
            "kconform: no live Apache ({why}); comparing against Apache's recorded answers instead"
        );
    }
    Ok(choice.specs)
}

/// JSON `--json [FILE]` asked for: printed for `-`, else written to FILE.
pub fn json_out(path: &std::path::Path, text: &str) -> anyhow::Result<()> {
    use anyhow::Context as _;
    match path.as_os_str() == "-" {
        true => {
            outln!("{text}");
            Ok(())
        }
        false => std::fs::write(path, format!("{text}\n"))
            .with_context(|| format!("writing {}", path.display())),
    }
}

/// Exit 0 when a report passed; 1 when it found an undocumented difference, a stale ledger
/// entry, a failed expectation or a finding.
pub fn verdict(passed: bool) -> ExitCode {
    match passed {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(1),
    }
}

/// What every judging command checks before any work: each file it will write (`files`,
/// `html`, the baseline's) has a folder to go in, and the baseline asked for reads.
pub fn before_work(
    gate: &crate::args::BaselineArgs,
    files: &crate::args::ReportFiles,
    html: Option<&std::path::PathBuf>,
) -> anyhow::Result<Option<kconform::report::baseline::Baseline>> {
    let html = html.map(|p| (p, "--html"));
    check_outputs(
        files
            .outputs()
            .into_iter()
            .chain(html)
            .chain(gate.outputs()),
    )?;
    load_baseline(gate)
}

/// Every file a run will write has a folder to go in: refused now, not after the work.
pub fn check_outputs<'a>(
    files: impl IntoIterator<Item = (&'a std::path::PathBuf, &'static str)>,
) -> anyhow::Result<()> {
    for (path, flag) in files {
        let folder = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => std::path::Path::new("."),
        };
        if !folder.is_dir() {
            anyhow::bail!(
                "{flag} {}: the folder {} does not exist",
                path.display(),
                folder.display()
            );
        }
        if path.is_dir() {
            anyhow::bail!("{flag} {}: is a folder, not a file", path.display());
        }
    }
    Ok(())
}

/// A judge's baseline, read before any work: none when not asked for; with
/// `--add-to-baseline`, the file's (none yet, when it is missing).
pub fn load_baseline(
    gate: &crate::args::BaselineArgs,
) -> anyhow::Result<Option<kconform::report::baseline::Baseline>> {
    use kconform::report::baseline::Baseline;
    if let Some(path) = &gate.add_to_baseline {
        return Ok(Some(Baseline::load_or_empty(path)?));
    }
    Ok(gate.baseline.as_deref().map(Baseline::load).transpose()?)
}

/// Writes what `--save-baseline` (this run's `failing`) or `--add-to-baseline` (`loaded`
/// with `failing` added) asks for.
pub fn save_baseline(
    gate: &crate::args::BaselineArgs,
    loaded: Option<&kconform::report::baseline::Baseline>,
    failing: &[kconform::report::gate::Gated],
) -> anyhow::Result<()> {
    use kconform::report::baseline::Baseline;
    if let Some(path) = &gate.save_baseline {
        Baseline::of_findings(failing).save(path)?;
    }
    if let (Some(path), Some(loaded)) = (&gate.add_to_baseline, loaded) {
        let grown = loaded.grown(failing);
        grown.save(path)?;
        note!(
            "kconform: {} holds {} entries from {} run(s), {} of them not shown by every run",
            path.display(),
            grown.known.len(),
            grown.runs,
            grown.varying()
        );
    }
    Ok(())
}

/// Whether a run passes, given its own verdict (`passed`): a run that saves its baseline
/// (`--save-baseline` without `--baseline`) holds to what it saved, so it passes (saving one
/// under `set -e` failed the step that saved it); it says so.
pub fn holds(
    gate: &crate::args::BaselineArgs,
    baseline: Option<&kconform::report::baseline::Baseline>,
    passed: bool,
) -> bool {
    let saving = gate.save_baseline.is_some() && baseline.is_none();
    if saving && !passed {
        note!(
            "kconform: exit 0: what fails this run is the baseline it saved (--baseline FILE gates on it)"
        );
    }
    passed || saving
}

/// Holds what fails a judge's run (`failing`) to the baseline read at the start, and saves it
/// where asked; prints the baseline's line (and what is new and fixed) after the report.
/// Whether the run passes: as `passed` without a baseline; with one, when nothing is new.
pub fn hold(
    gate: &crate::args::BaselineArgs,
    baseline: Option<&kconform::report::baseline::Baseline>,
    judge: kconform::report::gate::Judge,
    failing: &[kconform::report::gate::Gated],
    passed: bool,
) -> anyhow::Result<bool> {
    use kconform::report::baseline::Against;
    save_baseline(gate, baseline, failing)?;
    let Some(baseline) = baseline else {
        return Ok(holds(gate, None, passed));
    };
    let against = Against::hold(&[judge], failing, baseline);
    outln!("\n{}; the run fails only on what is new", against.summary());
    for k in &against.new {
        outln!("  NEW   {}", k.key);
    }
    for k in &against.fixed {
        outln!("  FIXED {}", k.key);
    }
    Ok(against.held())
}
