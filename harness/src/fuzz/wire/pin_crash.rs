//! A crash pinned to the frames that cause it: the frames of the target's last life replayed
//! on freshly started brokers until the fewest that kill it are found, the killer and the
//! frames it needs shrunk while they still do, and the crash written as a finding, signed by
//! the broker's last words. What is pinned is not sent again.

use super::judge::{self, named, Judged, Kind};
use super::keeper::{Keeper, KeeperError};
use super::minimise;
use super::pin::{self, Fate, KillsAgain, Probe};
use super::record;
use super::state::Run;

/// Pins the crash, shrinks its killer and writes it, and leaves the target answering: false
/// when no frame of `history` reproduced it.
pub(super) async fn pin_and_write(
    run: &Run<'_>,
    keeper: &mut Keeper,
    history: &[pin::Sent],
    words: Option<String>,
) -> Result<bool, KeeperError> {
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
    let _ = record::write(run, &judged, &before, killer, &shrunk, reproduces, words);
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
