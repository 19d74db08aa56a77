//! `kconform replay-frame`: raw frames `kconform fuzz` saved, sent again and judged as it did.

use std::process::ExitCode;
use std::time::Duration;

use kconform::targets::apache::Backend;
use kconform::targets::Running;

use crate::args::ReplayFrameArgs;

/// Runs `kconform replay-frame`: exit 1 while any frame still shows a finding.
pub async fn run(a: ReplayFrameArgs) -> anyhow::Result<ExitCode> {
    let deadline = Duration::from_millis(a.deadline_ms);
    let specs = super::targets(&[a.target], Backend::Auto, None, false)?;
    let target = Running::start_answering(&specs[0], deadline).await?;
    let mut shown = 0;
    let mut failure = None;
    for file in &a.files {
        match kconform::fuzz::wire::replay(file, &target, deadline).await {
            Ok(r) => {
                let verdict = match &r.finding {
                    Some(j) => {
                        shown += 1;
                        format!("FINDING {}\n  {}", j.signature, j.detail)
                    }
                    None => "no finding".into(),
                };
                outln!("{}: {}: {verdict}", file.display(), r.happened);
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    target.stop().await;
    if let Some(e) = failure {
        return Err(e.into());
    }
    Ok(super::verdict(shown == 0))
}
