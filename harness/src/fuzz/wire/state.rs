//! What one live-wire run holds while it goes: how it was told to go ([`WireOptions`]), its
//! counters and summary, the frames sent in the target's current life (what a crash is pinned
//! from), the frames not to send again (like a pinned crash's), and the findings by signature.
//! The workers, the crash handling and the verification all read and write it; it imports none
//! of them.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::finding::FrameFinding;
use super::judge::{self, Happened};
use super::pin::{self, Sent};
use super::{minimise, shape};
use crate::fuzz::{FuzzError, Progress};
use crate::targets::Running;
use crate::wire::frame::Span;

/// How the wire fuzzer is told to go.
#[derive(Debug, Clone)]
pub struct WireOptions {
    /// How long to fuzz.
    pub duration: Duration,
    /// The seed every frame is drawn from (frame `n` from this seed and `n`).
    pub seed: u64,
    /// The first frame number (a resumed run goes on where the last one stopped).
    pub first_frame: u64,
    /// Which share of the seed's frames this run draws (`--shard K/N`): frame `i` of the
    /// shard is frame `i * N + K - 1` of the seed.
    pub shard: crate::fuzz::shard::Shard,
    /// Where findings are written.
    pub findings: PathBuf,
    /// How long a frame may go unanswered.
    pub deadline: Duration,
    /// Connections sending frames at once.
    pub jobs: usize,
    /// End the run once this many new findings are written.
    pub stop_after_findings: Option<usize>,
    /// The most checks spent shrinking one finding, and searching for the frames a crash
    /// needs.
    pub shrink_budget: usize,
}

/// Counters shown as the run goes.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FrameStats {
    /// Frames sent.
    pub frames: u64,
    /// Frames answered.
    pub answered: u64,
    /// Frames whose connection closed without an answer.
    pub closed: u64,
    /// Distinct findings.
    pub findings: usize,
    /// Times the target stopped answering.
    pub crashes: u64,
    /// Seconds since the start.
    pub secs: f64,
}

impl FrameStats {
    /// The counters as a progress line: "5120 frames (850/s), 0 findings, 2 crashes".
    pub fn line(&self) -> String {
        format!(
            "{} frames ({:.0}/s), {} findings{}",
            self.frames,
            self.frames as f64 / self.secs.max(0.001),
            self.findings,
            match self.crashes {
                0 => String::new(),
                n => format!(", {n} crash(es) survived"),
            }
        )
    }
}

/// Restarts made for one reason.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RestartsWhy {
    /// Why.
    pub why: String,
    /// How many.
    pub restarts: u64,
    /// Their seconds.
    pub secs: f64,
}

/// The live-wire part of a fuzz report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FramesSummary {
    /// Frames sent to the target.
    pub frames: u64,
    /// Frames per second.
    pub frames_per_sec: f64,
    /// Frames answered.
    pub answered: u64,
    /// Frames whose connection closed without an answer (malformed ones, mostly).
    pub closed: u64,
    /// Frames the target closed on (well-formed) or left unanswered that the oracle did not
    /// answer either (no finding).
    pub oracle_agreed: u64,
    /// Silences on the APIs brokers send each other (WriteTxnMarkers, AddPartitionsToTxn v4+)
    /// left unjudged for want of an oracle: Apache itself leaves some of them unanswered.
    pub silences_not_judged: u64,
    /// Findings a second sending of the frame did not show.
    pub flaky: u64,
    /// The next frame number (where a resumed run goes on).
    pub next_frame: u64,
    /// Whether the run ended because the target stopped answering and could not be brought
    /// back.
    pub target_died: bool,
    /// Why the run ended before its time, when it did.
    pub ended_early: Option<String>,
    /// Times the target stopped answering (crashed, or hung whole).
    pub crashes: u64,
    /// Crashes no frame sent reproduced on the broker brought back at first: kept under
    /// `unpinned/` and pinned again at the next batch.
    pub not_reproduced: u64,
    /// Of those, the ones pinned when tried again in a batch (findings now).
    pub pinned_on_retry: u64,
    /// Instances of the target the frames went to (`--brokers`): the restarts and their
    /// seconds are summed over them.
    pub instances: usize,
    /// Restarts of the target (after crashes, while pinning and shrinking them, and to confirm
    /// closes and silences on a freshly started broker).
    pub restarts: u64,
    /// Of those, the restarts made only to confirm closes and silences (one per batch: at the
    /// end of the run, where no crash's restart came first).
    pub confirm_restarts: u64,
    /// Closes and silences confirmed in a batch on a freshly started broker.
    pub confirmed_in_batches: u64,
    /// Seconds spent restarting the target.
    pub restart_secs: f64,
    /// The restarts by why they were made, each with how many and their seconds.
    pub restarts_why: Vec<RestartsWhy>,
    /// Seconds the fuzzing waited on crashes (pinning, shrinking, restarting).
    pub down_secs: f64,
    /// Seconds into the run of the first crash, and the frames sent before it.
    pub first_crash: Option<(f64, u64)>,
    /// Suspects, not findings (in the findings directory): the folders of crashes not pinned
    /// even when tried again (`unpinned/crash-<k>`: their frames in flight and last words),
    /// and the frames in flight when a target that could not be brought back stopped
    /// answering (`unpinned/suspect-<n>.bin`).
    pub unpinned: Vec<String>,
    /// Frames not sent because they are broken as a pinned crash's frame is.
    pub avoided: u64,
    /// Frames like a pinned crash's sent all the same, now and then, to see it still there.
    pub sampled: u64,
    /// What those frames are, one line per pinned crash.
    pub avoiding: Vec<String>,
    /// What `--target` takes to replay the findings on this target.
    pub replay_target: String,
    /// New findings.
    pub findings: Vec<FrameFinding>,
}

impl FramesSummary {
    /// Frames per second before the first crash and after it, when there was one.
    pub fn rates(&self, secs: f64) -> Option<(f64, f64)> {
        let (at, before) = self.first_crash?;
        let after = (self.frames - before) as f64 / (secs - at).max(0.001);
        Some((before as f64 / at.max(0.001), after))
    }
}

/// The frames sent in the target's current life, oldest first (the last few thousand).
#[derive(Debug, Default)]
pub(super) struct Life {
    /// Which life: one more each time the target is brought back.
    pub(super) number: u64,
    pub(super) sent: VecDeque<Sent>,
}

impl Life {
    pub(super) const KEPT: usize = 4 * pin::WINDOW;

    pub(super) fn record(&mut self, n: u64, frame: &[u8], mutations: &[String]) -> u64 {
        if self.sent.len() >= Self::KEPT {
            self.sent.pop_front();
        }
        self.sent.push_back(Sent {
            n,
            frame: frame.to_vec(),
            mutations: mutations.to_vec(),
            answered: false,
        });
        self.number
    }

    pub(super) fn answered(&mut self, life: u64, n: u64) {
        if life != self.number {
            return;
        }
        if let Some(s) = self.sent.iter_mut().rev().find(|s| s.n == n) {
            s.answered = true;
        }
    }

    /// The life's frames, and a new life begun.
    pub(super) fn end(&mut self) -> Vec<Sent> {
        self.number += 1;
        std::mem::take(&mut self.sent).into()
    }
}

/// Frames not to send again, like a pinned crash's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Avoid {
    /// Of this API key and version, broken at this field (a malformed killer).
    Broken(i16, i16, String),
    /// Of this API key, with these values in these fields (a well-formed one).
    Values(i16, Vec<(String, Wanted)>),
    /// Of any API and version, broken at a count past its end of at least this many (a
    /// killer whose count asked for more than the broker could allocate: a real kaas build
    /// dies so on a large count in any array of several APIs and versions, so killers were
    /// everywhere in what the fuzzer drew).
    HugeCount(u64),
}

/// How far below a pinned killer's count a count still counts as huge: a sixteenth.
const HUGE_BELOW_KILLER: u64 = 16;

/// The least count that counts as huge: a killer broken at a smaller count (a real kaas
/// build died after a count of 70 once, of something else in the frame) makes no rule for
/// every API, and no rule holds back a count this small (one held back counts of 4 or more).
const HUGE: u64 = 1 << 16;

/// The count of a parse error at a count past the frame's end (`topics at byte 12: count
/// 2147483647, but only 0 byte(s) follow`).
fn count_past_end(why: &str) -> Option<u64> {
    minimise::count_defect(why)?.1.parse().ok()
}

/// A value a well-formed frame to avoid has in one field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Wanted {
    /// This integer.
    Int(i64),
    /// An empty string (`group_id = ""`, what a shrunk hang can need).
    Empty,
}

impl Wanted {
    /// A value as the shrinking names what matters (`7`, `""`).
    fn read(text: &str) -> Option<Wanted> {
        match text {
            "\"\"" => Some(Wanted::Empty),
            _ => text.parse().ok().map(Wanted::Int),
        }
    }

    fn describe(&self) -> String {
        match self {
            Wanted::Int(v) => v.to_string(),
            Wanted::Empty => "\"\"".into(),
        }
    }

    /// Whether the field's bytes at `s` hold this value.
    fn held(&self, frame: &[u8], s: &Span, flexible: bool) -> bool {
        match self {
            Wanted::Int(v) => s.integer && minimise::be_int(&frame[s.start..s.end]) == *v,
            Wanted::Empty => !s.integer && minimise::string_length(frame, s, flexible) == Some(0),
        }
    }
}

impl Avoid {
    /// The API key it is of, when it is of one.
    pub(super) fn key(&self) -> Option<i16> {
        match self {
            Avoid::Broken(key, ..) | Avoid::Values(key, _) => Some(*key),
            Avoid::HugeCount(_) => None,
        }
    }

    pub(super) fn describe(&self) -> String {
        let api = |key: i16| crate::wire::error_codes::api_name(key);
        match self {
            Avoid::Broken(key, version, field) => {
                format!(
                    "{} v{version} whose {field} is broken as a pinned crash's",
                    api(*key)
                )
            }
            Avoid::Values(key, values) => {
                let values: Vec<String> = values
                    .iter()
                    .map(|(p, v)| format!("{p} = {}", v.describe()))
                    .collect();
                format!(
                    "{} with {}, as a pinned crash's",
                    api(*key),
                    values.join(", ")
                )
            }
            Avoid::HugeCount(at_least) => format!(
                "any API and version broken at a count of {at_least} or more past its end, as a pinned crash's (one sent still every {} s, to see the crash still there)",
                SAMPLE_AVOIDED.as_secs()
            ),
        }
    }
}

/// How often a frame a rule avoids is sent all the same: the defect is seen still there (a
/// crash counted under its finding, or another allocation site pinned) at the cost of a start
/// now and then, not one for every frame like it.
pub(super) const SAMPLE_AVOIDED: std::time::Duration = std::time::Duration::from_secs(10);

/// What the workers share.
pub(super) struct Shared {
    /// Findings by signature: the finding's index in the summary, or none for one written by
    /// an earlier run into the same directory.
    pub(super) known: BTreeMap<String, Option<usize>>,
    pub(super) summary: FramesSummary,
    pub(super) stats: FrameStats,
    /// The frames (unshrunk or shrunk, as written) of the findings, for their text files.
    pub(super) frames: Vec<Vec<u8>>,
    /// What the frames of crashes already pinned look like: frames like them are not sent
    /// again ([`Shared::avoids`]).
    pub(super) avoid: Vec<Avoid>,
    /// When a frame a rule avoids was last sent all the same ([`SAMPLE_AVOIDED`]).
    pub(super) sampled: Option<std::time::Instant>,
    /// The judge's first word on a finding (`closed on a well-formed request: TxnOffsetCommit
    /// v2`) → the signature it was written under once verified (the panic the broker logged):
    /// a later frame the judge words so is checked against it without a restart. With whether
    /// that signature is the broker's last words (else there is nothing to check it by).
    pub(super) aliases: BTreeMap<String, (String, bool)>,
    /// Closes and silences seen again on the running broker, waiting to be confirmed on a
    /// freshly started one: at the next restart a crash needs anyway, or at the end of the
    /// run, all in one batch ([`super::verify::confirm_pending`]).
    pub(super) pending: Vec<Seen>,
    /// The signatures (by last words) of crashes being pinned now, on one instance of
    /// several: the same crash on another instance is brought back, not pinned twice.
    pub(super) pinning: std::collections::BTreeSet<String>,
    /// Crashes not reproduced at first, waiting to be pinned again in a batch.
    pub(super) unpinned_crashes: Vec<Unpinned>,
    /// How many crashes were kept so (the next one's number).
    pub(super) unpinned_crashes_kept: usize,
}

/// A crash not pinned yet, waiting for the next batch.
#[derive(Debug, Clone)]
pub(super) struct Unpinned {
    /// Its number among the run's unpinned crashes (its folder's).
    pub(super) k: usize,
    /// The frames of the life it ended, oldest first.
    pub(super) history: Vec<pin::Sent>,
    /// What the broker's log said as it died.
    pub(super) words: Option<String>,
    /// The target's restarts when it was last tried: tried again only after a later restart.
    pub(super) tried_at: u64,
    /// Whether it has been tried in a batch already (each is, once).
    pub(super) retried: bool,
}

impl Unpinned {
    /// Its folder under the findings directory.
    pub(super) fn folder(&self) -> String {
        format!("unpinned/crash-{}", self.k)
    }
}

/// A finding seen once, to be confirmed: at once, or (a close) waiting for a freshly started
/// broker.
#[derive(Debug, Clone)]
pub(super) struct Seen {
    /// The judge's word on it.
    pub(super) judged: super::judge::Judged,
    /// The frame.
    pub(super) frame: Vec<u8>,
    /// How it was made.
    pub(super) mutations: Vec<String>,
    /// Its number.
    pub(super) n: u64,
}

impl Shared {
    /// A run's shared state before its first frame: the signatures found already (`known`,
    /// by an earlier run into the same directory, or planted by a test), nothing else.
    pub(super) fn new(known: BTreeMap<String, Option<usize>>) -> Shared {
        Shared {
            known,
            summary: FramesSummary::default(),
            stats: FrameStats::default(),
            frames: Vec::new(),
            avoid: Vec::new(),
            sampled: None,
            aliases: BTreeMap::new(),
            pending: Vec::new(),
            pinning: Default::default(),
            unpinned_crashes: Vec::new(),
            unpinned_crashes_kept: 0,
        }
    }

    /// Remembers a pinned crash's frame, or a verified hang's (shrunk, with what of it
    /// `matters`), so that frames like it are not sent again: a night of one recurring crash
    /// would otherwise be a night of restarts, and of one hang a night of connections held for
    /// the deadline. A malformed frame: frames of the same API and version broken at the same
    /// field. A well-formed one: frames of the same API with the same values in the fields it
    /// needs (the timeout that arms a crash of two frames, the empty group id a hang needs).
    pub(super) fn avoid(&mut self, frame: &[u8], matters: &[String]) {
        let Some(h) = shape::header(frame) else {
            return;
        };
        let rule = match shape::parse(frame) {
            Err(why) => {
                if let Some(count) = count_past_end(&why).filter(|c| *c >= HUGE) {
                    self.avoid_huge_counts((count / HUGE_BELOW_KILLER).max(HUGE));
                }
                Avoid::Broken(h.key, h.version, judge::field_of(&why))
            }
            Ok(_) => {
                let values: Vec<(String, Wanted)> = matters
                    .iter()
                    .filter_map(|m| {
                        let (path, value) = m.split_once(" = ")?;
                        Some((judge::field_of(path), Wanted::read(value)?))
                    })
                    .collect();
                if values.is_empty() {
                    return;
                }
                Avoid::Values(h.key, values)
            }
        };
        if self.avoid.contains(&rule) {
            return;
        }
        self.summary.avoiding.push(rule.describe());
        self.avoid.push(rule);
    }

    /// Avoids frames of any API broken at a count of `at_least` or more: one rule, lowered
    /// when a smaller count kills too.
    fn avoid_huge_counts(&mut self, at_least: u64) {
        let at_least = at_least.max(1);
        let now = self.avoid.iter_mut().find_map(|r| match r {
            Avoid::HugeCount(n) => Some(n),
            _ => None,
        });
        match now {
            Some(n) if *n <= at_least => return,
            Some(n) => *n = at_least,
            None => self.avoid.push(Avoid::HugeCount(at_least)),
        }
        let rule = Avoid::HugeCount(at_least);
        self.summary
            .avoiding
            .retain(|line| !line.starts_with("any API and version broken at a count"));
        self.summary.avoiding.push(rule.describe());
    }

    /// Whether `frame`, like a pinned crash's, is not to be sent ([`Shared::avoids`]),
    /// counted as avoided; one is sent all the same every [`SAMPLE_AVOIDED`].
    pub(super) fn holds_back(&mut self, frame: &[u8]) -> bool {
        if !self.avoids(frame) {
            return false;
        }
        let due = self.sampled.is_none_or(|at| at.elapsed() >= SAMPLE_AVOIDED);
        if due {
            self.sampled = Some(std::time::Instant::now());
            self.summary.sampled += 1;
            return false;
        }
        self.summary.avoided += 1;
        true
    }

    /// Whether `frame` is like a pinned crash's frame ([`Shared::avoid`]).
    pub(super) fn avoids(&self, frame: &[u8]) -> bool {
        let Some(h) = shape::header(frame) else {
            return false;
        };
        let mut rules = self
            .avoid
            .iter()
            .filter(|r| r.key().is_none_or(|key| key == h.key))
            .peekable();
        if rules.peek().is_none() {
            return false;
        }
        let parsed = shape::parse(frame);
        rules.any(|rule| match (rule, &parsed) {
            (Avoid::HugeCount(at_least), Err(why)) => {
                count_past_end(why).is_some_and(|count| count >= *at_least)
            }
            (Avoid::Broken(_, version, field), Err(why)) => {
                *version == h.version && judge::field_of(why) == *field
            }
            (Avoid::Values(_, values), Ok(p)) => values.iter().all(|(path, value)| {
                p.spans
                    .iter()
                    .any(|s| judge::field_of(&s.path) == *path && value.held(frame, s, p.flexible))
            }),
            _ => false,
        })
    }

    /// Counts another sighting of a known signature, on `frame`'s API and version when the
    /// frame that showed it is known (a crash counted without pinning has none).
    pub(super) fn seen_again(&mut self, signature: &str, frame: Option<&[u8]>) -> bool {
        let Some(at) = self.known.get(signature) else {
            return false;
        };
        if let Some(f) = at.and_then(|i| self.summary.findings.get_mut(i)) {
            f.seen += 1;
            if let Some(named) = frame.map(judge::named) {
                let listed = f.seen_on.len() >= SEEN_ON_LISTED;
                if !listed && !f.seen_on.contains(&named) {
                    f.seen_on.push(named);
                } else if listed
                    && !f.seen_on.contains(&named)
                    && f.seen_on.last().map(String::as_str) != Some(MORE)
                {
                    f.seen_on.push(MORE.to_owned());
                }
            }
        }
        true
    }
}

impl Shared {
    /// Counts another sighting of the known signature that `torn` begins: a crash's words read
    /// while the dying broker still wrote its backtrace lack the frame that signs it, and are
    /// the same crash, not one to pin again.
    pub(super) fn seen_again_torn(&mut self, torn: &str) -> bool {
        let whole = self
            .known
            .keys()
            .find(|k| {
                k.len() > torn.len() && k.starts_with(torn) && k[torn.len()..].starts_with(" in ")
            })
            .cloned();
        whole.is_some_and(|k| self.seen_again(&k, None))
    }
}

/// How many APIs and versions a finding lists as showing it: an answer to unlisted versions
/// showed on thousands in ten minutes, and a list of them all is a line no one reads and a
/// report that grows all night.
const SEEN_ON_LISTED: usize = 24;

/// What ends a finding's list of APIs and versions when more showed it.
const MORE: &str = "… (more not listed)";

/// What one run's workers and its crash handling see.
pub(super) struct Run<'a> {
    pub(super) target: &'a Running,
    pub(super) oracle: Option<&'a Running>,
    pub(super) options: &'a WireOptions,
    pub(super) raw_served: Vec<(i16, i16, i16)>,
    pub(super) progress: Arc<dyn Progress>,
    pub(super) started: Instant,
    pub(super) shared: Arc<Mutex<Shared>>,
    pub(super) life: Mutex<Life>,
}

impl Run<'_> {
    pub(super) fn shared(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared
            .lock()
            .expect("no worker panics holding the lock")
    }
}

impl Run<'_> {
    /// Counts a frame's fate and shows the counters now and then: true then, when the place
    /// a resumed run goes on from is to be saved.
    pub(super) fn count(&self, happened: &Happened) -> bool {
        let mut s = self.shared();
        s.stats.frames += 1;
        match happened {
            Happened::Answered(_) => s.stats.answered += 1,
            _ => s.stats.closed += 1,
        }
        let checkpoint = s.stats.frames % 64 == 0;
        if checkpoint {
            s.stats.secs = self.started.elapsed().as_secs_f64();
            self.progress.counters("frames", &s.stats.line());
        }
        checkpoint
    }

    /// Saves where a resumed run goes on: every frame below the lowest one a worker may still
    /// be sending is done.
    pub(super) fn save_place(&self, next: u64) -> Result<(), FuzzError> {
        let done = next.saturating_sub(self.options.jobs as u64);
        crate::fuzz::resume::save(
            &self.options.findings,
            "frames",
            self.options.shard,
            crate::fuzz::resume::Position {
                seed: self.options.seed,
                next: done.max(self.options.first_frame),
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The life's record: frames in order, the answered ones marked, a new life empty.
    #[test]
    fn a_life_keeps_its_frames_in_order_and_ends_empty() {
        let mut life = Life::default();
        let l = life.record(1, b"a", &[]);
        life.record(2, b"b", &[]);
        life.answered(l, 1);
        life.answered(l + 1, 2);
        let sent = life.end();
        assert_eq!(
            sent.iter().map(|s| (s.n, s.answered)).collect::<Vec<_>>(),
            [(1, true), (2, false)]
        );
        assert!(life.end().is_empty());
        assert_eq!(life.number, 2);
    }

    /// A finding that shows on thousands of versions lists the first 24 and says more did.
    #[test]
    fn a_finding_lists_a_bounded_number_of_the_versions_it_showed_on() {
        let finding = FrameFinding {
            signature: "answered an unknown version: answers API versions it does not list".into(),
            kind: judge::Kind::AnsweredUnknown,
            file: "f.bin".into(),
            detail: String::new(),
            mutations: Vec::new(),
            found_after_secs: 0.0,
            frame_number: 0,
            reproduces: String::new(),
            needs: Vec::new(),
            found_bytes: 0,
            bytes: 0,
            matters: Vec::new(),
            seen_on: vec!["EndTxn v99".into()],
            seen: 1,
            broker_said: None,
        };
        let mut shared = Shared::new(BTreeMap::from([(finding.signature.clone(), Some(0))]));
        shared.summary.findings.push(finding.clone());
        for version in 100..1100i16 {
            // EndTxn (26) at `version`, correlation 1, no client id.
            let mut frame = vec![0, 26];
            frame.extend_from_slice(&version.to_be_bytes());
            frame.extend_from_slice(&[0, 0, 0, 1, 0xff, 0xff]);
            assert!(shared.seen_again(&finding.signature, Some(&frame)));
        }
        let listed = &shared.summary.findings[0].seen_on;
        assert_eq!(listed.len(), SEEN_ON_LISTED + 1, "{listed:?}");
        assert_eq!(listed.last().map(String::as_str), Some(MORE));
        assert_eq!(shared.summary.findings[0].seen, 1001);
    }

    /// A killer broken at a small count makes no rule for every API: only its own API,
    /// version and field are held back.
    #[test]
    fn a_killer_at_a_small_count_holds_back_only_its_own_kind() {
        let mut shared = Shared::new(BTreeMap::new());
        // WriteTxnMarkers v0, a marker count of 70 and nothing after.
        let killer = [0, 27, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 70];
        shared.avoid(&killer, &[]);
        assert_eq!(shared.avoid.len(), 1, "{:?}", shared.summary.avoiding);
        let mut commit = vec![0, 28, 0, 0, 0, 0, 0, 9, 0, 0, 0, 1, b't', 0, 1, b'g'];
        commit.extend_from_slice(&[0; 10]);
        commit.extend_from_slice(&[0x10, 0, 0, 0]);
        assert!(
            !shared.avoids(&commit),
            "another API's huge count is still sent"
        );
    }

    /// A pinned crash's malformed frame keeps frames broken at the same field of the same API
    /// and version from being sent; others go.
    #[test]
    fn frames_broken_as_a_pinned_crash_are_not_sent_again() {
        let mut shared = Shared::new(BTreeMap::new());
        // WriteTxnMarkers v0, no client id, a marker count of 2^31 - 1 and nothing after.
        let killer = [0, 27, 0, 0, 0, 0, 0, 1, 0, 0, 0x7f, 0xff, 0xff, 0xff];
        assert!(!shared.avoids(&killer));
        shared.avoid(&killer, &[]);
        assert_eq!(
            shared.summary.avoiding.len(),
            2,
            "{:?}",
            shared.summary.avoiding
        );
        // Another correlation id, a client id, another huge count: avoided.
        let like = [
            0, 27, 0, 0, 0, 0, 0, 9, 0, 1, b'c', 0xff, 0xff, 0xff, 0xfe, 1,
        ];
        assert!(shared.avoids(&like));
        // Well-formed (no markers), or broken at a string's length: sent.
        let empty = [0, 27, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0];
        assert!(!shared.avoids(&empty));
        let end_txn = [0, 26, 0, 0, 0, 0, 0, 9, 0, 0, 0x7f, 0xff];
        assert!(!shared.avoids(&end_txn));
        // Another version or API broken at a count as huge (at least a sixteenth of the
        // killer's): avoided too, as the real broker dies of any of them; a small one is sent.
        let v1 = [
            0, 27, 0, 1, 0, 0, 0, 9, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x03,
        ];
        assert!(shared.avoids(&v1), "a compact count of 2^30 - 2");
        // TxnOffsetCommit v0: id, group, producer id and epoch, then its topics' count.
        let mut commit = vec![0, 28, 0, 0, 0, 0, 0, 9, 0, 0, 0, 1, b't', 0, 1, b'g'];
        commit.extend_from_slice(&[0; 10]);
        let huge = [commit.clone(), vec![0x10, 0, 0, 0]].concat();
        assert!(shared.avoids(&huge), "a count of 2^28");
        let small = [commit, vec![0, 0, 0x10, 0]].concat();
        assert!(!shared.avoids(&small), "a count of 4096");
        assert!(
            shared.summary.avoiding.iter().any(
                |l| l.starts_with("any API and version broken at a count of 134217727 or more")
            ),
            "{:?}",
            shared.summary.avoiding
        );
        // A well-formed killer without values it needs makes no rule; with them, frames of its
        // API with those values are avoided, whatever else they hold.
        shared.avoid(&empty, &[]);
        assert_eq!(shared.avoid.len(), 2);
        // InitProducerId v0: id "t", timeout 2147483647.
        let arming = [
            0, 22, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, b't', 0x7f, 0xff, 0xff, 0xff,
        ];
        shared.avoid(&arming, &["transaction_timeout_ms = 2147483647".to_owned()]);
        assert_eq!(shared.avoid.len(), 3);
        let mut other_id = arming.to_vec();
        other_id[12] = b'u';
        assert!(shared.avoids(&other_id));
        let mut other_timeout = arming.to_vec();
        other_timeout[16] = 0xfe;
        assert!(!shared.avoids(&other_timeout));
        // A hang that needs an empty group id (AddOffsetsToTxn v0: id "t", producer 7, epoch
        // 1, group ""): frames of the API with an empty group id are avoided, with a group id
        // of one byte not.
        let hang = [
            0, 25, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, b't', 0, 0, 0, 0, 0, 0, 0, 7, 0, 1, 0, 0,
        ];
        assert!(!shared.avoids(&hang));
        shared.avoid(&hang, &["group_id = \"\"".to_owned()]);
        assert_eq!(shared.avoid.len(), 4);
        // The same rule again (a hang verified, then seen again): kept once.
        shared.avoid(&hang, &["group_id = \"\"".to_owned()]);
        assert_eq!(shared.summary.avoiding.len(), 4);
        assert!(shared.summary.avoiding[3].contains("group_id = \"\""));
        let mut other_producer = hang.to_vec();
        other_producer[20] = 9;
        assert!(shared.avoids(&other_producer));
        let mut named = hang[..23].to_vec();
        named.extend([0, 1, b'g']);
        assert!(!shared.avoids(&named));
    }
}
