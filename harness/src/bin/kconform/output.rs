//! Writing to stdout as ripgrep and cargo do: a reader that went away (`kconform list | head
//! -1`) ends the program quietly with success instead of a panic, and the report's tones are
//! coloured when stdout is a terminal.

/// Writes to stdout; a closed pipe ends the program quietly.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = write!(std::io::stdout().lock(), $($arg)*) {
            $crate::output::stdout_failed(e);
        }
    }};
}

/// [`out!`] with a newline.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout().lock(), $($arg)*) {
            $crate::output::stdout_failed(e);
        }
    }};
}

/// A note on stderr (`kconform: skipping ...`), left out under `--quiet`.
macro_rules! note {
    ($($arg:tt)*) => {{
        if !$crate::progress::is_quiet() {
            eprintln!($($arg)*);
        }
    }};
}

/// A closed stdout ends the program quietly; any other write failure is said on stderr.
pub fn stdout_failed(e: std::io::Error) {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("kconform: cannot write to stdout: {e}");
    std::process::exit(2);
}

/// Colours a part of the report by its tone, when stdout is a terminal (console decides).
pub fn paint(tone: kconform::report::Tone, text: &str) -> String {
    use kconform::report::Tone;
    let styled = console::style(text);
    match tone {
        Tone::Dim => styled.dim(),
        Tone::Bold => styled.bold(),
        Tone::Good => styled.green(),
        Tone::Warn => styled.yellow(),
        Tone::Bad => styled.red().bold(),
    }
    .to_string()
}
