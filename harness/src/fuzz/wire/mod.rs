//! Live-wire fuzzing of a target's decoders: valid request frames of the six transaction APIs
//! at every version the target serves that an Apache release kconform knows has (3.7's, and
//! 4.4.0's past them: EndTxn v5 on a 4.x broker) ([`seeds`]), mutated structure-aware and byte-wise
//! ([`mutate`]), sent through its network port one at a time. A broker may close a connection
//! on a malformed frame (Apache does), but a finding is:
//! - an answer that is not an exact response to the request ([`crate::wire::frame::decode`]), or
//!   that carries another frame's correlation id;
//! - an answer to a frame naming an API version the target does not serve (Apache closes);
//! - a connection closed without an answer to a *well-formed* request of a version the target
//!   serves ([`shape`]; Apache answers every one): sent again to be sure, and confirmed on the
//!   oracle when there is one;
//! - no answer and no close within the deadline, to a transaction API's frame (the oracle,
//!   when there is one, must answer it in time for this to count);
//! - a target that then refuses a fresh connection's ApiVersions: it stopped accepting or
//!   closes every connection (the run ends there).
//!
//! Each finding is written once per signature as the raw frame (`frame-*.bin`, size prefix
//! included) beside a text file that says what happened and the one-line replay command
//! (`kconform replay-frame FILE --target ...`, [`replay`]).

pub mod mutate;
pub mod seeds;
pub mod shape;

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kafka_protocol::messages::ApiKey;
use serde::Serialize;

use super::model::Rng;
use super::{FuzzError, Progress};
use crate::targets::Running;
use crate::wire::client::{ClientError, Connection};
use crate::wire::error_codes;
use crate::wire::frame::Parser;

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
    /// Seconds since the start.
    pub secs: f64,
}

impl FrameStats {
    /// The counters as a progress line: "5120 frames (850/s), 0 findings".
    pub fn line(&self) -> String {
        format!(
            "{} frames ({:.0}/s), {} findings",
            self.frames,
            self.frames as f64 / self.secs.max(0.001),
            self.findings
        )
    }
}

/// The kinds of finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// The answer does not decode as the response to the request.
    Undecodable,
    /// The answer carries another correlation id.
    WrongCorrelation,
    /// An answer to a version the target does not serve, or to an API no one knows.
    AnsweredUnknown,
    /// A well-formed request of a served version was not answered; the connection closed.
    ClosedWellFormed,
    /// Neither an answer nor a close within the deadline.
    Silent,
    /// A fresh connection's ApiVersions is refused afterwards.
    Unhealthy,
}

impl Kind {
    /// The word a signature starts with.
    pub fn word(self) -> &'static str {
        match self {
            Kind::Undecodable => "undecodable answer",
            Kind::WrongCorrelation => "wrong correlation id",
            Kind::AnsweredUnknown => "answered an unknown version",
            Kind::ClosedWellFormed => "closed on a well-formed request",
            Kind::Silent => "silent",
            Kind::Unhealthy => "stopped answering",
        }
    }
}

/// What came back for one frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Happened {
    /// An answer frame (without its size).
    Answered(Vec<u8>),
    /// The connection closed without an answer.
    Closed,
    /// Nothing within the deadline.
    Silent(Duration),
    /// An answer that could not be read whole: cut short, or a size past the limit.
    Unreadable(String),
    /// No connection could be made.
    Unreachable(String),
}

impl Happened {
    /// In words.
    pub fn describe(&self) -> String {
        match self {
            Happened::Answered(a) => format!("answered ({} bytes)", a.len()),
            Happened::Closed => "closed the connection without an answer".into(),
            Happened::Silent(d) => format!("neither answered nor closed within {d:?}"),
            Happened::Unreadable(why) => format!("answered unreadably: {why}"),
            Happened::Unreachable(why) => format!("could not be reached: {why}"),
        }
    }
}

/// A frame's finding: its kind, its signature (kind, API and version, and what was wrong),
/// and the details.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    /// The kind.
    pub kind: Kind,
    /// What distinguishes it from other findings.
    pub signature: String,
    /// The details (the malformed answer's diagnosis).
    pub detail: String,
}

/// `API vN` of a frame's header, as far as it has one.
fn named(frame: &[u8]) -> String {
    match shape::header(frame) {
        Some(h) => format!("{} v{}", error_codes::api_name(h.key), h.version),
        None => format!("a {}-byte frame", frame.len()),
    }
}

/// Judges what the target did with `frame`, given the versions it serves ((key, min, max))
/// and the parser of the release it answers as (a close on a frame that parser refuses is
/// no finding). Pure: the health of the target afterwards is checked apart (`healthy`).
pub fn judge(
    frame: &[u8],
    happened: &Happened,
    served: &[(i16, i16, i16)],
    parser: Parser,
) -> Option<Judged> {
    let finding = |kind: Kind, detail: String| {
        let signature = match kind {
            Kind::Undecodable => {
                let field = detail.split(':').next().unwrap_or_default();
                format!("{}: {} ({field})", kind.word(), named(frame))
            }
            _ => format!("{}: {}", kind.word(), named(frame)),
        };
        Some(Judged {
            kind,
            signature,
            detail,
        })
    };
    match happened {
        Happened::Answered(answer) => {
            let h = shape::header(frame)?;
            let range = served.iter().find(|(k, _, _)| *k == h.key);
            let serves = range.is_some_and(|&(_, lo, hi)| (lo..=hi).contains(&h.version));
            let api = ApiKey::try_from(h.key).ok();
            // KIP-511: an ApiVersions of a version the broker lacks is answered in v0.
            let version = match (api, serves) {
                (Some(ApiKey::ApiVersions), false) => 0,
                _ => h.version,
            };
            let Some(api) = api.filter(|a| serves || *a == ApiKey::ApiVersions) else {
                return finding(
                    Kind::AnsweredUnknown,
                    format!(
                        "answered a frame naming API key {} v{}, which it does not serve (Apache closes the connection)",
                        h.key, h.version
                    ),
                );
            };
            match crate::wire::frame::decode(api, version, h.correlation, answer) {
                Ok(_) => None,
                Err(m) if m.field.as_deref() == Some("header.correlation_id") => {
                    finding(Kind::WrongCorrelation, m.summary())
                }
                Err(m) => finding(
                    Kind::Undecodable,
                    format!("{}: {}", m.field.clone().unwrap_or_default(), m.summary()),
                ),
            }
        }
        Happened::Closed => {
            let p = shape::parse_as(frame, parser).ok()?;
            let serves = served
                .iter()
                .any(|&(k, lo, hi)| k == p.api as i16 && (lo..=hi).contains(&p.version));
            serves.then_some(())?;
            finding(
                Kind::ClosedWellFormed,
                "the frame is a well-formed request of a version the target serves, which Apache answers".into(),
            )
        }
        // Silence is no finding for the other APIs (an acks=0 Produce is not answered, a
        // Fetch may wait for records): their frames come from a mutated API key.
        Happened::Silent(d) => {
            transaction_api(frame)?;
            finding(Kind::Silent, format!("no answer and no close within {d:?}"))
        }
        Happened::Unreadable(why) => finding(Kind::Undecodable, format!("size: {why}")),
        Happened::Unreachable(_) => None,
    }
}

/// The transaction API a frame's header names, if it names one.
fn transaction_api(frame: &[u8]) -> Option<ApiKey> {
    let key = shape::header(frame)?.key;
    seeds::APIS.into_iter().find(|a| *a as i16 == key)
}

/// How long to wait for an answer to `frame`: `deadline` for the six transaction APIs, at
/// most a second for the others (whose silence is no finding).
fn wait_for(frame: &[u8], deadline: Duration) -> Duration {
    match transaction_api(frame) {
        Some(_) => deadline,
        None => deadline.min(Duration::from_secs(1)),
    }
}

/// Sends `frame` on `conn` (connecting first when there is none); the connection is kept
/// only while it answers.
async fn exchange(
    conn: &mut Option<Connection>,
    addr: SocketAddr,
    frame: &[u8],
    deadline: Duration,
) -> Happened {
    if conn.is_none() {
        match Connection::connect(addr, deadline).await {
            Ok(c) => *conn = Some(c),
            Err(e) => return Happened::Unreachable(e.to_string()),
        }
    }
    let Some(c) = conn.as_mut() else {
        return Happened::Unreachable("no connection".into());
    };
    let happened = match c.send_raw(frame, wait_for(frame, deadline)).await {
        Ok(answer) => Happened::Answered(answer),
        Err(ClientError::Closed) | Err(ClientError::Io(_)) => Happened::Closed,
        Err(ClientError::Timeout(d)) => Happened::Silent(d),
        Err(e) => Happened::Unreadable(e.to_string()),
    };
    if !matches!(happened, Happened::Answered(_)) {
        *conn = None;
    }
    happened
}

/// After `frame` went unanswered: the "stopped answering" finding when the target then
/// refuses ApiVersions on a fresh connection ([`Running::reachable`]); `None` when it answers,
/// or when `frame` was answered (nothing to check).
async fn unhealthy(
    target: &Running,
    frame: &[u8],
    happened: &Happened,
    deadline: Duration,
) -> Option<Judged> {
    if matches!(happened, Happened::Answered(_)) {
        return None;
    }
    let why = target.reachable(deadline).await.err()?;
    Some(Judged {
        kind: Kind::Unhealthy,
        signature: format!("{}: after {}", Kind::Unhealthy.word(), named(frame)),
        detail: format!(
            "after this frame ({}), a fresh connection's ApiVersions got: {why}",
            happened.describe()
        ),
    })
}

/// One distinct finding, as written.
#[derive(Debug, Clone, Serialize)]
pub struct FrameFinding {
    /// What it is: kind, API and version (and the field, for an undecodable answer).
    pub signature: String,
    /// The kind.
    pub kind: Kind,
    /// The raw frame's file (in the findings directory), size prefix included.
    pub file: String,
    /// What happened, in words.
    pub detail: String,
    /// What the mutations did to the seed frame.
    pub mutations: Vec<String>,
    /// Seconds into the run when it was found.
    pub found_after_secs: f64,
    /// The frame's number in the run (drawn from the seed and this number).
    pub frame_number: u64,
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
    /// Findings a second sending of the frame did not show.
    pub flaky: u64,
    /// The next frame number (where a resumed run goes on).
    pub next_frame: u64,
    /// Whether the run ended because the target stopped answering.
    pub target_died: bool,
    /// New findings.
    pub findings: Vec<FrameFinding>,
}

/// Writes the raw frame and its description; the finding.
#[allow(clippy::too_many_arguments)]
fn write_finding(
    dir: &Path,
    target: &str,
    seed: u64,
    judged: &Judged,
    frame: &[u8],
    mutations: Vec<String>,
    after: Duration,
    number: u64,
) -> Result<FrameFinding, FuzzError> {
    let name = format!("frame-{:08x}", super::stable_hash(&judged.signature));
    let io = |e| FuzzError::Findings(dir.display().to_string(), e);
    let mut raw = (frame.len() as u32).to_be_bytes().to_vec();
    raw.extend_from_slice(frame);
    std::fs::write(dir.join(format!("{name}.bin")), &raw).map_err(io)?;
    let text = format!(
        "# signature: {}\n# {}\n# found by kconform fuzz --mode frames --seed {seed} (frame {number}) on {target}, after {:.1} s\n# mutations of the seed frame: {}\n# replay: kconform replay-frame {} --target {target}\n{}\n",
        judged.signature,
        judged.detail,
        after.as_secs_f64(),
        match mutations.is_empty() {
            true => "none (the seed itself)".to_owned(),
            false => mutations.join("; "),
        },
        dir.join(format!("{name}.bin")).display(),
        crate::wire::frame::hex(frame),
    );
    std::fs::write(dir.join(format!("{name}.txt")), text).map_err(io)?;
    Ok(FrameFinding {
        signature: judged.signature.clone(),
        kind: judged.kind,
        file: format!("{name}.bin"),
        detail: judged.detail.clone(),
        mutations,
        found_after_secs: after.as_secs_f64(),
        frame_number: number,
    })
}

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

/// What the workers share.
struct Shared {
    known: BTreeSet<String>,
    summary: FramesSummary,
    stats: FrameStats,
}

/// Fuzzes `target`'s decoders until the duration passes, `stop` is set, enough findings are
/// written, or the target stops answering. `oracle`, when given, confirms that a well-formed
/// frame the target closed on is one Apache answers.
pub async fn run(
    target: &Running,
    oracle: Option<&Running>,
    options: &WireOptions,
    progress: Arc<dyn Progress>,
    stop: Arc<AtomicBool>,
) -> Result<FramesSummary, FuzzError> {
    let io = |e| FuzzError::Findings(options.findings.display().to_string(), e);
    std::fs::create_dir_all(&options.findings).map_err(io)?;
    let raw_served = target
        .served(options.deadline)
        .await
        .map_err(|e| FuzzError::Target(e.to_string()))?;
    let served: Vec<(ApiKey, i16, i16)> = seeds::APIS
        .iter()
        .filter_map(|&api| {
            let &(_, lo, hi) = raw_served.iter().find(|(k, _, _)| *k == api as i16)?;
            let hi = hi.min(shape::highest_version(api));
            (lo <= hi).then_some((api, lo.max(0), hi))
        })
        .collect();
    if served.is_empty() {
        return Err(FuzzError::Target(format!(
            "{} serves none of the six transaction APIs",
            target.name
        )));
    }
    let started = Instant::now();
    let next = AtomicU64::new(options.first_frame);
    let shared = Mutex::new(Shared {
        known: super::known_signatures(&options.findings),
        summary: FramesSummary::default(),
        stats: FrameStats::default(),
    });
    let died = AtomicBool::new(false);
    let over = || {
        started.elapsed() >= options.duration
            || stop.load(Ordering::SeqCst)
            || died.load(Ordering::SeqCst)
            || options.stop_after_findings.is_some_and(|n| {
                shared
                    .lock()
                    .map_or(true, |s| s.summary.findings.len() >= n)
            })
    };
    let worker = || async {
        let mut conn: Option<Connection> = None;
        while !over() {
            let n = options.shard.global(next.fetch_add(1, Ordering::SeqCst));
            let (frame, mutations) = frame(options.seed, n, &served);
            let happened = exchange(&mut conn, target.addr, &frame, options.deadline).await;
            let mut judged = judge(&frame, &happened, &raw_served, target.parser());
            if let Some(dead) = unhealthy(target, &frame, &happened, options.deadline).await {
                // Nothing more can be learnt of a target that does not answer: both fuzzers
                // end with their summaries.
                died.store(true, Ordering::SeqCst);
                stop.store(true, Ordering::SeqCst);
                judged = Some(dead);
            }
            // A well-formed frame closed on: the same again on a fresh connection (timing?).
            // That or silence: on the oracle too (does Apache answer it in time? It does not
            // always: a WriteTxnMarkers may wait longer than the deadline for its appends).
            let mut agreed = false;
            let mut flaky = false;
            if let Some(j) = judged
                .as_ref()
                .filter(|j| matches!(j.kind, Kind::ClosedWellFormed | Kind::Silent))
            {
                if j.kind == Kind::ClosedWellFormed {
                    let again = exchange(&mut None, target.addr, &frame, options.deadline).await;
                    flaky = judge(&frame, &again, &raw_served, target.parser()).as_ref() != Some(j);
                }
                if let (false, Some(o)) = (flaky, oracle) {
                    let there = exchange(&mut None, o.addr, &frame, options.deadline).await;
                    agreed = !matches!(there, Happened::Answered(_));
                }
            }
            let mut s = shared.lock().expect("no worker panics holding the lock");
            s.stats.frames += 1;
            match happened {
                Happened::Answered(_) => s.stats.answered += 1,
                _ => s.stats.closed += 1,
            }
            s.summary.flaky += u64::from(flaky);
            s.summary.oracle_agreed += u64::from(agreed);
            if let Some(j) = judged.filter(|_| !flaky && !agreed) {
                if s.known.insert(j.signature.clone()) {
                    let f = write_finding(
                        &options.findings,
                        &target.name,
                        options.seed,
                        &j,
                        &frame,
                        mutations,
                        started.elapsed(),
                        n,
                    )?;
                    progress.finding(&f.file, &f.signature);
                    s.summary.findings.push(f);
                    s.stats.findings = s.summary.findings.len();
                }
            }
            if s.stats.frames % 64 == 0 {
                s.stats.secs = started.elapsed().as_secs_f64();
                progress.counters("frames", &s.stats.line());
                // Every frame below the lowest one a worker may still be sending is done.
                let done = next
                    .load(Ordering::SeqCst)
                    .saturating_sub(options.jobs as u64);
                super::resume::save(
                    &options.findings,
                    "frames",
                    options.shard,
                    super::resume::Position {
                        seed: options.seed,
                        next: done.max(options.first_frame),
                    },
                )?;
            }
        }
        Ok::<(), FuzzError>(())
    };
    let results = futures::future::join_all((0..options.jobs.max(1)).map(|_| worker())).await;
    let mut s = shared
        .into_inner()
        .expect("no worker panics holding the lock");
    for r in results {
        r?;
    }
    s.stats.secs = started.elapsed().as_secs_f64();
    progress.counters("frames", &s.stats.line());
    s.summary.frames = s.stats.frames;
    s.summary.answered = s.stats.answered;
    s.summary.closed = s.stats.closed;
    s.summary.frames_per_sec = s.stats.frames as f64 / s.stats.secs.max(0.001);
    s.summary.next_frame = next.load(Ordering::SeqCst);
    super::resume::save(
        &options.findings,
        "frames",
        options.shard,
        super::resume::Position {
            seed: options.seed,
            next: s.summary.next_frame,
        },
    )?;
    s.summary.target_died = died.load(Ordering::SeqCst);
    Ok(s.summary)
}

/// What replaying a frame file showed.
#[derive(Debug, Clone)]
pub struct Replayed {
    /// What the target did.
    pub happened: String,
    /// The finding it still shows, if it does.
    pub finding: Option<Judged>,
}

/// Why a frame file cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// It cannot be read.
    #[error("{0}: {1}")]
    Read(String, std::io::Error),
    /// It is not a size-prefixed frame.
    #[error("{0}: {1}")]
    NotAFrame(String, String),
    /// The target does not answer ApiVersions.
    #[error("{0}")]
    Target(String),
}

/// Sends the raw frame in `file` (its 4-byte size, then the frame, as `kconform fuzz` writes
/// it) to `target` on a fresh connection and judges what happens, as the fuzzer did.
pub async fn replay(
    file: &Path,
    target: &Running,
    deadline: Duration,
) -> Result<Replayed, ReplayError> {
    let name = file.display().to_string();
    let raw = std::fs::read(file).map_err(|e| ReplayError::Read(name.clone(), e))?;
    let Some((size, frame)) = raw.split_first_chunk::<4>() else {
        return Err(ReplayError::NotAFrame(
            name,
            "shorter than a size prefix".into(),
        ));
    };
    let size = u32::from_be_bytes(*size) as usize;
    if size != frame.len() {
        return Err(ReplayError::NotAFrame(
            name,
            format!("its size prefix says {size} bytes, {} follow", frame.len()),
        ));
    }
    let served = target
        .served(deadline)
        .await
        .map_err(|e| ReplayError::Target(e.to_string()))?;
    let happened = exchange(&mut None, target.addr, frame, deadline).await;
    let finding = match unhealthy(target, frame, &happened, deadline).await {
        Some(dead) => Some(dead),
        None => judge(frame, &happened, &served, target.parser()),
    };
    Ok(Replayed {
        happened: format!("{}: {}", named(frame), happened.describe()),
        finding,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end_txn_v3() -> Vec<u8> {
        let mut frame = vec![0, 26, 0, 3, 0, 0, 0, 9, 0, 1, b'c', 0];
        frame.extend([2, b't', 0, 0, 0, 0, 0, 0, 0, 7, 0, 1, 1, 0]);
        frame
    }

    const SERVED: [(i16, i16, i16); 1] = [(26, 0, 3)];

    /// Each kind of finding, and what is none: a close on a malformed frame, a close on a
    /// version the target does not serve, an exact answer.
    #[test]
    fn the_judge_tells_findings_from_closes_it_may_make() {
        let frame = end_txn_v3();
        // EndTxn v3 answer: correlation 9, header tags, throttle 0, error 0, tags.
        let good = vec![0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(
            judge(
                &frame,
                &Happened::Answered(good.clone()),
                &SERVED,
                Parser::default()
            ),
            None
        );
        let mut other = good.clone();
        other[3] = 8;
        let j = judge(
            &frame,
            &Happened::Answered(other),
            &SERVED,
            Parser::default(),
        )
        .unwrap();
        assert_eq!(j.kind, Kind::WrongCorrelation);
        let j = judge(
            &frame,
            &Happened::Answered(good[..10].to_vec()),
            &SERVED,
            Parser::default(),
        )
        .unwrap();
        assert_eq!(j.kind, Kind::Undecodable);
        assert!(
            j.signature.starts_with("undecodable answer: EndTxn v3"),
            "{}",
            j.signature
        );
        let j = judge(&frame, &Happened::Closed, &SERVED, Parser::default()).unwrap();
        assert_eq!(j.kind, Kind::ClosedWellFormed);
        assert_eq!(j.signature, "closed on a well-formed request: EndTxn v3");
        assert_eq!(
            judge(&frame, &Happened::Closed, &[(26, 0, 2)], Parser::default()),
            None
        );
        assert_eq!(
            judge(
                &frame[..frame.len() - 3],
                &Happened::Closed,
                &SERVED,
                Parser::default()
            ),
            None
        );
        // A tagged-field count of -1 closing the body: 3.7 to 4.1 read no tagged field, so
        // a close on it is a finding; 4.2's parser refuses it, so a 4.2 broker may close.
        let mut minus_one = frame[..frame.len() - 1].to_vec();
        minus_one.extend([0xff, 0xff, 0xff, 0xff, 0x0f]);
        let j = judge(&minus_one, &Happened::Closed, &SERVED, Parser::Until4_1).unwrap();
        assert_eq!(j.kind, Kind::ClosedWellFormed);
        assert_eq!(
            judge(&minus_one, &Happened::Closed, &SERVED, Parser::From4_2),
            None
        );
        let mut v9 = frame.clone();
        v9[3] = 9;
        let j = judge(&v9, &Happened::Answered(good), &SERVED, Parser::default()).unwrap();
        assert_eq!(j.kind, Kind::AnsweredUnknown);
        let silent = Happened::Silent(Duration::from_secs(1));
        assert_eq!(
            judge(&frame, &silent, &SERVED, Parser::default())
                .unwrap()
                .kind,
            Kind::Silent
        );
        // An unanswered Produce (acks=0) is no finding.
        let mut produce = frame.clone();
        produce[1] = 0;
        assert_eq!(judge(&produce, &silent, &SERVED, Parser::default()), None);
        // ApiVersions of a version not served: answered in v0 (KIP-511), as Apache does.
        let api_versions = [0u8, 18, 0, 4, 0, 0, 0, 5, 0, 0];
        let v0 = vec![0, 0, 0, 5, 0, 35, 0, 0, 0, 0];
        let served = [(18, 0, 3)];
        assert_eq!(
            judge(
                &api_versions,
                &Happened::Answered(v0),
                &served,
                Parser::default()
            ),
            None
        );
    }

    /// Frame `n` of a seed is the same every time (what resuming and a finding's frame
    /// number rely on).
    #[test]
    fn frames_are_drawn_again_from_seed_and_number() {
        let served = [(ApiKey::EndTxn, 0, 3), (ApiKey::TxnOffsetCommit, 0, 3)];
        assert_eq!(frame(5, 17, &served), frame(5, 17, &served));
        assert_ne!(frame(5, 17, &served).0, frame(5, 18, &served).0);
    }
}
