//! `kconform streams-eos`: Apache's Streams exactly-once test on each target, Apache first.

use std::process::ExitCode;
use std::sync::Arc;

use kconform::clients::streams_eos::report::RunVerdict;
use kconform::clients::streams_eos::schedule::Deadlines;
use kconform::clients::streams_eos::StreamsEosOptions;

use crate::args::StreamsEosArgs;
use crate::progress::Bars;

/// Runs `kconform streams-eos`.
pub async fn run(a: StreamsEosArgs) -> anyhow::Result<ExitCode> {
    if let Some(json) = &a.json {
        super::check_outputs([(json, "--json")])?;
    }
    let named = match a.targets.is_empty() {
        true => vec!["ref".to_owned(), "apache".to_owned()],
        false => a.targets.clone(),
    };
    let specs = super::targets(&named, a.apache_backend.into(), None, false)?;
    let out = a.out.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("kconform-streams-eos-{}", std::process::id()))
    });
    let options = StreamsEosOptions {
        deadlines: Deadlines {
            step: a.step_deadline,
            verify: a.verify_deadline,
        },
        out,
    };
    let report =
        kconform::clients::streams_eos::run(&specs, &options, Arc::new(Bars::default())).await?;
    out!("{}", report.terminal());
    if let Some(json) = &a.json {
        super::json_out(json, &report.json())?;
    }
    Ok(match report.verdict {
        RunVerdict::Passed => ExitCode::SUCCESS,
        RunVerdict::Failed => ExitCode::from(1),
        RunVerdict::Inconclusive => ExitCode::from(2),
    })
}
