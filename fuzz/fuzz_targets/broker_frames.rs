//! Arbitrary request frames (without the size prefix) into the in-process dispatcher of a
//! reference broker: no input may panic, hang or exhaust memory. Time is paused and advances
//! whenever the broker waits, so a Fetch long poll returns at once; a request still waiting
//! after an hour of that virtual time (a JoinGroup waiting for members that will never come:
//! the group timers do not run here) is dropped, as its client's connection would be. The
//! broker (`common`) is rebuilt every 2000 inputs and its bounds are set low: the refusals are
//! exercised on every oversized request and the broker stays fast.
#![no_main]

use std::sync::Mutex;

use libfuzzer_sys::fuzz_target;
use reference_broker::alloc::ReservingAllocator;
use reference_broker::dispatch;

mod common;

#[global_allocator]
static ALLOCATOR: ReservingAllocator = ReservingAllocator;

static BROKER: Mutex<Option<common::Harness>> = Mutex::new(None);

fuzz_target!(|data: &[u8]| {
    common::with_broker(
        &BROKER,
        || None,
        |h| {
            let state = h.state.clone();
            let frame = bytes::Bytes::copy_from_slice(data);
            h.rt.block_on(async {
                let _ = tokio::time::timeout(common::LIMIT, dispatch::handle(&state, frame)).await;
            });
        },
    );
});
