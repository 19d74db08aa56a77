//! The files a run reads — scenarios, fragments, the ledger, the peers allowlist, Apache's
//! recorded answers — built into kconform (so an installed binary works from any directory)
//! or read from a directory given with `--scenarios` / `--snapshots`.

use std::path::{Path, PathBuf};

mod builtin {
    include!(concat!(env!("OUT_DIR"), "/builtin.rs"));
}

/// Why a file cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{place}: {reason}")]
pub struct DataError {
    /// The file (or directory) as the user would name it.
    pub place: String,
    /// Why.
    pub reason: String,
}

/// Where a kind of file comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The scenario files built into kconform.
    BuiltInScenarios,
    /// Apache's recorded answers built into kconform.
    BuiltInSnapshots,
    /// A directory.
    Dir(PathBuf),
    /// A directory over the scenario files built into kconform: a file of the directory
    /// stands for the built-in one of its name (a scenario, `deviations.toml`), every other
    /// file is the built-in one. A suite of one's own on top of kconform's.
    Over(PathBuf),
}

impl Source {
    /// The scenarios: `dir` over the built-in ones, or the built-in ones.
    pub fn scenarios(dir: Option<&Path>) -> Source {
        dir.map_or(Source::BuiltInScenarios, |d| Source::Over(d.to_owned()))
    }

    /// Apache's recorded answers: `dir`, or the built-in ones.
    pub fn snapshots(dir: Option<&Path>) -> Source {
        dir.map_or(Source::BuiltInSnapshots, |d| Source::Dir(d.to_owned()))
    }

    fn builtin(&self) -> Option<&'static [(&'static str, &'static str)]> {
        match self {
            Source::BuiltInScenarios | Source::Over(_) => Some(builtin::SCENARIO_FILES),
            Source::BuiltInSnapshots => Some(builtin::SNAPSHOT_FILES),
            Source::Dir(_) => None,
        }
    }

    /// How a file of this source is named in messages: its path, or `built-in:NAME`.
    pub fn place(&self, name: &str) -> String {
        match self {
            Source::Dir(d) => d.join(name).display().to_string(),
            Source::Over(d) if d.join(name).is_file() => d.join(name).display().to_string(),
            _ => format!("built-in:{name}"),
        }
    }

    /// The text of `name` (a path relative to the source, `/`-separated).
    pub fn read(&self, name: &str) -> Result<String, DataError> {
        let fail = |reason: String| DataError {
            place: self.place(name),
            reason,
        };
        match (self, self.builtin()) {
            (Source::Dir(d), _) => {
                std::fs::read_to_string(d.join(name)).map_err(|e| fail(e.to_string()))
            }
            (Source::Over(d), _) if d.join(name).is_file() => {
                std::fs::read_to_string(d.join(name)).map_err(|e| fail(e.to_string()))
            }
            (_, Some(files)) => files
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, text)| (*text).to_owned())
                .ok_or_else(|| fail("not built into this kconform".into())),
            _ => unreachable!("a source is a directory or built in"),
        }
    }

    /// The names of the files directly in the source (not in subdirectories) that end with
    /// `suffix`, sorted.
    pub fn names(&self, suffix: &str) -> Result<Vec<String>, DataError> {
        if let Source::Over(d) = self {
            let mut out = Source::Dir(d.clone()).names(suffix)?;
            out.extend(Source::BuiltInScenarios.names(suffix)?);
            out.sort();
            out.dedup();
            return Ok(out);
        }
        let mut out: Vec<String> = match (self, self.builtin()) {
            (Source::Dir(d), _) => std::fs::read_dir(d)
                .map_err(|e| DataError {
                    place: d.display().to_string(),
                    reason: e.to_string(),
                })?
                .filter_map(|e| e.ok())
                .filter(|e| e.path().is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect(),
            (_, Some(files)) => files
                .iter()
                .map(|(n, _)| n.to_string())
                .filter(|n| !n.contains('/'))
                .collect(),
            _ => unreachable!("a source is a directory or built in"),
        };
        out.retain(|n| n.ends_with(suffix));
        out.sort();
        Ok(out)
    }

    /// What the source is, for a report: a directory, or "built in".
    pub fn describe(&self) -> String {
        match self {
            Source::Dir(d) => d.display().to_string(),
            Source::Over(d) => format!("{} over the scenarios built into kconform", d.display()),
            Source::BuiltInScenarios => "the scenarios built into kconform".into(),
            Source::BuiltInSnapshots => "the answers built into kconform".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_files_are_the_repository_s() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        // Every scenario file; Apache's answers of every shape and recorded release, not
        // kaas-ref's.
        let apache = |n: &String| n.contains("__apache");
        for (built, dir, suffix, kept) in [
            (
                Source::BuiltInScenarios,
                "scenarios",
                ".toml",
                &(|_: &String| true) as &dyn Fn(&String) -> bool,
            ),
            (Source::BuiltInSnapshots, "snapshots", ".snap", &apache),
        ] {
            let on_disk = Source::Dir(root.join(dir));
            let names = built.names(suffix).unwrap();
            let mut wanted = on_disk.names(suffix).unwrap();
            wanted.retain(|n| kept(n));
            assert_eq!(names, wanted, "{dir}");
            assert!(names.len() > 100, "{dir}: {}", names.len());
            for n in &names {
                assert_eq!(
                    built.read(n).unwrap(),
                    on_disk.read(n).unwrap(),
                    "{dir}/{n}"
                );
            }
        }
        let fragment = Source::BuiltInScenarios
            .read("fragments/topic.toml")
            .unwrap();
        assert!(fragment.contains("CreateTopics"));
        let e = Source::BuiltInScenarios
            .read("nope.toml")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "built-in:nope.toml: not built into this kconform");
    }

    #[test]
    fn a_directory_over_the_built_in_suite_adds_and_stands_for_files_by_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("my-own.toml"), "mine").unwrap();
        std::fs::write(dir.path().join("end-txn-on-empty.toml"), "replaced").unwrap();
        let over = Source::Over(dir.path().to_owned());
        let names = over.names(".toml").unwrap();
        let built_in = Source::BuiltInScenarios.names(".toml").unwrap();
        assert_eq!(names.len(), built_in.len() + 1, "one added, one stood for");
        assert!(names.contains(&"my-own.toml".to_owned()));
        assert_eq!(over.read("my-own.toml").unwrap(), "mine");
        assert_eq!(over.read("end-txn-on-empty.toml").unwrap(), "replaced");
        assert!(over
            .place("end-txn-on-empty.toml")
            .ends_with("end-txn-on-empty.toml"));
        // What the directory has not: the built-in file, named as such.
        assert_eq!(
            over.read("deviations.toml").unwrap(),
            Source::BuiltInScenarios.read("deviations.toml").unwrap()
        );
        assert_eq!(over.place("deviations.toml"), "built-in:deviations.toml");
        assert!(over
            .read("fragments/topic.toml")
            .unwrap()
            .contains("CreateTopics"));
    }
}
