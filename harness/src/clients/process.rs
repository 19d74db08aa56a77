//! A client's workload program run as a process: started, killed past its deadline, its
//! standard output (the transcript, as JSON) kept apart from its standard error (the end of
//! which says why a run failed). The Java runner and the ecosystem's clients ([`super::programs`])
//! all run so.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Why a program gave no output to read.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// It ran past its deadline and was killed.
    #[error("did not finish within {0:?}")]
    Timeout(Duration),
    /// It ended with a failure.
    #[error("{status}\n{tail}")]
    Failed {
        /// How it ended.
        status: std::process::ExitStatus,
        /// The end of its standard error.
        tail: String,
    },
    /// It could not be started, or its output not kept.
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
}

/// Runs `command` to its end, killing it after `deadline`: what it printed on standard output,
/// and the last 20 lines of its standard error.
pub fn output(mut command: Command, deadline: Duration) -> Result<(String, String), ProcessError> {
    let err_file = tempfile::NamedTempFile::new()?;
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(err_file.reopen()?)
        .spawn()?;
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(ProcessError::Timeout(deadline));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let printed = reader.join().unwrap_or_default();
    let stderr = std::fs::read_to_string(err_file.path()).unwrap_or_default();
    let tail = crate::targets::apache::tail(&stderr, 20);
    match status.success() {
        true => Ok((printed, tail)),
        false => Err(ProcessError::Failed { status, tail }),
    }
}
