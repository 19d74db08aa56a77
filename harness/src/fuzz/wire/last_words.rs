//! What a broker said as it died or dropped a connection, read from its log: a panic's
//! message and location, an allocation failure, an abort, a fatal error of another runtime
//! (Go, the JVM, a sanitizer). Normalised (numbers, addresses and ids out; a panic's location
//! kept, it names the line at fault), it is the signature of a crash: two frames that kill the
//! broker the same way are one defect, whatever they are. Where the broker printed a stack
//! backtrace as it died, the first frame in its own code (not the standard library's, not the
//! async runtime's) is part of the signature, as ClusterFuzz signs crashes: two allocation
//! sites that fail alike are two defects, but one function that fails alike in each API's
//! module (`kaas_codec::api::<api>::decode_request`) is one.

use super::judge::numbers_out;
use crate::targets::apache::jars::without_colour_codes;

/// The crash a log tells of, normalised, if it tells of one: its last such message.
pub fn last_words(log: &str) -> Option<String> {
    let lines: Vec<&str> = log.lines().collect();
    let mut found = None;
    let mut i = 0;
    while i < lines.len() {
        let line = without_colour_codes(lines[i]);
        if let Some(said) = panic_at(&line, lines.get(i + 1).map(|l| without_colour_codes(l))) {
            found = Some((said, i));
        } else if let Some(said) = fatal(&line) {
            found = Some((said, i));
        }
        i += 1;
    }
    let found = found.map(|(said, at)| match own_frame(&lines[at + 1..]) {
        Some(frame) => format!("{said} in {}", api_modules_out(&frame)),
        None => said,
    });
    // A process that ended on a signal with nothing else said: the signal.
    found.or_else(|| {
        lines
            .iter()
            .rev()
            .find_map(|l| l.strip_prefix("[kconform: the broker's process "))
            .filter(|l| l.contains("killed by signal"))
            .map(|l| l.trim_end_matches(']').to_owned())
    })
}

/// A frame's path with a module named for a Kafka API as `<api>`
/// (`kaas_codec::api::txn_offset_commit::decode_request` as `kaas_codec::api::<api>::decode_request`):
/// one function that fails alike in each API's module is one defect (a real kaas build's
/// decoders preallocate by the count they read in ten APIs' modules), the finding listing the
/// APIs it was seen on; two functions stay two.
fn api_modules_out(frame: &str) -> String {
    let mut out = frame.to_owned();
    for key in 0..=i16::from(u8::MAX) {
        let Ok(api) = kafka_protocol::messages::ApiKey::try_from(key) else {
            continue;
        };
        let module = snake(&format!("{api:?}"));
        out = out.replace(&format!("::{module}::"), "::<api>::");
    }
    out
}

/// `TxnOffsetCommit` as `txn_offset_commit`.
fn snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// Crates whose frames say nothing of where the broker went wrong: the standard library, the
/// unwinder, the async runtime and its helpers (and any `__`-named symbol, the runtime's too).
const NOT_ITS_OWN: [&str; 12] = [
    "std",
    "core",
    "alloc",
    "rust_begin_unwind",
    "rust_panic",
    "panic_unwind",
    "backtrace",
    "tokio",
    "futures",
    "futures_util",
    "futures_core",
    "<unknown>",
];

/// The first frame of the stack backtrace that follows a crash's words (within a few lines:
/// "stack backtrace:", then "  N: symbol" lines, each perhaps followed by "at FILE:LINE:COL")
/// that is in the broker's own code: a frame whose file is not the standard library's
/// (`/rustc/...`) nor a dependency's (`.cargo/registry`), or, without a file, whose symbol's
/// crate is not the runtime's. Named by its symbol without the hash rustc appends and without
/// generic arguments, and, for an inlined frame that names no path, with its file
/// (`markers_with_scratch (reference-broker/src/codec/write_txn_markers.rs)`). None without a
/// backtrace, or where every frame is the runtime's.
fn own_frame(after: &[&str]) -> Option<String> {
    let start = after
        .iter()
        .take(4)
        .position(|l| without_colour_codes(l).trim() == "stack backtrace:")?;
    let mut frames: Vec<(String, Option<String>)> = Vec::new();
    for line in &after[start + 1..] {
        let line = without_colour_codes(line);
        let trimmed = line.trim();
        if let Some(at) = trimmed.strip_prefix("at ") {
            if let Some(last) = frames.last_mut().filter(|f| f.1.is_none()) {
                last.1 = Some(at.to_owned());
            }
            continue;
        }
        match trimmed.split_once(": ") {
            Some((n, symbol)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                frames.push((symbol.trim().to_owned(), None));
            }
            _ => break,
        }
    }
    frames
        .iter()
        .find(|(symbol, file)| its_own(symbol, file.as_deref()))
        .map(|(symbol, file)| frame_name(symbol, file.as_deref()))
}

/// Whether a frame is in the broker's own code (see [`own_frame`]).
fn its_own(symbol: &str, file: Option<&str>) -> bool {
    match file {
        Some(file) => {
            !file.starts_with("/rustc/")
                && !file.contains("/.cargo/registry/")
                && !file.contains("/.cargo/git/")
        }
        None => {
            let path = symbol.trim_start_matches('<');
            let krate = path.split("::").next().unwrap_or(path);
            path.contains("::") && !NOT_ITS_OWN.contains(&krate) && !krate.starts_with("__")
        }
    }
}

/// A frame as a signature names it: its symbol without hash and generic arguments (the type
/// of a `<T as Trait>` frame), with its file where the symbol names no path.
fn frame_name(symbol: &str, file: Option<&str>) -> String {
    let symbol = match symbol.rsplit_once("::h") {
        Some((path, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            path
        }
        _ => symbol,
    };
    let path = symbol.trim_start_matches('<');
    let path = path.split('<').next().unwrap_or(path);
    let path = path
        .split(" as ")
        .next()
        .unwrap_or(path)
        .trim_end_matches("::");
    match (path.contains("::"), file) {
        (false, Some(file)) => {
            let file = file.trim_start_matches("./");
            let file = file.split(':').next().unwrap_or(file);
            format!("{path} ({file})")
        }
        _ => path.to_owned(),
    }
}

/// A Rust panic: "thread 'x' panicked at FILE:LINE:COL:" with the message on the next line
/// (Rust 1.73 and later), or "panicked at 'MESSAGE', FILE:LINE:COL" (before).
fn panic_at(line: &str, next: Option<String>) -> Option<String> {
    let at = line.find("panicked at ")?;
    let rest = line[at + "panicked at ".len()..].trim();
    if let Some(old) = rest.strip_prefix('\'') {
        let (message, location) = old.rsplit_once("', ")?;
        return Some(format!("panicked at {location}: {}", numbers_out(message)));
    }
    let location = rest.trim_end_matches(':');
    let message = next.unwrap_or_default();
    Some(format!(
        "panicked at {location}: {}",
        numbers_out(message.trim())
    ))
}

/// The other ways a process says it is dying.
fn fatal(line: &str) -> Option<String> {
    const MARKS: [&str; 10] = [
        "memory allocation of ",
        "fatal runtime error: ",
        "fatal error: ",
        "panic: ",
        "java.lang.OutOfMemoryError",
        "StackOverflowError",
        "AddressSanitizer: ",
        "Segmentation fault",
        "stack overflow",
        "double free",
    ];
    for mark in MARKS {
        if let Some(at) = line.find(mark) {
            return Some(numbers_out(addresses_out(line[at..].trim()).as_str()));
        }
    }
    let lower = line.to_ascii_lowercase();
    if lower.contains("abort") && !lower.contains("transaction") || lower.contains("aborted (core")
    {
        return Some(numbers_out(line.trim()));
    }
    None
}

/// `0x7f3a…` as `0xADDR`.
fn addresses_out(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("0x") {
        out.push_str(&rest[..at]);
        out.push_str("0xADDR");
        rest = rest[at + 2..].trim_start_matches(|c: char| c.is_ascii_hexdigit());
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crash_is_named_by_what_the_broker_said_numbers_out() {
        let log = "2026-12-04T10:00:00Z INFO kaas: listening on 127.0.0.1:9092\n\
                   memory allocation of 38626170144 bytes failed\n";
        assert_eq!(
            last_words(log).as_deref(),
            Some("memory allocation of N bytes failed")
        );
        let other = "memory allocation of 2251799813685248 bytes failed\n";
        assert_eq!(last_words(log), last_words(other));
        let panic = "thread 'tokio-runtime-worker' panicked at src/codec/txn.rs:133:17:\n\
                     planted: leader epoch -2147483648 cannot be negated\n\
                     note: run with `RUST_BACKTRACE=1`\n";
        assert_eq!(
            last_words(panic).as_deref(),
            Some("panicked at src/codec/txn.rs:133:17: planted: leader epoch N cannot be negated")
        );
        let old = "thread 'main' panicked at 'index out of bounds: the len is 3 but the index is 7', src/a.rs:9:5\n";
        assert_eq!(
            last_words(old).as_deref(),
            Some("panicked at src/a.rs:9:5: index out of bounds: the len is N but the index is N")
        );
        let go = "panic: runtime error: makeslice: len out of range\n\ngoroutine 42 [running]:\n";
        assert_eq!(
            last_words(go).as_deref(),
            Some("panic: runtime error: makeslice: len out of range")
        );
        let signal =
            "INFO ready\n[kconform: the broker's process was killed by signal 6 (SIGABRT)]\n";
        assert_eq!(
            last_words(signal).as_deref(),
            Some("was killed by signal 6 (SIGABRT)")
        );
        let abort = "planted: an abort after a timeout of i32::MAX ms was asked for; aborting\n";
        assert!(last_words(abort).unwrap().contains("aborting"));
        // A broker that logs its transactions being aborted is not dying.
        assert_eq!(
            last_words("INFO transaction t aborted by the reaper\n"),
            None
        );
        assert_eq!(last_words("\u{1b}[2mINFO\u{1b}[0m all well\n"), None);
    }

    /// A backtrace printed as the broker died names the first frame in its own code: two
    /// allocation sites are two findings, one site is one whatever the sizes.
    #[test]
    fn a_crash_with_a_backtrace_is_signed_by_its_first_frame_in_the_brokers_code() {
        let died_at = |size: u64, site: &str| {
            format!(
                "INFO kaas: listening\n\
                 memory allocation of {size} bytes failed\n\
                 stack backtrace:\n\
                 \x20  0: std::alloc::rust_oom::h0123456789abcdef\n\
                 \x20            at /rustc/abc/library/std/src/alloc.rs:377:5\n\
                 \x20  1: __rust_alloc_error_handler\n\
                 \x20  2: alloc::raw_vec::handle_error::h0123456789abcdef\n\
                 \x20  3: <alloc::vec::Vec<T> as core::clone::Clone>::clone\n\
                 \x20  4: {site}::h0fedcba987654321\n\
                 \x20            at ./crates/kaas-codec/src/api.rs:12:9\n\
                 \x20  5: tokio::runtime::task::harness::poll\n"
            )
        };
        let markers = "kaas_codec::api::write_txn_markers::decode_request";
        let offsets = "kaas_codec::api::txn_offset_commit::decode_request";
        assert_eq!(
            last_words(&died_at(38_626_170_144, markers)).as_deref(),
            Some("memory allocation of N bytes failed in kaas_codec::api::<api>::decode_request")
        );
        assert_eq!(
            last_words(&died_at(1 << 40, markers)),
            last_words(&died_at(38_626_170_144, markers)),
            "one site, one signature"
        );
        assert_eq!(
            last_words(&died_at(1 << 40, markers)),
            last_words(&died_at(1 << 40, offsets)),
            "one function in two APIs' modules, one signature"
        );
        assert_ne!(
            last_words(&died_at(1 << 40, markers)),
            last_words(&died_at(
                1 << 40,
                "kaas_codec::api::write_txn_markers::read_markers"
            )),
            "two functions, two signatures"
        );
        assert_eq!(snake("AddPartitionsToTxn"), "add_partitions_to_txn");
        // A generic frame of its own: the path, without its arguments.
        assert_eq!(
            own_frame(&[
                "stack backtrace:",
                "   0: <kaas::codec::Reader<R> as kaas::Read>::read_array"
            ]),
            Some("kaas::codec::Reader".into())
        );
        // Inlined frames name no path: the first whose file is the broker's, with its file
        // (as a release kaas-ref printed it when a planted allocation failed).
        let inlined = [
            "stack backtrace:",
            "   0: std::alloc::rust_oom",
            "             at /rustc/5980/library/std/src/alloc.rs:424:5",
            "   5: with_capacity_in<alloc::alloc::Global>",
            "             at /rustc/5980/library/alloc/src/raw_vec/mod.rs:441:25",
            "   9: markers_with_scratch",
            "             at ./reference-broker/src/codec/write_txn_markers.rs:93:39",
            "  10: read",
            "             at ./reference-broker/src/codec/write_txn_markers.rs:109:25",
        ];
        assert_eq!(
            own_frame(&inlined).as_deref(),
            Some("markers_with_scratch (reference-broker/src/codec/write_txn_markers.rs)")
        );
        // Only the runtime's frames, or none: the words alone.
        assert_eq!(
            own_frame(&["stack backtrace:", "   0: std::process::abort"]),
            None
        );
        assert_eq!(own_frame(&["INFO later", "INFO later"]), None);
    }
}
