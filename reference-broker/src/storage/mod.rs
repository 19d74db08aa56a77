//! Everything the reference broker keeps on disk: partition logs, topic metadata, committed
//! offsets and the producer-id allocator, laid out under the data directory so that the
//! `__cluster/` part looks like a kaas shared volume.

pub mod atomic;
pub mod batch;
pub mod faults;
pub mod file_lock;
pub mod offsets;
pub mod partition;
pub mod pid;
pub mod producers;
pub mod topic_config;
pub mod topics;

use std::sync::atomic::{AtomicU64, Ordering};

static FSYNCS: AtomicU64 = AtomicU64::new(0);

/// fsync calls made by this process's storage so far (benchmarks report fsyncs per
/// transaction from it).
pub fn fsync_count() -> u64 {
    FSYNCS.load(Ordering::Relaxed)
}

/// Milliseconds since the Unix epoch: the broker's one clock (log-append times, markers,
/// the reaper's timeouts).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Counts one fsync.
pub(crate) fn count_fsync() {
    FSYNCS.fetch_add(1, Ordering::Relaxed);
}

/// The kaas cluster directory inside a data directory.
pub fn cluster_dir(data_dir: &std::path::Path) -> std::path::PathBuf {
    data_dir.join("__cluster")
}

/// The longest file-name component [`file_component`] gives, room left for a `.json` suffix
/// within the 255 bytes most file systems allow.
pub const MAX_COMPONENT: usize = 200;

/// Makes any string safe as one file-name component: bytes outside `[A-Za-z0-9._-]` become
/// `%XX`, and names that are only dots are escaped too. Group ids are arbitrary strings of up
/// to 32,767 bytes; this keeps `../x` or `a/b` inside the directory they belong to, and a name
/// whose escaped form is longer than [`MAX_COMPONENT`] is cut and ends with `~` and a SHA-256
/// of the whole name (escaping never yields `~`, so no whole name reads as a cut one).
pub fn file_component(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'.' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    if out.is_empty() || out.bytes().all(|b| b == b'.') {
        out = out.replace('.', "%2E");
        out.insert(0, '%');
    }
    if out.len() > MAX_COMPONENT {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(name.as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        // The escaped form is ASCII, so any index is a char boundary; the hash tells apart
        // names that share the kept start.
        out.truncate(MAX_COMPONENT - 1 - hex.len());
        out.push('~');
        out.push_str(&hex);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::file_component;

    #[test]
    fn file_components_cannot_escape_their_directory() {
        assert_eq!(file_component("my-group_1.v2"), "my-group_1.v2");
        assert_eq!(file_component("../etc"), "..%2Fetc");
        assert_eq!(file_component("a/b"), "a%2Fb");
        assert_eq!(file_component(".."), "%%2E%2E");
        assert_eq!(file_component(""), "%");
        assert_eq!(file_component("ü"), "%C3%BC");
    }

    #[test]
    fn long_names_are_cut_to_a_component_every_file_system_takes_and_stay_apart() {
        let max = "x".repeat(32_767);
        let utf8 = "日本".repeat(5_000);
        let mut seen = std::collections::BTreeSet::new();
        for name in [
            "x".repeat(super::MAX_COMPONENT),
            "x".repeat(super::MAX_COMPONENT + 1),
            "x".repeat(249),
            "x".repeat(250),
            max.clone(),
            format!("{max}y"),
            utf8,
            "é".repeat(300),
        ] {
            let c = file_component(&name);
            assert!(c.len() <= super::MAX_COMPONENT, "{} bytes", c.len());
            assert!(seen.insert(c), "two names share a component");
        }
        // A name that fits is never cut, so it cannot meet a cut one.
        assert_eq!(file_component(&"x".repeat(200)), "x".repeat(200));
        assert!(file_component(&"x".repeat(201)).contains('~'));
    }
}
