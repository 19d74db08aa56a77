//! Arbitrary request frames (without the size prefix) into the in-process dispatcher of a
//! reference broker: no input may panic, hang or exhaust memory. Time is paused and advances
//! whenever the broker waits, so a Fetch long poll returns at once; a request still waiting
//! after an hour of that virtual time (a JoinGroup waiting for members that will never come:
//! the group timers do not run here) is dropped, as its client's connection would be. The
//! broker is rebuilt on a fresh data directory every 2000 inputs to bound what it keeps on disk.
//! Its bounds (`reference_broker::limits`) are set low, so that no one input can make it do
//! minutes of work (a topic of 10,000 partitions, the default bound, is 10,000 directories):
//! the refusals are exercised on every oversized request and the broker stays fast.
#![no_main]

use std::sync::{Arc, Mutex};

use libfuzzer_sys::fuzz_target;
use reference_broker::alloc::ReservingAllocator;
use reference_broker::auth::AllowAll;
use reference_broker::broker::{open_state, State};
use reference_broker::dispatch;
use reference_broker::limits::Limits;
use reference_broker::BrokerConfig;

#[global_allocator]
static ALLOCATOR: ReservingAllocator = ReservingAllocator;

struct Harness {
    rt: tokio::runtime::Runtime,
    state: Arc<State>,
    inputs: u32,
    _dir: tempfile::TempDir,
}

fn fresh() -> Harness {
    let dir = tempfile::tempdir().expect("temp dir");
    // The blocking pool's threads live as long as the runtime (which is dropped, joining
    // them, every 2000 inputs): a thread retiring on its own after the default 10 s idle could
    // be mid-exit when libFuzzer ends the run, and LeakSanitizer then reports its thread-local
    // storage as leaked (seen once, at the end of an hour's run: 176 bytes in 5 allocations).
    let rt = tokio::runtime::Builder::new_current_thread()
        .thread_keep_alive(std::time::Duration::from_secs(24 * 3600))
        .enable_time()
        .start_paused(true)
        .build()
        .expect("runtime");
    let config = BrokerConfig {
        data_dir: Some(dir.path().to_owned()),
        limits: Limits {
            max_partitions_per_topic: 64,
            max_partitions_per_request: 128,
            max_topics_per_request: 16,
            max_configs_per_topic: 16,
            max_config_value_bytes: 1024,
            max_partitions_per_txn: 256,
            max_groups_per_txn: 16,
            max_staged_offsets_per_txn: 256,
            max_group_members: 64,
            max_producers_per_partition: 256,
            ..Limits::default()
        },
        ..BrokerConfig::for_tests()
    };
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], 9092));
    let state = Arc::new(open_state(config, addr, Arc::new(AllowAll)).expect("state"));
    Harness {
        rt,
        state,
        inputs: 0,
        _dir: dir,
    }
}

static HARNESS: Mutex<Option<Harness>> = Mutex::new(None);

fuzz_target!(|data: &[u8]| {
    let mut guard = HARNESS.lock().unwrap_or_else(|e| e.into_inner());
    if guard.as_ref().is_none_or(|h| h.inputs >= 2000) {
        *guard = None;
        *guard = Some(fresh());
    }
    let h = guard.as_mut().expect("harness");
    h.inputs += 1;
    let state = h.state.clone();
    let frame = bytes::Bytes::copy_from_slice(data);
    h.rt.block_on(async {
        let limit = std::time::Duration::from_secs(3600);
        let _ = tokio::time::timeout(limit, dispatch::handle(&state, frame)).await;
    });
});
