//! A decoder's panics, caught and named: the message and the location, kept off stderr while a
//! check runs (a fuzzing loop would otherwise print one backtrace note per input).

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic;
use std::sync::Once;

thread_local! {
    static CHECKING: Cell<bool> = const { Cell::new(false) };
    static SAID: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

/// Installs, once, a panic hook that keeps a panic inside a check off stderr and notes its
/// message and location for the finding; every other panic goes to the hook that was there
/// before (libfuzzer-sys's, which aborts so that the fuzzer sees a crash, or the default).
pub fn quiet_panics() {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| match CHECKING.with(Cell::get) {
            true => {
                let at = info
                    .location()
                    .map(|l| match in_the_standard_library(l.file()) {
                        // `capacity overflow` is the standard library's line whoever asked:
                        // the decoder's own frame names the defect.
                        true => first_own_frame(&std::backtrace::Backtrace::force_capture())
                            .unwrap_or_else(|| format!(" at {}:{}", l.file(), l.line())),
                        false => format!(" at {}:{}", l.file(), l.line()),
                    })
                    .unwrap_or_default();
                let said = format!("{}{at}", payload_text(info.payload()));
                SAID.with(|s| *s.borrow_mut() = Some(said));
            }
            false => previous(info),
        }));
    });
}

/// Whether a panic's location is in the standard library's sources (`library/alloc/...`, or
/// the same under `/rustc/<hash>/`).
fn in_the_standard_library(file: &str) -> bool {
    file.starts_with("library/") || file.starts_with("/rustc/")
}

/// Where a backtrace first enters code that is not the standard library's, after the panic
/// began (the hook and the panic machinery above it are skipped): ` at src/codec.rs:41` when
/// the frame has a file, ` in tansu_sans_io::primitive::decode` when it has only a symbol.
fn first_own_frame(backtrace: &std::backtrace::Backtrace) -> Option<String> {
    let text = backtrace.to_string();
    let mut frames = Vec::new();
    let mut lines = text.lines().map(str::trim).peekable();
    while let Some(line) = lines.next() {
        let Some((number, symbol)) = line.split_once(": ") else {
            continue;
        };
        if number.parse::<usize>().is_err() {
            continue;
        }
        let file = lines
            .next_if(|l| l.starts_with("at "))
            .map(|l| l.trim_start_matches("at ").to_owned());
        frames.push((symbol.to_owned(), file));
    }
    let began = frames.iter().position(|(symbol, _)| {
        symbol.contains("rust_begin_unwind") || symbol.contains("begin_panic")
    })?;
    frames[began + 1..]
        .iter()
        .find_map(|(symbol, file)| match file {
            Some(f) if !in_the_standard_library(f) => Some(format!(
                " at {}",
                // `src/codec.rs:41:17`: the column goes, as a panic's location has none.
                f.rsplit_once(':').map_or(f.as_str(), |(l, _)| l)
            )),
            Some(_) => None,
            None => {
                let std = ["std::", "core::", "alloc::", "__rust"]
                    .iter()
                    .any(|p| symbol.trim_start_matches('<').starts_with(p));
                (!std).then(|| format!(" in {}", without_hash(symbol)))
            }
        })
}

/// A symbol without the hash rustc appends (`::h0123456789abcdef`).
fn without_hash(symbol: &str) -> &str {
    match symbol.rsplit_once("::h") {
        Some((name, hash)) if hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()) => {
            name
        }
        _ => symbol,
    }
}

/// The text a panic carries.
fn payload_text(payload: &(dyn Any + Send)) -> String {
    match (
        payload.downcast_ref::<&str>(),
        payload.downcast_ref::<String>(),
    ) {
        (Some(s), _) => (*s).to_owned(),
        (_, Some(s)) => s.clone(),
        _ => "a panic with no message".into(),
    }
}

/// Runs `f`, which catches its own panic into `Err(payload)`, and gives back its result and
/// the panic's words: as the quiet hook noted them (with the location), else the payload's.
pub(super) fn catching<R>(
    f: impl FnOnce() -> (std::thread::Result<R>, usize),
) -> (Result<R, String>, usize) {
    let before = CHECKING.with(|c| c.replace(true));
    SAID.with(|s| s.borrow_mut().take());
    let (outcome, largest) = f();
    CHECKING.with(|c| c.set(before));
    let said = SAID.with(|s| s.borrow_mut().take());
    let outcome = outcome.map_err(|payload| said.unwrap_or_else(|| payload_text(&*payload)));
    (outcome, largest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_standard_library_panic_is_placed_at_the_decoders_own_frame() {
        quiet_panics();
        #[inline(never)]
        fn decoder_reading_a_count(count: usize) -> usize {
            let v: Vec<u64> = Vec::with_capacity(count);
            v.capacity()
        }
        let (outcome, _) = catching(|| {
            let r = std::panic::catch_unwind(|| decoder_reading_a_count(usize::MAX / 2));
            (r, 0)
        });
        let said = outcome.unwrap_err();
        assert!(said.starts_with("capacity overflow at "), "{said}");
        assert!(!said.contains("library/"), "{said}");
        assert!(said.contains("src/check/panics.rs:"), "{said}");
        assert_eq!(without_hash("a::b::h0123456789abcdef"), "a::b");
        assert_eq!(without_hash("a::hb"), "a::hb");
    }
}
