//! Crashes no frame reproduced at once: kept, and tried again. On a broker that takes seconds
//! to start, with sixteen connections that all saw the close, the first pinning can miss (the
//! real kaas build: 8 deaths in a night, 0 pinned, yet its two killers each kill a fresh broker
//! alone, every time). Such a crash keeps its frames in flight and its last words under
//! `unpinned/crash-<k>/` and is pinned again in the batch at the next restart a crash or a
//! close needs anyway, or at the end of the run, once; pinned then, its folder goes and it is
//! a finding like any other.

use super::finding;
use super::keeper::Keeper;
use super::pin;
use super::pin_crash::pin_and_write;
use super::state::{Run, Unpinned};
use crate::fuzz::FuzzError;

/// Keeps a crash no frame reproduced: its frames in flight and last words written under
/// `unpinned/crash-<k>/`, listed in the summary, and queued for the next batch.
pub(super) fn keep(
    run: &Run<'_>,
    history: &[pin::Sent],
    words: Option<String>,
    restarts: u64,
) -> Result<(), FuzzError> {
    // Numbered under one lock: two instances (--brokers) may keep crashes at once.
    let k = {
        let mut shared = run.shared();
        shared.unpinned_crashes_kept += 1;
        shared.unpinned_crashes_kept - 1
    };
    let crash = Unpinned {
        k,
        history: history.to_vec(),
        words,
        tried_at: restarts,
        retried: false,
    };
    let folder = run.options.findings.join(crash.folder());
    let io = |e| FuzzError::Findings(folder.display().to_string(), e);
    std::fs::create_dir_all(&folder).map_err(io)?;
    for s in history.iter().filter(|s| !s.answered) {
        std::fs::write(
            folder.join(format!("frame-{}.bin", s.n)),
            finding::sized(&s.frame),
        )
        .map_err(io)?;
    }
    let said = crash.words.as_deref().unwrap_or("(nothing in its log)");
    std::fs::write(folder.join("last-words.txt"), format!("{said}\n")).map_err(io)?;
    let mut shared = run.shared();
    shared.summary.unpinned.push(crash.folder());
    shared.unpinned_crashes.push(crash);
    Ok(())
}

/// Tries each kept crash again, once, where the target restarted since it was last tried:
/// pinned, shrunk and written as a finding (its folder removed), or left where it is. True
/// when the target could not be brought back and the run must end.
pub(super) async fn retry(run: &Run<'_>, keeper: &mut Keeper) -> Result<bool, FuzzError> {
    let waiting: Vec<Unpinned> = {
        let mut shared = run.shared();
        let (due, rest) = std::mem::take(&mut shared.unpinned_crashes)
            .into_iter()
            .partition(|u| !u.retried && keeper.restarts > u.tried_at);
        shared.unpinned_crashes = rest;
        due
    };
    for mut crash in waiting {
        run.progress.counters(
            "frames",
            &format!(
                "pinning again a crash not reproduced at first ({})",
                crash.folder()
            ),
        );
        keeper.purpose = "a crash not reproduced at first, pinned again in a batch";
        let pinned = pin_and_write(run, keeper, &crash.history, crash.words.clone()).await;
        keeper.purpose = super::keeper::STOPPED_ANSWERING;
        match pinned {
            Err(e) => {
                tracing::warn!(error = %e, "the target could not be brought back while a kept crash was pinned again");
                return Ok(true);
            }
            Ok(true) => {
                let folder = crash.folder();
                let _ = std::fs::remove_dir_all(run.options.findings.join(&folder));
                let mut shared = run.shared();
                shared.summary.unpinned.retain(|f| *f != folder);
                shared.summary.pinned_on_retry += 1;
            }
            Ok(false) => {
                crash.retried = true;
                crash.tried_at = keeper.restarts;
                run.shared().unpinned_crashes.push(crash);
            }
        }
    }
    Ok(false)
}
