//! A finding seen once is sent again, alone, on a fresh connection, while the other
//! connections wait: written only when it shows again (a close or silence also when the
//! oracle answers the frame), signed by what the broker logged meanwhile where its log is
//! read, and shrunk while it still shows when it is a close or silence.

use super::judge::{self, judge, Happened, Judged, Kind};
use super::keeper::Keeper;
use super::last_words::last_words;
use super::minimise::{self, Check};
use super::pin::Sent;
use super::send::exchange;
use super::{crash, Run};
use crate::fuzz::FuzzError;

/// Confirms the judge's finding on `frame` (number `n`) and writes it, or counts it as flaky
/// or as one the oracle shares.
pub(super) async fn confirm(
    run: &Run<'_>,
    keeper: &mut Keeper,
    judged: Judged,
    frame: &[u8],
    mutations: Vec<String>,
    n: u64,
) -> Result<(), FuzzError> {
    if run.shared().seen_again(&judged.signature, Some(frame)) {
        return Ok(());
    }
    let mut again = SeenAgain {
        run,
        keeper,
        kind: judged.kind,
        words: None,
    };
    let mark = again.keeper.log_mark();
    if !again.holds(frame).await {
        run.shared().summary.flaky += 1;
        return Ok(());
    }
    let words = match again.keeper.has_log() {
        true => last_words(&again.keeper.log_since(mark)),
        false => None,
    };
    if matches!(judged.kind, Kind::ClosedWellFormed | Kind::Silent) {
        if let Some(o) = run.oracle {
            let there = exchange(&mut None, o.addr, frame, run.options.deadline).await;
            if !matches!(there, Happened::Answered(_)) {
                run.shared().summary.oracle_agreed += 1;
                return Ok(());
            }
        }
    }
    let judged = match (&words, judged.kind) {
        (Some(w), Kind::ClosedWellFormed | Kind::Silent) => Judged {
            signature: format!("{}: {w}", judged.kind.word()),
            ..judged
        },
        _ => judged,
    };
    if run.shared().seen_again(&judged.signature, Some(frame)) {
        return Ok(());
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
    // Without the broker's word, a close or silence is its API and the fields it needs:
    // every version of the API that shows it is the same defect.
    let judged = match (&words, shrunk.matters.is_empty(), judged.kind) {
        (None, false, Kind::ClosedWellFormed | Kind::Silent) => {
            let fields: Vec<String> = shrunk.matters.iter().map(|m| judge::field_of(m)).collect();
            Judged {
                signature: format!(
                    "{}: {}: {}",
                    judged.kind.word(),
                    judge::api_of(frame),
                    fields.join(", ")
                ),
                ..judged
            }
        }
        _ => judged,
    };
    let found = Sent {
        n,
        frame: frame.to_vec(),
        mutations,
        answered: false,
    };
    let reproduces = "alone, on a fresh connection".to_owned();
    crash::write(run, &judged, &[], &found, &shrunk, reproduces, words)
}

/// A finding of `kind` seen again on a frame sent alone on a fresh connection (and the same
/// last words in the broker's log, when it has them to match).
struct SeenAgain<'r, 'a, 'k> {
    run: &'r Run<'a>,
    keeper: &'k mut Keeper,
    kind: Kind,
    words: Option<String>,
}

impl Check for SeenAgain<'_, '_, '_> {
    async fn holds(&mut self, frame: &[u8]) -> bool {
        let run = self.run;
        let mark = self.keeper.log_mark();
        let happened = exchange(&mut None, run.target.addr, frame, run.options.deadline).await;
        let same = judge(frame, &happened, &run.raw_served, run.target.parser())
            .is_some_and(|j| j.kind == self.kind);
        let said = || last_words(&self.keeper.log_since(mark));
        same && (self.words.is_none() || said() == self.words)
    }
}
