//! Fuzzes the TxnOffsetCommit codec: version and direction come from the first byte; see
//! `reference_broker::codec::differential::check_fuzz_input` for the properties checked.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reference_broker::codec::{differential::check_fuzz_input, ApiKey};

fuzz_target!(|data: &[u8]| {
    if let Err(broken) = check_fuzz_input(ApiKey::TxnOffsetCommit, data) {
        panic!("{broken}");
    }
});
