//! A verified finding recorded: written once per signature (its frames, its text), shown,
//! and remembered so that the same signature is counted, not written again.

use super::finding::{self, Found, FrameFinding};
use super::judge::{named, Judged};
use super::minimise;
use super::pin;
use super::state::Run;
use crate::fuzz::FuzzError;

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
