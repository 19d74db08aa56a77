//! The summary of a `kconform fuzz` run (terminal, JSON, Markdown) and the finding files it
//! writes.

use crate::report::junit::Case;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use super::model::Action;
use super::script;
use super::wire::FramesSummary;
use super::{FuzzError, FuzzOptions, Stats};
use crate::transcript::Transcript;

/// One distinct finding, as written.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// What differs: API, version, field, the target's value | the oracle's.
    pub signature: String,
    /// The scenario file (in the findings directory).
    pub file: String,
    /// The seed the sequence was drawn from.
    pub sequence_seed: u64,
    /// Actions drawn.
    pub drawn_actions: usize,
    /// Actions left after shrinking.
    pub actions: usize,
    /// Whether the shrunk sequence showed it again when written (a finding that shows only
    /// now and then says so).
    pub reproduced: bool,
    /// Seconds into the run when it was found.
    pub found_after_secs: f64,
    /// Sequences run before it was found.
    pub after_sequences: u64,
}

/// The whole run. The JSON form is this struct.
#[derive(Debug, Clone, Serialize)]
pub struct FuzzReport {
    /// 1; changes only with a change that breaks readers.
    pub schema_version: u32,
    /// The target under test.
    pub target: String,
    /// The oracle it is judged against.
    pub oracle: String,
    /// The run's seed (`--seed`).
    pub seed: u64,
    /// Where findings are.
    pub findings_dir: String,
    /// Wall time.
    pub secs: f64,
    /// Sequences run on both targets.
    pub sequences: u64,
    /// Requests sent to the target under test.
    pub requests: u64,
    /// Sequences per second.
    pub sequences_per_sec: f64,
    /// Requests to the target per second.
    pub requests_per_sec: f64,
    /// The share of the seed's inputs this run drew (`K/N`).
    pub shard: String,
    /// Requests sent to the oracle.
    pub oracle_requests: u64,
    /// Requests to the oracle per second.
    pub oracle_requests_per_sec: f64,
    /// Seconds the sequences spent in fixed pauses, summed over sequences: where the time
    /// goes that the brokers do not take.
    pub paused_secs: f64,
    /// Seconds the sequences took on the target under test, summed over sequences (they
    /// overlap, `--jobs` at a time): with `oracle_secs` and `paused_secs`, where a sequence's
    /// time goes.
    pub target_secs: f64,
    /// Seconds the sequences took on the oracle, summed over sequences.
    pub oracle_secs: f64,
    /// Topics the sequences ran on (each created on both brokers, reused while quiet).
    pub topics_created: u64,
    /// Topics retired because a sequence showed a finding on it or left it unquiet (a
    /// transaction still holding a partition's last stable offset back).
    pub topics_retired: u64,
    /// Ledger entries whose values differences matched, and how often.
    pub documented: BTreeMap<String, u64>,
    /// Sequences whose difference a second run did not show (timing).
    pub flaky: u64,
    /// New findings of this run.
    pub findings: Vec<Finding>,
    /// The live-wire fuzzing of the target's decoders, when it ran (`--mode frames|both`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames: Option<FramesSummary>,
    /// "passed" (no new finding) or "failed".
    pub verdict: String,
}

impl FuzzReport {
    /// An empty report of a run about to start (`oracle` "none": no oracle).
    pub fn new(target: &str, oracle: &str, options: &FuzzOptions) -> FuzzReport {
        FuzzReport {
            schema_version: 1,
            target: target.to_owned(),
            oracle: oracle.to_owned(),
            seed: options.seed,
            findings_dir: options.findings.display().to_string(),
            secs: 0.0,
            sequences: 0,
            requests: 0,
            sequences_per_sec: 0.0,
            requests_per_sec: 0.0,
            shard: options.shard.to_string(),
            oracle_requests: 0,
            oracle_requests_per_sec: 0.0,
            paused_secs: 0.0,
            target_secs: 0.0,
            oracle_secs: 0.0,
            topics_created: 0,
            topics_retired: 0,
            documented: BTreeMap::new(),
            flaky: 0,
            findings: Vec::new(),
            frames: None,
            verdict: String::new(),
        }
    }

    /// Counts the ledger entries one sequence's differences matched.
    pub fn count_documented(&mut self, ids: &[String]) {
        for id in ids {
            *self.documented.entry(id.clone()).or_default() += 1;
        }
    }

    /// Writes a finding's scenario file (its signature, seeds and replay commands in comment
    /// lines) and the transcripts that showed it.
    #[allow(clippy::too_many_arguments)]
    pub fn write_finding(
        &self,
        dir: &Path,
        signature: &str,
        sequence_seed: u64,
        drawn: usize,
        actions: &[Action],
        after: Duration,
        after_sequences: u64,
        transcripts: (&Transcript, &Transcript),
        reproduced: bool,
    ) -> Result<Finding, FuzzError> {
        let name = format!("finding-{:08x}", super::stable_hash(signature));
        let header = format!(
            "signature: {signature}\nfound by kconform fuzz --seed {} (sequence seed {sequence_seed}): {drawn} actions drawn, {} after shrinking\ntarget {} against {}\nreplay: kconform run --scenarios {} {name} --target {} --target {}\n   or: kconform repro {name} --scenarios {} --target {} --target {}",
            self.seed,
            actions.len(),
            self.target,
            self.oracle,
            dir.display(),
            self.target,
            self.oracle,
            dir.display(),
            self.target,
            self.oracle,
        );
        let io = |e| FuzzError::Findings(dir.display().to_string(), e);
        std::fs::write(
            dir.join(format!("{name}.toml")),
            script::scenario(actions, &header),
        )
        .map_err(io)?;
        let json = serde_json::json!({ "target": transcripts.0, "oracle": transcripts.1 });
        std::fs::write(
            dir.join(format!("{name}.transcripts.json")),
            serde_json::to_string_pretty(&json).unwrap_or_default(),
        )
        .map_err(io)?;
        Ok(Finding {
            signature: signature.into(),
            file: format!("{name}.toml"),
            sequence_seed,
            drawn_actions: drawn,
            actions: actions.len(),
            reproduced,
            found_after_secs: after.as_secs_f64(),
            after_sequences,
        })
    }

    /// Fills the totals in.
    pub fn finish(&mut self, stats: &Stats) {
        self.secs = stats.secs;
        self.sequences = stats.sequences;
        self.requests = stats.requests;
        let per = |n: u64| match stats.secs > 0.0 {
            true => n as f64 / stats.secs,
            false => 0.0,
        };
        self.sequences_per_sec = per(stats.sequences);
        self.requests_per_sec = per(stats.requests);
        self.oracle_requests = stats.oracle_requests;
        self.oracle_requests_per_sec = per(stats.oracle_requests);
        self.paused_secs = stats.paused_ms as f64 / 1000.0;
        self.target_secs = stats.target_ms as f64 / 1000.0;
        self.oracle_secs = stats.oracle_ms as f64 / 1000.0;
        self.topics_created = stats.topics_created;
        self.topics_retired = stats.topics_retired;
        self.verdict = match self.new_findings() {
            0 => "passed",
            _ => "failed",
        }
        .into();
    }

    /// Adds the live-wire fuzzing's summary (and its run time, when it ran alone).
    pub fn with_frames(&mut self, frames: FramesSummary, secs: f64) {
        self.frames = Some(frames);
        self.secs = self.secs.max(secs);
        self.verdict = match self.new_findings() {
            0 => "passed",
            _ => "failed",
        }
        .into();
    }

    /// New findings of both fuzzers.
    pub fn new_findings(&self) -> usize {
        self.findings.len() + self.frames.as_ref().map_or(0, |f| f.findings.len())
    }

    /// The lines about the live-wire fuzzing, if it ran.
    fn frame_lines(&self) -> Vec<String> {
        let Some(f) = &self.frames else {
            return Vec::new();
        };
        let mut out = vec![format!(
            "{}'s decoders: {} frames ({:.0}/s), {} answered, {} closed without an answer{}{}",
            self.target,
            f.frames,
            f.frames_per_sec,
            f.answered,
            f.closed,
            match f.oracle_agreed {
                0 => String::new(),
                n => format!(", {n} closed on or left unanswered by the oracle too (no finding)"),
            },
            match f.flaky {
                0 => String::new(),
                n => format!(", {n} not shown again (not findings)"),
            }
        )];
        if f.silences_not_judged > 0 {
            out.push(format!(
                "{} silence(s) on WriteTxnMarkers or AddPartitionsToTxn v4+ not judged: no oracle (Apache itself leaves some unanswered; --oracle apache judges them)",
                f.silences_not_judged
            ));
        }
        if f.crashes > 0 {
            let rates = match f.rates(self.secs) {
                Some((before, after)) => {
                    format!("; {before:.0} frames/s before the first crash, {after:.0}/s after")
                }
                None => String::new(),
            };
            out.push(format!(
                "{} stopped answering {} time(s): {} restart(s) ({:.1} s restarting, {:.1} s waiting on crashes in all{}), {} crash(es) not reproduced at first ({} pinned when tried again){rates}",
                self.target, f.crashes, f.restarts, f.restart_secs, f.down_secs,
                match f.instances {
                    0 | 1 => String::new(),
                    n => format!(", summed over {n} instances: {:.0}% of their time", 100.0 * f.restart_secs / (n as f64 * self.secs).max(0.001)),
                },
                f.not_reproduced, f.pinned_on_retry
            ));
        }
        if !f.restarts_why.is_empty() {
            let why: Vec<String> = f
                .restarts_why
                .iter()
                .map(|w| format!("{} x{} ({:.1} s)", w.why, w.restarts, w.secs))
                .collect();
            out.push(format!(
                "restarts of {}, by why: {}",
                self.target,
                why.join("; ")
            ));
        }
        if f.confirmed_in_batches > 0 {
            out.push(format!(
                "{} close(s) and silence(s) confirmed on a freshly started broker in batches, {} restart(s) for that alone (the rest rode on a crash's restart); every other finding confirmed on the running broker",
                f.confirmed_in_batches, f.confirm_restarts
            ));
        }
        if f.avoided > 0 {
            out.push(format!(
                "{} frames not sent: broken as a pinned crash's frame is ({}); {} like them sent all the same, to see the crash still there",
                f.avoided,
                f.avoiding.join("; "),
                f.sampled
            ));
        }
        if let Some(why) = &f.ended_early {
            out.push(format!("the run ended early: {why}"));
        }
        if !f.unpinned.is_empty() {
            out.push(format!(
                "not pinned (suspects, not findings: frames in flight and last words): {}",
                f.unpinned.join(", ")
            ));
        }
        let dir = std::path::Path::new(&self.findings_dir);
        for x in &f.findings {
            out.push(format!(
                "FINDING {}: {} (frame {}, after {:.0} s; seen {} time(s) on {})",
                x.file,
                x.signature,
                x.frame_number,
                x.found_after_secs,
                x.seen,
                x.seen_on.join(", ")
            ));
            out.push(format!(
                "  reproduces {}; {} bytes as drawn, {} as written{}",
                x.reproduces,
                x.found_bytes,
                x.bytes,
                x.what_matters()
            ));
            out.push(format!(
                "  replay: {}",
                x.replay_command(dir, &f.replay_target)
            ));
        }
        out
    }

    /// The terminal summary.
    pub fn terminal(&self) -> String {
        let mut out = String::new();
        if self.frames.is_some() {
            let _ = writeln!(out, "seed {}, {:.0} s", self.seed, self.secs);
        }
        for line in self.frame_lines() {
            let _ = writeln!(out, "{line}");
        }
        let sequences_ran = self.sequences > 0 || self.frames.is_none();
        if sequences_ran {
            let shard = match self.shard.as_str() {
                "1/1" => String::new(),
                s => format!(" shard {s}"),
            };
            let _ = writeln!(
                out,
                "{} against {}, seed {}{shard}: {} sequences in {:.0} s ({:.1}/s), {} requests to {} ({:.0}/s), {} to {} ({:.0}/s); {:.0} s of the sequences' time in fixed pauses",
                self.target,
                self.oracle,
                self.seed,
                self.sequences,
                self.secs,
                self.sequences_per_sec,
                self.requests,
                self.target,
                self.requests_per_sec,
                self.oracle_requests,
                self.oracle,
                self.oracle_requests_per_sec,
                self.paused_secs
            );
            if self.sequences > 0 {
                let each = |secs: f64| 1000.0 * secs / self.sequences as f64;
                let _ = writeln!(
                    out,
                    "a sequence took {:.0} ms on {} and {:.0} ms on {} ({:.0} ms of it in fixed pauses); {} topics created on each, {} retired",
                    each(self.target_secs),
                    self.target,
                    each(self.oracle_secs),
                    self.oracle,
                    each(self.paused_secs),
                    self.topics_created,
                    self.topics_retired
                );
            }
        }
        for (id, n) in &self.documented {
            let _ = writeln!(out, "documented {id}: matched {n} times");
        }
        if self.flaky > 0 {
            let _ = writeln!(
                out,
                "{} sequences showed a difference a second run did not (timing; not findings)",
                self.flaky
            );
        }
        for f in &self.findings {
            let _ = writeln!(
                out,
                "FINDING {}: {} ({} of {} actions, after {:.0} s){}",
                f.file,
                f.signature,
                f.actions,
                f.drawn_actions,
                f.found_after_secs,
                if f.reproduced {
                    ""
                } else {
                    "; the shrunk sequence did not show it again"
                }
            );
        }
        let _ = writeln!(
            out,
            "{}: {} new findings in {}",
            match self.new_findings() {
                0 => "PASSED",
                _ => "FAILED",
            },
            self.new_findings(),
            self.findings_dir
        );
        out
    }

    /// JUnit XML for CI: a failed test case per new finding of either fuzzer, or one passed
    /// case.
    pub fn junit(&self) -> String {
        let mut cases: Vec<Case> = self
            .findings
            .iter()
            .map(|f| (&f.file, &f.signature))
            .chain(
                self.frames
                    .iter()
                    .flat_map(|w| w.findings.iter().map(|f| (&f.file, &f.signature))),
            )
            .map(|(file, signature)| Case::failed("fuzz", file, signature, ""))
            .collect();
        if cases.is_empty() {
            cases.push(Case::passed("fuzz", "no new finding"));
        }
        crate::report::junit::suite("kconform fuzz", &cases)
    }

    /// The report as JSON.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Markdown for a pull-request comment or a morning's read.
    pub fn markdown(&self) -> String {
        let mut out = format!(
            "### kconform fuzz: {} against {}\n\nseed {}, {:.0} s",
            self.target, self.oracle, self.seed, self.secs
        );
        if self.sequences > 0 || self.frames.is_none() {
            let _ = write!(
                out,
                ": {} sequences ({:.1}/s), {} requests ({:.0}/s)",
                self.sequences, self.sequences_per_sec, self.requests, self.requests_per_sec
            );
        }
        out.push_str("\n\n");
        // The summary lines; each frame finding is a row of the table below instead.
        for line in self
            .frame_lines()
            .iter()
            .filter(|l| !l.starts_with("FINDING ") && !l.starts_with("  "))
        {
            let _ = writeln!(out, "- {}", line.replace('|', "\\|"));
        }
        if let Some(frames) = self.frames.as_ref().filter(|f| !f.findings.is_empty()) {
            out.push_str("\n| frame finding | reproduces | bytes | what matters | seen | replay |\n|---|---|---|---|---|---|\n");
            let dir = std::path::Path::new(&self.findings_dir);
            for f in &frames.findings {
                let cell = |t: &str| t.replace('|', "\\|");
                let _ = writeln!(
                    out,
                    "| {} | {} | {} of {} | {} | {} on {} | `{}` |",
                    cell(&f.signature),
                    f.reproduces,
                    f.bytes,
                    f.found_bytes,
                    cell(&f.matters.join("; ")),
                    f.seen,
                    f.seen_on.join(", "),
                    f.replay_command(dir, &frames.replay_target)
                );
            }
        }
        if !self.findings.is_empty() {
            out.push_str("\n| finding | file | actions |\n|---|---|---|\n");
            for f in &self.findings {
                let _ = writeln!(
                    out,
                    "| {} | `{}` | {} of {} |",
                    f.signature.replace('|', "\\|"),
                    f.file,
                    f.actions,
                    f.drawn_actions
                );
            }
        }
        let _ = writeln!(out, "\n**{}**", self.verdict.to_uppercase());
        out
    }
}

crate::report::forms::report_forms!(FuzzReport);
