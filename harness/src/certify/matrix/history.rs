//! The matrix's history: every run of every broker kept as one JSON file under the site's
//! `runs/BROKER/` folder, never rewritten, so a broker's verdicts can be followed from run to
//! run (in git, where the site is kept there). Runs are compared only with runs of the same
//! kconform version: a new kconform judges differently, and its verdicts start afresh.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::cell::{Cell, Word};

/// The version of a run's JSON form.
pub const SCHEMA_VERSION: u32 = 1;

/// Why the history could not be kept or read.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// A file or folder could not be written or read.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// One run of one broker against one Apache.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The kconform that judged it.
    pub kconform_version: String,
    /// The broker's name in the brokers file.
    pub broker: String,
    /// Its version.
    pub broker_version: String,
    /// What it was judged against.
    pub against: String,
    /// When the run began, in seconds since 1970 (UTC).
    pub started: u64,
    /// Seconds it took, install and start included.
    pub secs: f64,
    /// The transaction APIs it advertised, when kconform started it from its command (a
    /// target kconform starts itself is not asked).
    pub transaction_apis: Option<Vec<i16>>,
    /// One cell per column.
    pub cells: Vec<Cell>,
    /// What the row says in a line: the certificate's verdict, or why there is none.
    pub summary: String,
    /// The certificate's page, relative to the site (none when certify did not run).
    pub page: Option<String>,
    /// The certificate's JSON, relative to the site.
    pub certificate: Option<String>,
    /// The broker's log (install and start), relative to the site.
    pub log: Option<String>,
}

impl Run {
    /// The stem its files share: `runs/BROKER/STARTED-AGAINST`.
    pub fn stem(&self) -> String {
        format!(
            "runs/{}/{}-{}",
            self.broker,
            self.started,
            self.against.replace(['@', '+', ':', '/'], "_")
        )
    }

    /// Its certificate's JSON, relative to the site.
    pub fn certificate_file(&self) -> String {
        format!("{}.certificate.json", self.stem())
    }

    /// Its certificate's page, relative to the site.
    pub fn page_file(&self) -> String {
        format!("{}.html", self.stem())
    }

    /// The cell of `column`.
    pub fn cell(&self, column: &str) -> Option<&Cell> {
        self.cells.iter().find(|c| c.column == column)
    }
}

/// Writes `run` to `site/STEM.json`.
pub fn keep(site: &Path, run: &Run) -> Result<PathBuf, HistoryError> {
    let path = site.join(format!("{}.json", run.stem()));
    let io = |source| HistoryError::Io {
        path: path.clone(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let text = serde_json::to_string_pretty(run).expect("a run serialises");
    std::fs::write(&path, text).map_err(io)?;
    Ok(path)
}

/// Every run kept under `site/runs/`, oldest first; files that are not a run of this schema
/// are named in the second list (left alone, never read as a verdict).
pub fn read(site: &Path) -> Result<(Vec<Run>, Vec<String>), HistoryError> {
    let root = site.join("runs");
    let mut runs = Vec::new();
    let mut unreadable = Vec::new();
    let Ok(brokers) = std::fs::read_dir(&root) else {
        return Ok((runs, unreadable));
    };
    for broker in brokers.flatten() {
        let dir = broker.path();
        let files = std::fs::read_dir(&dir).map_err(|source| HistoryError::Io {
            path: dir.clone(),
            source,
        })?;
        for file in files.flatten() {
            let path = file.path();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if !name.ends_with(".json") || name.ends_with(".certificate.json") {
                continue;
            }
            let parsed = std::fs::read_to_string(&path)
                .ok()
                .and_then(|t| serde_json::from_str::<Run>(&t).ok())
                .filter(|r| r.schema_version == SCHEMA_VERSION);
            match parsed {
                Some(run) => runs.push(run),
                None => unreadable.push(path.display().to_string()),
            }
        }
    }
    runs.sort_by(|a, b| (a.started, &a.broker).cmp(&(b.started, &b.broker)));
    Ok((runs, unreadable))
}

/// A column whose word changed between two runs of one broker against one Apache, judged by
/// one kconform version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// The column.
    pub column: String,
    /// Its word in the earlier run.
    pub from: Word,
    /// Its word in the later one.
    pub to: Word,
    /// When the earlier run began.
    pub since: u64,
    /// When the later one began.
    pub at: u64,
}

/// What changed from each run to the next of `broker` against `against`, comparing only runs
/// of the same kconform version.
pub fn changes(runs: &[Run], broker: &str, against: &str) -> Vec<Change> {
    let mine: Vec<&Run> = runs
        .iter()
        .filter(|r| r.broker == broker && r.against == against)
        .collect();
    let mut out = Vec::new();
    for pair in mine.windows(2) {
        let (before, after) = (pair[0], pair[1]);
        if before.kconform_version != after.kconform_version {
            continue;
        }
        for cell in &after.cells {
            match before.cell(&cell.column) {
                Some(old) if old.word != cell.word => out.push(Change {
                    column: cell.column.clone(),
                    from: old.word,
                    to: cell.word,
                    since: before.started,
                    at: after.started,
                }),
                _ => {}
            }
        }
    }
    out
}

/// The latest run of each broker against each Apache, in the brokers' first-run order, a
/// broker's rows together.
pub fn latest(runs: &[Run]) -> Vec<&Run> {
    let mut out: Vec<&Run> = Vec::new();
    for run in runs {
        match out
            .iter_mut()
            .find(|r| r.broker == run.broker && r.against == run.against)
        {
            Some(slot) => *slot = run,
            None => out.push(run),
        }
    }
    let first = |broker: &str| runs.iter().position(|r| r.broker == broker);
    out.sort_by_key(|r| first(&r.broker));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(started: u64, version: &str, word: Word) -> Run {
        Run {
            schema_version: SCHEMA_VERSION,
            kconform_version: version.into(),
            broker: "kaas-ref".into(),
            broker_version: "0.1".into(),
            against: "apache".into(),
            started,
            secs: 1.0,
            transaction_apis: Some(vec![22]),
            cells: vec![Cell {
                column: "scenarios".into(),
                word,
                why: String::new(),
            }],
            summary: String::new(),
            page: None,
            certificate: None,
            log: None,
        }
    }

    /// A word that changed between runs of one kconform version is a change; across versions
    /// it is not compared.
    #[test]
    fn changes_are_between_runs_of_one_kconform_version() {
        let runs = vec![
            run(1, "0.1.0", Word::Documented),
            run(2, "0.1.0", Word::Wrong),
            run(3, "0.2.0", Word::Identical),
        ];
        let changes = changes(&runs, "kaas-ref", "apache");
        assert_eq!(
            changes,
            [Change {
                column: "scenarios".into(),
                from: Word::Documented,
                to: Word::Wrong,
                since: 1,
                at: 2
            }]
        );
        assert_eq!(latest(&runs).len(), 1);
        assert_eq!(latest(&runs)[0].started, 3);
        let mut later = run(4, "0.2.0", Word::Identical);
        later.against = "apache@4.4".into();
        let mut other = run(2, "0.2.0", Word::Identical);
        other.broker = "tansu".into();
        let rows: Vec<(String, String)> = latest(&[runs[2].clone(), other, later])
            .iter()
            .map(|r| (r.broker.clone(), r.against.clone()))
            .collect();
        assert_eq!(
            rows,
            [
                ("kaas-ref".into(), "apache".into()),
                ("kaas-ref".into(), "apache@4.4".into()),
                ("tansu".into(), "apache".into())
            ],
            "a broker's rows together"
        );
    }

    /// Runs kept are read back in order; a file that is no run is named, not read.
    #[test]
    fn runs_are_kept_and_read_back_and_a_stray_file_is_named() {
        let site = tempfile::tempdir().unwrap();
        keep(site.path(), &run(20, "0.1.0", Word::Wrong)).unwrap();
        keep(site.path(), &run(10, "0.1.0", Word::Identical)).unwrap();
        std::fs::write(site.path().join("runs/kaas-ref/junk.json"), "{").unwrap();
        let (runs, unreadable) = read(site.path()).unwrap();
        assert_eq!(runs.iter().map(|r| r.started).collect::<Vec<_>>(), [10, 20]);
        assert_eq!(unreadable.len(), 1, "{unreadable:?}");
    }
}
