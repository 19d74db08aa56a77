//! Where a fuzzing run stopped, kept in the findings directory so that `kconform fuzz
//! --resume` goes on from there instead of drawing the same inputs again: the seed and the
//! number of the next input, one small file per fuzzer, rewritten (atomically) as the run
//! goes, so that a crash or a kill loses at most the last batch.

use std::path::Path;

use super::FuzzError;

/// A fuzzer's place in the stream its seed draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// The run's seed.
    pub seed: u64,
    /// The number of the next input to draw (sequences, or frames).
    pub next: u64,
}

fn file(dir: &Path, fuzzer: &str) -> std::path::PathBuf {
    dir.join(format!(".resume-{fuzzer}"))
}

/// The position `fuzzer` ("sequences", "frames") saved in `dir`, if one did.
pub fn load(dir: &Path, fuzzer: &str) -> Result<Option<Position>, FuzzError> {
    let path = file(dir, fuzzer);
    let text = match std::fs::read_to_string(&path) {
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

/// Saves `fuzzer`'s position in `dir` (written aside, then renamed over the old one).
pub fn save(dir: &Path, fuzzer: &str, position: Position) -> Result<(), FuzzError> {
    let path = file(dir, fuzzer);
    let io = |e| FuzzError::Findings(path.display().to_string(), e);
    let aside = dir.join(format!(".resume-{fuzzer}.new"));
    std::fs::write(
        &aside,
        format!("seed {}\nnext {}\n", position.seed, position.next),
    )
    .map_err(io)?;
    std::fs::rename(&aside, &path).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_position_survives_a_save_and_a_bad_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(dir.path(), "frames").unwrap(), None);
        let p = Position {
            seed: 42,
            next: 9000,
        };
        save(dir.path(), "frames", p).unwrap();
        assert_eq!(load(dir.path(), "frames").unwrap(), Some(p));
        assert_eq!(load(dir.path(), "sequences").unwrap(), None);
        std::fs::write(dir.path().join(".resume-sequences"), "seed x\n").unwrap();
        assert!(load(dir.path(), "sequences").is_err());
    }
}
