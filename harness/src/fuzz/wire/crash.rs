//! A target that stopped answering: counted, pinned to the frames that caused it, shrunk,
//! written once per signature, and brought back so that the run goes on. A crash whose last
//! words (read from the broker's log) are a finding's already is counted under it without
//! pinning again: a night of one recurring crash is not a night of pinning it. A target that
//! cannot be brought back ends the run, its frames in flight saved as suspects.

use std::time::Instant;

use super::finding::{self, Found, FrameFinding};
use super::judge::{self, named, Judged, Kind};
use super::keeper::Keeper;
use super::last_words::last_words;
use super::minimise;
use super::pin::{self, Fate, KillsAgain, Probe};
use super::state::Run;
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
        shared.pinning.contains(sig) || shared.seen_again(sig, None)
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
            super::unpinned::keep(run, history, words, keeper.restarts)?;
            Ok(false)
        }
    }
}

/// Pins the crash, shrinks its killer and writes it, and leaves the target answering: false
/// when no frame of `history` reproduced it.
pub(super) async fn pin_and_write(
    run: &Run<'_>,
    keeper: &mut Keeper,
    history: &[pin::Sent],
    words: Option<String>,
) -> Result<bool, super::keeper::KeeperError> {
    let options = run.options;
    let mut probe = Probe::new(run.target, keeper, options.deadline);
    let budget = options.shrink_budget;
    let mut pinned = pin::pin(&mut probe, history, words.clone(), budget).await?;
    if pinned.is_none() && words.is_some() {
        // Its last words may have been torn by another thread's log line (seen: an allocation
        // failure's message split in two): pinned without them, then signed by what it says
        // when the pinned frames kill a fresh broker.
        pinned = pin::pin(&mut probe, history, None, budget).await?;
    }
    let Some(pinned) = pinned else {
        tracing::warn!(
            frames = history.len(),
            in_flight = history.iter().filter(|s| !s.answered).count(),
            said = words.as_deref().unwrap_or("nothing in its log"),
            "the target stopped answering, and no frame sent in its last life made it do so again"
        );
        probe.up(true).await?;
        return Ok(false);
    };
    let frames: Vec<&[u8]> = pinned.frames.iter().map(|s| s.frame.as_slice()).collect();
    let words = match probe.send(&frames, true).await? {
        Fate::Died { words: said, .. } if said.is_some() => said,
        _ => words,
    };
    let (killer, needs) = pinned
        .frames
        .split_last()
        .expect("a pinned crash has its killer");
    let mut before: Vec<Vec<u8>> = needs.iter().map(|s| s.frame.clone()).collect();
    // The frames it needs, shrunk too (each while the whole run still kills a freshly started
    // broker): what of them matters is what arms the crash.
    let share = options.shrink_budget / (needs.len() + 1);
    let mut needed_matters = Vec::new();
    for at in 0..before.len() {
        let mut check = NeededAgain {
            probe: &mut probe,
            frames: before.clone(),
            at,
            killer: killer.frame.clone(),
            words: words.clone(),
        };
        let shrunk = minimise::shrink(&before[at], &mut check, share).await;
        before[at] = shrunk.frame;
        needed_matters.push(shrunk.matters);
    }
    let mut check = KillsAgain {
        probe: &mut probe,
        before: before.clone(),
        words: words.clone(),
    };
    let shrunk = minimise::shrink(&killer.frame, &mut check, share).await;
    // Freshly started: the replays may have left it in a state the next frames would trip on.
    probe.up(true).await?;
    let signature = match &words {
        Some(w) => Kind::Unhealthy.said(w),
        None => format!(
            "{}: {}{}",
            Kind::Unhealthy.word(),
            named(&killer.frame),
            match shrunk.matters.first() {
                Some(m) => format!(": {}", judge::field_of(m)),
                None => String::new(),
            }
        ),
    };
    let judged = Judged {
        kind: Kind::Unhealthy,
        signature,
        detail: format!(
            "after this frame the broker stopped answering ApiVersions on a fresh connection{}",
            match needs.len() {
                0 => String::new(),
                n => format!(", after the {n} frame(s) it needs before it"),
            }
        ),
    };
    // What the frames it needs must hold (the timeout that arms it), named as the killer's is.
    let needed: Vec<String> = needed_matters.iter().flatten().cloned().collect();
    let reproduces = match (needs.len(), needed.is_empty()) {
        (0, _) => "alone, on a freshly started broker".to_owned(),
        (n, true) => format!("after {n} frame(s), in order, on a freshly started broker"),
        (n, false) => format!(
            "after {n} frame(s), in order, on a freshly started broker; what matters in them: {}",
            needed.join("; ")
        ),
    };
    // Written even when the run's file writing fails later: a crash is what a night is for.
    let _ = write(run, &judged, &before, killer, &shrunk, reproduces, words);
    // Not sent again: frames like the one that arms it, or like the killer when it needs none.
    let mut shared = run.shared();
    match before.first().zip(needed_matters.first()) {
        Some((armer, matters)) => shared.avoid(armer, matters),
        None => shared.avoid(&shrunk.frame, &shrunk.matters),
    }
    Ok(true)
}

/// A crash seen again with one of the frames it needs replaced: the frames in order, then the
/// killer, on a freshly started broker, and the same last words.
struct NeededAgain<'p, 'a> {
    probe: &'p mut Probe<'a>,
    frames: Vec<Vec<u8>>,
    at: usize,
    killer: Vec<u8>,
    words: Option<String>,
}

impl minimise::Check for NeededAgain<'_, '_> {
    async fn holds(&mut self, frame: &[u8]) -> bool {
        let mut check = KillsAgain {
            probe: self.probe,
            before: self.frames.clone(),
            words: self.words.clone(),
        };
        check.before[self.at] = frame.to_vec();
        check.holds(&self.killer).await
    }
}

/// Writes a verified finding and shows it.
pub(super) fn write(
    run: &Run<'_>,
    judged: &Judged,
    before: &[Vec<u8>],
    found: &pin::Sent,
    shrunk: &minimise::Shrunk,
    reproduces: String,
    words: Option<String>,
) -> Result<(), FuzzError> {
    let mut s = run.shared();
    if s.seen_again(&judged.signature, Some(&found.frame)) {
        return Ok(());
    }
    let found_files = Found {
        judged,
        before,
        frame: &shrunk.frame,
    };
    let (file, needs) = finding::write_frames(&run.options.findings, &found_files)?;
    let f = FrameFinding {
        signature: judged.signature.clone(),
        kind: judged.kind,
        file,
        detail: judged.detail.clone(),
        mutations: found.mutations.clone(),
        found_after_secs: run.started.elapsed().as_secs_f64(),
        frame_number: found.n,
        reproduces,
        needs,
        found_bytes: found.frame.len(),
        bytes: shrunk.frame.len(),
        matters: shrunk.matters.clone(),
        seen_on: vec![named(&found.frame)],
        seen: 1,
        broker_said: words,
    };
    finding::write_text(
        &run.options.findings,
        &run.target.arg(),
        run.options.seed,
        &f,
        &shrunk.frame,
    )?;
    run.progress.finding(&f.file, &f.signature);
    let at = s.summary.findings.len();
    s.known.insert(f.signature.clone(), Some(at));
    s.summary.findings.push(f);
    s.frames.push(shrunk.frame.clone());
    s.stats.findings = s.summary.findings.len();
    Ok(())
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
