//! Apache's answers as recorded: insta snapshots (`snapshots/<scenario>__apache.snap`, Apache
//! 3.7.2's; `<scenario>__apache@4.4.0-tv2.snap`, another release's), read back as transcripts.
//! When no Apache can run (no Java, no Docker), `kconform run` compares kaas against these
//! instead of a live broker and says so. 3.7.2's are the snapshots CI re-checks against a live
//! broker on every run; another release's are recorded by `ci/record-release.sh` and carry the
//! digest of the scenario text they were recorded from, so that answers to an earlier text of
//! a scenario are refused rather than compared with what it sends now.

use std::path::Path;

use crate::targets::apache::Release;
use crate::targets::{Kind, TargetSpec};
use crate::transcript::Transcript;

/// The key of a recorded snapshot's `info` header that holds the digest of the scenario text
/// it was recorded from (the scenario's `digest`).
pub const DIGEST_KEY: &str = "scenario_digest";

/// The releases whose answers are recorded beside 3.7.2's (`ci/record-release.sh`), of every
/// shape (one broker and three, with SASL and without), as 3.7.2's are: what
/// `apache-recorded@RELEASE[:3][+sasl]` can name.
pub const RELEASES: [&str; 2] = ["4.4", "4.4+tv2"];

/// Why a recorded transcript cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RecordedError {
    /// No snapshot for the scenario.
    #[error("{path}: no recorded Apache answers for this scenario ({reason}); record them with a live Apache (`cargo insta test` on a machine with Java and Maven; another release's with ci/record-release.sh)")]
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
    /// No answers of that release are recorded at all.
    #[error("{target}: no answers of it are recorded (recorded: apache-recorded and {others}, of every shape); run it live ({live}) or record it with ci/record-release.sh")]
    NotRecorded {
        /// The target asked for.
        target: String,
        /// The recorded releases besides 3.7.2, as targets.
        others: String,
        /// The live target whose answers it would be.
        live: String,
    },
    /// Recorded from another text of the scenario than the one given.
    #[error("{path}: recorded from another text of scenario '{scenario}' (digest {recorded}, now {now}), which may send other requests: record its answers again (ci/record-release.sh RELEASE)")]
    Stale {
        /// Snapshot file.
        path: String,
        /// The scenario.
        scenario: String,
        /// The digest the recording carries.
        recorded: String,
        /// The scenario's digest now.
        now: String,
    },
}

/// A recorded snapshot, read.
#[derive(Debug)]
pub struct Recording {
    /// The answers.
    pub transcript: Transcript,
    /// The digest of the scenario text they were recorded from, where the recording says.
    pub digest: Option<String>,
}

/// Whether the answers `spec` names are recorded: 3.7.2's and [`RELEASES`]', of every shape.
/// Asked before any scenario's file, so that a release never recorded is refused in one line,
/// not as the first scenario's missing file.
pub fn offered(spec: &TargetSpec) -> Result<(), RecordedError> {
    let release = spec.answers_as().unwrap_or(Release::CLAIMED);
    if release == Release::CLAIMED || releases().any(|r| r == release) {
        return Ok(());
    }
    let others: Vec<String> = releases()
        .map(|r| TargetSpec::one(Kind::Recorded(r)).name())
        .collect();
    Err(RecordedError::NotRecorded {
        target: spec.name(),
        others: others.join(" and "),
        live: spec.recorded_from().name(),
    })
}

/// [`RELEASES`], read.
fn releases() -> impl Iterator<Item = Release> {
    RELEASES
        .iter()
        .map(|r| Release::parse(r).expect("a release kconform knows"))
}

/// The label a live one-broker Apache of `release` gives its snapshots, which its recorded
/// answers are read under: `apache` (3.7.2), `apache@4.4.0-tv2`.
pub fn label(release: Release) -> String {
    label_of(&TargetSpec::one(Kind::Recorded(release)))
}

/// The label the live Apache that `spec` stands for (itself, or the one a recorded target's
/// answers came from) gives its snapshots: `apache-3-sasl`, `apache@4.4.0-tv2-3`.
pub fn label_of(spec: &TargetSpec) -> String {
    crate::targets::snapshot_label(&spec.recorded_from().name())
}

/// The snapshot file of `scenario` on `target`.
pub fn path(snapshots: &Path, scenario: &str, target: &str) -> std::path::PathBuf {
    snapshots.join(format!("{scenario}__{target}.snap"))
}

/// Parses an insta snapshot: a `---`-delimited header (whose `info` may carry the digest of
/// the scenario recorded), then the YAML body.
pub fn parse_recording(text: &str) -> Result<Recording, String> {
    let (header, body) = text
        .strip_prefix("---\n")
        .and_then(|rest| rest.split_once("\n---\n"))
        .ok_or("not an insta snapshot (no `---` header)")?;
    let header: serde_json::Value =
        serde_yaml_ng::from_str(header).map_err(|e| format!("its header: {e}"))?;
    let digest = header
        .pointer(&format!("/info/{DIGEST_KEY}"))
        .and_then(|d| d.as_str())
        .map(str::to_owned);
    // Through a JSON tree: insta writes enums as one-key maps, which serde_yaml_ng reads
    // only as YAML tags.
    let tree: serde_json::Value = serde_yaml_ng::from_str(body).map_err(|e| e.to_string())?;
    let transcript = serde_json::from_value(tree).map_err(|e| e.to_string())?;
    Ok(Recording { transcript, digest })
}

/// Parses an insta snapshot's transcript.
pub fn parse(text: &str) -> Result<Transcript, String> {
    parse_recording(text).map(|r| r.transcript)
}

/// The recorded transcript of the scenario `named` (its name and the digest of its text) on
/// `target` (`apache`, `apache@4.4.0-tv2`), from a source (built in, or a directory); refused
/// if recorded from another text of the scenario. Names, not the scenario: targets sit beside
/// the pipeline and import none of its stages.
pub fn read(
    snapshots: &crate::data::Source,
    named: (&str, &str),
    target: &str,
) -> Result<Transcript, RecordedError> {
    let (scenario, digest) = named;
    let name = format!("{scenario}__{target}.snap");
    let text = snapshots.read(&name).map_err(|e| RecordedError::Missing {
        path: e.place.clone(),
        reason: e.reason,
    })?;
    let recording = parse_recording(&text).map_err(|reason| RecordedError::Unreadable {
        path: snapshots.place(&name),
        reason,
    })?;
    match recording.digest {
        Some(recorded) if recorded != digest => Err(RecordedError::Stale {
            path: snapshots.place(&name),
            scenario: scenario.to_owned(),
            recorded,
            now: digest.to_owned(),
        }),
        _ => Ok(recording.transcript),
    }
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
    use crate::scenario::Scenario;
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

    /// The snapshots are exactly those of the scenarios and the targets that run them: both
    /// sides of each scenario written for 3.7.2 (`all_scenarios` asserts them), Apache's of each
    /// one-broker scenario written for a recorded release; no file of a scenario gone or
    /// renamed (cargo-insta's unreferenced check does not look outside the harness package,
    /// and every file here is built into kconform).
    #[test]
    fn every_snapshot_is_of_a_scenario_and_a_target_that_runs_it() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let scenarios = Scenario::load_dir(&root.join("scenarios")).unwrap();
        let mut expected = std::collections::BTreeSet::new();
        for s in &scenarios {
            // The targets of the scenario's shape, named as their snapshots are.
            let shaped = |kind: Kind| {
                let spec = TargetSpec {
                    brokers: s.brokers,
                    secured: s.secured(),
                    ..TargetSpec::one(kind)
                };
                crate::targets::snapshot_label(&spec.recorded_from().name())
            };
            if s.apache.contains(&Release::CLAIMED) {
                for kind in [Kind::Ref, Kind::Recorded(Release::CLAIMED)] {
                    if s.kaas_only() && kind != Kind::Ref {
                        continue;
                    }
                    expected.insert(format!("{}__{}.snap", s.name, shaped(kind)));
                }
            }
            for release in releases() {
                if s.apache.contains(&release) && !s.kaas_only() {
                    expected.insert(format!(
                        "{}__{}.snap",
                        s.name,
                        shaped(Kind::Recorded(release))
                    ));
                }
            }
        }
        let present: std::collections::BTreeSet<String> = std::fs::read_dir(root.join("snapshots"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        let missing: Vec<_> = expected.difference(&present).collect();
        let extra: Vec<_> = present.difference(&expected).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "snapshots missing (3.7.2's: cargo insta test; another release's: ci/record-release.sh RELEASE): {missing:#?}\nsnapshots of no scenario or target that runs it: {extra:#?}"
        );
    }

    /// 3.7.2's and 4.4.0's answers are recorded for every shape; another release is refused in
    /// one line naming what is recorded and the live target instead.
    #[test]
    fn only_the_recorded_releases_are_offered() {
        assert_eq!(label(Release::CLAIMED), "apache");
        assert_eq!(
            label(Release::parse("4.4+tv2").unwrap()),
            "apache@4.4.0-tv2"
        );
        let spec = |s: &str| TargetSpec::parse(s).unwrap();
        assert_eq!(
            label_of(&spec("apache-recorded@4.4+tv2:3+sasl")),
            "apache@4.4.0-tv2-3-sasl"
        );
        assert_eq!(label_of(&spec("apache-recorded:3")), "apache-3");
        for ok in [
            "apache-recorded",
            "apache-recorded:3+sasl",
            "apache-recorded@4.4",
            "apache-recorded@4.4.0+tv2",
            "apache-recorded@4.4:3",
            "apache-recorded@4.4+tv2+sasl",
        ] {
            assert!(offered(&spec(ok)).is_ok(), "{ok}");
        }
        for (refused, live) in [
            ("apache-recorded@3.8", "apache@3.8.1"),
            ("apache-recorded@3.9:3", "apache@3.9.2:3"),
        ] {
            let e = offered(&spec(refused)).unwrap_err().to_string();
            assert!(
                e.contains(&format!("run it live ({live})"))
                    && e.contains("apache-recorded@4.4.0 and apache-recorded@4.4.0+tv2"),
                "{e}"
            );
        }
    }

    /// A recording that says which scenario text it answered is used for that text only: one
    /// scenario edited since (a request changed, or a fragment it includes) is refused, naming
    /// both digests; a recording that says nothing (3.7.2's, re-checked live) is used as is.
    #[test]
    fn answers_recorded_from_another_text_of_the_scenario_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
        std::fs::create_dir(dir.path().join("fragments")).unwrap();
        write(
            "fragments/f.toml",
            "description = \"f\"\n[[step]]\nname = \"f\"\nsleep_ms = 1\n",
        );
        let scenario_text = "description = \"d\"\n[[step]]\ninclude = \"f\"\n[[step]]\nname = \"s\"\nsleep_ms = 5\n";
        write("s.toml", scenario_text);
        let source = crate::data::Source::Dir(dir.path().to_owned());
        let scenario = Scenario::read(&source, "s.toml").unwrap();
        let recording = |digest: Option<&str>| {
            let info = digest.map_or(String::new(), |d| format!("info:\n  {DIGEST_KEY}: {d}\n"));
            format!("---\nsource: x\n{info}---\nscenario: s\ntarget: apache@4.4.0\nsteps:\n  - step: s\n    outcome:\n      slept: 5\n")
        };
        for (digest, used) in [
            (Some(scenario.digest.as_str()), true),
            (None, true),
            (Some("0123456789abcdef"), false),
        ] {
            write("s__apache@4.4.0.snap", &recording(digest));
            let read = read(&source, (&scenario.name, &scenario.digest), "apache@4.4.0");
            assert_eq!(read.is_ok(), used, "{digest:?}: {read:?}");
            if let Err(e) = read {
                let e = e.to_string();
                assert!(
                    e.contains("0123456789abcdef") && e.contains(&scenario.digest),
                    "{e}"
                );
            }
        }
        // The digest follows the text: of the scenario, and of a fragment it includes.
        write(
            "s.toml",
            &scenario_text.replace("sleep_ms = 5", "sleep_ms = 6"),
        );
        let edited = Scenario::read(&source, "s.toml").unwrap();
        write("s.toml", scenario_text);
        write(
            "fragments/f.toml",
            "description = \"f\"\n[[step]]\nname = \"f\"\nsleep_ms = 2\n",
        );
        let fragment_edited = Scenario::read(&source, "s.toml").unwrap();
        assert_eq!(scenario.digest.len(), 16);
        assert_ne!(edited.digest, scenario.digest);
        assert_ne!(fragment_edited.digest, scenario.digest);
        assert_ne!(fragment_edited.digest, edited.digest);
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
