//! `kconform fuzz --mode frames` finds decoder and handler bugs: each bug planted in kaas-ref
//! on purpose (`planted-bugs`, a test-only feature) for the live-wire fuzzer — a decoder that
//! misreads one field at one version, a handler that panics on one rare value — is found from
//! a fixed seed within a stated budget, as a single raw frame that replays on the planted
//! broker and not on a clean one. A clean broker gives no finding over the same frames.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kconform::fuzz::wire::{self, WireOptions};
use kconform::targets::{Running, TargetSpec};
use reference_broker::alloc::ReservingAllocator;
use reference_broker::planted::{Bug, Planted};
use reference_broker::{Broker, BrokerConfig, BrokerHandle};

/// kaas-ref runs in this process: hostile counts reserve address space (as in `kconform`).
#[global_allocator]
static ALLOCATOR: ReservingAllocator = ReservingAllocator;

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
    }
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
    let quiet = Arc::new(kconform::report::progress::Quiet);
    for (bug, signature) in [
        (
            Bug::GroupIdLengthOneByte,
            "closed on a well-formed request: AddOffsetsToTxn v3",
        ),
        (
            Bug::PanicOnLastPartitionIndex,
            "closed on a well-formed request: AddPartitionsToTxn v",
        ),
    ] {
        let (_broker, target) = broker(Planted::default().with(bug)).await;
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let summary = wire::run(
            &target,
            None,
            &options(dir.path(), BUDGET, Some(1)),
            quiet.clone(),
            Arc::new(AtomicBool::new(false)),
        )
        .await
        .expect("the wire fuzzer runs");
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
            on_planted.finding.map(|j| j.signature),
            Some(finding.signature.clone()),
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
    let summary = wire::run(
        &clean,
        None,
        &options(dir.path(), Duration::from_secs(8), None),
        quiet,
        Arc::new(AtomicBool::new(false)),
    )
    .await
    .unwrap();
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

/// A broker that answers one ApiVersions and then closes every connection at once: the run
/// ends with a "stopped answering" finding instead of sending frames into the void.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_that_closes_every_connection_ends_the_run_with_a_finding() {
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
    let summary = wire::run(
        &target,
        None,
        &options(dir.path(), BUDGET, None),
        Arc::new(kconform::report::progress::Quiet),
        Arc::new(AtomicBool::new(false)),
    )
    .await
    .unwrap();
    assert!(summary.target_died, "{summary:?}");
    assert!(summary.frames <= 2, "{} frames", summary.frames);
    let f = &summary.findings[0];
    assert_eq!(f.kind, wire::Kind::Unhealthy, "{f:?}");
    assert!(
        f.signature.starts_with("stopped answering: after EndTxn v"),
        "{}",
        f.signature
    );
}
