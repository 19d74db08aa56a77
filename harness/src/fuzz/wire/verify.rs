//! A finding seen once is sent again, alone, on a fresh connection, while the other
//! connections wait, to a freshly started broker where the run can restart it (so that no
//! state an earlier frame left, and no death under way, passes for the frame's doing): written
//! only when it shows again (a close or silence also when the oracle answers the frame), signed
//! by what the broker logged meanwhile where its log is read, and shrunk while it still shows
//! when it is a close or silence. A frame that kills the freshly started broker is a crash, and
//! is pinned as one.

use super::crash;
use super::judge::{self, judge, Happened, Judged, Kind};
use super::keeper::Keeper;
use super::last_words::last_words;
use super::minimise::{self, Check};
use super::pin::{Fate, Probe, Sent};
use super::record;
use super::send::exchange;
use super::state::{Run, Seen};
use super::unpinned;
use crate::fuzz::FuzzError;

/// Confirms the judge's finding on `frame` (number `n`) and writes it, or counts it as flaky
/// or as one the oracle shares; true when the frame crashed the target and it could not be
/// brought back (the run ends). Only a close or a silence wants a freshly started broker (a
/// panic's close, a hang, may be an earlier frame's doing): seen again on the broker as it is,
/// it waits for the next restart a crash needs anyway, or the end of the run, and is confirmed
/// then with the others in one batch ([`confirm_pending`]). Every other finding is confirmed on
/// a fresh connection to the running broker: no restart.
pub(super) async fn confirm(
    run: &Run<'_>,
    keeper: &mut Keeper,
    seen: Seen,
) -> Result<bool, FuzzError> {
    let (judged, frame) = (&seen.judged, seen.frame.as_slice());
    if run.shared().seen_again(&judged.signature, Some(frame)) {
        return Ok(false);
    }
    if seen_as_written(run, keeper, judged, frame).await {
        return Ok(false);
    }
    let waiting = |p: &Seen| p.judged.signature == judged.signature;
    if run.shared().pending.iter().any(waiting) {
        // Already waiting for the batch: one look is enough.
        return Ok(false);
    }
    // A hang is confirmed at once (until it is, frames like it hold a connection for the
    // deadline each, as they did: 28 frames/s); a close waits for a batch.
    let waits = judged.kind == Kind::ClosedWellFormed;
    if keeper.can_revive() && waits {
        // A look first on the broker as it is: what does not show again there is no finding
        // (closes on other connections at the moment a panic closed one came to 213 restarts
        // in 30 s).
        let found = Sent {
            n: seen.n,
            frame: frame.to_vec(),
            mutations: seen.mutations.clone(),
            answered: false,
        };
        let happened = exchange(&mut None, run.target.addr, frame, run.options.deadline).await;
        let still = judged_as(run, frame, &happened, judged.kind);
        if run.target.reachable(run.options.deadline).await.is_err() {
            run.life.lock().expect("no panics").end();
            return crash::died(run, keeper, &[found]).await;
        }
        if !still {
            tracing::debug!(signature = %judged.signature, "not shown again on its own");
            run.shared().summary.flaky += 1;
            return Ok(false);
        }
        let enough = wait_for_a_batch(run, seen);
        if enough {
            return confirm_pending(run, keeper, true).await;
        }
        return Ok(false);
    }
    let on = match keeper.can_revive() && judged.kind == Kind::Silent {
        true => On::FreshNow,
        false => On::Running,
    };
    confirm_now(run, keeper, seen, on).await
}

/// Puts a close on the list of those waiting for a freshly started broker (once per first
/// word); whether a run told to stop after so many findings has them now, waiting ones
/// counted (it does not wait for its end to count them).
fn wait_for_a_batch(run: &Run<'_>, seen: Seen) -> bool {
    let mut shared = run.shared();
    if !shared
        .pending
        .iter()
        .any(|p| p.judged.signature == seen.judged.signature)
    {
        shared.pending.push(seen);
    }
    run.options
        .stop_after_findings
        .is_some_and(|k| shared.summary.findings.len() + shared.pending.len() >= k)
}

/// Where a finding is confirmed.
#[derive(Debug, Clone, Copy)]
enum On {
    /// The broker as it runs.
    Running,
    /// A broker restarted for this finding alone (a hang).
    FreshNow,
    /// A broker started fresh for a batch of this many closes.
    Batch(usize),
}

/// Confirms each close and silence waiting for a freshly started broker, one after the other:
/// on the broker a crash's restart just brought back, or (`restart`, at the end of the run)
/// after one restart of its own. True when one killed the broker and it could not be brought
/// back.
pub(super) async fn confirm_pending(
    run: &Run<'_>,
    keeper: &mut Keeper,
    restart: bool,
) -> Result<bool, FuzzError> {
    let pending = std::mem::take(&mut run.shared().pending);
    let unpinned = run
        .shared()
        .unpinned_crashes
        .iter()
        .filter(|u| !u.retried)
        .count();
    if pending.is_empty() && unpinned == 0 {
        return Ok(false);
    }
    if restart {
        run.progress.counters(
            "frames",
            &format!(
                "restarting {} to confirm {} close(s) and silence(s) and pin {unpinned} crash(es) again on a fresh broker",
                run.target.name,
                pending.len()
            ),
        );
        keeper.purpose = match (pending.is_empty(), unpinned) {
            (false, 0) => "closes confirmed in a batch on a fresh broker",
            (true, _) => "a fresh broker for crashes not reproduced at first",
            (false, _) => "closes confirmed and crashes pinned again in a batch on a fresh broker",
        };
        let revived = keeper.revive().await;
        keeper.purpose = super::keeper::STOPPED_ANSWERING;
        if revived.is_err() {
            return Ok(false);
        }
        run.shared().summary.confirm_restarts += 1;
    }
    if unpinned::retry(run, keeper).await? {
        return Ok(true);
    }
    let batch = pending.len();
    for p in pending {
        run.shared().summary.confirmed_in_batches += 1;
        let ended = Box::pin(confirm_now(run, keeper, p, On::Batch(batch))).await?;
        if ended {
            return Ok(true);
        }
        // One that killed the broker was pinned as a crash, and the broker brought back
        // fresh: the rest go on there.
    }
    Ok(false)
}

/// The confirmation proper: `frame` sent again alone on a fresh connection, its last words
/// matched, a close or silence shrunk, the finding written; `on` the running broker, one
/// restarted for it, or one started fresh for a batch.
async fn confirm_now(
    run: &Run<'_>,
    keeper: &mut Keeper,
    seen: Seen,
    on: On,
) -> Result<bool, FuzzError> {
    let Seen {
        judged,
        frame,
        mutations,
        n,
    } = seen;
    let frame = frame.as_slice();
    let first_word = judged.signature.clone();
    let found = Sent {
        n,
        frame: frame.to_vec(),
        mutations,
        answered: false,
    };
    let mut again = SeenAgain {
        run,
        probe: Probe::new(run.target, keeper, run.options.deadline),
        kind: judged.kind,
        words: None,
        died: false,
    };
    if matches!(on, On::FreshNow) {
        again.probe.keeper.purpose = "a hang confirmed on a fresh broker";
    }
    let up = again.probe.up(matches!(on, On::FreshNow)).await;
    again.probe.keeper.purpose = super::keeper::STOPPED_ANSWERING;
    if up.is_err() {
        // Not brought back: the next frame finds it down and ends the run, saying why.
        return Ok(false);
    }
    let mark = again.probe.keeper.log_mark();
    let shows = again.holds(frame).await;
    if again.died {
        // It kills a broker on its own: a crash, pinned from this frame alone.
        drop(again);
        run.life.lock().expect("no panics").end();
        return crash::died(run, keeper, &[found]).await;
    }
    if !shows {
        tracing::debug!(signature = %judged.signature, "not shown again on its own");
        run.shared().summary.flaky += 1;
        return Ok(false);
    }
    let words = match again.probe.keeper.has_log() {
        true => last_words(&again.probe.keeper.log_since(mark)),
        false => None,
    };
    if matches!(judged.kind, Kind::ClosedWellFormed | Kind::Silent) {
        if let Some(o) = run.oracle {
            let there = exchange(&mut None, o.addr, frame, run.options.deadline).await;
            if !matches!(there, Happened::Answered(_)) {
                run.shared().summary.oracle_agreed += 1;
                return Ok(false);
            }
        }
    }
    let judged = match (&words, judged.kind) {
        (Some(w), Kind::ClosedWellFormed | Kind::Silent) => Judged {
            signature: judged.kind.said(w),
            ..judged
        },
        _ => judged,
    };
    if run.shared().seen_again(&judged.signature, Some(frame)) {
        // Known by the broker's words: the judge's word for this frame is remembered too.
        let by_words = words.is_some();
        let mut shared = run.shared();
        shared
            .aliases
            .insert(first_word, (judged.signature.clone(), by_words));
        return Ok(false);
    }
    let shrunk = match judged.kind {
        Kind::ClosedWellFormed | Kind::Silent => {
            again.words = words.clone();
            minimise::shrink(frame, &mut again, run.options.shrink_budget).await
        }
        _ => minimise::Shrunk {
            frame: frame.to_vec(),
            tries: 0,
            matters: Vec::new(),
        },
    };
    // A broker a shrinking try killed is brought back before the fuzzing goes on.
    if again.probe.up(false).await.is_err() {
        return Ok(false);
    }
    drop(again);
    // Without the broker's word, a close or silence is its API and the fields it needs:
    // every version of the API that shows it is the same defect.
    let judged = match (&words, shrunk.matters.is_empty(), judged.kind) {
        (None, false, Kind::ClosedWellFormed | Kind::Silent) => {
            let fields: Vec<String> = shrunk.matters.iter().map(|m| judge::field_of(m)).collect();
            // What its header alone needs is one defect on every API.
            let signature = match fields.iter().all(|f| f.starts_with("header.")) {
                true => format!("{}: {}", judged.kind.word(), fields.join(", ")),
                false => format!(
                    "{}: {}: {}",
                    judged.kind.word(),
                    judge::api_of(frame),
                    fields.join(", ")
                ),
            };
            Judged {
                signature,
                ..judged
            }
        }
        _ => judged,
    };
    let reproduces = match on {
        On::FreshNow | On::Batch(1) => {
            "alone, on a fresh connection to a freshly started broker".to_owned()
        }
        On::Batch(n) => format!(
            "alone, on a fresh connection to a broker started fresh for a batch of {n} finding(s)"
        ),
        On::Running => "alone, on a fresh connection to the running broker".to_owned(),
    };
    let by_words = words.is_some();
    if judged.kind == Kind::Silent {
        // A hang holds a connection for the deadline each time it is sent again.
        run.shared().avoid(&shrunk.frame, &shrunk.matters);
    }
    record::write(run, &judged, &[], &found, &shrunk, reproduces, words)?;
    if judged.signature != first_word {
        run.shared()
            .aliases
            .insert(first_word, (judged.signature, by_words));
    }
    Ok(false)
}

/// Whether a frame the judge words as it worded a finding already written under another
/// signature shows that finding: sent again alone on the broker as it is (no restart), its
/// last words read; counted under the finding when they match, or (when the finding was not
/// signed by last words, or there is no log to tell) always. Otherwise it is verified as new.
async fn seen_as_written(
    run: &Run<'_>,
    keeper: &mut Keeper,
    judged: &Judged,
    frame: &[u8],
) -> bool {
    let Some((written, by_words)) = run.shared().aliases.get(&judged.signature).cloned() else {
        return false;
    };
    if !by_words || !keeper.has_log() {
        return run.shared().seen_again(&written, Some(frame));
    }
    let mark = keeper.log_mark();
    let happened = exchange(&mut None, run.target.addr, frame, run.options.deadline).await;
    let same = judged_as(run, frame, &happened, judged.kind);
    let said = last_words(&keeper.log_since(mark)).map(|w| judged.kind.said(&w));
    same && said.is_some_and(|s| s == written && run.shared().seen_again(&s, Some(frame)))
}

/// Whether the judge calls what `frame` met a finding of `kind` on this target.
fn judged_as(run: &Run<'_>, frame: &[u8], happened: &Happened, kind: Kind) -> bool {
    judge(frame, happened, &run.raw_served, run.target.parser()).is_some_and(|j| j.kind == kind)
}

/// A finding of `kind` seen again on a frame sent alone on a fresh connection (and the same
/// last words in the broker's log, when it has them to match); a frame after which the broker
/// stops answering shows no such finding, and is marked as a killer.
struct SeenAgain<'r, 'a, 'k> {
    run: &'r Run<'a>,
    probe: Probe<'k>,
    kind: Kind,
    words: Option<String>,
    died: bool,
}

impl Check for SeenAgain<'_, '_, '_> {
    async fn holds(&mut self, frame: &[u8]) -> bool {
        let run = self.run;
        let mark = self.probe.keeper.log_mark();
        let happened = match self.probe.send(&[frame], false).await {
            Ok(Fate::Lived(happened)) => happened,
            Ok(Fate::Died { .. }) => {
                self.died = true;
                return false;
            }
            Err(_) => return false,
        };
        let same = judged_as(run, frame, &happened, self.kind);
        let said = || last_words(&self.probe.keeper.log_since(mark));
        same && (self.words.is_none() || said() == self.words)
    }
}
