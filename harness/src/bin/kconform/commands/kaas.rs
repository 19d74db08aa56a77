//! `kconform kaas up`: a kaas build as a cluster, in the foreground.

use std::process::ExitCode;
use std::time::Duration;

use kconform::targets::kaas_build::BuildCluster;

use crate::args::{KaasAction, KaasArgs, KaasUpArgs};
use crate::progress;

/// Runs `kconform kaas`.
pub async fn run(a: KaasArgs) -> anyhow::Result<ExitCode> {
    match a.action {
        KaasAction::Up(up) => self::up(up).await,
    }
}

/// The topics of `--topics` (JSON, or a file of it); none given, the cluster reads
/// kconform's own KAAS_TOPICS.
fn topics(arg: Option<&str>) -> anyhow::Result<Option<String>> {
    let text = match arg {
        None => return Ok(None),
        Some(arg) if arg.trim_start().starts_with('[') => arg.to_owned(),
        Some(path) => {
            std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("--topics {path}: {e}"))?
        }
    };
    serde_json::from_str::<Vec<serde_json::Value>>(&text).map_err(|e| {
        anyhow::anyhow!("--topics: expected [{{\"name\": \"t\", \"partitions\": 3}}]: {e}")
    })?;
    Ok(Some(text))
}

async fn up(a: KaasUpArgs) -> anyhow::Result<ExitCode> {
    let topics = topics(a.topics.as_deref())?;
    let flags = kconform::targets::kaas_ref_flags(usize::from(a.brokers));
    let spinner = progress::starting(&format!("{} as {} brokers", a.bin.display(), a.brokers));
    let started =
        BuildCluster::start(&a.bin, usize::from(a.brokers), topics.as_deref(), flags).await;
    spinner.finish_and_clear();
    let cluster = started?;
    for (i, addr) in cluster.addrs().iter().enumerate() {
        outln!("broker {i}: {addr}");
    }
    if let Some(note) = cluster.names_note() {
        outln!("names: {note}");
    }
    outln!(
        "Kubernetes API: {} (KUBECONFIG={})",
        cluster.api().url(),
        cluster.dir().join("kubeconfig").display()
    );
    outln!("logs: {}", cluster.dir().display());
    if let Some(note) = kconform::targets::kaas_build::kubeconfig_note() {
        outln!("note: {note}");
    }
    outln!("every endpoint ready (changes are printed as they come); Ctrl-C stops the cluster");
    let mut controller = None;
    let mut ready = cluster.api().ready();
    let stop = tokio::signal::ctrl_c();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => break,
            _ = tokio::time::sleep(Duration::from_millis(250)) => {}
        }
        let seen = cluster.api().ready();
        for (i, (was, is)) in ready.iter().zip(&seen).enumerate() {
            if was != is {
                outln!("broker {i}: {}", if *is { "ready" } else { "not ready" });
            }
        }
        ready = seen;
        let now = cluster.controller();
        if now != controller {
            if let Some(c) = &now {
                outln!("controller: {} (epoch {})", c.holder, c.transitions);
            }
            controller = now;
        }
    }
    match cluster.api().unserved_note() {
        Some(note) => outln!("note: {note}"),
        None => outln!("the stand-in Kubernetes API served every request"),
    }
    cluster.stop().await;
    Ok(ExitCode::SUCCESS)
}
