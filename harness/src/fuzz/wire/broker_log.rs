//! The log of a broker kconform runs (`--broker-cmd`): its stdout and stderr, read through
//! pipes and written to `DIR/broker.log`, rotated to `broker.log.1` past 64 MiB, so that a
//! night of a broker that logs every frame it refuses (kaas-ref wrote 300 MB in six minutes)
//! keeps at most twice that on disk. What the broker said since a mark ([`OwnedLog::since`])
//! is what its last words are read from.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How much of the log is kept in the current file before it is rotated.
pub const KEEP: u64 = 64 << 20;

/// How much, at most, is read back since a mark.
const TAIL: u64 = 64 * 1024;

/// The log file and how much has gone through it.
#[derive(Debug)]
struct Sink {
    path: PathBuf,
    file: File,
    /// Bytes in the current file.
    in_file: u64,
    /// Bytes written since the log was opened (marks count these).
    total: u64,
    keep: u64,
}

impl Sink {
    /// Writes `bytes`, rotating the file whenever it is full: no file holds more than `keep`.
    fn write(&mut self, mut bytes: &[u8]) -> std::io::Result<()> {
        while !bytes.is_empty() {
            if self.in_file >= self.keep {
                std::fs::rename(&self.path, self.path.with_extension("log.1"))?;
                self.file = File::create(&self.path)?;
                self.in_file = 0;
            }
            let room = (self.keep - self.in_file).max(1) as usize;
            let (now, later) = bytes.split_at(room.min(bytes.len()));
            self.file.write_all(now)?;
            self.in_file += now.len() as u64;
            self.total += now.len() as u64;
            bytes = later;
        }
        Ok(())
    }
}

/// A broker's output, kept as its log.
#[derive(Debug)]
pub struct OwnedLog {
    sink: Arc<Mutex<Sink>>,
    copiers: Vec<JoinHandle<()>>,
}

impl OwnedLog {
    /// A log at `path` (created, or appended to), rotated past `keep` bytes.
    pub fn open(path: &Path, keep: u64) -> std::io::Result<OwnedLog> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        let in_file = file.metadata()?.len();
        Ok(OwnedLog {
            sink: Arc::new(Mutex::new(Sink {
                path: path.to_owned(),
                file,
                in_file,
                total: 0,
                keep,
            })),
            copiers: Vec::new(),
        })
    }

    /// Copies `from` (a child's stdout or stderr) into the log until it ends.
    pub fn copy(&mut self, mut from: impl Read + Send + 'static) {
        let sink = self.sink.clone();
        self.copiers.push(std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let n = match from.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                let Ok(mut sink) = sink.lock() else {
                    return;
                };
                if let Err(e) = sink.write(&buf[..n]) {
                    tracing::warn!(
                        "the broker's log {} cannot be written: {e}",
                        sink.path.display()
                    );
                    return;
                }
            }
        }));
    }

    /// Waits up to `wait` for the copies of a process that has ended to reach the end of its
    /// output, so that its last words are in the log before they are read.
    pub fn settle(&mut self, wait: Duration) {
        let until = Instant::now() + wait;
        while self.copiers.iter().any(|c| !c.is_finished()) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        let (done, running): (Vec<_>, Vec<_>) = std::mem::take(&mut self.copiers)
            .into_iter()
            .partition(|c| c.is_finished());
        for c in done {
            let _ = c.join();
        }
        self.copiers = running;
    }

    /// Where the log ends now.
    pub fn mark(&self) -> u64 {
        self.sink.lock().map_or(0, |s| s.total)
    }

    /// What the log gained since `mark` (its last 64 KiB, and only what the current file
    /// still holds).
    pub fn since(&self, mark: u64) -> String {
        let Ok(sink) = self.sink.lock() else {
            return String::new();
        };
        let want = sink.total.saturating_sub(mark).min(sink.in_file).min(TAIL);
        let Ok(mut file) = File::open(&sink.path) else {
            return String::new();
        };
        let mut bytes = Vec::new();
        let len = file.metadata().map_or(0, |m| m.len());
        if file.seek(SeekFrom::Start(len.saturating_sub(want))).is_ok() {
            let _ = file.take(want).read_to_end(&mut bytes);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A broker that writes more than the log keeps: rotated into `.1`, neither file past the
    /// limit, and what it said since a mark read back.
    #[test]
    fn a_chatty_broker_is_kept_to_two_files_and_its_last_words_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("broker.log");
        let mut log = OwnedLog::open(&path, 4096).unwrap();
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            // One pipe, so that the lines reach the log in the order written (two pipes are
            // copied by two threads): the crash message last, as a dying broker writes it.
            .arg("exec 1>&2; i=0; while [ $i -lt 400 ]; do echo \"refused frame $i\"; i=$((i+1)); done; echo 'memory allocation of 9 bytes failed'")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mark = log.mark();
        log.copy(child.stdout.take().unwrap());
        log.copy(child.stderr.take().unwrap());
        child.wait().unwrap();
        log.settle(Duration::from_secs(5));
        let current = std::fs::metadata(&path).unwrap().len();
        let rotated = std::fs::metadata(path.with_extension("log.1"))
            .unwrap()
            .len();
        assert!(current <= 4096 && rotated == 4096, "{current} / {rotated}");
        assert!(log.mark() - mark > 6000, "{}", log.mark());
        let said = log.since(mark);
        assert!(
            said.contains("memory allocation of 9 bytes failed"),
            "{said}"
        );
        assert!(
            !said.contains("refused frame 0\n"),
            "older than the current file: {said}"
        );
        assert_eq!(log.since(log.mark()), "");
    }
}
