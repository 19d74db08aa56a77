//! One connection's frames into a broker whose listener requires SASL, through the same
//! `dispatch::handle_on` its server runs: the handshake, PLAIN and SCRAM-SHA-512 exchanges
//! (and a v0 handshake's raw tokens), the requests refused before a login and, once logged in,
//! the ACL-gated handlers as that user. No input may panic, hang or exhaust memory. The input
//! is the connection's frames, each after a big-endian u16 length
//! (`reference_broker::sasl::session_input`); the connection ends where the broker would
//! close it. Time is paused, as in `broker_frames`; the broker is rebuilt every 2000 inputs.
#![no_main]

use std::sync::{Arc, Mutex};

use libfuzzer_sys::fuzz_target;
use reference_broker::alloc::ReservingAllocator;
use reference_broker::auth::AllowAll;
use reference_broker::broker::{open_state, State};
use reference_broker::dispatch::{self, Turn};
use reference_broker::limits::Limits;
use reference_broker::sasl::{session_input, Authenticator, Users};
use reference_broker::{BrokerConfig, Security};

#[global_allocator]
static ALLOCATOR: ReservingAllocator = ReservingAllocator;

struct Harness {
    rt: tokio::runtime::Runtime,
    state: Arc<State>,
    users: Arc<Users>,
    inputs: u32,
    _dir: tempfile::TempDir,
}

fn fresh() -> Harness {
    let dir = tempfile::tempdir().expect("temp dir");
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
            ..Limits::default()
        },
        security: Some(Security {
            users: session_input::users(),
            super_users: vec!["User:admin".into()],
        }),
        ..BrokerConfig::for_tests()
    };
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], 9092));
    let state = Arc::new(open_state(config, addr, Arc::new(AllowAll)).expect("state"));
    let users = state.users.clone().expect("security is on");
    Harness {
        rt,
        state,
        users,
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
    let (state, users) = (h.state.clone(), h.users.clone());
    h.rt.block_on(async {
        let mut sasl = Authenticator::new(users);
        let limit = std::time::Duration::from_secs(3600);
        for frame in session_input::frames(data) {
            match tokio::time::timeout(limit, dispatch::handle_on(&state, Some(&mut sasl), frame))
                .await
            {
                Ok(Turn::Reply(dispatch::Reply::Later(pending))) => {
                    let _ = tokio::time::timeout(limit, pending).await;
                }
                Ok(Turn::Reply(dispatch::Reply::Now(_))) => {}
                _ => break,
            }
        }
    });
});
