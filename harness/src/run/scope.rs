//! How far the deviation ledger speaks of a comparison. The ledger documents kaas against
//! Apache 3.7.2 (the release kaas claims parity with): on that pair its entries document
//! differences and an entry that does not show is stale. Against another Apache release its
//! entries are still kaas's claims and document the differences they match, but one that does
//! not show there says nothing about the docs (that release may answer otherwise), so it is
//! not judged stale. Between two Apaches it documents nothing: every difference is a change
//! between the two releases.

use crate::targets::apache::Release;
use crate::targets::TargetSpec;

/// What the ledger does for one comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LedgerScope {
    /// Documents differences and finds stale entries: a broker compared with Apache 3.7.2
    /// (live or recorded), or two brokers neither of which is Apache.
    Judged,
    /// Documents differences as kaas's claims against 3.7.2, judges no entry stale: a
    /// broker compared with another Apache release (named, with why, for the report).
    ClaimsOnly(String),
    /// Documents nothing, judges nothing: two Apaches (why, for the report).
    Apart(String),
}

/// The scope of comparing `left` (where the ledger expects kaas) with `right`.
pub fn ledger_scope(left: &TargetSpec, right: &TargetSpec) -> LedgerScope {
    let apache = |t: &TargetSpec| t.is_apache() || t.is_recorded();
    let release = |t: &TargetSpec| t.release().unwrap_or(Release::CLAIMED);
    if apache(left) && apache(right) {
        return LedgerScope::Apart(format!(
            "both are Apache ({} and {}): the ledger documents kaas against Apache {}, so every difference here is a change between the two releases, none documented and no entry judged",
            release(left).version(),
            release(right).version(),
            Release::CLAIMED.version()
        ));
    }
    match right.release() {
        Some(r) if r != Release::CLAIMED => LedgerScope::ClaimsOnly(format!(
            "the ledger documents kaas against Apache {}: against {r} its entries document the differences they match (kaas's claims), and one that does not show is not judged stale",
            Release::CLAIMED.version()
        )),
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
            matches!(&claims, LedgerScope::ClaimsOnly(why) if why.contains("4.4.0 (transaction.version 2)")),
            "{claims:?}"
        );
        let apart = ledger_scope(&spec("apache"), &spec("apache@4.4"));
        assert!(
            matches!(&apart, LedgerScope::Apart(why) if why.contains("3.7.2 and 4.4.0")),
            "{apart:?}"
        );
        assert!(matches!(
            ledger_scope(&spec("apache-recorded"), &spec("apache@3.8")),
            LedgerScope::Apart(_)
        ));
    }
}
