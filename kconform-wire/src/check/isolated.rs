//! A session that outlives its decoder's aborts. A request past the address space cannot be
//! served by any allocator, and Rust aborts the process on it: in process, a session ends at
//! the first such input, and every defect after it goes unseen (on kaas's codec, four sessions
//! and a hand-made skip list were needed to see them all). Here the checks run in a child
//! process, forked from the session so that it holds the same decoder and inputs; the child
//! says each finding as it goes (its input's number and its signature) and keeps its counts in
//! memory the two share. When the child dies, the session records the input it was checking
//! (the size it asked for, which the allocator wrote to that memory, or the signal) and forks
//! again from the next input: one session, every defect.
//!
//! A finding the session has not seen yet is checked again in the session's own process, to
//! have its whole body and problem: inputs are drawn in the same order on both sides, and one
//! that did not abort in the child does not abort when checked again.

use std::io::{BufRead, BufReader};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use serde_json::{json, Value};

use super::{
    allocation_bound, check, Case, Decoded, Direction, Finding, Problem, Session, Verdict,
};
use crate::{alloc, Rng};

impl Session {
    /// [`Session::run`] in child processes: an input whose decoding aborts the process is a
    /// finding ([`Problem::Aborted`], [`Problem::Died`]) and the session goes on from the next.
    /// In process where there is no `fork` (not Unix).
    pub fn run_isolated<F>(&mut self, seed: u64, count: u64, decoder: F)
    where
        F: FnMut(&Case) -> Decoded,
    {
        let mut rng = Rng::new(seed);
        let mut left = count;
        let next = move || {
            (left > 0).then(|| {
                left -= 1;
                Case::draw(&mut rng)
            })
        };
        self.isolated(next, decoder);
    }

    /// [`Session::check`] of each of `cases` (a fuzzer's crash files, a corpus) in child
    /// processes, as [`Session::run_isolated`] runs them.
    pub fn check_isolated<F>(&mut self, cases: Vec<Case>, decoder: F)
    where
        F: FnMut(&Case) -> Decoded,
    {
        let mut cases = cases.into_iter();
        self.isolated(move || cases.next(), decoder);
    }

    fn isolated<N, F>(&mut self, mut next: N, mut decoder: F)
    where
        N: FnMut() -> Option<Case>,
        F: FnMut(&Case) -> Decoded,
    {
        #[cfg(unix)]
        loop {
            match child::one(self, &mut next, &mut decoder) {
                Ok(child::Ended::AllChecked) => return,
                Ok(child::Ended::Died) => continue,
                Err(e) => {
                    eprintln!("kconform-wire: checks go on in this process: {e}");
                    break;
                }
            }
        }
        while let Some(case) = next() {
            self.check(&case, &mut decoder);
        }
    }
}

/// What the child keeps where the session reads it after the child is gone.
#[repr(C)]
#[derive(Debug, Default)]
struct Counts {
    /// Inputs begun (the one it was checking when it died is the last).
    begun: AtomicU64,
    /// Of them, read alike by Apache and the decoder.
    accepted: AtomicU64,
    /// Of them, not served by the decoder.
    not_served: AtomicU64,
    /// The size of the request that could not be served, if one was not.
    unserved: AtomicUsize,
}

/// One line from the child: its `index`-th input showed a defect.
fn said(index: u64, finding: &Finding) -> String {
    let case = &finding.case;
    let line = json!([
        index,
        finding.signature(),
        case.api as i16,
        case.direction == Direction::Request,
        case.version,
        finding.field(),
    ]);
    format!("{line}\n")
}

/// A line of [`said`], read back: index, signature, version triple, field.
type Said = (u64, String, (i16, Direction, i16), Option<String>);

fn read_said(line: &str) -> Option<Said> {
    let v: Value = serde_json::from_str(line).ok()?;
    let direction = match v[3].as_bool()? {
        true => Direction::Request,
        false => Direction::Response,
    };
    let version = (
        i16::try_from(v[2].as_i64()?).ok()?,
        direction,
        i16::try_from(v[4].as_i64()?).ok()?,
    );
    let field = v[5].as_str().map(str::to_owned);
    Some((v[0].as_u64()?, v[1].as_str()?.to_owned(), version, field))
}

/// What a signal that ended the child says of the decoder.
fn death(signal: i32) -> String {
    let what = match signal {
        libc::SIGABRT => "aborted (SIGABRT)",
        libc::SIGSEGV => "a bad address or a stack overflow (SIGSEGV)",
        libc::SIGBUS => "a bad address (SIGBUS)",
        libc::SIGILL => "an illegal instruction (SIGILL)",
        libc::SIGFPE => "an arithmetic fault (SIGFPE)",
        libc::SIGKILL => "killed (SIGKILL: out of memory?)",
        _ => return format!("killed by signal {signal}"),
    };
    what.to_owned()
}

#[cfg(unix)]
mod child {
    use std::fs::File;
    use std::io::Write;
    use std::os::fd::FromRawFd;

    use super::*;

    /// How a child ended.
    pub(super) enum Ended {
        /// It checked every input.
        AllChecked,
        /// It died on one, which is recorded; the session goes on from the next.
        Died,
    }

    /// Forks a child that checks the inputs `next` gives, reads what it says into `session`,
    /// and records the input it died on, if it died.
    pub(super) fn one<N, F>(
        session: &mut Session,
        next: &mut N,
        decoder: &mut F,
    ) -> std::io::Result<Ended>
    where
        N: FnMut() -> Option<Case>,
        F: FnMut(&Case) -> Decoded,
    {
        let counts = Shared::new()?;
        let mut fds = [0; 2];
        // SAFETY: pipe(2) fills the two descriptors of a fresh array.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let _ = std::io::stdout().flush();
        // SAFETY: the session runs on one thread (the decoders_session binary, a test of its
        // own); the child only checks inputs and writes to the pipe, then `_exit`s.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if pid == 0 {
            // SAFETY: the child's copies of the pipe's ends, its own.
            unsafe { libc::close(fds[0]) };
            checks(counts.get(), fds[1], next, decoder);
        }
        // SAFETY: the session's copy of the write end, which it does not use.
        unsafe { libc::close(fds[1]) };
        // SAFETY: the read end is this process's and nothing else owns it.
        let from_child = unsafe { File::from_raw_fd(fds[0]) };
        let base = session.cases;
        let mut drawn = 0u64;
        let mut draw_to = |index: u64, next: &mut N| -> Option<Case> {
            while drawn < index {
                next()?;
                drawn += 1;
            }
            drawn += 1;
            next()
        };
        for line in BufReader::new(from_child).lines() {
            let Some((index, signature, version, field)) = line.ok().as_deref().and_then(read_said)
            else {
                continue;
            };
            if session.again(&signature, version, field).is_some() {
                continue;
            }
            let Some(case) = draw_to(index, next) else {
                continue;
            };
            session.cases = base + index + 1;
            if let Err(finding) = check(&case, &mut *decoder) {
                session.record(*finding);
            }
        }
        let status = wait(pid)?;
        let c = counts.get();
        let begun = c.begun.load(Ordering::SeqCst);
        session.cases = base + begun;
        session.apache_accepted += c.accepted.load(Ordering::SeqCst);
        session.not_served += c.not_served.load(Ordering::SeqCst);
        let problem = match status {
            Death::Exited(0) => return Ok(Ended::AllChecked),
            Death::Exited(code) => Problem::Died(format!("exited with code {code}")),
            Death::Signal(signal) => match c.unserved.load(Ordering::SeqCst) {
                0 => Problem::Died(death(signal)),
                bytes => Problem::Aborted { bytes, bound: 0 },
            },
        };
        if begun == 0 {
            return Err(std::io::Error::other(format!(
                "a child died before its first input ({problem})"
            )));
        }
        let Some(case) = draw_to(begun - 1, next) else {
            return Err(std::io::Error::other(
                "the inputs ran out before the one a child died on",
            ));
        };
        let problem = match problem {
            Problem::Aborted { bytes, .. } => Problem::Aborted {
                bytes,
                bound: allocation_bound(case.body.len()),
            },
            other => other,
        };
        session.record(Finding { case, problem });
        Ok(Ended::Died)
    }

    /// The child: checks each input, counting, and says each finding on `fd`; never returns.
    fn checks<N, F>(counts: &'static Counts, fd: i32, next: &mut N, decoder: &mut F) -> !
    where
        N: FnMut() -> Option<Case>,
        F: FnMut(&Case) -> Decoded,
    {
        quiet_stderr();
        alloc::note_unserved_in(&counts.unserved);
        // SAFETY: the write end of the pipe is this child's alone.
        let mut to_session = std::mem::ManuallyDrop::new(unsafe { File::from_raw_fd(fd) });
        while let Some(case) = next() {
            let index = counts.begun.fetch_add(1, Ordering::SeqCst);
            match check(&case, &mut *decoder) {
                Ok(Some(Verdict::Accepts { .. })) => {
                    counts.accepted.fetch_add(1, Ordering::SeqCst);
                }
                Ok(Some(_)) => {}
                Ok(None) => {
                    counts.not_served.fetch_add(1, Ordering::SeqCst);
                }
                Err(finding) => {
                    if to_session
                        .write_all(said(index, &finding).as_bytes())
                        .is_err()
                    {
                        break;
                    }
                }
            }
        }
        // SAFETY: ends the child without running the session's exit handlers or flushing its
        // copies of the session's buffers.
        unsafe { libc::_exit(0) }
    }

    /// The allocator's last words before an abort go nowhere: the session records the
    /// finding, and the terminal stays the session's.
    fn quiet_stderr() {
        // SAFETY: opens /dev/null and puts it in place of stderr; both are this child's. No
        // core file either: an abort is a finding here, and writing one takes longer than
        // the checks of a thousand inputs.
        unsafe {
            let none = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &none);
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY);
            if null >= 0 {
                libc::dup2(null, 2);
                libc::close(null);
            }
        }
    }

    /// How the child ended.
    enum Death {
        Exited(i32),
        Signal(i32),
    }

    fn wait(pid: libc::pid_t) -> std::io::Result<Death> {
        let mut status = 0;
        loop {
            // SAFETY: waits for our own child, writing its status into a local.
            let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
            if rc == pid {
                break;
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        Ok(match libc::WIFSIGNALED(status) {
            true => Death::Signal(libc::WTERMSIG(status)),
            false => Death::Exited(libc::WEXITSTATUS(status)),
        })
    }

    /// [`Counts`] in an anonymous shared mapping, unmapped when dropped.
    struct Shared(*mut Counts);

    impl Shared {
        fn new() -> std::io::Result<Shared> {
            // SAFETY: an anonymous shared mapping with no address hint; zero-filled, which is
            // `Counts::default()` (atomics of zero).
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    std::mem::size_of::<Counts>(),
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            match p == libc::MAP_FAILED {
                true => Err(std::io::Error::last_os_error()),
                false => Ok(Shared(p.cast())),
            }
        }

        /// The counts, for as long as the mapping lives (the child never unmaps it, and
        /// the session reads them before it does).
        fn get(&self) -> &'static Counts {
            // SAFETY: a live, zero-initialised mapping of a `Counts`, only read through atomics.
            unsafe { &*self.0 }
        }
    }

    impl Drop for Shared {
        fn drop(&mut self) {
            // SAFETY: the mapping made in `new`, of this size.
            unsafe { libc::munmap(self.0.cast(), std::mem::size_of::<Counts>()) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_reads_back_as_said() {
        let mut rng = Rng::new(1);
        let case = Case::draw(&mut rng);
        let finding = Finding {
            problem: Problem::Panicked("tab\there \"quoted\"".into()),
            case,
        };
        let (index, signature, version, field) = read_said(&said(7, &finding)).unwrap();
        assert_eq!(index, 7);
        assert_eq!(signature, finding.signature());
        assert_eq!(
            version,
            (
                finding.case.api as i16,
                finding.case.direction,
                finding.case.version
            )
        );
        assert_eq!(field, None);
        assert!(read_said("not json").is_none());
    }
}
