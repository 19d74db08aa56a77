//! An exclusive lock on a file shared by every broker of a cluster (`flock`): brokers that
//! read, change and write back the same file of the shared volume (a transaction-state slot:
//! fifty slots hold every transactional id, so two coordinators often share one) would
//! otherwise lose each other's changes, or rename each other's `.tmp`; two brokers that both
//! believe they lead a partition (one paused past the member timeout, or restarting) would
//! write its log at the same offsets.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

/// Held until dropped (closing the file releases the lock).
#[derive(Debug)]
pub struct FileLock {
    _file: File,
}

impl FileLock {
    /// Waits for the exclusive lock on `path` (created if missing, with its directory).
    pub fn exclusive(path: &Path) -> io::Result<FileLock> {
        let file = open_lock_file(path)?;
        lock_exclusive(&file)?;
        Ok(FileLock { _file: file })
    }

    /// The exclusive lock on `path` if no one holds it now, `None` if someone does: for work
    /// that another broker may be doing already and that waits for the next pass rather than
    /// for a holder that may be paused.
    pub fn try_exclusive(path: &Path) -> io::Result<Option<FileLock>> {
        let file = open_lock_file(path)?;
        loop {
            // SAFETY: flock on a descriptor this function owns; no memory is passed.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if rc == 0 {
                return Ok(Some(FileLock { _file: file }));
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => continue,
                io::ErrorKind::WouldBlock => return Ok(None),
                _ => return Err(e),
            }
        }
    }
}

/// The exclusive lock on a file this broker keeps open (a partition log), held until dropped:
/// the lock belongs to the open file, which the holder shares through a duplicate of its
/// descriptor, so the owner may even replace its handle meanwhile.
#[derive(Debug)]
pub struct HeldLock {
    file: File,
}

impl HeldLock {
    /// Waits for the exclusive lock on the open `file`.
    pub fn on(file: &File) -> io::Result<HeldLock> {
        let file = file.try_clone()?;
        lock_exclusive(&file)?;
        Ok(HeldLock { file })
    }
}

impl Drop for HeldLock {
    fn drop(&mut self) {
        // SAFETY: flock on a descriptor this value owns; no memory is passed. The lock is
        // the open file's, so every other descriptor of it would keep it without this.
        unsafe { libc::flock(self.file.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// The lock file at `path`, created if missing, with its directory.
fn open_lock_file(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
}

fn lock_exclusive(file: &File) -> io::Result<()> {
    loop {
        // SAFETY: flock on a descriptor the caller owns; no memory is passed.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
        if rc == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn one_holder_at_a_time_even_within_one_process() {
        let dir = tempfile::tempdir().unwrap();
        let path = Arc::new(dir.path().join("x.lock"));
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (path, inside, most) = (path.clone(), inside.clone(), most.clone());
                std::thread::spawn(move || {
                    for _ in 0..50 {
                        let _lock = FileLock::exclusive(&path).unwrap();
                        let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::yield_now();
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(most.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_try_is_refused_while_held_and_granted_after() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("x.lock");
        let held = FileLock::try_exclusive(&path)
            .unwrap()
            .expect("free at first");
        assert!(FileLock::try_exclusive(&path).unwrap().is_none(), "held");
        drop(held);
        assert!(
            FileLock::try_exclusive(&path).unwrap().is_some(),
            "released"
        );
    }
}
