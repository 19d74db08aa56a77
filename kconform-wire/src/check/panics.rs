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
                    .map(|l| format!(" at {}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                let said = format!("{}{at}", payload_text(info.payload()));
                SAID.with(|s| *s.borrow_mut() = Some(said));
            }
            false => previous(info),
        }));
    });
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
