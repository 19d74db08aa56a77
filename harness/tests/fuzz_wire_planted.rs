//! `kconform fuzz --mode frames` finds decoder and handler bugs: each bug planted in kaas-ref
//! on purpose (`planted-bugs`, a test-only feature) for the live-wire fuzzer — a decoder that
//! misreads one field at one version, a handler that panics on one rare value — is found from
//! a fixed seed within a stated budget, as a single raw frame that replays on the planted
//! broker and not on a clean one. A clean broker gives no finding over the same frames.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kconform::fuzz::wire::keeper::{Keeper, Revive};
use kconform::fuzz::wire::{self, WireOptions};
use kconform::targets::{Running, TargetSpec};
use reference_broker::planted::{Bug, Planted};
use reference_broker::{Broker, BrokerConfig, BrokerHandle};

/// The longest each bug may take to be found.
const BUDGET: Duration = Duration::from_secs(60);
const SEED: u64 = 20261201;

fn options(dir: &Path, duration: Duration, stop_after: Option<usize>) -> WireOptions {
    WireOptions {
        duration,
        seed: SEED,
        first_frame: 0,
        shard: Default::default(),
        findings: dir.to_owned(),
        deadline: Duration::from_secs(5),
        jobs: 2,
        stop_after_findings: stop_after,
        shrink_budget: 200,
    }
}

/// One live-wire run on `target`: no oracle, no progress shown, never stopped from outside.
async fn fuzz(target: &Running, options: &WireOptions, keeper: &mut Keeper) -> wire::FramesSummary {
    wire::run(
        target,
        None,
        options,
        keeper,
        Arc::new(kconform::report::progress::Quiet),
        Arc::new(AtomicBool::new(false)),
    )
    .await
    .expect("the wire fuzzer runs")
}

/// A planted kaas-ref process with `bugs`, owned by a keeper that logs it into `dir`, started.
async fn planted_process(bugs: &[Bug], dir: &Path) -> (Keeper, Running) {
    let addr = crate::util::planted::free_addr();
    let mut keeper = Keeper::new(
        Revive::Own(crate::util::planted::command(bugs, addr)),
        addr,
        Some(dir.join("broker.log")),
        Duration::from_secs(30),
    );
    keeper.start().await.expect("the planted broker starts");
    let target = Running::start(&TargetSpec::external(addr)).await.unwrap();
    (keeper, target)
}

async fn broker(planted: Planted) -> (BrokerHandle, Running) {
    let broker = Broker::start(BrokerConfig {
        planted,
        ..BrokerConfig::for_tests()
    })
    .await
    .expect("kaas-ref starts");
    let target = Running::start(&TargetSpec::external(broker.addr()))
        .await
        .expect("kaas-ref answers");
    (broker, target)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_planted_decoder_and_handler_bug_is_found_as_one_frame() {
    // The planted panic is expected: its message would only crowd the test's output.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !info.to_string().contains("planted:") {
            report(info);
        }
    }));
    let (_clean, clean) = broker(Planted::default()).await;
    for (bug, signature) in [
        (
            Bug::GroupIdLengthOneByte,
            "closed on a well-formed request: AddOffsetsToTxn v3",
        ),
        (
            Bug::PanicOnLastPartitionIndex,
            "closed on a well-formed request: AddPartitionsToTxn: ",
        ),
    ] {
        let (_broker, target) = broker(Planted::default().with(bug)).await;
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let summary = fuzz(
            &target,
            &options(dir.path(), BUDGET, Some(1)),
            &mut Keeper::cannot(target.addr),
        )
        .await;
        let took = started.elapsed();
        let finding = summary.findings.first().unwrap_or_else(|| {
            panic!(
                "{bug:?} not found in {BUDGET:?} ({} frames)",
                summary.frames
            )
        });
        assert!(
            finding.signature.starts_with(signature),
            "{bug:?}: found {} instead",
            finding.signature
        );
        if bug == Bug::PanicOnLastPartitionIndex {
            // Shrunk to what the panic needs: the partition index, named with its value.
            assert!(
                finding.matters.iter().any(|m| m.ends_with("= 2147483647")),
                "{:?}",
                finding.matters
            );
            assert!(finding.bytes < finding.found_bytes, "{finding:?}");
        }
        println!(
            "{bug:?}: found in {:.1} s after {} frames: {} (mutations: {:?})",
            took.as_secs_f64(),
            finding.frame_number + 1,
            finding.signature,
            finding.mutations
        );
        let file = dir.path().join(&finding.file);
        let text = std::fs::read_to_string(file.with_extension("txt")).unwrap();
        assert!(text.contains("# replay: kconform replay-frame"), "{text}");
        let deadline = Duration::from_secs(5);
        let on_planted = wire::replay(&file, &target, deadline).await.unwrap();
        assert_eq!(
            on_planted.finding.map(|j| j.kind),
            Some(finding.kind),
            "the frame replays on the planted broker"
        );
        let on_clean = wire::replay(&file, &clean, deadline).await.unwrap();
        assert_eq!(
            on_clean.finding, None,
            "a clean broker answers the frame: {}",
            on_clean.happened
        );
    }
    // The clean broker over the same seed's frames: nothing.
    let dir = tempfile::tempdir().unwrap();
    let summary = fuzz(
        &clean,
        &options(dir.path(), Duration::from_secs(8), None),
        &mut Keeper::cannot(clean.addr),
    )
    .await;
    assert!(summary.frames > 1000, "{} frames", summary.frames);
    assert!(
        summary.findings.is_empty(),
        "a clean broker: {:?}",
        summary.findings
    );
    println!(
        "clean: {} frames in 8 s, {} answered, no finding",
        summary.frames, summary.answered
    );
}

/// A broker that answers one ApiVersions and then closes every connection at once, with
/// nothing to bring it back: the run ends there instead of sending frames into the void, and
/// the frames in flight are kept as suspects, not findings (none could be replayed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_that_closes_every_connection_ends_the_run_with_suspects() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut first = true;
        while let Ok((mut s, _)) = listener.accept().await {
            if !std::mem::take(&mut first) {
                continue; // dropped: closed at once
            }
            let mut size = [0u8; 4];
            s.read_exact(&mut size).await.unwrap();
            let mut request = vec![0u8; u32::from_be_bytes(size) as usize];
            s.read_exact(&mut request).await.unwrap();
            // ApiVersions v0: the correlation id, no error, one API (EndTxn v0-3).
            let mut answer = request[4..8].to_vec();
            answer.extend([0, 0, 0, 0, 0, 1, 0, 26, 0, 0, 0, 3]);
            s.write_all(&(answer.len() as u32).to_be_bytes())
                .await
                .unwrap();
            s.write_all(&answer).await.unwrap();
        }
    });
    let target = Running::start(&TargetSpec::external(addr)).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let summary = fuzz(
        &target,
        &options(dir.path(), BUDGET, None),
        &mut Keeper::cannot(addr),
    )
    .await;
    assert!(summary.target_died, "{summary:?}");
    assert!(summary.frames <= 2, "{} frames", summary.frames);
    // Nothing could be replayed on it: no finding, the frames in flight kept as suspects.
    assert!(summary.findings.is_empty(), "{:?}", summary.findings);
    assert!(
        !summary.unpinned.is_empty() && summary.unpinned.len() <= 2,
        "{:?}",
        summary.unpinned
    );
    for file in &summary.unpinned {
        assert!(dir.path().join(file).is_file(), "{file}");
    }
    let why = summary.ended_early.unwrap_or_default();
    assert!(why.contains("no --restart-cmd or --broker-cmd"), "{why}");
}

/// The four planted bugs of the live broker at once, found by a run with 16 connections in
/// flight that survives every crash: an allocation sized by an unchecked count (a one-frame
/// crash), an abort that needs two frames in order, a panic on one value (the connection
/// closes, the process lives) and a hang on one value. Each is one finding, signed by what
/// the broker logged where it logged anything, shrunk, and it replays from its files on a
/// freshly started planted broker (the crashes kill it again), not on a clean one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashing_broker_is_brought_back_and_each_crash_pinned_once() {
    let bugs = [
        Bug::MarkerCountAllocates,
        Bug::AbortAfterArmedTimeout,
        Bug::PanicOnMinLeaderEpoch,
        Bug::HangOnEmptyGroupId,
    ];
    let dir = tempfile::tempdir().unwrap();
    let (mut keeper, target) = planted_process(&bugs, dir.path()).await;
    let options = WireOptions {
        jobs: 16,
        deadline: Duration::from_secs(2),
        ..options(dir.path(), Duration::from_secs(240), Some(4))
    };
    let started = Instant::now();
    let summary = fuzz(&target, &options, &mut keeper).await;
    keeper.stop().await;
    println!(
        "{} frames in {:.0} s: {} crashes, {} restarts ({:.1} s), {:.1} s down, {} not reproduced; rates {:?}",
        summary.frames,
        started.elapsed().as_secs_f64(),
        summary.crashes,
        summary.restarts,
        summary.restart_secs,
        summary.down_secs,
        summary.not_reproduced,
        summary.rates(started.elapsed().as_secs_f64())
    );
    for f in &summary.findings {
        println!(
            "{}: {} ({}; {} -> {} bytes; matters {:?}; seen {} on {:?})",
            f.file, f.signature, f.reproduces, f.found_bytes, f.bytes, f.matters, f.seen, f.seen_on
        );
    }
    assert!(!summary.target_died, "{:?}", summary.ended_early);
    assert!(summary.crashes >= 2 && summary.restarts >= 2, "{summary:?}");
    // Every restart is said why, and the reasons add up to them all.
    let counted: u64 = summary.restarts_why.iter().map(|w| w.restarts).sum();
    assert_eq!(counted, summary.restarts, "{:?}", summary.restarts_why);
    println!("restarts by why: {:?}", summary.restarts_why);
    let signatures: Vec<&str> = summary
        .findings
        .iter()
        .map(|f| f.signature.as_str())
        .collect();
    let expected = [
        "stopped answering: memory allocation of N bytes failed",
        "stopped answering: planted: an abort after a timeout of i32::MAX ms was asked for; aborting",
        "closed on a well-formed request: panicked at reference-broker/src/codec/txn_offset_commit.rs",
        "silent: AddOffsetsToTxn: group_id",
    ];
    for want in expected {
        assert!(
            signatures.iter().filter(|s| s.starts_with(want)).count() == 1,
            "{want} not found once in {signatures:#?}"
        );
    }
    assert_eq!(summary.findings.len(), 4, "{signatures:#?}");
    let by = |want: &str| {
        summary
            .findings
            .iter()
            .find(|f| f.signature.starts_with(want))
            .unwrap()
    };
    let allocation = by(expected[0]);
    assert_eq!(allocation.reproduces, "alone, on a freshly started broker");
    assert!(allocation.needs.is_empty() && allocation.bytes < allocation.found_bytes.max(15));
    assert!(
        allocation.matters[0].starts_with("markers"),
        "{:?}",
        allocation.matters
    );
    let two_frames = by(expected[1]);
    // The frame it needs: an InitProducerId (API key 22), the killer an EndTxn (26).
    assert_eq!(two_frames.needs.len(), 1, "{two_frames:?}");
    let needed = std::fs::read(dir.path().join(&two_frames.needs[0])).unwrap();
    let killer = std::fs::read(dir.path().join(&two_frames.file)).unwrap();
    assert_eq!(
        (needed[4..6].to_vec(), killer[4..6].to_vec()),
        (vec![0, 22], vec![0, 26])
    );
    // And it says what of that frame matters: the timeout that arms the crash.
    assert!(
        two_frames
            .reproduces
            .ends_with("what matters in them: transaction_timeout_ms = 2147483647"),
        "{}",
        two_frames.reproduces
    );
    let panic = by(expected[2]);
    assert!(
        panic
            .matters
            .iter()
            .any(|m| m.contains("committed_leader_epoch = -2147483648")),
        "{:?}",
        panic.matters
    );
    let hang = by(expected[3]);
    assert!(
        hang.matters.contains(&"group_id = \"\"".to_owned()),
        "{:?}",
        hang.matters
    );

    // Each replays from its files: the crashes kill a freshly started planted broker again,
    // the close and the silence show again; a clean broker shows none of them.
    let addr = target.addr;
    let mut planted = Keeper::new(
        Revive::Own(crate::util::planted::command(&bugs, addr)),
        addr,
        None,
        Duration::from_secs(30),
    );
    let (_clean_broker, clean) = broker(Planted::default()).await;
    let deadline = Duration::from_secs(2);
    for f in &summary.findings {
        planted.revive().await.expect("the planted broker restarts");
        let mut last = None;
        for file in f.needs.iter().chain(std::iter::once(&f.file)) {
            last = Some(
                wire::replay(&dir.path().join(file), &target, deadline)
                    .await
                    .unwrap(),
            );
        }
        let last = last.unwrap().finding.map(|j| j.kind);
        assert_eq!(last, Some(f.kind), "{} on a fresh planted broker", f.file);
        let on_clean = wire::replay(&dir.path().join(&f.file), &clean, deadline)
            .await
            .unwrap();
        assert_eq!(
            on_clean.finding, None,
            "{} on a clean broker: {}",
            f.file, on_clean.happened
        );
    }
    planted.stop().await;
}

/// Only a crash restarts the broker: three planted defects that close a connection and
/// crash nothing (a decoder that misreads a long group id, two handlers that panic on one
/// value) are seen again on the running broker, then confirmed together on one freshly
/// started broker at the end of the run: one restart. Confirming each on a broker restarted
/// for it, as before, took 23 restarts in the same 20 s (a real kaas build's night went on
/// restarts).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closes_are_confirmed_in_one_batch_with_one_restart() {
    let bugs = [
        Bug::GroupIdLengthOneByte,
        Bug::PanicOnLastPartitionIndex,
        Bug::PanicOnMinLeaderEpoch,
    ];
    let dir = tempfile::tempdir().unwrap();
    let (mut keeper, target) = planted_process(&bugs, dir.path()).await;
    let options = WireOptions {
        jobs: 4,
        ..options(dir.path(), Duration::from_secs(20), None)
    };
    let summary = fuzz(&target, &options, &mut keeper).await;
    keeper.stop().await;
    println!(
        "{} frames, {} restarts ({:.1} s)",
        summary.frames, summary.restarts, summary.restart_secs
    );
    for f in &summary.findings {
        println!("{}: {} ({})", f.file, f.signature, f.reproduces);
    }
    assert_eq!(summary.crashes, 0, "{summary:?}");
    let closes = summary
        .findings
        .iter()
        .filter(|f| f.signature.starts_with("closed on a well-formed request"))
        .count();
    assert!(closes >= 2, "{summary:#?}");
    assert_eq!(
        summary.restarts, 1,
        "one restart for the batch: {summary:?}"
    );
    assert_eq!(summary.confirm_restarts, 1);
    let why: Vec<(&str, u64)> = summary
        .restarts_why
        .iter()
        .map(|w| (w.why.as_str(), w.restarts))
        .collect();
    assert_eq!(why, [("closes confirmed in a batch on a fresh broker", 1)]);
    assert!(summary.confirmed_in_batches as usize >= closes);
    assert!(summary
        .findings
        .iter()
        .all(|f| f.reproduces.contains("started fresh for a batch of")
            || f.reproduces.contains("freshly started")));
}

/// Kills (SIGKILL) the planted broker process listening on `addr`: a death no frame caused.
fn kill_the_broker_on(addr: std::net::SocketAddr) -> usize {
    let wanted = format!("KCONFORM_PLANTED_LISTEN={addr}");
    let mut killed = 0;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        if environ.split(|b| *b == 0).any(|v| v == wanted.as_bytes()) {
            // SAFETY: kill(2) on a process found by its environment; no memory is passed.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            killed += 1;
        }
    }
    killed
}

/// A broker that dies of something no frame did (killed from outside) is not a finding: the
/// crash keeps its frames in flight and its last words under `unpinned/crash-0/`, is pinned
/// again once in the batch at the end of the run (one restart, said why), and, reproduced by
/// no frame then either, stays there, listed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_death_no_frame_caused_is_kept_with_its_frames_and_tried_again() {
    let dir = tempfile::tempdir().unwrap();
    let (mut keeper, target) = planted_process(&[], dir.path()).await;
    let addr = target.bootstrap[0];
    let options = WireOptions {
        jobs: 4,
        deadline: Duration::from_secs(2),
        shrink_budget: 20,
        ..options(dir.path(), Duration::from_secs(6), None)
    };
    let killer = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(2)).await;
        kill_the_broker_on(addr)
    });
    let summary = fuzz(&target, &options, &mut keeper).await;
    keeper.stop().await;
    assert_eq!(
        killer.await.unwrap(),
        1,
        "the broker process was found and killed"
    );
    println!("{summary:#?}");
    assert!(!summary.target_died, "{:?}", summary.ended_early);
    assert_eq!(summary.crashes, 1);
    assert_eq!(summary.not_reproduced, 1);
    assert_eq!(summary.pinned_on_retry, 0);
    assert!(summary.findings.is_empty(), "{:?}", summary.findings);
    assert_eq!(summary.unpinned, ["unpinned/crash-0"]);
    let folder = dir.path().join("unpinned/crash-0");
    assert!(folder.join("last-words.txt").exists());
    let frames = std::fs::read_dir(&folder)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("frame-")
        })
        .count();
    assert!(frames >= 1, "the frames in flight are kept");
    // One restart for the batch, then the pinning tried again (its own restarts).
    for why in [
        "a fresh broker for crashes not reproduced at first",
        "a crash not reproduced at first, pinned again in a batch",
    ] {
        assert!(
            summary.restarts_why.iter().any(|w| w.why == why),
            "{why}: {:?}",
            summary.restarts_why
        );
    }
}

/// A broker that dies of a huge count in any array of any API (planted as the real kaas build
/// dies): the first such death is pinned with a frame built from the schema (no trial
/// shrinking), frames of any API broken at a count as huge are held back from then on (one
/// sent now and then, counted under the finding), and the run is one finding, not a night of
/// restarts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_count_that_kills_in_any_array_is_one_finding_and_held_back_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let (mut keeper, target) = planted_process(&[Bug::ArrayCountAllocates], dir.path()).await;
    // Four connections for 12 s: the killer comes within seconds, and a lighter run leaves
    // the cores to the tests beside it (at sixteen, a live Apache cluster's scenario beside
    // it went unanswered for 35 s in CI).
    let options = WireOptions {
        jobs: 4,
        deadline: Duration::from_secs(2),
        ..options(dir.path(), Duration::from_secs(12), None)
    };
    let summary = fuzz(&target, &options, &mut keeper).await;
    keeper.stop().await;
    let allocations: Vec<_> = summary
        .findings
        .iter()
        .filter(|f| f.signature.contains("memory allocation"))
        .collect();
    assert_eq!(allocations.len(), 1, "{:#?}", summary.findings);
    let found = allocations[0];
    assert!(
        found.signature.contains("scratch_per_element"),
        "{}",
        found.signature
    );
    assert!(found.matters[0].contains(": count "), "{:?}", found.matters);
    assert!(
        summary
            .avoiding
            .iter()
            .any(|l| l.starts_with("any API and version broken at a count")),
        "{:?}",
        summary.avoiding
    );
    assert!(summary.avoided > 0, "{summary:?}");
    // Pinned in a few starts (the suspects alone, the killer confirmed, the schema's frame
    // tried once), not shrunk by trial.
    let pinning: u64 = summary
        .restarts_why
        .iter()
        .filter(|w| w.why.starts_with("a crash: brought back, pinned"))
        .map(|w| w.restarts)
        .sum();
    assert!(
        pinning <= 8,
        "{:?}; {} crashes, {} not reproduced, findings {:#?}",
        summary.restarts_why,
        summary.crashes,
        summary.not_reproduced,
        summary.findings
    );
}
