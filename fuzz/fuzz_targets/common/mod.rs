//! What the broker fuzz targets share: a reference broker's state on a fresh data directory,
//! its bounds set low (so that no one input can make it do minutes of work: a topic of 10,000
//! partitions, the default bound, is 10,000 directories), and a runtime whose time is paused
//! and advances whenever the broker waits. The broker is rebuilt every 2000 inputs to bound
//! what it keeps on disk.

use std::sync::{Arc, Mutex};

use reference_broker::auth::AllowAll;
use reference_broker::broker::{open_state, State};
use reference_broker::limits::Limits;
use reference_broker::{BrokerConfig, Security};

/// One broker under fuzzing.
pub struct Harness {
    /// The paused-time runtime inputs run on.
    pub rt: tokio::runtime::Runtime,
    /// The broker's state.
    pub state: Arc<State>,
    inputs: u32,
    _dir: tempfile::TempDir,
}

fn fresh(security: Option<Security>) -> Harness {
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
        security,
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

/// Runs `input` against the broker in `slot` (built with `security` when there is none yet,
/// or when the last one has taken 2000 inputs).
pub fn with_broker(
    slot: &Mutex<Option<Harness>>,
    security: impl Fn() -> Option<Security>,
    input: impl FnOnce(&Harness),
) {
    let mut guard = slot.lock().unwrap_or_else(|e| e.into_inner());
    if guard.as_ref().is_none_or(|h| h.inputs >= 2000) {
        *guard = None;
        *guard = Some(fresh(security()));
    }
    let h = guard.as_mut().expect("harness");
    h.inputs += 1;
    input(h);
}

/// How long a request may wait, in paused time, before its client would have given up: a
/// JoinGroup waiting for members that will never come (the group timers do not run here).
pub const LIMIT: std::time::Duration = std::time::Duration::from_secs(3600);
