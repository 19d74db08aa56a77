//! The idempotent producer-id allocator, as kaas persists it.
//!
//! PID = (max(broker_id, 0) + 1) × 2^40 + local. Locals are handed out from blocks of 1000; a
//! block is reserved on disk (`__cluster/producer_ids/kaas-<broker>.json`, `{"nextBlock":N}`)
//! before any PID in it is given out, so a crash skips forward to a fresh block and never
//! hands out a PID twice.

use std::io;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::atomic::{read_if_present, write_atomic};

/// PIDs reserved per block.
pub const BLOCK: i64 = 1000;

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AllocatorFile {
    next_block: i64,
}

/// Hands out producer ids.
#[derive(Debug)]
pub struct PidAllocator {
    path: PathBuf,
    base: i64,
    next: i64,
    reserved_until: i64,
}

impl PidAllocator {
    /// Opens the allocator of `broker_id` under `cluster_dir`, reserving a first block.
    pub fn open(cluster_dir: &std::path::Path, broker_id: i32) -> io::Result<PidAllocator> {
        let path = cluster_dir
            .join("producer_ids")
            .join(format!("kaas-{broker_id}.json"));
        let next = match read_if_present(&path)? {
            None => 0,
            Some(bytes) => {
                serde_json::from_slice::<AllocatorFile>(&bytes)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?
                    .next_block
            }
        };
        let mut a = PidAllocator {
            path,
            base: (i64::from(broker_id.max(0)) + 1) << 40,
            next,
            reserved_until: next,
        };
        a.reserve()?;
        Ok(a)
    }

    fn reserve(&mut self) -> io::Result<()> {
        let until = self.next + BLOCK;
        let json = serde_json::to_vec(&AllocatorFile { next_block: until }).expect("serialisable");
        write_atomic(&self.path, &json)?;
        self.reserved_until = until;
        Ok(())
    }

    /// The next producer id.
    pub fn allocate(&mut self) -> io::Result<i64> {
        if self.next >= self.reserved_until {
            self.reserve()?;
        }
        let pid = self.base + self.next;
        self.next += 1;
        Ok(pid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_pid_file_content_and_restart_skip_forward() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = PidAllocator::open(dir.path(), 0).unwrap();
        assert_eq!(a.allocate().unwrap(), 1_099_511_627_776);
        let file = dir.path().join("producer_ids/kaas-0.json");
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            r#"{"nextBlock":1000}"#
        );
        drop(a);
        let mut a = PidAllocator::open(dir.path(), 0).unwrap();
        assert_eq!(a.allocate().unwrap(), (1 << 40) + 1000);
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            r#"{"nextBlock":2000}"#
        );
        for _ in 1..1000 {
            a.allocate().unwrap();
        }
        assert_eq!(a.allocate().unwrap(), (1 << 40) + 2000);
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            r#"{"nextBlock":3000}"#
        );
        let mut b = PidAllocator::open(dir.path(), 2).unwrap();
        assert_eq!(b.allocate().unwrap(), 3 << 40);
    }
}
