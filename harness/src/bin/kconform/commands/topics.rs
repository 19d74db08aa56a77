//! `kconform topics`: the topics a run needs, for a broker where clients cannot create them.

use std::process::ExitCode;

use kconform::run::plan;
use kconform::scenario::Scenario;

use crate::args::TopicsArgs;

/// Runs `kconform topics`.
pub async fn run(a: TopicsArgs) -> anyhow::Result<ExitCode> {
    let needed = match (a.clients, a.chaos) {
        (true, _) => kconform::clients::provisioned_topics(),
        (_, true) => kconform::clients::chaos::provisioned_topics(),
        _ => {
            let source = a.scenarios.source();
            let all = Scenario::load_all(&source)?;
            let chosen = plan::pick(&all, &a.names, &source)?;
            kconform::run::topics::needed(&chosen)
        }
    };
    if let Some(target) = &a.target {
        let spec = kconform::targets::TargetSpec::parse(target)?;
        let running = kconform::targets::Running::start(&spec).await?;
        let done = running
            .provision(&needed, std::time::Duration::from_secs(35))
            .await;
        running.stop().await;
        let done = done?;
        outln!("{}: {}", spec.arg(), done.summary());
        return Ok(match (done.refused, done.failed.is_empty()) {
            (None, true) => ExitCode::SUCCESS,
            _ => ExitCode::from(1),
        });
    }
    match &a.json {
        Some(path) => super::json_out(path, &serde_json::to_string_pretty(&needed)?)?,
        None => {
            for t in &needed {
                let configs: Vec<String> =
                    t.configs.iter().map(|(k, v)| format!("{k}={v}")).collect();
                outln!("{} {} {}", t.name, t.partitions, configs.join(","));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
