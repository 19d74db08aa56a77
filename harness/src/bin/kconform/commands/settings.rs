//! `kconform settings`: the broker settings the scenarios assume, and whether a broker has them.

use std::process::ExitCode;

use kconform::targets::apache::SETTINGS;

use crate::args::SettingsArgs;

/// Runs `kconform settings`.
pub async fn run(a: SettingsArgs) -> anyhow::Result<ExitCode> {
    if let Some(target) = &a.target {
        let spec = kconform::targets::TargetSpec::parse(target)?;
        let running = kconform::targets::Running::start(&spec).await?;
        let checked = running
            .check_settings(std::time::Duration::from_secs(10))
            .await;
        running.stop().await;
        let checked = checked?;
        outln!("{}: {}", spec.arg(), checked.summary());
        return Ok(match checked.differs.is_empty() {
            true => ExitCode::SUCCESS,
            false => ExitCode::from(1),
        });
    }
    if let Some(path) = &a.json {
        super::json_out(path, &serde_json::to_string_pretty(SETTINGS)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    for s in SETTINGS {
        outln!(
            "{}={}\n    kaas-ref: {}\n    why: {}",
            s.property,
            s.value,
            s.kaas_ref,
            s.why
        );
    }
    outln!("(a cluster of N brokers: the internal topics replicated min(N, 3) times and N partitions each; see the book's Clusters chapter, docs/src/clusters.md)");
    Ok(ExitCode::SUCCESS)
}
