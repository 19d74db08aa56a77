//! `kconform clients`: client workloads with the Java kafka-clients and librdkafka on two
//! targets, what each client saw compared and judged against the ledger's client claims.

use std::process::ExitCode;

use anyhow::Context as _;
use std::sync::Arc;

use kconform::clients::{Client, ClientsOptions, WORKLOADS};
use kconform::compare::ledger::Ledger;

use crate::args::ClientsArgs;
use crate::progress::Bars;

/// Runs `kconform clients`.
pub async fn run(a: ClientsArgs) -> anyhow::Result<ExitCode> {
    if a.list {
        for w in WORKLOADS {
            outln!("{:26} {}", w.name, w.about);
        }
        outln!();
        for c in Client::ALL {
            let runs: Vec<&str> = WORKLOADS
                .iter()
                .map(|w| w.name)
                .filter(|w| c.runs(w))
                .collect();
            let what = match c {
                Client::Program(p) => format!("{} (installed on first use)", p.version()),
                Client::Java => "kafka-clients 3.7.2, or --release".into(),
                Client::Librdkafka => "built into kconform".into(),
            };
            let runs = match runs.len() == WORKLOADS.len() {
                true => "every workload".to_owned(),
                false => runs.join(", "),
            };
            outln!("{:26} {what}: {runs}", c.name());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let specs = super::targets(&a.targets, a.apache_backend.into(), None, false)?;
    let baseline = super::before_work(&a.gate, &a.files, a.html.as_ref())?;
    let ledger = Ledger::read(&a.scenarios.source())?;
    let deadline = a.deadline();
    let clients_named = !a.clients.is_empty();
    let clients = match clients_named {
        true => a.clients.into_iter().map(Into::into).collect(),
        false => Client::ALL.to_vec(),
    };
    let options = ClientsOptions {
        workloads: a.names,
        clients,
        clients_named,
        provisioned_topics: a.provisioned_topics,
        deadline,
        coordinators: a.coordinators.placements(),
        java_release: a.java_release,
    };
    let report =
        kconform::clients::run(&specs, &options, &ledger, Arc::new(Bars::default())).await?;
    out!("{}", report.terminal());
    a.files.files().write(&report)?;
    if let Some(path) = &a.html {
        let page = kconform::clients::html::page(&report);
        std::fs::write(path, page).with_context(|| format!("writing {}", path.display()))?;
    }
    let passed = super::hold(
        &a.gate,
        baseline.as_ref(),
        kconform::report::gate::Judge::Clients,
        &report.gated(),
        report.passed(),
    )?;
    Ok(super::verdict(passed))
}
