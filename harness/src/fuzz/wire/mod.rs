//! Live-wire fuzzing of a target's decoders: valid request frames of the six transaction APIs
//! at every version the target serves that an Apache release kconform knows has (3.7's, and
//! 4.4.0's past them: EndTxn v5 on a 4.x broker) ([`seeds`]), mutated structure-aware and byte-wise
//! ([`mutate`]), sent through its network port, `jobs` connections at once. A broker may close
//! a connection on a malformed frame (Apache does), but a finding is ([`judge()`]):
//! - an answer that is not an exact response to the request ([`crate::wire::frame::decode`]), or
//!   that carries another frame's correlation id; one finding per defect, whatever API shows it;
//! - an answer to a frame naming an API version the target does not serve (Apache closes;
//!   the client telemetry APIs excepted, which Apache answers unlisted);
//! - a connection closed without an answer to a *well-formed* request of a version the target
//!   serves ([`shape`]; Apache answers every one), confirmed on the oracle when there is one;
//! - no answer and no close within the deadline, to a transaction API's frame (the oracle,
//!   when there is one, must answer it in time for this to count; on the APIs brokers send
//!   each other, which Apache itself leaves unanswered at times, only against an oracle);
//! - a target that then refuses a fresh connection's ApiVersions: it crashed or hangs.
//!
//! Nothing is written on one sighting. A finding is sent again alone, on a fresh connection,
//! while the other connections wait (`verify`); a crash is pinned to the frame (or the
//! shortest run of frames) that causes it on a broker brought back ([`pin`], [`keeper`]), and
//! the run goes on (`crash`). Crashes and closes are shrunk while they still show
//! ([`minimise`]), and signed by what the broker said where its log is read ([`last_words`]).
//! Each is written once per signature ([`finding`]) with the one-line replay command
//! (`kconform replay-frame FILE... --target ...`, [`replay()`]). What the run holds while it goes
//! (its options, counters, the current life's frames, the frames not to send again) is
//! `state`'s, below all of them.

pub mod broker_log;
mod crash;
pub mod finding;
pub mod judge;
pub mod keeper;
pub mod last_words;
pub mod minimise;
pub mod pin;
mod pin_crash;
mod record;
mod replay;
mod send;
mod state;
mod unpinned;
mod verify;

/// The frames and their reading, from the in-process library (`kconform-wire`) this fuzzer
/// shares with users' own fuzz targets.
pub use kconform_wire::{mutate, seeds, shape};

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use kafka_protocol::messages::ApiKey;

use super::model::Rng;
use super::{FuzzError, Progress};
use crate::targets::Running;
use crate::wire::client::Connection;
pub use finding::FrameFinding;
pub use judge::{judge, Happened, Judged, Kind};
use keeper::Keeper;
pub use replay::{replay, ReplayError, Replayed};
pub use state::{FrameStats, FramesSummary, WireOptions};
use state::{Life, Run, Shared};

/// Frame `n` of a run from `seed`: a seed frame of a served API and version, mutated.
pub fn frame(seed: u64, n: u64, served: &[(ApiKey, i16, i16)]) -> (Vec<u8>, Vec<String>) {
    let mut rng = Rng::new(seed ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let (api, lo, hi) = served[rng.below(served.len() as u64) as usize];
    let version = lo + rng.below((hi - lo) as u64 + 1) as i16;
    let correlation = (n % i32::MAX as u64) as i32;
    let Some(seed) = seeds::draw(api, version, correlation, &mut rng) else {
        return (Vec::new(), vec!["no seed could be drawn".into()]);
    };
    let mut frame = seed.frame;
    let done = mutate::mutate(&mut frame, &mut rng);
    (frame, done)
}

/// The six transaction APIs `target` serves, each with the versions of it that both it serves
/// and kconform can write; an error where it serves none.
fn transaction_apis(
    target: &Running,
    raw_served: &[(i16, i16, i16)],
) -> Result<Vec<(ApiKey, i16, i16)>, FuzzError> {
    let served: Vec<(ApiKey, i16, i16)> = seeds::APIS
        .iter()
        .filter_map(|&api| {
            let &(_, lo, hi) = raw_served.iter().find(|(k, _, _)| *k == api as i16)?;
            let hi = hi.min(shape::highest_version(api));
            (lo <= hi).then_some((api, lo.max(0), hi))
        })
        .collect();
    match served.is_empty() {
        true => Err(FuzzError::Target(format!(
            "{} serves none of the six transaction APIs",
            target.name
        ))),
        false => Ok(served),
    }
}

/// One broker the frames go to, and what brings it back.
pub struct Instance<'a> {
    /// The broker.
    pub target: &'a Running,
    /// What brings it back after a crash (and restarts it to pin and confirm).
    pub keeper: &'a mut Keeper,
}

/// Fuzzes `target`'s decoders until the duration passes, `stop` is set, enough findings are
/// written, or the target stops answering and `keeper` cannot bring it back. `oracle`, when
/// given, confirms that a well-formed frame the target closed on is one Apache answers.
pub async fn run(
    target: &Running,
    oracle: Option<&Running>,
    options: &WireOptions,
    keeper: &mut Keeper,
    progress: Arc<dyn Progress>,
    stop: Arc<AtomicBool>,
) -> Result<FramesSummary, FuzzError> {
    let one = vec![Instance { target, keeper }];
    run_on(one, oracle, options, progress, stop).await
}

/// [`run`] on several instances of one build beside each other (`--brokers N`): the
/// connections spread over them, each instance's crash pinned and its findings confirmed on
/// it while the others go on; one summary, one set of findings. The first instance names
/// the run's target (its replay command).
pub async fn run_on(
    instances: Vec<Instance<'_>>,
    oracle: Option<&Running>,
    options: &WireOptions,
    progress: Arc<dyn Progress>,
    stop: Arc<AtomicBool>,
) -> Result<FramesSummary, FuzzError> {
    let io = |e| FuzzError::Findings(options.findings.display().to_string(), e);
    std::fs::create_dir_all(&options.findings).map_err(io)?;
    let first = instances
        .first()
        .ok_or_else(|| FuzzError::Target("no broker to fuzz".into()))?
        .target;
    let raw_served = first
        .served(options.deadline)
        .await
        .map_err(|e| FuzzError::Target(e.to_string()))?;
    let served = transaction_apis(first, &raw_served)?;
    let started = Instant::now();
    let shared = Arc::new(Mutex::new(Shared::new(
        super::known_signatures(&options.findings)
            .into_iter()
            .map(|s| (s, None))
            .collect(),
    )));
    let mut runs = Vec::new();
    let mut gates = Vec::new();
    for i in instances {
        runs.push(Run {
            target: i.target,
            oracle,
            options,
            raw_served: raw_served.clone(),
            progress: progress.clone(),
            started,
            shared: shared.clone(),
            life: Mutex::new(Life::default()),
        });
        // Workers send under the read side; a crash's pinning and a finding's verification
        // take the write side, so that the broker (and its log) is theirs alone meanwhile.
        gates.push(tokio::sync::RwLock::new(i.keeper));
    }
    let ended: Vec<AtomicBool> = runs.iter().map(|_| AtomicBool::new(false)).collect();
    let next = AtomicU64::new(options.first_frame);
    let each = Each {
        runs: &runs,
        gates: &gates,
        ended: &ended,
        next: &next,
        served: &served,
        stop: &stop,
    };
    let jobs = options.jobs.max(runs.len());
    let results = futures::future::join_all((0..jobs).map(|j| each.worker(j % runs.len()))).await;
    for r in results {
        r?;
    }
    // The closes and silences no crash's restart came to confirm, and the crashes not
    // reproduced at first: one restart, one batch, on an instance still running.
    if let Some(i) = (0..runs.len()).find(|&i| !ended[i].load(Ordering::SeqCst)) {
        let mut keeper = gates[i].write().await;
        verify::confirm_pending(&runs[i], &mut keeper, true).await?;
    }
    let next = next.load(Ordering::SeqCst);
    let target = runs[0].target;
    drop(runs);
    let shared = Arc::try_unwrap(shared)
        .map_err(|_| FuzzError::Target("the run's state is still shared".into()))?
        .into_inner()
        .expect("no worker panics holding the lock");
    let keepers: Vec<&mut Keeper> = gates.into_iter().map(|g| g.into_inner()).collect();
    let keepers: Vec<&Keeper> = keepers.into_iter().map(|k| &*k).collect();
    finish(
        shared,
        target,
        options,
        &keepers,
        started,
        next,
        progress.as_ref(),
    )
}

/// What every worker of a run shares: the instances' runs, gates and whether each ended, the
/// next frame's number, the APIs served, the stop flag.
struct Each<'r, 'a, 'k> {
    runs: &'r [Run<'a>],
    gates: &'r [tokio::sync::RwLock<&'k mut Keeper>],
    ended: &'r [AtomicBool],
    next: &'r AtomicU64,
    served: &'r [(ApiKey, i16, i16)],
    stop: &'r AtomicBool,
}

impl Each<'_, '_, '_> {
    /// Whether the run is over for the workers of instance `i`.
    fn over(&self, i: usize) -> bool {
        let run = &self.runs[i];
        run.started.elapsed() >= run.options.duration
            || self.stop.load(Ordering::SeqCst)
            || self.ended[i].load(Ordering::SeqCst)
            || run
                .options
                .stop_after_findings
                .is_some_and(|n| run.shared().summary.findings.len() >= n)
    }

    /// One connection's worker on instance `i`: draws, sends and judges frames until the run
    /// is over for it.
    async fn worker(&self, i: usize) -> Result<(), FuzzError> {
        let (run, gate) = (&self.runs[i], &self.gates[i]);
        let options = run.options;
        let target = run.target;
        let mut conn: Option<Connection> = None;
        while !self.over(i) {
            let n = options
                .shard
                .global(self.next.fetch_add(1, Ordering::SeqCst));
            let (frame, mutations) = frame(options.seed, n, self.served);
            if run.shared().holds_back(&frame) {
                continue;
            }
            let (life, happened) = {
                let _sending = gate.read().await;
                let life = run
                    .life
                    .lock()
                    .expect("no panics")
                    .record(n, &frame, &mutations);
                let happened =
                    send::exchange(&mut conn, target.addr, &frame, options.deadline).await;
                if matches!(happened, Happened::Answered(_)) {
                    run.life.lock().expect("no panics").answered(life, n);
                }
                (life, happened)
            };
            if run.count(&happened) {
                run.save_place(self.next.load(Ordering::SeqCst))?;
            }
            let answered = matches!(happened, Happened::Answered(_));
            if !answered && target.reachable(options.deadline).await.is_err() {
                conn = None;
                let mut keeper = gate.write().await;
                let restarts = keeper.restarts;
                if crash::crashed(run, &mut keeper, life).await?
                    || (keeper.restarts > restarts
                        && verify::confirm_pending(run, &mut keeper, false).await?)
                {
                    // (The crash's restart left a freshly started broker: the closes and
                    // silences waiting for one were confirmed there, in one batch.)
                    self.end(i);
                }
                continue;
            }
            if run.life.lock().expect("no panics").number != life {
                // Sent to a broker that died under it: its fate says nothing of the frame.
                conn = None;
                continue;
            }
            let Some(judged) = judge(&frame, &happened, &run.raw_served, target.parser()) else {
                continue;
            };
            if judged.kind == Kind::Silent
                && run.oracle.is_none()
                && judge::silence_needs_oracle(&frame)
            {
                run.shared().summary.silences_not_judged += 1;
                continue;
            }
            if run.shared().seen_again(&judged.signature, Some(&frame)) {
                continue;
            }
            let mut keeper = gate.write().await;
            let seen = state::Seen {
                judged,
                frame,
                mutations,
                n,
            };
            if verify::confirm(run, &mut keeper, seen).await? {
                self.end(i);
            }
        }
        Ok(())
    }

    /// Instance `i` could not be brought back: its workers end; the run ends with the last
    /// instance (and so does the sequences' fuzzing beside it, on the same broker).
    fn end(&self, i: usize) {
        self.ended[i].store(true, Ordering::SeqCst);
        if self.ended.iter().all(|e| e.load(Ordering::SeqCst)) {
            self.stop.store(true, Ordering::SeqCst);
        }
    }
}

/// The run's summary, completed with its counters; every finding's text file written again
/// (with what was seen of it since it was first written) and the place to resume saved.
fn finish(
    mut s: Shared,
    target: &Running,
    options: &WireOptions,
    keepers: &[&Keeper],
    started: Instant,
    next: u64,
    progress: &dyn Progress,
) -> Result<FramesSummary, FuzzError> {
    for (f, frame) in s.summary.findings.iter().zip(&s.frames) {
        finding::write_text(&options.findings, &target.arg(), options.seed, f, frame)?;
    }
    s.stats.secs = started.elapsed().as_secs_f64();
    progress.counters("frames", &s.stats.line());
    let summary = &mut s.summary;
    summary.frames = s.stats.frames;
    summary.answered = s.stats.answered;
    summary.closed = s.stats.closed;
    summary.frames_per_sec = s.stats.frames as f64 / s.stats.secs.max(0.001);
    summary.next_frame = next;
    summary.instances = keepers.len();
    summary.restarts = keepers.iter().map(|k| k.restarts).sum();
    summary.restart_secs = keepers.iter().map(|k| k.restarting.as_secs_f64()).sum();
    let mut why: std::collections::BTreeMap<&str, (u64, f64)> = Default::default();
    for (reason, (restarts, time)) in keepers.iter().flat_map(|k| k.why.iter()) {
        let w = why.entry(reason).or_default();
        w.0 += restarts;
        w.1 += time.as_secs_f64();
    }
    summary.restarts_why = why
        .into_iter()
        .map(|(why, (restarts, secs))| state::RestartsWhy {
            why: why.to_owned(),
            restarts,
            secs,
        })
        .collect();
    summary.replay_target = target.arg();
    super::resume::save(
        &options.findings,
        "frames",
        options.shard,
        super::resume::Position {
            seed: options.seed,
            next,
        },
    )?;
    Ok(s.summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frame `n` of a seed is the same every time (what resuming and a finding's frame
    /// number rely on).
    #[test]
    fn frames_are_drawn_again_from_seed_and_number() {
        let served = [(ApiKey::EndTxn, 0, 3), (ApiKey::TxnOffsetCommit, 0, 3)];
        assert_eq!(frame(5, 17, &served), frame(5, 17, &served));
        assert_ne!(frame(5, 17, &served).0, frame(5, 18, &served).0);
    }
}
