//! Apache's answers as recorded: the committed insta snapshots
//! (`snapshots/<scenario>__apache.snap`), read back as transcripts. When no Apache can run (no
//! Java, no Docker), `kconform run` compares kaas against these instead of a live broker and
//! says so; they were recorded from a live Apache 3.7 and CI re-checks them against one.

use std::path::Path;

use crate::transcript::Transcript;

/// Why a recorded transcript cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RecordedError {
    /// No snapshot for the scenario.
    #[error("{path}: no recorded Apache answers for this scenario ({reason}); record them with a live Apache (`cargo insta test` on a machine with Java and Maven)")]
    Missing {
        /// Snapshot file.
        path: String,
        /// Why.
        reason: String,
    },
    /// The snapshot does not parse.
    #[error("{path}: {reason}")]
    Unreadable {
        /// Snapshot file.
        path: String,
        /// Why.
        reason: String,
    },
}

/// The snapshot file of `scenario` on `target`.
pub fn path(snapshots: &Path, scenario: &str, target: &str) -> std::path::PathBuf {
    snapshots.join(format!("{scenario}__{target}.snap"))
}

/// Parses an insta snapshot: a `---`-delimited header, then the YAML body.
pub fn parse(text: &str) -> Result<Transcript, String> {
    let body = text
        .strip_prefix("---\n")
        .and_then(|rest| rest.split_once("\n---\n"))
        .map(|(_, body)| body)
        .ok_or("not an insta snapshot (no `---` header)")?;
    // Through a JSON tree: insta writes enums as one-key maps, which serde_yaml_ng reads
    // only as YAML tags.
    let tree: serde_json::Value = serde_yaml_ng::from_str(body).map_err(|e| e.to_string())?;
    serde_json::from_value(tree).map_err(|e| e.to_string())
}

/// The recorded transcript of `scenario` on `target` (normally "apache"), from a source
/// (built in, or a directory).
pub fn read(
    snapshots: &crate::data::Source,
    scenario: &str,
    target: &str,
) -> Result<Transcript, RecordedError> {
    let name = format!("{scenario}__{target}.snap");
    let text = snapshots.read(&name).map_err(|e| RecordedError::Missing {
        path: e.place.clone(),
        reason: e.reason,
    })?;
    parse(&text).map_err(|reason| RecordedError::Unreadable {
        path: snapshots.place(&name),
        reason,
    })
}

/// The recorded transcript of `scenario` on `target` (normally "apache").
pub fn load(snapshots: &Path, scenario: &str, target: &str) -> Result<Transcript, RecordedError> {
    let p = path(snapshots, scenario, target);
    let text = std::fs::read_to_string(&p).map_err(|e| RecordedError::Missing {
        path: p.display().to_string(),
        reason: e.to_string(),
    })?;
    parse(&text).map_err(|reason| RecordedError::Unreadable {
        path: p.display().to_string(),
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::Outcome;

    #[test]
    fn every_committed_apache_snapshot_reads_back() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../snapshots");
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let Some(scenario) = name.strip_suffix("__apache.snap") else {
                continue;
            };
            let t = load(&dir, scenario, "apache").unwrap();
            assert_eq!(
                (t.scenario.as_str(), t.target.as_str()),
                (scenario, "apache")
            );
            assert!(!t.steps.is_empty(), "{name}");
            n += 1;
        }
        assert!(n >= 80, "only {n} recorded Apache snapshots");
    }

    #[test]
    fn outcomes_of_every_kind_parse() {
        let t = parse(
            "---\nsource: x\n---\nscenario: s\ntarget: apache\nsteps:\n  - step: a\n    api: EndTxn\n    version: 3\n    request:\n      committed: true\n    outcome:\n      response:\n        error_code: 0 NONE\n  - step: b\n    api: AddPartitionsToTxn\n    version: 4\n    outcome:\n      unsupported:\n        min: 0\n        max: 3\n  - step: c\n    outcome:\n      slept: 5\n  - step: d\n    api: EndTxn\n    outcome:\n      no_answer: closed\n",
        )
        .unwrap();
        assert_eq!(t.steps.len(), 4);
        assert!(matches!(
            t.steps[1].outcome,
            Outcome::Unsupported { min: 0, max: 3 }
        ));
        assert_eq!(t.steps[2].outcome, Outcome::Slept(5));
        assert!(parse("scenario: s").is_err());
    }
}
