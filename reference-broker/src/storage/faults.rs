//! A fault switch for tests: every storage write under a chosen directory fails as on a full
//! disk (ENOSPC), so tests can show what the broker answers and what it keeps when its disk
//! fills, on a machine where no small filesystem can be mounted. Compiled in only with the
//! `faults` feature (this crate's tests turn it on); without it `check` is a no-op.

use std::io;
use std::path::Path;

#[cfg(feature = "faults")]
mod switch {
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Mutex;

    static ARMED: AtomicBool = AtomicBool::new(false);
    static FULL: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    static WHILE: Mutex<Option<PathBuf>> = Mutex::new(None);

    /// From now on, while `marker` exists, every write fails with ENOSPC: how a script fills
    /// the disk of a kaas-ref process (`touch` the marker; remove it to free), which no call
    /// in process can reach.
    pub fn fill_while(marker: &Path) {
        *WHILE.lock().unwrap_or_else(|e| e.into_inner()) = Some(marker.to_owned());
        ARMED.store(true, Ordering::SeqCst);
    }

    /// From now on, writes under `dir` fail with ENOSPC.
    pub fn fill(dir: &Path) {
        let mut full = FULL.lock().unwrap_or_else(|e| e.into_inner());
        full.push(dir.to_owned());
        ARMED.store(true, Ordering::SeqCst);
    }

    /// Writes under `dir` succeed again.
    pub fn free(dir: &Path) {
        let mut full = FULL.lock().unwrap_or_else(|e| e.into_inner());
        full.retain(|d| d != dir);
        let watched = WHILE.lock().unwrap_or_else(|e| e.into_inner()).is_some();
        ARMED.store(!full.is_empty() || watched, Ordering::SeqCst);
    }

    pub(super) fn is_full(path: &Path) -> bool {
        if !ARMED.load(Ordering::Relaxed) {
            return false;
        }
        let marked = WHILE
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_deref()
            .is_some_and(Path::exists);
        marked
            || FULL
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .any(|d| path.starts_with(d))
    }
}

#[cfg(feature = "faults")]
pub use switch::{fill, fill_while, free};

/// Fails as a full disk does when `path` is under a directory the switch has filled.
pub(crate) fn check(path: &Path) -> io::Result<()> {
    #[cfg(feature = "faults")]
    if switch::is_full(path) {
        return Err(io::Error::new(
            io::ErrorKind::StorageFull,
            format!("No space left on device (injected): {}", path.display()),
        ));
    }
    let _ = path;
    Ok(())
}
