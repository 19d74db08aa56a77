//! `kconform peers`: franz-go's kgo suite on each target, judged against Apache.

use std::process::ExitCode;
use std::sync::Arc;

use kconform::peers::judge::Allowlist;
use kconform::peers::suite::RunOptions;
use kconform::peers::PeersOptions;

use crate::args::PeersArgs;
use crate::progress::Bars;

/// Runs `kconform peers`.
pub async fn run(a: PeersArgs) -> anyhow::Result<ExitCode> {
    let specs = super::targets(&a.targets, a.apache_backend.into(), None, false)?;
    let baseline = super::before_work(&a.gate, &a.files, None)?;
    let timeout = a.deadline();
    let options = PeersOptions {
        run: RunOptions {
            run: a.run,
            records: a.records,
            timeout,
            parallel: a.jobs,
        },
        concurrent: a.concurrent,
        floor_secs: a.floor_secs,
    };
    let allowlist = match &a.allowlist {
        Some(path) => Allowlist::load(path)?,
        None => {
            let source = a.scenarios.source();
            let name = "peers-allowlist.toml";
            Allowlist::parse(&source.read(name)?, &source.place(name))?
        }
    };
    let report =
        kconform::peers::run(&specs, &options, allowlist, Arc::new(Bars::default())).await?;
    out!("{}", report.terminal());
    a.files.files().write(&report)?;
    let passed = super::hold(
        &a.gate,
        baseline.as_ref(),
        kconform::report::gate::Judge::Peers,
        &report.gated(),
        report.passed(),
    )?;
    Ok(super::verdict(passed))
}
