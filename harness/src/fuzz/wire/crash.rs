//! A target that stopped answering: counted, pinned to the frames that caused it, shrunk,
//! written once per signature, and brought back so that the run goes on. A crash whose last
//! words (read from the broker's log) are a finding's already is counted under it without
//! pinning again: a night of one recurring crash is not a night of pinning it. A target that
//! cannot be brought back ends the run, its frames in flight saved as suspects.

use std::time::Instant;

use super::finding;
use super::judge::Kind;
use super::keeper::Keeper;
use super::last_words::last_words;
use super::pin;
use super::pin_crash::pin_and_write;
use super::state::Run;
use super::unpinned;
use crate::fuzz::FuzzError;

/// Handles the death of the target's life `life` (seen by a worker whose frame went
/// unanswered): true when the run must end.
pub(super) async fn crashed(
    run: &Run<'_>,
    keeper: &mut Keeper,
    life: u64,
) -> Result<bool, FuzzError> {
    let options = run.options;
    if run.life.lock().expect("no panics").number != life {
        // Another worker saw the same death first, and the target was brought back.
        return Ok(false);
    }
    if run.target.reachable(options.deadline).await.is_ok() {
        return Ok(false);
    }
    let history = run.life.lock().expect("no panics").end();
    died(run, keeper, &history).await
}

/// The target stopped answering after the frames of `history` (the last life's, oldest first):
/// counted, pinned and written, or counted under a finding its last words name already, and
/// brought back; true when it cannot be and the run must end.
pub(super) async fn died(
    run: &Run<'_>,
    keeper: &mut Keeper,
    history: &[pin::Sent],
) -> Result<bool, FuzzError> {
    let began = Instant::now();
    {
        let mut s = run.shared();
        s.summary.crashes += 1;
        s.stats.crashes += 1;
        if s.summary.first_crash.is_none() {
            s.summary.first_crash = Some((run.started.elapsed().as_secs_f64(), s.stats.frames));
        }
    }
    let words = last_words(&keeper.dying_words());
    if !keeper.can_revive() {
        give_up(
            run,
            history,
            "it stopped answering, and no --restart-cmd or --broker-cmd was given to bring it back",
        )?;
        return Ok(true);
    }
    // Pinned already, or being pinned on another instance (--brokers): brought back only.
    let said = words.as_ref().map(|w| Kind::Unhealthy.said(w));
    let known = said.clone().filter(|sig| {
        let mut shared = run.shared();
        shared.pinning.contains(sig) || shared.seen_again(sig, None) || shared.seen_again_torn(sig)
    });
    let pinning = said.filter(|_| known.is_none());
    if let Some(sig) = &pinning {
        run.shared().pinning.insert(sig.clone());
    }
    run.progress.counters(
        "frames",
        &format!(
            "{} stopped answering: bringing it back{}",
            run.target.name,
            match known {
                Some(_) => " (a crash already pinned)",
                None => " and pinning the frame that did it",
            }
        ),
    );
    keeper.purpose = match known {
        Some(_) => "a crash already pinned: the broker brought back",
        None => "a crash: brought back, pinned and its frames shrunk",
    };
    let outcome = match known {
        Some(_) => keeper.revive().await.map(|_| true),
        None => pin_and_write(run, keeper, history, words.clone()).await,
    };
    keeper.purpose = super::keeper::STOPPED_ANSWERING;
    run.shared().summary.down_secs += began.elapsed().as_secs_f64();
    if let Some(sig) = &pinning {
        run.shared().pinning.remove(sig);
    }
    match outcome {
        Err(e) => {
            give_up(
                run,
                history,
                &format!("it stopped answering and could not be brought back: {e}"),
            )?;
            Ok(true)
        }
        Ok(true) => Ok(false),
        Ok(false) => {
            run.shared().summary.not_reproduced += 1;
            unpinned::keep(run, history, words, keeper.restarts)?;
            Ok(false)
        }
    }
}

/// The run ends at a crash it cannot pin: the frames in flight are saved as suspects.
fn give_up(run: &Run<'_>, history: &[pin::Sent], why: &str) -> Result<(), FuzzError> {
    let dir = run.options.findings.join("unpinned");
    let io = |e| FuzzError::Findings(dir.display().to_string(), e);
    std::fs::create_dir_all(&dir).map_err(io)?;
    let mut files = Vec::new();
    for s in history.iter().filter(|s| !s.answered) {
        let name = format!("unpinned/suspect-{}.bin", s.n);
        std::fs::write(run.options.findings.join(&name), finding::sized(&s.frame)).map_err(io)?;
        files.push(name);
    }
    let mut shared = run.shared();
    shared.summary.target_died = true;
    shared.summary.ended_early = Some(format!("{} {why}", run.target.name));
    shared.summary.unpinned.extend(files);
    Ok(())
}
