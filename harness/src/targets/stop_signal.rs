//! SIGSTOP that has taken hold. `kill(pid, SIGSTOP)` returns once the signal is queued: the
//! kernel wakes one thread of the process to begin the group stop, and only then tells the
//! others. On a loaded machine that thread can wait in the run queue while a busy one goes on
//! reading requests, so a request sent "after the pause" was handled by the paused broker
//! (seen in CI: a build's coordinator, SIGSTOPped, took the EndTxn sent to it next and stopped
//! in the middle of writing its slot, holding the slot's lock for the whole pause). A pause is
//! therefore a signal and then a wait until every thread of the process is stopped.

use std::time::{Duration, Instant};

/// How long a pause waits for every thread to stop before it goes on regardless (a thread in
/// an uninterruptible disk wait stops once the disk answers).
pub const STOP_DEADLINE: Duration = Duration::from_secs(10);

/// Sends `signal` to `pid`, and for SIGSTOP waits until it has taken hold ([`stop_and_wait`]):
/// the one way kconform signals a broker process it owns.
pub fn send(pid: u32, signal: libc::c_int) -> std::io::Result<()> {
    if signal == libc::SIGSTOP {
        return stop_and_wait(pid);
    }
    // SAFETY: kill(2) on a child's pid, which the caller has not waited for.
    match unsafe { libc::kill(pid as libc::pid_t, signal) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// Sends SIGSTOP to `pid` and waits until each of its threads is stopped (at most
/// [`STOP_DEADLINE`]); `Err` with the OS error when the signal cannot be sent. A process whose
/// threads did not all stop in time is logged and treated as paused.
fn stop_and_wait(pid: u32) -> std::io::Result<()> {
    // SAFETY: kill(2) on a child's pid, which the caller has not waited for.
    if unsafe { libc::kill(pid as libc::pid_t, libc::SIGSTOP) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let started = Instant::now();
    loop {
        match all_threads_stopped(pid) {
            Some(true) | None => return Ok(()),
            Some(false) if started.elapsed() >= STOP_DEADLINE => {
                tracing::warn!(
                    pid,
                    "SIGSTOP sent {STOP_DEADLINE:?} ago and a thread still runs; going on"
                );
                return Ok(());
            }
            Some(false) => std::thread::sleep(Duration::from_millis(1)),
        }
    }
}

/// Whether every thread of `pid` is stopped; `None` where the system does not say (no
/// `/proc`, the process gone).
pub fn all_threads_stopped(pid: u32) -> Option<bool> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut any = false;
    for task in tasks {
        let stat = std::fs::read_to_string(task.ok()?.path().join("stat")).ok()?;
        any = true;
        if !matches!(thread_state(&stat), Some('T' | 't')) {
            return Some(false);
        }
    }
    any.then_some(true)
}

/// The state letter of a `/proc/<pid>/task/<tid>/stat` line: the field after the command,
/// which is in parentheses and may itself hold spaces and parentheses.
fn thread_state(stat: &str) -> Option<char> {
    let after_command = &stat[stat.rfind(')')? + 1..];
    after_command.trim_start().chars().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_follows_the_last_parenthesis() {
        assert_eq!(thread_state("42 (kaas-ref) T 1 42"), Some('T'));
        assert_eq!(thread_state("42 (a) b) (c) S 1 42"), Some('S'));
        assert_eq!(thread_state("42 (no end"), None);
    }

    #[test]
    fn a_process_is_stopped_only_once_every_thread_is() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id();
        assert_eq!(
            all_threads_stopped(pid),
            Some(false),
            "a sleeping process runs"
        );
        stop_and_wait(pid).unwrap();
        assert_eq!(all_threads_stopped(pid), Some(true));
        // SAFETY: our own child, not yet waited for.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGCONT) };
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(
            all_threads_stopped(pid),
            None,
            "a reaped process says nothing"
        );
    }
}
