//! Which Apache Kafka a target runs: the release (3.7.2, the one kaas claims parity with and
//! every recorded answer comes from, unless a target names another) and, from 4.0 on, the
//! `transaction.version` its cluster is formatted with (KIP-890 part 2: version 2 bumps the
//! producer epoch at every transaction's end). Everything that differs between releases in
//! how kconform fetches, formats and starts Apache is asked of this type, so a launcher never
//! compares version numbers itself.

use crate::wire::frame::Parser;
use std::fmt;

/// An Apache Kafka release and its cluster's transaction version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Release {
    /// `3` in 3.7.2.
    pub major: u8,
    /// `7` in 3.7.2.
    pub minor: u8,
    /// `2` in 3.7.2.
    pub patch: u8,
    /// The `transaction.version` feature the cluster is formatted with: 1 (the transactions
    /// 3.7 knows) or, from 4.0, 2. A release before 4.0 has no such feature and says 1.
    pub transaction_version: u8,
}

/// The newest patch of each minor release kconform knows how to run (Maven Central's, on the
/// day this table was written); `apache@4.2` means the last of these for 4.2. A patch not in
/// the table is taken as asked, and Maven says whether it exists.
const NEWEST_PATCHES: &[(u8, u8, u8)] = &[
    (3, 7, 2),
    (3, 8, 1),
    (3, 9, 2),
    (4, 0, 2),
    (4, 1, 2),
    (4, 2, 2),
    (4, 3, 2),
    (4, 4, 0),
];

/// How a release's broker logs: the READY line kconform waits for is logged only when its
/// logging framework has a binding and a configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Logging {
    /// Log4j 1 through reload4j (Kafka 3.x).
    Log4j1,
    /// Log4j 2 (Kafka 4.0 and after), bound to SLF4J 1.7 by `log4j-slf4j-impl`.
    Log4j2,
}

impl Release {
    /// Apache Kafka 3.7.2: the release kaas claims parity with, the bare `apache` target, and
    /// the one every recorded answer is from.
    pub const CLAIMED: Release = Release {
        major: 3,
        minor: 7,
        patch: 2,
        transaction_version: 1,
    };

    /// Parses what follows `apache@`: `4.4`, `4.4.0`, `4.4+tv2` or `4.4.0+tv2`.
    pub fn parse(s: &str) -> Result<Release, String> {
        let (version, tv) = match s.split_once('+') {
            Some((version, "tv1")) => (version, 1),
            Some((version, "tv2")) => (version, 2),
            Some((_, other)) => {
                return Err(format!(
                    "'+{other}': a release takes +tv1 or +tv2 (its transaction.version)"
                ))
            }
            None => (s, 1),
        };
        let numbers: Vec<Option<u8>> = version.split('.').map(|n| n.parse().ok()).collect();
        let (major, minor, patch) = match numbers[..] {
            [Some(major), Some(minor)] => (major, minor, None),
            [Some(major), Some(minor), Some(patch)] => (major, minor, Some(patch)),
            _ => {
                return Err(format!(
                    "'{version}' is not a release (MAJOR.MINOR or MAJOR.MINOR.PATCH, e.g. 4.4)"
                ))
            }
        };
        let Some(&(_, _, newest)) = NEWEST_PATCHES
            .iter()
            .find(|(a, b, _)| (*a, *b) == (major, minor))
        else {
            return Err(format!(
                "Apache Kafka {major}.{minor} is not one kconform runs: it knows {}",
                Release::known()
            ));
        };
        let release = Release {
            major,
            minor,
            patch: patch.unwrap_or(newest),
            transaction_version: tv,
        };
        if tv == 2 && !release.has_transaction_version_feature() {
            return Err(format!(
                "Apache Kafka {} has no transaction.version 2 (it came with 4.0)",
                release.version()
            ));
        }
        Ok(release)
    }

    /// The minor releases kconform runs, for a refusal to list.
    pub fn known() -> String {
        let first = NEWEST_PATCHES[0];
        let last = NEWEST_PATCHES[NEWEST_PATCHES.len() - 1];
        format!("{}.{} to {}.{}", first.0, first.1, last.0, last.1)
    }

    /// The Maven version and image tag: `4.4.0`.
    pub fn version(&self) -> String {
        format!("{}.{}.{}", self.major, self.minor, self.patch)
    }

    /// How `--target` names it after `apache@` (`4.4.0`, `4.4.0+tv2`): the full version, so
    /// that a report or a recorded answer says exactly which broker answered.
    pub fn label(&self) -> String {
        match self.transaction_version {
            2 => format!("{}+tv2", self.version()),
            _ => self.version(),
        }
    }

    /// Its generated parsers' rules ([`Parser`]): what is a malformed frame to it.
    pub fn parser(&self) -> Parser {
        Parser::of_release(self.major, self.minor)
    }

    /// Whether its storage is formatted with a `transaction.version` (4.0 on; 3.9 has the
    /// feature but not a production version 2, and before it there is none).
    pub fn has_transaction_version_feature(&self) -> bool {
        self.major >= 4
    }

    /// What `kafka-storage format` is given beyond the cluster id and configuration.
    pub fn format_args(&self) -> Vec<String> {
        match self.has_transaction_version_feature() {
            true => vec![
                "--feature".into(),
                format!("transaction.version={}", self.transaction_version),
            ],
            false => Vec::new(),
        }
    }

    /// How its broker logs.
    pub fn logging(&self) -> Logging {
        match self.major >= 4 {
            true => Logging::Log4j2,
            false => Logging::Log4j1,
        }
    }
}

impl Default for Release {
    fn default() -> Release {
        Release::CLAIMED
    }
}

impl fmt::Display for Release {
    /// `Apache Kafka 4.4.0` with `(transaction.version 2)` when it is.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Apache Kafka {}", self.version())?;
        if self.transaction_version == 2 {
            write!(f, " (transaction.version 2)")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minor_release_means_its_newest_patch_and_a_patch_is_taken_as_given() {
        let r = Release::parse("4.4").unwrap();
        assert_eq!((r.version(), r.transaction_version), ("4.4.0".into(), 1));
        assert_eq!(Release::parse("3.7").unwrap(), Release::CLAIMED);
        assert_eq!(Release::parse("3.8.0").unwrap().version(), "3.8.0");
        assert_eq!(Release::parse("4.2+tv2").unwrap().label(), "4.2.2+tv2");
        assert_eq!(Release::parse("4.2+tv1").unwrap().label(), "4.2.2");
        assert_eq!(
            Release::parse("4.4.0+tv2").unwrap().to_string(),
            "Apache Kafka 4.4.0 (transaction.version 2)"
        );
    }

    #[test]
    fn what_is_not_a_release_kconform_runs_is_refused_saying_why() {
        for (bad, why) in [
            ("4", "not a release"),
            ("4.x", "not a release"),
            ("4.4.0.1", "not a release"),
            ("3.6", "it knows 3.7 to 4.4"),
            ("4.5", "it knows 3.7 to 4.4"),
            ("3.9+tv2", "came with 4.0"),
            ("4.4+tv3", "+tv1 or +tv2"),
        ] {
            let e = Release::parse(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn formatting_and_logging_follow_the_release() {
        assert!(Release::CLAIMED.format_args().is_empty());
        assert_eq!(Release::CLAIMED.logging(), Logging::Log4j1);
        let tv2 = Release::parse("4.0+tv2").unwrap();
        assert_eq!(tv2.format_args(), ["--feature", "transaction.version=2"]);
        assert_eq!(tv2.logging(), Logging::Log4j2);
        assert_eq!(
            Release::parse("4.4").unwrap().format_args(),
            ["--feature", "transaction.version=1"]
        );
    }
}
