//! Your decoders held to Apache's verdict on every input (`decode` in src/lib.rs): a panic, one
//! allocation past 64 KiB + 256 bytes per input byte, accepting what Apache's parser refuses or
//! refusing what it reads, and values that differ are each a crash, named by its signature.
#![no_main]

use kconform_wire::check::{self, Case};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    check::quiet_panics();
    let Some(case) = Case::from_fuzz_input(data) else {
        return;
    };
    if let Err(finding) = check::check(&case, tansu_check_apache_fuzz::decode) {
        panic!("{}\n{finding}", finding.signature());
    }
});
