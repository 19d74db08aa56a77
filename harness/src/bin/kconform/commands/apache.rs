//! `kconform apache up|down|status|cluster`: one Apache kept running between runs, or a cluster
//! in the foreground.

use std::process::ExitCode;

use kconform::targets::apache::{cluster::ApacheCluster, daemon, Release};

use crate::args::{ApacheAction, ApacheArgs};
use crate::progress;

/// Runs `kconform apache`.
pub async fn run(a: ApacheArgs) -> anyhow::Result<ExitCode> {
    match a.action {
        ApacheAction::Cluster => cluster(a.brokers, a.release).await,
        ApacheAction::Up => up(a.release),
        ApacheAction::Down => {
            match daemon::down()? {
                true => outln!("Apache stopped"),
                false => outln!("no Apache was up"),
            }
            Ok(ExitCode::SUCCESS)
        }
        ApacheAction::Status => Ok(status()),
    }
}

/// Runs a cluster of `brokers` brokers and a controller until Ctrl-C.
async fn cluster(brokers: u8, release: Release) -> anyhow::Result<ExitCode> {
    let spinner = progress::starting(&format!("a cluster of {release}, {brokers} brokers"));
    let started = tokio::task::spawn_blocking(move || {
        ApacheCluster::start_with(usize::from(brokers), false, &release)
    })
    .await;
    spinner.finish_and_clear();
    let cluster = started.map_err(|e| anyhow::anyhow!("the launcher failed: {e}"))??;
    for (i, addr) in cluster.addrs().iter().enumerate() {
        outln!("broker {i}: {addr}");
    }
    outln!(
        "{release} cluster: {brokers} brokers and a controller ready in {:.1} s, {} MiB resident; Ctrl-C stops it",
        cluster.start_time.as_secs_f64(),
        cluster.resident_bytes() / (1024 * 1024)
    );
    tokio::signal::ctrl_c().await?;
    drop(cluster);
    Ok(ExitCode::SUCCESS)
}

/// Starts one broker and leaves it running (or says it already runs).
fn up(release: Release) -> anyhow::Result<ExitCode> {
    let spinner = progress::starting(&format!("{release} (kept up)"));
    let result = daemon::up(&release);
    spinner.finish_and_clear();
    let (d, started) = result?;
    outln!(
        "Apache Kafka {} {} at {} (pid {}); `kconform apache down` stops it",
        d.version,
        if started { "started" } else { "already up" },
        d.addr,
        d.pid
    );
    Ok(ExitCode::SUCCESS)
}

/// Says whether the kept broker runs: exit 1 when not (the answer is no, as every command's 1;
/// it was 3, the one command that used it).
fn status() -> ExitCode {
    match daemon::running_any() {
        Some(d) => {
            outln!(
                "up: Apache Kafka {} at {} (pid {}, log {})",
                d.version,
                d.addr,
                d.pid,
                daemon::dir().join("broker.log").display()
            );
            ExitCode::SUCCESS
        }
        None => {
            outln!("down");
            ExitCode::from(1)
        }
    }
}
