//! One connection's frames into a broker whose listener requires SASL, through the same
//! `dispatch::handle_on` its server runs: the handshake, PLAIN and SCRAM-SHA-512 exchanges
//! (and a v0 handshake's raw tokens), the requests refused before a login and, once logged in,
//! the ACL-gated handlers as that user. No input may panic, hang or exhaust memory. The input
//! is the connection's frames, each after a big-endian u16 length
//! (`reference_broker::sasl::session_input`); the connection ends where the broker would
//! close it. Time is paused, as in `broker_frames`; the broker (`common`) is rebuilt every
//! 2000 inputs.
#![no_main]

use std::sync::Mutex;

use libfuzzer_sys::fuzz_target;
use reference_broker::alloc::ReservingAllocator;
use reference_broker::dispatch::{self, Reply, Turn};
use reference_broker::sasl::{session_input, Authenticator};
use reference_broker::Security;

mod common;

#[global_allocator]
static ALLOCATOR: ReservingAllocator = ReservingAllocator;

static BROKER: Mutex<Option<common::Harness>> = Mutex::new(None);

fn security() -> Option<Security> {
    Some(Security {
        users: session_input::users(),
        super_users: vec!["User:admin".into()],
    })
}

fuzz_target!(|data: &[u8]| {
    common::with_broker(&BROKER, security, |h| {
        let state = h.state.clone();
        let users = state.users.clone().expect("security is on");
        h.rt.block_on(async {
            let mut sasl = Authenticator::new(users);
            for frame in session_input::frames(data) {
                let turn = dispatch::handle_on(&state, Some(&mut sasl), frame);
                match tokio::time::timeout(common::LIMIT, turn).await {
                    Ok(Turn::Reply(Reply::Later(pending))) => {
                        let _ = tokio::time::timeout(common::LIMIT, pending).await;
                    }
                    Ok(Turn::Reply(Reply::Now(_))) => {}
                    _ => break,
                }
            }
        });
    });
});
