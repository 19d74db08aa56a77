//! What a broker said as it died or dropped a connection, read from its log: a panic's
//! message and location, an allocation failure, an abort, a fatal error of another runtime
//! (Go, the JVM, a sanitizer). Normalised (numbers, addresses and ids out; a panic's location
//! kept, it names the line at fault), it is the signature of a crash: two frames that kill the
//! broker the same way are one defect, whatever they are.

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
            found = Some(said);
        } else if let Some(said) = fatal(&line) {
            found = Some(said);
        }
        i += 1;
    }
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
}
