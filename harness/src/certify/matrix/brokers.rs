//! The brokers file (`brokers.toml`): one entry per Kafka-compatible broker the matrix
//! certifies. A broker joins the matrix with one entry: its name and version, how it starts
//! (a kconform target, or a command with `{port}` and `{data_dir}`), how it is installed, its
//! own ledger of documented deviations when its documentation states any, and whether it
//! claims transactions at all. Every entry is checked when the file is read, before any broker
//! is installed or started.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::targets::TargetSpec;

/// Why a brokers file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum BrokersError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not TOML of the expected shape.
    #[error("{path}: {reason}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What toml said, with the line.
        reason: String,
    },
    /// One entry is wrong.
    #[error("{path}: broker {name:?}: {reason}")]
    Entry {
        /// The file.
        path: PathBuf,
        /// The entry's name.
        name: String,
        /// What is wrong, in one line.
        reason: String,
    },
    /// Brokers asked for by name that the file does not have.
    #[error("{path}: no broker named {names} (it has: {have})")]
    Unknown {
        /// The file.
        path: PathBuf,
        /// The names asked for.
        names: String,
        /// The names it has.
        have: String,
    },
}

/// Whether a broker claims the transaction APIs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Claim {
    /// It documents transactions: it is certified like any broker.
    Served,
    /// It documents none: it must refuse them cleanly (not advertised, or
    /// UNSUPPORTED_VERSION); one that advertises them anyway is certified, and named for it.
    None,
}

/// How kconform has the broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Start {
    /// A target kconform starts itself (`ref`, `apache@4.4`, `build=PATH`).
    Target(String),
    /// A command (run with `sh -c`) that serves on `{port}` with its data under `{data_dir}`,
    /// until it is killed or its standard input closes.
    Command(String),
}

/// Which ledger of documented deviations a broker is judged by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LedgerChoice {
    /// None: its documentation states no deviation, so every difference is undocumented.
    None,
    /// kconform's own (`ledger = "built-in"`): the kaas documentation's, for kaas and kaas-ref.
    BuiltIn,
    /// A deviations.toml of its own (a path relative to the brokers file).
    File(PathBuf),
}

/// One broker of the matrix.
#[derive(Debug, Clone)]
pub struct Broker {
    /// Its name in the matrix: one word (letters, digits, `-`, `.`, `_`), its pages' names.
    pub name: String,
    /// The version installed, as its project names it.
    pub version: String,
    /// Where it comes from: a page a reader can follow.
    pub home: Option<String>,
    /// How it starts.
    pub start: Start,
    /// A command (`sh -c`, in the broker's install folder, `{install_dir}` filled in) that
    /// installs it; run before it starts, each run (an install that is done should be quick).
    pub install: Option<String>,
    /// Seconds it may take to answer ApiVersions once started.
    pub ready_secs: u64,
    /// The deviations its documentation states.
    pub ledger: LedgerChoice,
    /// Whether it claims transactions.
    pub transactions: Claim,
    /// What a reader should know of it, in a line.
    pub note: Option<String>,
    /// Why its differences inform rather than fail (another Apache release: how Kafka itself
    /// moved); none for a broker held to what it claims.
    pub informs: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    broker: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    name: String,
    version: String,
    home: Option<String>,
    target: Option<String>,
    command: Option<String>,
    install: Option<String>,
    ready_secs: Option<u64>,
    ledger: Option<PathBuf>,
    transactions: Claim,
    note: Option<String>,
    informs: Option<String>,
}

/// The default wait for a started broker to answer.
const READY_SECS: u64 = 60;

/// The brokers of the file at `path`, each entry checked: a name of one word, used once; a
/// target or a command, not both; a command that names `{port}`; a target kconform knows; a
/// ledger file that exists.
pub fn load(path: &Path) -> Result<Vec<Broker>, BrokersError> {
    let text = std::fs::read_to_string(path).map_err(|source| BrokersError::Read {
        path: path.to_owned(),
        source,
    })?;
    parse(&text, path)
}

/// [`load`] on the text of a file at `path` (the ledgers are found beside `path`).
pub fn parse(text: &str, path: &Path) -> Result<Vec<Broker>, BrokersError> {
    let file: File = toml::from_str(text).map_err(|e| BrokersError::Parse {
        path: path.to_owned(),
        reason: e.to_string().trim().replace('\n', " "),
    })?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    let here = |c: String| c.replace("{brokers_dir}", &dir.display().to_string());
    let mut seen = BTreeSet::new();
    let mut brokers = Vec::new();
    for entry in file.broker {
        let name = entry.name.clone();
        let wrong = |reason: String| BrokersError::Entry {
            path: path.to_owned(),
            name: name.clone(),
            reason,
        };
        let one_word = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c));
        if !one_word {
            return Err(wrong(
                "a name is one word: letters, digits, '-', '.', '_'".into(),
            ));
        }
        if !seen.insert(name.clone()) {
            return Err(wrong("named twice".into()));
        }
        let start = match (entry.target, entry.command) {
            (Some(t), None) => {
                TargetSpec::parse(&t).map_err(|e| wrong(format!("target {t:?}: {e}")))?;
                Start::Target(t)
            }
            (None, Some(c)) if c.contains("{port}") => Start::Command(here(c)),
            (None, Some(_)) => {
                return Err(wrong(
                    "its command must name {port}, the port kconform gives it".into(),
                ))
            }
            (Some(_), Some(_)) => return Err(wrong("a target or a command, not both".into())),
            (None, None) => return Err(wrong(
                "how it starts: a target (ref, apache@4.4, build=PATH) or a command with {port}"
                    .into(),
            )),
        };
        let ledger = match entry.ledger {
            None => LedgerChoice::None,
            Some(l) if l.as_os_str() == "built-in" => LedgerChoice::BuiltIn,
            Some(l) if !dir.join(&l).is_file() => {
                return Err(wrong(format!(
                "ledger {}: no such file beside the brokers file (or \"built-in\": kconform's own)",
                l.display()
            )))
            }
            Some(l) => LedgerChoice::File(dir.join(l)),
        };
        brokers.push(Broker {
            name,
            version: entry.version,
            home: entry.home,
            start,
            install: entry.install.map(here),
            ready_secs: entry.ready_secs.unwrap_or(READY_SECS),
            ledger,
            transactions: entry.transactions,
            note: entry.note,
            informs: entry.informs,
        });
    }
    Ok(brokers)
}

/// The brokers of `all` named in `names` (all of them when none is), each name checked.
pub fn select(
    all: Vec<Broker>,
    names: &[String],
    path: &Path,
) -> Result<Vec<Broker>, BrokersError> {
    if names.is_empty() {
        return Ok(all);
    }
    let unknown: Vec<&str> = names
        .iter()
        .filter(|n| !all.iter().any(|b| &b.name == *n))
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        return Err(BrokersError::Unknown {
            path: path.to_owned(),
            names: unknown.join(", "),
            have: all
                .iter()
                .map(|b| b.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    Ok(all
        .into_iter()
        .filter(|b| names.contains(&b.name))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<Vec<Broker>, String> {
        parse(text, Path::new("brokers.toml")).map_err(|e| e.to_string())
    }

    /// A target, and a command with its port, each read as written.
    #[test]
    fn a_target_and_a_command_are_read() {
        let brokers = parsed(
            r#"
            [[broker]]
            name = "kaas-ref"
            version = "0.1.0"
            target = "ref"
            transactions = "served"
            ledger = "built-in"

            [[broker]]
            name = "nafka"
            version = "0.1"
            command = "nafka --port {port}"
            transactions = "none"
            ready_secs = 20
            "#,
        )
        .unwrap();
        assert_eq!(brokers[0].start, Start::Target("ref".into()));
        assert_eq!(brokers[0].ledger, LedgerChoice::BuiltIn);
        assert_eq!(brokers[1].ledger, LedgerChoice::None);
        assert_eq!(brokers[0].ready_secs, READY_SECS);
        assert_eq!(
            brokers[1].start,
            Start::Command("nafka --port {port}".into())
        );
        assert_eq!(brokers[1].transactions, Claim::None);
        assert_eq!(brokers[1].ready_secs, 20);
    }

    /// Each wrong entry is refused with its name and what is wrong.
    #[test]
    fn a_wrong_entry_is_refused_naming_it() {
        let entry = |body: &str| {
            format!(
                "[[broker]]\nname = \"b\"\nversion = \"1\"\ntransactions = \"served\"\n{body}\n"
            )
        };
        for (body, says) in [
            ("", "how it starts"),
            ("command = \"b serve\"", "must name {port}"),
            ("target = \"ref\"\ncommand = \"b {port}\"", "not both"),
            ("target = \"nonsense\"", "target \"nonsense\""),
            (
                "target = \"ref\"\nledger = \"missing.toml\"",
                "no such file",
            ),
            ("target = \"ref\"\ncolour = \"red\"", "unknown field"),
        ] {
            let err = parsed(&entry(body)).unwrap_err();
            assert!(err.contains(says), "{body:?}: {err}");
        }
        let twice = format!("{}{}", entry("target = \"ref\""), entry("target = \"ref\""));
        assert!(parsed(&twice).unwrap_err().contains("named twice"));
        let spaced = entry("target = \"ref\"").replace("name = \"b\"", "name = \"a b\"");
        assert!(parsed(&spaced).unwrap_err().contains("one word"));
    }

    /// Names asked for that the file lacks are refused together, with what it has.
    #[test]
    fn unknown_names_are_refused_with_the_names_there_are() {
        let all = parsed("[[broker]]\nname = \"a\"\nversion = \"1\"\ntarget = \"ref\"\ntransactions = \"served\"\n").unwrap();
        let err = select(all.clone(), &["x".into(), "a".into()], Path::new("b.toml")).unwrap_err();
        assert_eq!(err.to_string(), "b.toml: no broker named x (it has: a)");
        assert_eq!(
            select(all, &["a".into()], Path::new("b.toml"))
                .unwrap()
                .len(),
            1
        );
    }
}
