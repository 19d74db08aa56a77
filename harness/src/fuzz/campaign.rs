//! One `kconform fuzz` run from start to summary: where it starts (a seed, or the place a
//! run into the same findings directory saved), the targets started and checked before any
//! input is drawn, both fuzzers side by side (the sequences wait on the brokers while the frames
//! use the cores), the targets stopped, and one report. The binary only draws progress and
//! turns Ctrl-C into `stop`.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::compare::ledger::Ledger;
use crate::data::Source;
use crate::fuzz::report::FuzzReport;
use crate::fuzz::wire::WireOptions;
use crate::fuzz::{resume, FuzzError, FuzzOptions, Progress, Stats};
use crate::targets::{Running, TargetSpec};

/// What a run fuzzes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Stateful differential sequences, judged against the oracle.
    Sequences,
    /// The target's decoders, live: mutated request frames.
    Frames,
    /// Both at once.
    Both,
}

impl Mode {
    /// Whether sequences are drawn.
    pub fn sequences(self) -> bool {
        self != Mode::Frames
    }

    /// Whether frames are drawn.
    pub fn frames(self) -> bool {
        self != Mode::Sequences
    }
}

/// Where a run starts: its seed, and the first sequence and frame each fuzzer draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Start {
    /// The seed every input is drawn from.
    pub seed: u64,
    /// The first sequence's number.
    pub first_sequence: u64,
    /// The first frame's number.
    pub first_frame: u64,
}

/// Where a run into `findings` starts: from the places saved there with `resume` (refusing a
/// `seed` that differs from theirs, or a directory where no run saved one), else from `seed`,
/// else from a seed drawn from the clock.
pub fn start(
    findings: &Path,
    resume: bool,
    seed: Option<u64>,
    shard: crate::fuzz::shard::Shard,
) -> Result<Start, FuzzError> {
    let (sequences, frames) = match resume {
        true => (
            resume::load(findings, "sequences", shard)?,
            resume::load(findings, "frames", shard)?,
        ),
        false => (None, None),
    };
    let saved = sequences.or(frames).map(|p| p.seed);
    if resume && saved.is_none() {
        let of_shard = match shard.whole() {
            true => String::new(),
            false => format!(" for shard {shard}"),
        };
        return Err(FuzzError::Source(format!(
            "--resume: no run saved its place{of_shard} in {}",
            findings.display()
        )));
    }
    let seed = match (seed, saved) {
        (Some(s), Some(t)) if s != t => {
            return Err(FuzzError::Source(format!(
                "--seed {s}, but the run to resume in {} has seed {t}",
                findings.display()
            )))
        }
        (Some(s), _) | (None, Some(s)) => s,
        (None, None) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
    };
    Ok(Start {
        seed,
        first_sequence: sequences.map_or(0, |p| p.next),
        first_frame: frames.map_or(0, |p| p.next),
    })
}

/// Refuses sequences without an oracle: they are judged against one.
pub fn check_oracle(mode: Mode, has_oracle: bool) -> Result<(), FuzzError> {
    match mode.sequences() && !has_oracle {
        true => Err(FuzzError::Source(
            "--oracle none: sequences are judged against an oracle; use --mode frames to fuzz the decoders alone".into(),
        )),
        false => Ok(()),
    }
}

/// Starts every target and checks that each answers ApiVersions within `deadline`; when one
/// cannot, stops those that started and says why for each that did not.
pub async fn start_all(
    specs: &[TargetSpec],
    deadline: Duration,
) -> Result<Vec<Running>, FuzzError> {
    let started =
        futures::future::join_all(specs.iter().map(|s| Running::start_answering(s, deadline)))
            .await;
    let mut running = Vec::new();
    let mut why = Vec::new();
    for r in started {
        match r {
            Ok(t) => running.push(t),
            Err(e) => why.push(e.to_string()),
        }
    }
    if why.is_empty() {
        return Ok(running);
    }
    for t in running {
        t.stop().await;
    }
    Err(FuzzError::Target(why.join("; ")))
}

/// The fuzzers of one run, told how to go.
pub struct Campaign<'a> {
    mode: Mode,
    options: FuzzOptions,
    first_frame: u64,
    scenarios: &'a Source,
    /// The ledger sequences are judged by (none for frames alone).
    ledger: Option<Ledger>,
}

impl<'a> Campaign<'a> {
    /// A run of `mode` with the sequence fuzzer's `options` (its seed, duration, deadline,
    /// jobs and findings directory are the frame fuzzer's too), the frames starting at
    /// `first_frame`; the ledger of `scenarios` is read now, before any target starts.
    pub fn new(
        mode: Mode,
        options: FuzzOptions,
        first_frame: u64,
        scenarios: &'a Source,
    ) -> Result<Campaign<'a>, FuzzError> {
        let ledger = match mode.sequences() {
            true => Some(Ledger::read(scenarios).map_err(|e| FuzzError::Source(e.to_string()))?),
            false => None,
        };
        Ok(Campaign {
            mode,
            options,
            first_frame,
            scenarios,
            ledger,
        })
    }

    /// The frame fuzzer's options: the run's seed, duration, deadline, jobs and findings.
    fn wire_options(&self) -> WireOptions {
        let o = &self.options;
        WireOptions {
            duration: o.duration,
            seed: o.seed,
            first_frame: self.first_frame,
            shard: o.shard,
            findings: o.findings.clone(),
            deadline: o.deadline,
            jobs: o.jobs,
            stop_after_findings: o.stop_after_findings,
            shrink_budget: o.shrink_runs.max(1) * 5,
        }
    }

    /// Fuzzes `under_test` (against `oracle`, when there is one) until the duration passes or
    /// `stop` is set, then gives one report of both fuzzers; `keeper` brings the target back
    /// when the frames crash it. `beside`: more instances of the same build the frames
    /// spread over (`--brokers N`; the sequences stay on `under_test`). The targets are the
    /// caller's to stop.
    pub async fn run(
        &self,
        under_test: &Running,
        oracle: Option<&Running>,
        keeper: &mut crate::fuzz::wire::keeper::Keeper,
        beside: Vec<crate::fuzz::wire::Instance<'_>>,
        progress: Arc<dyn Progress>,
        stop: Arc<AtomicBool>,
    ) -> Result<FuzzReport, FuzzError> {
        let wire_options = self.wire_options();
        let clock = Instant::now();
        let sequences = async {
            match (oracle, &self.ledger) {
                (Some(oracle), Some(ledger)) => Some(
                    crate::fuzz::run(
                        under_test,
                        oracle,
                        ledger,
                        self.scenarios,
                        &self.options,
                        progress.clone(),
                        stop.clone(),
                    )
                    .await,
                ),
                _ => None,
            }
        };
        let frames = async {
            match self.mode.frames() {
                true => {
                    let first = crate::fuzz::wire::Instance {
                        target: under_test,
                        keeper,
                    };
                    let instances = std::iter::once(first).chain(beside).collect();
                    Some(
                        crate::fuzz::wire::run_on(
                            instances,
                            oracle,
                            &wire_options,
                            progress.clone(),
                            stop.clone(),
                        )
                        .await,
                    )
                }
                false => None,
            }
        };
        let (sequences, frames) = tokio::join!(sequences, frames);
        let mut report = match sequences {
            Some(r) => r?,
            None => {
                let oracle_name = oracle.map_or_else(|| "none".to_owned(), |o| o.name.clone());
                let mut r = FuzzReport::new(&under_test.name, &oracle_name, &self.options);
                r.finish(&Stats::default());
                r
            }
        };
        if let Some(f) = frames {
            report.with_frames(f?, clock.elapsed().as_secs_f64());
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resumed_run_starts_where_the_saved_one_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let whole = crate::fuzz::shard::Shard::default();
        let e = start(dir.path(), true, None, whole).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("--resume: no run saved its place"),
            "{e}"
        );
        resume::save(
            dir.path(),
            "frames",
            whole,
            resume::Position { seed: 7, next: 900 },
        )
        .unwrap();
        let s = start(dir.path(), true, None, whole).unwrap();
        assert_eq!(
            s,
            Start {
                seed: 7,
                first_sequence: 0,
                first_frame: 900
            }
        );
        assert_eq!(start(dir.path(), true, Some(7), whole).unwrap(), s);
        // Another shard has no place saved.
        let second = crate::fuzz::shard::Shard { index: 2, of: 2 };
        let e = start(dir.path(), true, None, second).unwrap_err();
        assert!(e.to_string().contains("for shard 2/2"), "{e}");
        let e = start(dir.path(), true, Some(8), whole).unwrap_err();
        assert!(
            e.to_string().contains("--seed 8, but the run to resume"),
            "{e}"
        );
        // Without --resume the saved place is not read.
        let s = start(dir.path(), false, Some(8), whole).unwrap();
        assert_eq!((s.seed, s.first_frame), (8, 0));
    }

    #[test]
    fn sequences_need_an_oracle_and_frames_do_not() {
        assert!(check_oracle(Mode::Frames, false).is_ok());
        assert!(check_oracle(Mode::Both, false).is_err());
        assert!(check_oracle(Mode::Sequences, true).is_ok());
        assert!(Mode::Both.sequences() && Mode::Both.frames());
        assert!(!Mode::Frames.sequences() && !Mode::Sequences.frames());
    }
}
