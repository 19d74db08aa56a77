//! `kconform fuzz merge`: the findings directories of many runs (the shards of one seed run on
//! many machines, or night after night) folded into one. A finding is kept once per signature
//! (its files are named by the signature's hash, so the same difference found by two shards
//! has the same name); each shard's place in the stream is kept, so `--resume --shard K/N`
//! goes on from the merged directory; the fragments and ledger the findings replay with come
//! along.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::resume;
use super::FuzzError;

/// What a merge came to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Merged {
    /// Findings copied in (sequence and frame findings).
    pub findings: usize,
    /// Findings already there (found by another run too), not copied again.
    pub duplicates: usize,
    /// Places in a stream kept (`.resume-*` files).
    pub places: usize,
}

impl Merged {
    /// One line for the terminal.
    pub fn summary(&self, into: &Path) -> String {
        format!(
            "merged into {}: {} finding(s) new, {} found by more than one run, {} place(s) to resume from",
            into.display(),
            self.findings,
            self.duplicates,
            self.places
        )
    }
}

/// The finding a file belongs to (`finding-1a2b3c4d` of `finding-1a2b3c4d.transcripts.json`),
/// for files that are findings.
fn finding_of(name: &str) -> Option<&str> {
    let stem = name.split('.').next()?;
    (stem.starts_with("finding-") || stem.starts_with("frame-")).then_some(stem)
}

/// The signature line of a finding's files in `dir`, if one of them has one.
fn signature(dir: &Path, stem: &str) -> Option<String> {
    ["toml", "txt"].iter().find_map(|ext| {
        let text = std::fs::read_to_string(dir.join(format!("{stem}.{ext}"))).ok()?;
        text.lines()
            .find_map(|l| l.strip_prefix("# signature: "))
            .map(str::to_owned)
    })
}

/// Folds the findings directories `from` into `into` (created if need be).
pub fn merge(into: &Path, from: &[PathBuf]) -> Result<Merged, FuzzError> {
    let io = |path: &Path, e| FuzzError::Findings(path.display().to_string(), e);
    std::fs::create_dir_all(into.join("fragments")).map_err(|e| io(into, e))?;
    let mut merged = Merged::default();
    let mut places: BTreeMap<String, resume::Position> = BTreeMap::new();
    for dir in from {
        if !dir.is_dir() {
            return Err(FuzzError::Source(format!(
                "{}: not a findings directory",
                dir.display()
            )));
        }
        copy_replay_files(dir, into)?;
        let mut stems: Vec<String> = Vec::new();
        let mut files: Vec<(String, PathBuf)> = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(|e| io(dir, e))? {
            let entry = entry.map_err(|e| io(dir, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(stem) = finding_of(&name) {
                if !stems.iter().any(|s| s == stem) {
                    stems.push(stem.to_owned());
                }
                files.push((name, entry.path()));
            } else if name.starts_with(".resume-") && !name.ends_with(".new") {
                keep_place(dir, &name, &mut places)?;
            }
        }
        stems.sort();
        for stem in stems {
            let there = signature(into, &stem);
            if let Some(there) = there {
                let here = signature(dir, &stem).unwrap_or_default();
                if here != there {
                    return Err(FuzzError::Source(format!(
                        "{stem}: {} holds another finding of that name ({here:?} against {there:?})",
                        dir.display()
                    )));
                }
                merged.duplicates += 1;
                continue;
            }
            for (name, path) in files.iter().filter(|(n, _)| finding_of(n) == Some(&stem)) {
                let target = into.join(name);
                match name.ends_with(".toml") || name.ends_with(".txt") {
                    // Its replay commands name the directory it was written in.
                    true => {
                        let text = std::fs::read_to_string(path).map_err(|e| io(path, e))?;
                        let text =
                            text.replace(&dir.display().to_string(), &into.display().to_string());
                        std::fs::write(&target, text).map_err(|e| io(&target, e))?;
                    }
                    false => {
                        std::fs::copy(path, &target).map_err(|e| io(&target, e))?;
                    }
                }
            }
            merged.findings += 1;
        }
    }
    for (name, place) in &places {
        resume::write(&into.join(name), *place)?;
    }
    merged.places = places.len();
    Ok(merged)
}

/// The fragments and ledger `dir`'s findings replay with, where `into` has none yet.
fn copy_replay_files(dir: &Path, into: &Path) -> Result<(), FuzzError> {
    let io = |path: &Path, e| FuzzError::Findings(path.display().to_string(), e);
    let mut wanted = vec![
        PathBuf::from("deviations.toml"),
        PathBuf::from(crate::compare::causes::FIELD_CLASSES),
    ];
    if let Ok(entries) = std::fs::read_dir(dir.join("fragments")) {
        for e in entries.flatten() {
            wanted.push(Path::new("fragments").join(e.file_name()));
        }
    }
    for file in wanted {
        let (source, target) = (dir.join(&file), into.join(&file));
        if source.is_file() && !target.exists() {
            std::fs::copy(&source, &target).map_err(|e| io(&target, e))?;
        }
    }
    Ok(())
}

/// Keeps the place a `.resume-*` file of `dir` saved: the furthest, for one shard of one seed;
/// two seeds under one name cannot be one stream.
fn keep_place(
    dir: &Path,
    name: &str,
    places: &mut BTreeMap<String, resume::Position>,
) -> Result<(), FuzzError> {
    let path = dir.join(name);
    let Some(resume::Position { seed, next }) = resume::read(&path)? else {
        return Ok(());
    };
    match places.get_mut(name) {
        Some(kept) if kept.seed != seed => Err(FuzzError::Source(format!(
            "{}: seed {seed}, where another directory's {name} has seed {}: merge the runs of one seed",
            path.display(),
            kept.seed
        ))),
        Some(kept) => {
            kept.next = kept.next.max(next);
            Ok(())
        }
        None => {
            places.insert(name.to_owned(), resume::Position { seed, next });
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(dir: &Path, stem: &str, signature: &str) {
        std::fs::write(
            dir.join(format!("{stem}.toml")),
            format!(
                "# signature: {signature}\n# replay: kconform run --scenarios {} {stem}\n",
                dir.display()
            ),
        )
        .unwrap();
        std::fs::write(dir.join(format!("{stem}.transcripts.json")), "{}").unwrap();
    }

    #[test]
    fn findings_are_kept_once_and_each_shards_place_with_them() {
        let (a, b, into) = (
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
        );
        finding(a.path(), "finding-00000001", "EndTxn v3 error_code: 0 | 48");
        finding(a.path(), "finding-00000002", "OffsetFetch v7 x: 1 | 2");
        finding(b.path(), "finding-00000002", "OffsetFetch v7 x: 1 | 2");
        std::fs::write(b.path().join("frame-0000000a.bin"), [0u8, 1]).unwrap();
        std::fs::write(b.path().join("frame-0000000a.txt"), "# signature: closed\n").unwrap();
        std::fs::write(a.path().join("deviations.toml"), "x").unwrap();
        std::fs::write(
            a.path().join(".resume-sequences-1-of-2"),
            "seed 7\nnext 30\n",
        )
        .unwrap();
        std::fs::write(
            b.path().join(".resume-sequences-2-of-2"),
            "seed 7\nnext 31\n",
        )
        .unwrap();
        let m = merge(into.path(), &[a.path().into(), b.path().into()]).unwrap();
        assert_eq!(
            m,
            Merged {
                findings: 3,
                duplicates: 1,
                places: 2
            }
        );
        let toml = std::fs::read_to_string(into.path().join("finding-00000001.toml")).unwrap();
        assert!(toml.contains(&into.path().display().to_string()), "{toml}");
        assert!(into.path().join("frame-0000000a.bin").is_file());
        assert!(into.path().join("deviations.toml").is_file());
        let place = resume::load(
            into.path(),
            "sequences",
            crate::fuzz::shard::Shard { index: 2, of: 2 },
        )
        .unwrap();
        assert_eq!(place.map(|p| p.next), Some(31));
        // Merging again adds nothing.
        let again = merge(into.path(), &[a.path().into(), b.path().into()]).unwrap();
        assert_eq!((again.findings, again.duplicates), (0, 4));
    }

    #[test]
    fn two_seeds_under_one_shard_and_a_name_clash_are_refused() {
        let (a, b, into) = (
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
        );
        std::fs::write(a.path().join(".resume-sequences"), "seed 7\nnext 3\n").unwrap();
        std::fs::write(b.path().join(".resume-sequences"), "seed 8\nnext 3\n").unwrap();
        let e = merge(into.path(), &[a.path().into(), b.path().into()]).unwrap_err();
        assert!(e.to_string().contains("merge the runs of one seed"), "{e}");
        let (c, d) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        finding(c.path(), "finding-00000001", "one");
        finding(d.path(), "finding-00000001", "another");
        let e = merge(into.path(), &[c.path().into(), d.path().into()]).unwrap_err();
        assert!(
            e.to_string().contains("another finding of that name"),
            "{e}"
        );
        let e = merge(into.path(), &[into.path().join("nowhere")]).unwrap_err();
        assert!(e.to_string().contains("not a findings directory"), "{e}");
    }
}
