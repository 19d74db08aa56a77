//! Atomic file replacement: write a temporary file beside it (`<name>.<process>-<n>.tmp`, a
//! name of its own per write where kaas uses `<name>.tmp`, since brokers share the volume),
//! fsync it, rename over `<name>`; the tmp file is removed on any error. A reader sees the old file or the new one, never a torn one, which
//! is what kaas's slot files, offset files and allocator files rely on.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;

/// Replaces `path` with `bytes` atomically (creating parent directories).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    super::faults::check(path)?;
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    let tmp_name = tmp_name(path);
    let tmp = Path::new(&tmp_name);
    let result = (|| {
        write_synced(tmp, bytes)?;
        fs::rename(tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(tmp);
    }
    result
}

/// Creates `path` with `bytes` unless it exists: whether this call created it. Brokers that
/// start together on a shared volume each try; one wins, the others read its file.
pub fn write_new(path: &Path, bytes: &[u8]) -> io::Result<bool> {
    super::faults::check(path)?;
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    let tmp_name = tmp_name(path);
    let tmp = Path::new(&tmp_name);
    let result = write_synced(tmp, bytes).and_then(|()| match fs::hard_link(tmp, path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    });
    let _ = fs::remove_file(tmp);
    result
}

/// `<name>.<process>-<n>.tmp`: a name no other writer uses, so that brokers writing the same
/// file of a shared volume never rename each other's half-written copy (the rename stays the
/// commit point).
/// The temporary file beside `path`: short whatever `path`'s name (a file name near the 255
/// bytes a file system allows has no room for a suffix), unique per process and write, and
/// ending `.tmp` so that debris sweeps know it.
fn tmp_name(path: &Path) -> std::ffi::OsString {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = format!(".{}-{n}.tmp", std::process::id());
    match path.parent() {
        Some(dir) => dir.join(name).into_os_string(),
        None => name.into(),
    }
}

fn write_synced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = File::create(path)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    super::count_fsync();
    Ok(())
}

/// Reads a file, treating a missing or empty file as `None`.
pub fn read_if_present(path: &Path) -> io::Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(b) if b.is_empty() => Ok(None),
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_whole_file_and_leaves_no_tmp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b/x.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert_eq!(files(&dir.path().join("a/b")), ["x.json"], "no tmp left");
        assert_eq!(read_if_present(&dir.path().join("none")).unwrap(), None);
    }

    fn files(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn the_first_of_writers_racing_to_create_a_file_wins() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("cluster_id");
        let writers: Vec<_> = (0..8)
            .map(|i| {
                let p = p.clone();
                std::thread::spawn(move || write_new(&p, format!("id-{i}").as_bytes()).unwrap())
            })
            .collect();
        let won: usize = writers
            .into_iter()
            .map(|w| usize::from(w.join().unwrap()))
            .sum();
        assert_eq!(won, 1, "exactly one created it");
        assert!(fs::read_to_string(&p).unwrap().starts_with("id-"));
        assert!(!write_new(&p, b"late").unwrap());
        assert_eq!(files(dir.path()), ["cluster_id"], "no tmp left");
    }

    #[test]
    fn concurrent_replacements_never_rename_each_others_tmp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("slot.json");
        let writers: Vec<_> = (0..8)
            .map(|i| {
                let p = p.clone();
                std::thread::spawn(move || {
                    for _ in 0..20 {
                        write_atomic(&p, format!("{i}").as_bytes()).unwrap();
                    }
                })
            })
            .collect();
        writers.into_iter().for_each(|w| w.join().unwrap());
        assert_eq!(files(dir.path()), ["slot.json"]);
    }
}
