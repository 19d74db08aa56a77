//! The deviation ledger (`scenarios/deviations.toml`): every difference between kaas and
//! Apache that the kaas documentation promises, no more and no less. A difference an entry
//! matches is DOCUMENTED; any other is UNDOCUMENTED; an entry that names a scenario in which it
//! did not show is STALE. Undocumented and stale both fail a run.

use std::path::Path;

use serde::Deserialize;

use crate::runner::DiffRow;

/// One documented deviation.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Deviation {
    /// Stable id.
    pub id: String,
    /// The API it concerns.
    pub api: String,
    /// Versions: "all", one number, or "A..=B".
    #[serde(default = "all")]
    pub versions: String,
    /// The field (a suffix of the diff path), or "outcome" for a kind of answer that differs
    /// (a version one side does not serve).
    pub field: String,
    /// What kaas answers (normalised form, e.g. "50 INVALID_TRANSACTION_TIMEOUT").
    pub kaas: String,
    /// What Apache 3.7 answers.
    pub apache: String,
    /// The spec section that documents it.
    pub spec: String,
    /// What a Java 3.7 client raises because of it.
    pub java_client: String,
    /// Scenarios that demonstrate it (each must show it).
    pub scenarios: Vec<String>,
}

fn all() -> String {
    "all".into()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LedgerFile {
    deviation: Vec<Deviation>,
}

/// Why the ledger cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct LedgerError {
    path: String,
    reason: String,
}

/// How one difference was classified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// A ledger entry matches (its id).
    Documented(String),
    /// No entry matches.
    Undocumented,
}

/// The ledger.
#[derive(Debug, Clone)]
pub struct Ledger {
    /// Entries, in file order.
    pub deviations: Vec<Deviation>,
}

fn version_in(spec: &str, version: Option<i16>) -> bool {
    let Some(v) = version else {
        return spec == "all";
    };
    match spec.split_once("..=") {
        _ if spec == "all" => true,
        Some((a, b)) => match (a.trim().parse::<i16>(), b.trim().parse::<i16>()) {
            (Ok(a), Ok(b)) => (a..=b).contains(&v),
            _ => false,
        },
        None => spec.trim().parse::<i16>() == Ok(v),
    }
}

fn unquote(s: &str) -> &str {
    s.trim_matches('"')
}

impl Ledger {
    /// Reads the ledger file.
    pub fn load(path: &Path) -> Result<Ledger, LedgerError> {
        let err = |reason: String| LedgerError {
            path: path.display().to_string(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        let file: LedgerFile = toml::from_str(&text).map_err(|e| err(e.to_string()))?;
        Ok(Ledger {
            deviations: file.deviation,
        })
    }

    /// The entry documenting `row` (kaas on the left, Apache on the right), if any.
    pub fn classify(&self, row: &DiffRow) -> Verdict {
        self.deviations
            .iter()
            .find(|d| {
                d.api == row.api
                    && version_in(&d.versions, row.version)
                    && (row.path == d.field || row.path.ends_with(&format!(".{}", d.field)))
                    && unquote(&row.left) == d.kaas
                    && unquote(&row.right) == d.apache
            })
            .map_or(Verdict::Undocumented, |d| Verdict::Documented(d.id.clone()))
    }

    /// Entries that name a scenario among `ran` in which none of `rows` matched them:
    /// (entry id, scenario).
    pub fn stale(&self, ran: &[String], rows: &[(DiffRow, Verdict)]) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for d in &self.deviations {
            for s in &d.scenarios {
                if !ran.contains(s) {
                    continue;
                }
                let shown = rows
                    .iter()
                    .any(|(r, v)| &r.scenario == s && *v == Verdict::Documented(d.id.clone()));
                if !shown {
                    out.push((d.id.clone(), s.clone()));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ledger() -> Ledger {
        Ledger {
            deviations: vec![Deviation {
                id: "wire-50".into(),
                api: "EndTxn".into(),
                versions: "0..=3".into(),
                field: "error_code".into(),
                kaas: "50 INVALID_TRANSACTION_TIMEOUT".into(),
                apache: "48 INVALID_TXN_STATE".into(),
                spec: "s".into(),
                java_client: "j".into(),
                scenarios: vec!["a".into(), "b".into()],
            }],
        }
    }

    fn row(scenario: &str, version: i16, left: &str, right: &str) -> DiffRow {
        DiffRow {
            scenario: scenario.into(),
            step: "end".into(),
            api: "EndTxn".into(),
            version: Some(version),
            path: "error_code".into(),
            left: format!("\"{left}\""),
            right: format!("\"{right}\""),
        }
    }

    #[test]
    fn documented_undocumented_and_stale() {
        let l = ledger();
        let ok = row(
            "a",
            3,
            "50 INVALID_TRANSACTION_TIMEOUT",
            "48 INVALID_TXN_STATE",
        );
        assert_eq!(l.classify(&ok), Verdict::Documented("wire-50".into()));
        let other_value = row("a", 3, "51 CONCURRENT_TRANSACTIONS", "48 INVALID_TXN_STATE");
        assert_eq!(l.classify(&other_value), Verdict::Undocumented);
        let other_version = row(
            "a",
            4,
            "50 INVALID_TRANSACTION_TIMEOUT",
            "48 INVALID_TXN_STATE",
        );
        assert_eq!(l.classify(&other_version), Verdict::Undocumented);
        let rows = vec![(ok.clone(), l.classify(&ok))];
        // "b" was run and the deviation did not show there: stale. "c" was not run.
        assert_eq!(
            l.stale(&["a".into(), "b".into(), "c".into()], &rows),
            vec![("wire-50".to_string(), "b".to_string())]
        );
    }

    #[test]
    fn the_committed_ledger_parses_and_names_a_spec_section_and_client_effect() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/deviations.toml");
        let l = Ledger::load(&path).unwrap();
        assert!(!l.deviations.is_empty());
        for d in &l.deviations {
            assert!(
                !d.spec.is_empty() && !d.java_client.is_empty() && !d.scenarios.is_empty(),
                "{}",
                d.id
            );
        }
    }
}
