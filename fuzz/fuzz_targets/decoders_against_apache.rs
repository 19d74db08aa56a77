//! kaas-ref's codec held to Apache's verdict on every input: the target `kconform fuzz
//! init-decoders` writes, with kaas-ref's `decode` filled in (the function a kaas engineer
//! writes for their own codec). A panic, one allocation past the bound, accepting what Apache's
//! parser refuses or refusing what it reads, and values that differ are each a crash, named.
//! With `--features planted`, KCONFORM_PLANT=MarkerCountAllocates,PanicOnMinLeaderEpoch plants
//! codec bugs.
#![no_main]

use kconform_wire::alloc::Watch;
use kconform_wire::check::{self, Case, Decoded, Direction};
use libfuzzer_sys::fuzz_target;
use reference_broker::codec::{header, ApiKey, Response};
use reference_broker::planted::Planted;

#[global_allocator]
static ALLOC: Watch = Watch::system();

/// Decodes as kaas-ref reads a request (bytes after it ignored, as Apache ignores them) and as
/// Apache's client reads a response, and writes what it read again at the same version.
fn decode(case: &Case) -> Decoded {
    let Ok(api) = ApiKey::from_key(case.api as i16) else {
        return Decoded::NotServed;
    };
    if api.check_version(case.version).is_err() {
        return Decoded::NotServed;
    }
    let again = planted().decoding(|| match case.direction {
        Direction::Request => {
            let mut frame = kconform_wire::seeds::header(case.api, case.version, 1, "fuzz");
            frame.extend(&case.body);
            header::decode_request_ignoring_trailing(&frame)
                .and_then(|(_, decoded, _)| decoded.message.encode(case.version))
        }
        Direction::Response => Response::decode_prefix(api, case.version, &case.body)
            .and_then(|(r, _)| r.encode(case.version)),
    });
    match again {
        Ok(bytes) => Decoded::Reencoded(bytes),
        Err(e) => Decoded::Refused(e.to_string()),
    }
}

/// The bugs KCONFORM_PLANT names (a `planted` build only).
fn planted() -> Planted {
    #[cfg(feature = "planted")]
    {
        static PLANTED: std::sync::OnceLock<Planted> = std::sync::OnceLock::new();
        *PLANTED.get_or_init(|| {
            let names = std::env::var("KCONFORM_PLANT").unwrap_or_default();
            names
                .split(',')
                .filter(|n| !n.is_empty())
                .fold(Planted::default(), |p, n| {
                    let bug = reference_broker::planted::Bug::named(n)
                        .unwrap_or_else(|| panic!("KCONFORM_PLANT: no bug named {n}"));
                    p.with(bug)
                })
        })
    }
    #[cfg(not(feature = "planted"))]
    Planted::default()
}

fuzz_target!(|data: &[u8]| {
    check::quiet_panics();
    let Some(case) = Case::from_fuzz_input(data) else {
        return;
    };
    if let Err(finding) = check::check(&case, decode) {
        panic!("{}\n{finding}", finding.signature());
    }
});
