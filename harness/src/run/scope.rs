//! How far the deviation ledger speaks of a comparison. The ledger documents kaas against
//! Apache 3.7.2 (the release kaas claims parity with): on that pair its claims document
//! differences and a claim that does not show is stale. Against another Apache release its
//! claims still document the differences they match, and so do the changes Apache made up to
//! that release (entries with `apache_since`), but an entry that does not show there says
//! nothing about the docs (that release may answer otherwise), so none is judged stale. Between
//! two Apaches only the changes made between the two speak: each documents the difference it
//! matches, and one that does not show is stale.

use crate::compare::ledger::{major_minor, Deviation, Ledger};
use crate::targets::apache::Release;
use crate::targets::TargetSpec;

/// What the ledger does for one comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LedgerScope {
    /// Documents differences and finds stale entries: a broker compared with Apache 3.7.2
    /// (live or recorded), or two brokers neither of which is Apache.
    Judged,
    /// Documents differences as kaas's claims against 3.7.2 and as the changes Apache made up
    /// to `release`, judges no entry stale: a broker compared with another Apache release
    /// (why, for the report).
    ClaimsOnly {
        /// The Apache release compared with.
        release: Release,
        /// Why, for the report.
        why: String,
    },
    /// Documents the differences the changes Apache made between two releases match, and
    /// judges them stale where they do not show: two Apaches.
    Apart {
        /// The earlier release.
        from: Release,
        /// The later one.
        to: Release,
        /// Whether the later release is the first target (the one entries call kaas's side):
        /// the entries' values are then read the other way round.
        later_first: bool,
        /// Why, for the report.
        why: String,
    },
}

impl LedgerScope {
    /// The entries of `full` that speak of this comparison.
    pub fn ledger(&self, full: &Ledger) -> Ledger {
        // Whether `d` is a change made after `after` (if given) and still so at `by`.
        let made = |d: &Deviation, after: Option<&Release>, by: &Release| {
            let Some(Ok(since)) = d.apache_since.as_deref().map(major_minor) else {
                return false;
            };
            let until = d.apache_until.as_deref().map(major_minor);
            let at = |r: &Release| (r.major, r.minor);
            after.is_none_or(|a| at(a) < since)
                && since <= at(by)
                && until.is_none_or(|u| u.is_ok_and(|u| at(by) <= u))
        };
        match self {
            LedgerScope::Judged => Ledger {
                deviations: full.deviations.clone(),
                changes: Vec::new(),
            },
            LedgerScope::ClaimsOnly { release, .. } => Ledger {
                deviations: full
                    .deviations
                    .iter()
                    .chain(full.changes.iter().filter(|d| made(d, None, release)))
                    .cloned()
                    .collect(),
                changes: Vec::new(),
            },
            LedgerScope::Apart {
                from,
                to,
                later_first,
                ..
            } => Ledger {
                deviations: full
                    .changes
                    .iter()
                    .filter(|d| made(d, Some(from), to))
                    .cloned()
                    .map(|mut d| {
                        if *later_first {
                            d.inline
                                .iter_mut()
                                .chain(d.shows.iter_mut())
                                .for_each(|shows| shows.reversed());
                        }
                        d
                    })
                    .collect(),
                changes: Vec::new(),
            },
        }
    }

    /// Whether an entry that does not show where it should fails the run.
    pub fn judges_stale(&self) -> bool {
        !matches!(self, LedgerScope::ClaimsOnly { .. })
    }

    /// Why the ledger speaks as it does, for the report; none for the pair it documents.
    pub fn why(&self) -> Option<&str> {
        match self {
            LedgerScope::Judged => None,
            LedgerScope::ClaimsOnly { why, .. } | LedgerScope::Apart { why, .. } => Some(why),
        }
    }
}

/// The scope of comparing `left` (where the ledger expects kaas) with `right`.
pub fn ledger_scope(left: &TargetSpec, right: &TargetSpec) -> LedgerScope {
    if let (Some(a), Some(b)) = (left.answers_as(), right.answers_as()) {
        let (from, to) = match (a.major, a.minor) <= (b.major, b.minor) {
            true => (a, b),
            false => (b, a),
        };
        return LedgerScope::Apart {
            from,
            to,
            later_first: from != a,
            why: format!(
                "both are Apache ({} and {}): only the ledger's changes Apache made after {} up to {} document differences (APACHE), and one that does not show is stale; every other difference is a change the ledger does not know",
                a.version(),
                b.version(),
                from.version(),
                to.version()
            ),
        };
    }
    match right.answers_as() {
        Some(r) if r != Release::CLAIMED => LedgerScope::ClaimsOnly {
            release: r,
            why: format!(
                "the ledger documents kaas against Apache {}: against {r} its claims document the differences they match, as do the changes Apache made up to {r} (APACHE), and an entry that does not show is not judged stale",
                Release::CLAIMED.version()
            ),
        },
        _ => LedgerScope::Judged,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(s: &str) -> TargetSpec {
        TargetSpec::parse(s).unwrap()
    }

    #[test]
    fn the_ledger_judges_only_the_pair_it_documents() {
        assert_eq!(
            ledger_scope(&spec("ref"), &spec("apache")),
            LedgerScope::Judged
        );
        assert_eq!(
            ledger_scope(&spec("ref:3"), &spec("apache-recorded:3")),
            LedgerScope::Judged
        );
        assert_eq!(
            ledger_scope(&spec("external=127.0.0.1:9092"), &spec("ref")),
            LedgerScope::Judged
        );
        assert_eq!(
            ledger_scope(&spec("ref"), &spec("apache@3.7.2")),
            LedgerScope::Judged,
            "3.7.2 by any name"
        );
        let claims = ledger_scope(&spec("ref"), &spec("apache@4.4+tv2"));
        assert!(
            matches!(&claims, LedgerScope::ClaimsOnly { why, .. } if why.contains("4.4.0 (transaction.version 2)")),
            "{claims:?}"
        );
        let apart = ledger_scope(&spec("apache"), &spec("apache@4.4"));
        assert!(
            matches!(&apart, LedgerScope::Apart { why, .. } if why.contains("3.7.2 and 4.4.0")),
            "{apart:?}"
        );
        assert!(matches!(
            ledger_scope(&spec("apache-recorded"), &spec("apache@3.8")),
            LedgerScope::Apart { .. }
        ));
    }

    #[test]
    fn each_comparison_hears_the_entries_that_speak_of_it() {
        let entry = |id: &str, since: Option<&str>| {
            let since = since.map_or(String::new(), |s| format!("apache_since = \"{s}\"\n"));
            format!(
                "[[deviation]]\nid = \"{id}\"\napi = \"EndTxn\"\nfield = \"error_code\"\nkaas = \"1\"\napache = \"2\"\nspec = \"x\"\njava_client = \"Not reached: x\"\nlibrdkafka_client = \"Not reached: x\"\nscenarios = [\"s\"]\n{since}"
            )
        };
        let text = entry("claim", None)
            + &entry("in-3.8", Some("3.8"))
            + &entry("in-4.0", Some("4.0"))
            + &entry("3.8-to-3.9", Some("3.8\"\napache_until = \"3.9"));
        let full = Ledger::parse(&text, "test").unwrap();
        let ids = |scope: LedgerScope| -> Vec<String> {
            scope
                .ledger(&full)
                .deviations
                .into_iter()
                .map(|d| d.id)
                .collect()
        };
        assert_eq!(ids(ledger_scope(&spec("ref"), &spec("apache"))), ["claim"]);
        assert_eq!(
            ids(ledger_scope(&spec("ref"), &spec("apache@3.9"))),
            ["claim", "in-3.8", "3.8-to-3.9"]
        );
        assert_eq!(
            ids(ledger_scope(&spec("ref"), &spec("apache@4.0.0"))),
            ["claim", "in-3.8", "in-4.0"]
        );
        assert_eq!(
            ids(ledger_scope(&spec("apache"), &spec("apache@4.4"))),
            ["in-3.8", "in-4.0"]
        );
        // Either order (the values read the other way round), and a change already made on
        // both sides speaks of neither.
        let reversed = ledger_scope(&spec("apache@4.4"), &spec("apache@3.8")).ledger(&full);
        assert_eq!(reversed.deviations.len(), 1);
        let shows = reversed.deviations[0].inline.as_ref().unwrap();
        assert_eq!(
            (
                reversed.deviations[0].id.as_str(),
                shows.kaas.as_str(),
                shows.apache.as_str()
            ),
            ("in-4.0", "2", "1")
        );
        assert!(!ledger_scope(&spec("ref"), &spec("apache@4.4")).judges_stale());
        assert!(ledger_scope(&spec("apache"), &spec("apache@4.4")).judges_stale());
        let bad = entry("bad", Some("four"));
        assert!(Ledger::parse(&bad, "test")
            .unwrap_err()
            .to_string()
            .contains("release 'four'"));
    }
}
