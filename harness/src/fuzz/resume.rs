//! Where a fuzzing run stopped, kept in the findings directory so that `kconform fuzz
//! --resume` goes on from there instead of drawing the same inputs again: the seed and the
//! number of the next input, one small file per fuzzer (and shard: `.resume-sequences` for the
//! whole stream, `.resume-sequences-2-of-8` for a shard), rewritten (atomically) as the run
//! goes, so that a crash or a kill loses at most the inputs in flight.

use std::path::Path;

use super::shard::Shard;
use super::FuzzError;

/// A fuzzer's place in the stream its seed draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// The run's seed.
    pub seed: u64,
    /// The number of the next input to draw (sequences, or frames), counted in the shard's
    /// own inputs.
    pub next: u64,
}

/// The file of `fuzzer`'s place in `shard`.
fn file_name(fuzzer: &str, shard: Shard) -> String {
    match shard.whole() {
        true => format!(".resume-{fuzzer}"),
        false => format!(".resume-{fuzzer}-{}-of-{}", shard.index, shard.of),
    }
}

fn file(dir: &Path, fuzzer: &str, shard: Shard) -> std::path::PathBuf {
    dir.join(file_name(fuzzer, shard))
}

/// The position `fuzzer` ("sequences", "frames") saved in `dir` for `shard`, if one did.
pub fn load(dir: &Path, fuzzer: &str, shard: Shard) -> Result<Option<Position>, FuzzError> {
    read(&file(dir, fuzzer, shard))
}

/// The position a resume file at `path` holds; none where there is no file.
pub fn read(path: &Path) -> Result<Option<Position>, FuzzError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(FuzzError::Findings(path.display().to_string(), e)),
    };
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse::<u64>().ok())
    };
    match (field("seed "), field("next ")) {
        (Some(seed), Some(next)) => Ok(Some(Position { seed, next })),
        _ => Err(FuzzError::Source(format!(
            "{}: not a resume file (want lines 'seed N' and 'next N')",
            path.display()
        ))),
    }
}

/// Saves `fuzzer`'s position in `shard` in `dir`.
pub fn save(dir: &Path, fuzzer: &str, shard: Shard, position: Position) -> Result<(), FuzzError> {
    write(&file(dir, fuzzer, shard), position)
}

/// Writes a resume file at `path` (aside, then renamed over the old one, so that a crash
/// leaves the old place or the new one).
pub fn write(path: &Path, position: Position) -> Result<(), FuzzError> {
    let io = |e| FuzzError::Findings(path.display().to_string(), e);
    let mut aside = path.as_os_str().to_owned();
    aside.push(".new");
    std::fs::write(
        &aside,
        format!("seed {}\nnext {}\n", position.seed, position.next),
    )
    .map_err(io)?;
    std::fs::rename(&aside, path).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_position_survives_a_save_and_a_bad_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let whole = Shard::default();
        assert_eq!(load(dir.path(), "frames", whole).unwrap(), None);
        let p = Position {
            seed: 42,
            next: 9000,
        };
        save(dir.path(), "frames", whole, p).unwrap();
        assert_eq!(load(dir.path(), "frames", whole).unwrap(), Some(p));
        assert_eq!(load(dir.path(), "sequences", whole).unwrap(), None);
        // A shard keeps its own place beside the whole stream's.
        let second = Shard { index: 2, of: 3 };
        assert_eq!(load(dir.path(), "frames", second).unwrap(), None);
        save(dir.path(), "frames", second, Position { seed: 42, next: 7 }).unwrap();
        assert_eq!(load(dir.path(), "frames", whole).unwrap(), Some(p));
        assert_eq!(load(dir.path(), "frames", second).unwrap().unwrap().next, 7);
        std::fs::write(dir.path().join(".resume-sequences"), "seed x\n").unwrap();
        assert!(load(dir.path(), "sequences", whole).is_err());
    }
}
