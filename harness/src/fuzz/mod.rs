//! `kconform fuzz`: stateful differential fuzzing. Sequences drawn from a model of the
//! transaction state machine ([`model`]) run on the target under test and on an oracle
//! (Apache); their answers are normalised and diffed as a scenario's are, and every difference
//! goes through the ledger. A finding is a difference no ledger entry's values match (an
//! answer that differs, does not decode, or never comes) before the first documented
//! deviation of its sequence (what follows a documented deviation is its consequence). Each
//! finding is confirmed by a second run, shrunk to the fewest actions that still show it,
//! and written once per distinct difference as a scenario file that `kconform run
//! --scenarios <findings>` replays as it is.

pub mod campaign;
pub mod decoders;
mod gate;
pub mod html;
pub mod merge;
pub mod model;
pub mod pool;
pub mod report;
pub mod resume;
pub mod script;
pub mod shard;
pub mod wire;

use std::collections::BTreeSet;

use futures::StreamExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::compare::diff::{self, DiffRow};
use crate::compare::ledger::Ledger;
use crate::data::Source;
use crate::run;
use crate::scenario::Scenario;
use crate::targets::Running;
use crate::transcript::{Outcome, Transcript};
use model::{Action, Rng};
use report::FuzzReport;

/// Why fuzzing could not go on.
#[derive(Debug, thiserror::Error)]
pub enum FuzzError {
    /// The findings directory.
    #[error("findings directory {0}: {1}")]
    Findings(String, std::io::Error),
    /// A file the findings need (a fragment, the ledger) could not be read.
    #[error("{0}")]
    Source(String),
    /// The target cannot be fuzzed (it does not answer, or serves none of the six APIs).
    #[error("{0}")]
    Target(String),
    /// A drawn sequence did not load as a scenario: a bug of the generator.
    #[error("a drawn sequence is no scenario ({0}); seed {1}")]
    Generator(String, u64),
}

/// How the run is told to go.
#[derive(Debug, Clone)]
pub struct FuzzOptions {
    /// How long to fuzz.
    pub duration: Duration,
    /// The seed every sequence is drawn from.
    pub seed: u64,
    /// The most actions a sequence has.
    pub max_actions: usize,
    /// Where findings are written (with the fragments and the ledger they replay with).
    pub findings: PathBuf,
    /// Deadline of every network wait.
    pub deadline: Duration,
    /// The most runs spent shrinking one finding.
    pub shrink_runs: usize,
    /// Sequences run at once (each has its own names, so they share the brokers).
    pub jobs: usize,
    /// End the run once this many new findings are written (none: run the duration).
    pub stop_after_findings: Option<usize>,
    /// The number of the first sequence drawn from the seed, counted in the shard's own (a
    /// resumed run goes on where the last one stopped, [`resume`]).
    pub first_sequence: u64,
    /// Which share of the seed's inputs this run draws (`--shard K/N`; 1/1: all).
    pub shard: shard::Shard,
    /// Draw only the sequences numbered below this in the whole stream (a shard its share of
    /// them), then end: a run of a fixed set of inputs, however fast the brokers are.
    pub sequences: Option<u64>,
}

/// Counters shown as the run goes.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Sequences run (on both targets).
    pub sequences: u64,
    /// Requests sent to the target under test.
    pub requests: u64,
    /// Requests sent to the oracle.
    pub oracle_requests: u64,
    /// Milliseconds the sequences spent in fixed pauses (on the target; the oracle's are the
    /// same steps).
    pub paused_ms: u64,
    /// Milliseconds the sequences took on the target under test, summed over sequences.
    pub target_ms: u64,
    /// Milliseconds the sequences took on the oracle, summed over sequences.
    pub oracle_ms: u64,
    /// Topics the sequences ran on, created on both brokers ([`pool`]).
    pub topics_created: u64,
    /// Topics retired because a sequence left them unfit for the next.
    pub topics_retired: u64,
    /// Distinct findings.
    pub findings: usize,
    /// Seconds since the start.
    pub secs: f64,
}

impl Stats {
    /// Adds what one run of a sequence showed.
    fn count(&mut self, shown: &Shown) {
        self.sequences += 1;
        self.requests += shown.requests;
        self.oracle_requests += shown.oracle_requests;
        self.paused_ms += shown.paused_ms;
        self.target_ms += shown.took_ms.0;
        self.oracle_ms += shown.took_ms.1;
    }

    /// The counters as a progress line: "120 sequences (6.4/s), 1440 requests (72/s), 0
    /// findings".
    pub fn line(&self) -> String {
        let per = |n: u64| n as f64 / self.secs.max(0.001);
        format!(
            "{} sequences ({:.1}/s), {} requests ({:.0}/s), {} findings",
            self.sequences,
            per(self.sequences),
            self.requests,
            per(self.requests),
            self.findings
        )
    }
}

pub use crate::report::progress::Progress;

/// The signature of the undocumented differences of one step: what distinguishes one finding
/// from another (the step's API and version, each field with both values), not where in a
/// sequence it showed.
fn signature(rows: &[&DiffRow]) -> String {
    let Some(first) = rows.first() else {
        return String::new();
    };
    let mut fields: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "{}: {} | {}",
                r.path,
                diff::text(&r.left),
                diff::text(&r.right)
            )
        })
        .collect();
    fields.sort();
    format!(
        "{} v{} {}",
        first.api,
        first.version.map_or("-".into(), |v| v.to_string()),
        fields.join("; ")
    )
}

/// What one run of a sequence showed.
#[derive(Debug, Default)]
struct Shown {
    /// Signatures of the findings, in step order.
    findings: Vec<String>,
    /// Ledger entries whose values the differences matched.
    documented: Vec<String>,
    /// Requests sent to the target under test.
    requests: u64,
    /// Requests sent to the oracle.
    oracle_requests: u64,
    /// Milliseconds spent in fixed pauses on the target.
    paused_ms: u64,
    /// Milliseconds the sequence took on the target under test, and on the oracle.
    took_ms: (u64, u64),
}

/// The findings of one run on targets of `brokers` brokers: undocumented rows up to the first
/// step with a documented one. A sequence is in no entry's scenarios, so an entry documents
/// the values it shows on targets of that size ([`Ledger::documents_on`]).
fn judge(ledger: &Ledger, brokers: usize, left: &Transcript, right: &Transcript) -> Shown {
    let order = |step: &str| left.steps.iter().position(|s| s.step == step);
    // The clean-up after the read-back readies the topic for the next sequence; it is not
    // judged.
    let rows: Vec<DiffRow> = diff::diff(left, right)
        .into_iter()
        .filter(|r| !r.step.starts_with(script::CLEANUP))
        .collect();
    let mut classified: Vec<(Option<usize>, &DiffRow, Option<String>)> = rows
        .iter()
        .map(|r| (order(&r.step), r, ledger.documents_on(r, brokers)))
        .collect();
    classified.sort_by_key(|(i, _, _)| *i);
    let first_documented = classified
        .iter()
        .find(|(_, _, e)| e.is_some())
        .map(|(i, _, _)| *i);
    let sent = |t: &Transcript| {
        t.steps
            .iter()
            .filter(|s| !matches!(s.outcome, Outcome::Slept(_) | Outcome::Skipped(_)))
            .count() as u64
    };
    let mut shown = Shown {
        requests: sent(left),
        oracle_requests: sent(right),
        paused_ms: left
            .steps
            .iter()
            .map(|s| match s.outcome {
                Outcome::Slept(ms) => ms,
                _ => 0,
            })
            .sum(),
        ..Default::default()
    };
    let mut by_step: Vec<(Option<usize>, Vec<&DiffRow>)> = Vec::new();
    for (i, row, entry) in classified {
        match entry {
            Some(id) => shown.documented.push(id),
            None if first_documented.is_none_or(|d| i <= d) => match by_step.last_mut() {
                Some((step, rows)) if *step == i => rows.push(row),
                _ => by_step.push((i, vec![row])),
            },
            None => {}
        }
    }
    shown.findings = by_step.iter().map(|(_, rows)| signature(rows)).collect();
    shown
}

/// The findings (signatures) one run of `scenario` shows on `target` against `oracle`: how a
/// finding written earlier is checked again (on a fixed build, say).
pub async fn findings_of(
    scenario: &Scenario,
    target: &Running,
    oracle: &Running,
    ledger: &Ledger,
    deadline: Duration,
) -> Vec<String> {
    let (left, right) = tokio::join!(
        run::run(scenario, target, deadline),
        run::run(scenario, oracle, deadline)
    );
    judge(ledger, target.brokers, &left, &right).findings
}

/// The fuzzer's working state: the targets, the ledger, where sequences are written.
struct Fuzzer<'a> {
    target: &'a Running,
    oracle: &'a Running,
    ledger: &'a Ledger,
    work: PathBuf,
    deadline: Duration,
}

impl Fuzzer<'_> {
    /// Runs `actions` on both targets: what they showed, and the transcripts. On the topic of
    /// `slot` in `pool`, when given (a drawn sequence); else on topics of its own, as its
    /// finding file will replay (a finding confirmed and shrunk).
    async fn check(
        &self,
        actions: &[Action],
        seed: u64,
        slot: usize,
        pool: Option<&pool::TopicPool>,
    ) -> Result<(Shown, Transcript, Transcript), FuzzError> {
        let text = script::scenario(actions, "");
        let name = match pool {
            Some(pool) => pool.scenario_name(slot),
            None => format!("sequence-{slot}"),
        };
        let file = format!("{name}.toml");
        std::fs::write(self.work.join(&file), &text)
            .map_err(|e| FuzzError::Findings(self.work.display().to_string(), e))?;
        let scenario = Scenario::read(&Source::Dir(self.work.clone()), &file)
            .map_err(|e| FuzzError::Generator(e.to_string(), seed));
        // Read once; a slot's next generation writes a file of another name.
        let _ = std::fs::remove_file(self.work.join(&file));
        let scenario = scenario?;
        let ((left, left_ms), (right, right_ms)) = match pool {
            Some(pool) => {
                pool.provide(&scenario, slot, self.target, self.oracle, self.deadline)
                    .await?;
                tokio::join!(
                    timed(run::run_provisioned(&scenario, self.target, self.deadline)),
                    timed(run::run_provisioned(&scenario, self.oracle, self.deadline))
                )
            }
            None => tokio::join!(
                timed(run::run(&scenario, self.target, self.deadline)),
                timed(run::run(&scenario, self.oracle, self.deadline))
            ),
        };
        let mut shown = judge(self.ledger, self.target.brokers, &left, &right);
        shown.took_ms = (left_ms, right_ms);
        Ok((shown, left, right))
    }

    /// Runs a new finding's sequence again (a difference of timing alone is no finding),
    /// shrinks it and writes it; `None` when the second run did not show it (counted flaky).
    #[allow(clippy::too_many_arguments)]
    async fn confirm_and_write(
        &self,
        report: &mut FuzzReport,
        stats: &mut Stats,
        options: &FuzzOptions,
        started: Instant,
        seed: u64,
        actions: Vec<Action>,
        sig: &str,
    ) -> Result<Option<report::Finding>, FuzzError> {
        let (again, _, _) = self.check(&actions, seed, 0, None).await?;
        stats.count(&again);
        if !again.findings.iter().any(|f| f == sig) {
            tracing::debug!(seed, signature = sig, "a second run did not show it");
            report.flaky += 1;
            return Ok(None);
        }
        let shrunk = self
            .shrink(actions.clone(), sig, seed, options.shrink_runs)
            .await?;
        let (last, left, right) = self.check(&shrunk, seed, 0, None).await?;
        report
            .write_finding(
                &options.findings,
                sig,
                seed,
                actions.len(),
                &shrunk,
                started.elapsed(),
                stats.sequences,
                (&left, &right),
                last.findings.iter().any(|f| f == sig),
            )
            .map(Some)
    }

    /// The fewest actions (removing one at a time) that still show `signature`, within
    /// `budget` runs.
    async fn shrink(
        &self,
        mut actions: Vec<Action>,
        signature: &str,
        seed: u64,
        budget: usize,
    ) -> Result<Vec<Action>, FuzzError> {
        let mut runs = 0;
        loop {
            let mut changed = false;
            let mut i = actions.len();
            while i > 0 && runs < budget {
                i -= 1;
                if actions.len() == 1 {
                    break;
                }
                let mut candidate = actions.clone();
                candidate.remove(i);
                runs += 1;
                // A candidate that no longer loads (an action needing the init removed) is no
                // smaller finding.
                match self.check(&candidate, seed, 0, None).await {
                    Ok((shown, _, _)) if shown.findings.iter().any(|s| s == signature) => {
                        actions = candidate;
                        changed = true;
                    }
                    Ok(_) | Err(FuzzError::Generator(..)) => {}
                    Err(e) => return Err(e),
                }
            }
            if !changed || runs >= budget {
                return Ok(actions);
            }
        }
    }
}

/// What `run` gives, and how many milliseconds it took.
async fn timed<F: std::future::Future>(run: F) -> (F::Output, u64) {
    let began = Instant::now();
    let out = run.await;
    (out, began.elapsed().as_millis() as u64)
}

/// FNV-1a of a finding's signature, which names its files: the same name on every
/// toolchain (the standard library's hasher may change between releases).
pub(crate) fn stable_hash(signature: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in signature.bytes() {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    h
}

/// The signatures of the findings already in `dir` (a `# signature: ` line in each finding's
/// `.toml` or `.txt`; the broker's log a run keeps there is not read).
fn known_signatures(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = e.path();
        let finding = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("finding-") || n.starts_with("frame-"));
        let text_file = matches!(
            path.extension().and_then(|x| x.to_str()),
            Some("toml" | "txt")
        );
        if !(finding && text_file) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        out.extend(
            text.lines()
                .filter_map(|l| l.strip_prefix("# signature: "))
                .map(str::to_owned),
        );
    }
    out
}

/// Makes `dir` a scenario directory the findings replay from: the fragments of the preamble,
/// the ledger and the field classes, copied from `scenarios`.
fn prepare(dir: &Path, scenarios: &Source) -> Result<PathBuf, FuzzError> {
    let io = |e| FuzzError::Findings(dir.display().to_string(), e);
    let work = dir.join(".work");
    std::fs::create_dir_all(work.join("fragments")).map_err(io)?;
    std::fs::create_dir_all(dir.join("fragments")).map_err(io)?;
    let mut files: Vec<String> = script::PREAMBLE
        .iter()
        .map(|f| format!("fragments/{f}.toml"))
        .collect();
    // What `kconform run --scenarios DIR` reads beside the scenarios: the ledger and the
    // classes of fields its report groups by.
    files.push("deviations.toml".into());
    files.push(crate::compare::causes::FIELD_CLASSES.into());
    for f in files {
        let text = scenarios
            .read(&f)
            .map_err(|e| FuzzError::Source(format!("{}: {}", e.place, e.reason)))?;
        std::fs::write(dir.join(&f), &text).map_err(io)?;
        std::fs::write(work.join(&f), &text).map_err(io)?;
    }
    Ok(work)
}

/// Fuzzes `target` against `oracle` until the duration passes or `stop` is set.
pub async fn run(
    target: &Running,
    oracle: &Running,
    ledger: &Ledger,
    scenarios: &Source,
    options: &FuzzOptions,
    progress: Arc<dyn Progress>,
    stop: Arc<AtomicBool>,
) -> Result<FuzzReport, FuzzError> {
    let work = prepare(&options.findings, scenarios)?;
    let fuzzer = Fuzzer {
        target,
        oracle,
        ledger,
        work,
        deadline: options.deadline,
    };
    let mut known = known_signatures(&options.findings);
    let started = Instant::now();
    let mut seeds = shard::Seeds::new(options.seed);
    let mut drawn = options.first_sequence;
    let within = |local: u64| {
        options
            .sequences
            .is_none_or(|bound| options.shard.global(local) < bound)
    };
    let mut stats = Stats::default();
    let mut report = FuzzReport::new(&target.name, &oracle.name, options);
    let enough = |found: usize| options.stop_after_findings.is_some_and(|n| found >= n);
    let jobs = options.jobs.max(1);
    // A window of `jobs` sequences in flight: each that ends makes room for the next, so a
    // sequence that sleeps past a transaction's timeout holds up no other. Each is drawn from a
    // seed of its own (the one a finding names, so that it can be drawn again), and runs as
    // `sequence-<slot>` with a slot no other in flight holds.
    // Slot 0 is the confirming and shrinking's, on topics of their own.
    let pool = pool::TopicPool::new(jobs + 1);
    let mut in_flight = futures::stream::FuturesUnordered::new();
    let mut free_slots: Vec<usize> = (0..jobs).rev().collect();
    let mut running: BTreeSet<u64> = BTreeSet::new();
    let mut pending: Vec<(u64, Vec<Action>, String)> = Vec::new();
    let mut last_shown = Instant::now();
    loop {
        let drawing = pending.is_empty()
            && within(drawn)
            && started.elapsed() < options.duration
            && !stop.load(Ordering::SeqCst)
            && !enough(report.findings.len());
        while drawing && within(drawn) && !free_slots.is_empty() {
            let slot = free_slots.pop().expect("checked");
            let seed = seeds.of(options.shard.global(drawn));
            let mut draw = Rng::new(seed);
            let len = 1 + draw.below(options.max_actions as u64) as usize;
            let actions = model::sequence(&mut draw, len);
            let number = drawn;
            drawn += 1;
            running.insert(number);
            let fuzzer = &fuzzer;
            let pool = &pool;
            in_flight.push(async move {
                let ran = fuzzer.check(&actions, seed, slot + 1, Some(pool)).await;
                (number, slot, seed, actions, ran)
            });
        }
        let Some((number, slot, seed, actions, ran)) = in_flight.next().await else {
            // Nothing in flight: findings to look at, or the end.
            if pending.is_empty() {
                break;
            }
            for (seed, actions, sig) in std::mem::take(&mut pending) {
                if let Some(finding) = fuzzer
                    .confirm_and_write(
                        &mut report,
                        &mut stats,
                        options,
                        started,
                        seed,
                        actions,
                        &sig,
                    )
                    .await?
                {
                    progress.finding(&finding.file, &finding.signature);
                    known.insert(sig);
                    report.findings.push(finding);
                    stats.findings = report.findings.len();
                }
            }
            continue;
        };
        free_slots.push(slot);
        running.remove(&number);
        let (shown, left, right) = ran?;
        stats.count(&shown);
        // A finding's topic, or one a broker left unquiet, carries nothing to the next.
        if !shown.findings.is_empty() || !pool::fit_for_reuse(&left, &right) {
            pool.retire(slot + 1);
        }
        stats.topics_created = pool.created() as u64;
        stats.topics_retired = pool.retired();
        report.count_documented(&shown.documented);
        // A new finding is confirmed and shrunk once the sequences in flight have ended (so
        // that none waits on the brokers mid-way meanwhile), each signature once.
        if let Some(sig) = shown.findings.iter().find(|s| !known.contains(*s)) {
            if !pending.iter().any(|(_, _, p)| p == sig) {
                pending.push((seed, actions, sig.clone()));
            }
        }
        if last_shown.elapsed() >= Duration::from_millis(250) || in_flight.is_empty() {
            last_shown = Instant::now();
            stats.secs = started.elapsed().as_secs_f64();
            progress.counters("sequences", &stats.line());
            // A resumed run starts at the first sequence that has not ended.
            resume::save(
                &options.findings,
                "sequences",
                options.shard,
                resume::Position {
                    seed: options.seed,
                    next: running.first().copied().unwrap_or(drawn),
                },
            )?;
        }
    }
    stats.secs = started.elapsed().as_secs_f64();
    report.finish(&stats);
    pool.delete_all(target, oracle, options.deadline).await;
    Ok(report)
}

#[cfg(test)]
mod tests {
    /// FNV-1a's published value for "a": finding names do not depend on the toolchain.
    #[test]
    fn finding_names_come_from_a_fixed_hash() {
        assert_eq!(super::stable_hash("a"), 0xe40c_292c);
    }
}
