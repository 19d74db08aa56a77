//! The deviation ledger (`scenarios/deviations.toml`): every difference between kaas and
//! Apache that the kaas documentation promises, no more and no less. A difference an entry
//! matches is DOCUMENTED; any other is UNDOCUMENTED; an entry that names a scenario in which it
//! did not show is STALE. Undocumented and stale both fail a run.
//!
//! Beside kaas's claims, the ledger keeps the changes Apache made after 3.7 that the scenarios
//! show (entries with `apache_since`): what kaas, answering as 3.7 does, would have to change to
//! claim a later release, and what changed between two Apaches. Which entries speak of a
//! comparison is [`crate::run::scope`]'s to say.

use std::path::Path;

use serde::Deserialize;

pub use super::consequence::Consequence;

use crate::compare::diff::DiffRow;
use crate::scenario::VersionSpec;

/// One field difference a deviation produces: the value each broker gives there. Values are
/// in the transcripts' normalised form; `*` matches any run of characters (`pid#*`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shows {
    /// The API of the step where it shows, when not the entry's own (a consequence seen
    /// through another API, such as a Fetch after the deviating call).
    #[serde(default)]
    pub api: Option<String>,
    /// With `api`, the versions of it where it shows (all when not given): a later release's
    /// new versions, each entry the release that brought them.
    #[serde(default)]
    pub versions: Option<VersionSpec>,
    /// The field (a suffix of the diff path), or "outcome" for a kind of answer that differs
    /// (a version one side does not serve).
    pub field: String,
    /// What kaas answers (e.g. "50 INVALID_TRANSACTION_TIMEOUT").
    pub kaas: String,
    /// What Apache 3.7 answers.
    pub apache: String,
}

/// What a real client shows of a deviation: in one workload of `kconform clients`, one call's
/// result or one observation differs this way between kaas and Apache. Each claim must show
/// whenever its workload runs with its client on both; one that does not is STALE.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ClientShows {
    /// `java` or `librdkafka` ([`CLIENTS`]).
    pub client: String,
    /// The workload (see `kconform clients --list`).
    pub workload: String,
    /// The call or observation of the workload's transcript.
    pub field: String,
    /// What the client sees on kaas (`ok`, an exception class or error code, or an
    /// observation's JSON; `*` matches any run of characters).
    pub kaas: String,
    /// What it sees on Apache 3.7.
    pub apache: String,
    /// Where the workload's transaction coordinator sat for the claim to hold, beside its
    /// group's coordinator (a workload with a group) or its partition's leader (one without,
    /// on a cluster): `together` (as on one broker) or `apart` (on two brokers of a cluster);
    /// none when it holds wherever they sit.
    #[serde(default)]
    pub coordinators: Option<String>,
    /// What the difference does to the application ([`Consequence`]); none: unchanged when
    /// `kaas` and `apache` are the same, else a difference of no stated harm.
    #[serde(default)]
    pub consequence: Option<Consequence>,
}

impl ClientShows {
    /// What the difference does to the application, stated or derived.
    pub fn consequence(&self) -> Consequence {
        self.consequence
            .unwrap_or_else(|| Consequence::of_unclassified(&self.kaas, &self.apache))
    }
}

/// The placements a client claim may name ([`ClientShows::coordinators`]).
pub const PLACEMENTS: [&str; 2] = ["together", "apart"];

/// The clients whose view of a deviation the ledger's claims may state.
pub const CLIENTS: [&str; 6] = [
    "java",
    "librdkafka",
    "kafkajs",
    "sarama",
    "aiokafka",
    "kafka-python",
];

/// The clients every entry must speak of in words (`java_client`, `librdkafka_client`): a
/// claim, or why none is reached. The ecosystem's other clients share `ecosystem_clients`.
pub const TEXT_CLIENTS: [&str; 2] = ["java", "librdkafka"];

/// How an entry's client text begins when no workload reaches the deviation with that client;
/// the rest of the text says why.
pub const NOT_REACHED: &str = "Not reached";

/// One documented deviation.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Deviation {
    /// Stable id.
    pub id: String,
    /// The API it concerns.
    pub api: String,
    /// Versions: "all", one number, or "A..=B".
    #[serde(default)]
    pub versions: VersionSpec,
    /// One field difference, written inline (`field`, `kaas`, `apache`)...
    #[serde(flatten)]
    pub inline: Option<Shows>,
    /// ...or several, when the deviation changes more than one field of an answer.
    #[serde(default)]
    pub shows: Vec<Shows>,
    /// The spec section that documents it.
    pub spec: String,
    /// What a Java 3.7 application notices because of it, confirmed by the `client` claims
    /// for `java`; or, beginning [`NOT_REACHED`], why no client workload reaches it.
    pub java_client: String,
    /// The same for a librdkafka application.
    pub librdkafka_client: String,
    /// What applications on KafkaJS, sarama, aiokafka and kafka-python notice, confirmed by
    /// their claims; none where those clients' workloads (the fencing ones) were not looked at
    /// for it.
    #[serde(default)]
    pub ecosystem_clients: Option<String>,
    /// What the client workloads show of it, each checked by `kconform clients`.
    #[serde(default)]
    pub client: Vec<ClientShows>,
    /// Scenarios that demonstrate it: each must show it, and it documents differences in
    /// these scenarios only, so no entry vouches for a difference nobody looked at.
    pub scenarios: Vec<String>,
    /// A difference of timing only, and why a run may not show it (kaas's peer markers land
    /// within a poll, at a moment no scenario controls): the entry documents it where it
    /// shows, and is not stale where it does not.
    #[serde(default)]
    pub timing: Option<String>,
    /// The fewest brokers it shows on (the brokers of its scenarios; default 1): on a target
    /// of fewer, its values document nothing. A cluster's cross-broker gap does not vouch for
    /// the same values on one broker, where they would be a bug.
    #[serde(default = "one_broker")]
    pub brokers: usize,
    /// For a change Apache made after 3.7 rather than a kaas claim, the release that made it
    /// (`"4.0"`): from it on Apache answers `apache` where 3.7, and kaas with it, answers
    /// `kaas`. Such an entry speaks only of comparisons with a release that has the change.
    #[serde(default)]
    pub apache_since: Option<String>,
    /// For such a change that a later release changed again, the last release that answers
    /// `apache` (`"3.9"`: 4.0 answers otherwise, in an entry of its own).
    #[serde(default)]
    pub apache_until: Option<String>,
}

/// A release as `apache_since` and `apache_until` name it, `MAJOR.MINOR`.
pub fn major_minor(text: &str) -> Result<(u8, u8), String> {
    let bad = || format!("release '{text}' is no MAJOR.MINOR (\"4.0\")");
    let (major, minor) = text.split_once('.').ok_or_else(bad)?;
    Ok((
        major.parse().map_err(|_| bad())?,
        minor.parse().map_err(|_| bad())?,
    ))
}

fn one_broker() -> usize {
    1
}

impl Deviation {
    /// The entry's text for `client` (`java_client`, `librdkafka_client`, else
    /// `ecosystem_clients`, empty where it says nothing).
    pub fn client_text(&self, client: &str) -> &str {
        match client {
            "java" => &self.java_client,
            "librdkafka" => &self.librdkafka_client,
            _ => self.ecosystem_clients.as_deref().unwrap_or_default(),
        }
    }

    /// Whether `claim` documents `value_left` (kaas) against `value_right` (Apache) in
    /// `field` of `workload` run by `client`.
    pub fn client_claim_matches(
        claim: &ClientShows,
        client: &str,
        workload: &str,
        field: &str,
        kaas: &str,
        apache: &str,
    ) -> bool {
        claim.client == client
            && claim.workload == workload
            && claim.field == field
            && glob(&claim.kaas, kaas)
            && glob(&claim.apache, apache)
    }

    /// Every field difference the entry documents.
    pub fn field_differences(&self) -> impl Iterator<Item = &Shows> {
        self.inline.iter().chain(&self.shows)
    }

    fn matches_values(&self, row: &DiffRow) -> bool {
        self.field_differences().any(|f| {
            let api = match &f.api {
                Some(api) => {
                    glob(api, &row.api) && f.versions.as_ref().is_none_or(|v| v.covers(row.version))
                }
                None => self.api == row.api && self.versions.covers(row.version),
            };
            api && (row.path == f.field || row.path.ends_with(&format!(".{}", f.field)))
                && values_match(
                    &f.kaas,
                    &f.apache,
                    &crate::compare::diff::text(&row.left),
                    &crate::compare::diff::text(&row.right),
                )
        })
    }
}

impl Shows {
    /// The same difference read from the other side: the values swapped, and `N`, `N+k`
    /// becoming `N`, `N-k` (what `values_match` reads).
    pub fn reversed(&mut self) {
        let offset = match (self.kaas.as_str(), self.apache.strip_prefix('N')) {
            ("N", Some(rest)) if !rest.is_empty() => {
                rest.strip_prefix('+').unwrap_or(rest).parse::<i64>().ok()
            }
            _ => None,
        };
        match offset.and_then(|k| k.checked_neg()) {
            Some(back) => self.apache = format!("N{back:+}"),
            None => std::mem::swap(&mut self.kaas, &mut self.apache),
        }
    }
}

/// Whether kaas's value `left` and Apache's `right` are the pair `kaas` and `apache` document:
/// two globs, or a number and its offset from it (`kaas = "N"`, `apache = "N+1"`: Apache's
/// value is one more than kaas's, whatever kaas's is; an epoch a sequence has bumped any
/// number of times before).
fn values_match(kaas: &str, apache: &str, left: &str, right: &str) -> bool {
    if kaas == "N" {
        let offset = match apache.strip_prefix('N') {
            Some("") => Some(0),
            Some(rest) => rest.strip_prefix('+').unwrap_or(rest).parse::<i64>().ok(),
            None => None,
        };
        if let Some(offset) = offset {
            return match (left.parse::<i64>(), right.parse::<i64>()) {
                (Ok(l), Ok(r)) => l.checked_add(offset) == Some(r),
                _ => false,
            };
        }
    }
    glob(kaas, left) && glob(apache, right)
}

/// Whether `text` matches `pattern`, where `*` stands for any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    true
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
    /// No entry matches; `hint` names an entry with the same values that does not list this
    /// scenario (add the scenario to it if the difference is that deviation).
    Undocumented {
        /// Such an entry's id.
        hint: Option<String>,
    },
}

/// The ledger (empty by default: a ledger that documents nothing).
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    /// kaas's claims against Apache 3.7, in file order.
    pub deviations: Vec<Deviation>,
    /// The changes Apache made after 3.7 (entries with `apache_since`), in file order: kept
    /// apart, so that whatever judges kaas against 3.7 never sees them.
    pub changes: Vec<Deviation>,
}

impl Ledger {
    /// Reads the ledger file; every entry must document at least one field difference.
    pub fn load(path: &Path) -> Result<Ledger, LedgerError> {
        let text = std::fs::read_to_string(path).map_err(|e| LedgerError {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        Ledger::parse(&text, &path.display().to_string())
    }

    /// The ledger of a scenario source (`deviations.toml`).
    pub fn read(scenarios: &crate::data::Source) -> Result<Ledger, LedgerError> {
        let text = scenarios.read("deviations.toml").map_err(|e| LedgerError {
            path: e.place,
            reason: e.reason,
        })?;
        Ledger::parse(&text, &scenarios.place("deviations.toml"))
    }

    /// Parses ledger text read from `place`.
    pub fn parse(text: &str, place: &str) -> Result<Ledger, LedgerError> {
        let err = |reason: String| LedgerError {
            path: place.to_owned(),
            reason,
        };
        let file: LedgerFile = toml::from_str(text).map_err(|e| err(e.to_string()))?;
        if let Some((d, why)) = file
            .deviation
            .iter()
            .find_map(|d| d.versions.bounds().err().map(|why| (d, why)))
        {
            return Err(err(format!("deviation '{}': {why}", d.id)));
        }
        if let Some(d) = file
            .deviation
            .iter()
            .find(|d| d.field_differences().next().is_none())
        {
            return Err(err(format!(
                "deviation '{}' names no field (give field/kaas/apache or [[deviation.shows]])",
                d.id
            )));
        }
        for d in &file.deviation {
            for shows in d.field_differences() {
                let why = match (&shows.api, &shows.versions) {
                    (None, Some(_)) => Some("versions in a shows needs its api".to_owned()),
                    (_, Some(v)) => v.bounds().err(),
                    _ => None,
                };
                if let Some(why) = why {
                    return Err(err(format!(
                        "deviation '{}', shows '{}': {why}",
                        d.id, shows.field
                    )));
                }
            }
            if let Some(c) = d
                .client
                .iter()
                .find(|c| !CLIENTS.contains(&c.client.as_str()))
            {
                return Err(err(format!(
                    "deviation '{}': client '{}' is none of {}",
                    d.id,
                    c.client,
                    CLIENTS.join(", ")
                )));
            }
            if let Some(c) = d.client.iter().find(|c| {
                c.coordinators
                    .as_deref()
                    .is_some_and(|p| !PLACEMENTS.contains(&p))
            }) {
                return Err(err(format!(
                    "deviation '{}': coordinators '{}' is none of {}",
                    d.id,
                    c.coordinators.as_deref().unwrap_or_default(),
                    PLACEMENTS.join(", ")
                )));
            }
            for client in TEXT_CLIENTS {
                let claims = d.client.iter().any(|c| c.client == client);
                let not_reached = d.client_text(client).starts_with(NOT_REACHED);
                if claims == not_reached {
                    return Err(err(format!(
                        "deviation '{}': {client}_client must begin '{NOT_REACHED}' (and say why) \
                         exactly when no [[deviation.client]] claim has client = \"{client}\"",
                        d.id
                    )));
                }
            }
        }
        for d in &file.deviation {
            let (since, until) = (d.apache_since.as_deref(), d.apache_until.as_deref());
            if until.is_some() && since.is_none() {
                return Err(err(format!(
                    "deviation '{}': apache_until without apache_since",
                    d.id
                )));
            }
            for release in since.into_iter().chain(until) {
                major_minor(release).map_err(|why| err(format!("deviation '{}': {why}", d.id)))?;
            }
        }
        let (changes, deviations) = file
            .deviation
            .into_iter()
            .partition(|d| d.apache_since.is_some());
        Ok(Ledger {
            deviations,
            changes,
        })
    }

    /// The entry with this id.
    pub fn entry(&self, id: &str) -> Option<&Deviation> {
        self.deviations.iter().find(|d| d.id == id)
    }

    /// The entry documenting `row` (kaas on the left, Apache on the right), if any.
    pub fn classify(&self, row: &DiffRow) -> Verdict {
        let mut same_values = self.deviations.iter().filter(|d| d.matches_values(row));
        match same_values
            .clone()
            .find(|d| d.scenarios.contains(&row.scenario))
        {
            Some(d) => Verdict::Documented(d.id.clone()),
            None => Verdict::Undocumented {
                hint: same_values.next().map(|d| d.id.clone()),
            },
        }
    }

    /// The entry whose values `row` shows on a target of `brokers` brokers, whatever scenario
    /// it came from: how a fuzzer's sequence, which no entry lists, is judged.
    pub fn documents_on(&self, row: &DiffRow, brokers: usize) -> Option<String> {
        self.deviations
            .iter()
            .find(|d| d.brokers <= brokers && d.matches_values(row))
            .map(|d| d.id.clone())
    }

    /// Entries that name a scenario among `ran` in which none of `rows` matched them:
    /// (entry id, scenario).
    pub fn stale(&self, ran: &[String], rows: &[(DiffRow, Verdict)]) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for d in self.deviations.iter().filter(|d| d.timing.is_none()) {
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

    #[test]
    fn a_difference_reversed_reads_from_the_other_side() {
        let shows = |kaas: &str, apache: &str| Shows {
            api: None,
            versions: None,
            field: "f".into(),
            kaas: kaas.into(),
            apache: apache.into(),
        };
        for (kaas, apache, left, right) in [
            ("N", "N-1", "3", "2"),
            ("0", "1", "0", "1"),
            ("N", "N+2", "1", "3"),
        ] {
            let mut s = shows(kaas, apache);
            assert!(values_match(&s.kaas, &s.apache, left, right));
            s.reversed();
            assert!(
                values_match(&s.kaas, &s.apache, right, left),
                "{kaas} {apache} reversed: {s:?}"
            );
            assert!(!values_match(&s.kaas, &s.apache, left, right) || left == right);
        }
    }

    fn ledger() -> Ledger {
        Ledger {
            deviations: vec![Deviation {
                id: "wire-50".into(),
                api: "EndTxn".into(),
                versions: VersionSpec::Named("0..=3".into()),
                inline: Some(Shows {
                    api: None,
                    versions: None,
                    field: "error_code".into(),
                    kaas: "50 INVALID_TRANSACTION_TIMEOUT".into(),
                    apache: "48 INVALID_TXN_STATE".into(),
                }),
                shows: vec![Shows {
                    api: None,
                    versions: None,
                    field: "producer_id".into(),
                    kaas: "pid#*".into(),
                    apache: "-1".into(),
                }],
                spec: "s".into(),
                java_client: "Not reached: j".into(),
                librdkafka_client: "Not reached: l".into(),
                ecosystem_clients: None,
                client: Vec::new(),
                scenarios: vec!["a".into(), "b".into()],
                timing: None,
                brokers: 1,
                apache_since: None,
                apache_until: None,
            }],
            changes: Vec::new(),
        }
    }

    #[test]
    fn a_clusters_entry_documents_its_values_on_clusters_only() {
        let mut l = ledger();
        let row = DiffRow {
            scenario: "a sequence".into(),
            step: "s".into(),
            api: "EndTxn".into(),
            version: Some(3),
            path: "error_code".into(),
            left: serde_json::json!("50 INVALID_TRANSACTION_TIMEOUT"),
            right: serde_json::json!("48 INVALID_TXN_STATE"),
            detail: None,
        };
        assert_eq!(l.documents_on(&row, 1).as_deref(), Some("wire-50"));
        l.deviations[0].brokers = 3;
        assert_eq!(l.documents_on(&row, 1), None);
        assert_eq!(l.documents_on(&row, 3).as_deref(), Some("wire-50"));
    }

    fn row(scenario: &str, version: i16, left: &str, right: &str) -> DiffRow {
        DiffRow {
            scenario: scenario.into(),
            step: "end".into(),
            api: "EndTxn".into(),
            version: Some(version),
            path: "error_code".into(),
            left: serde_json::Value::from(left),
            right: serde_json::Value::from(right),
            detail: None,
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
        assert_eq!(
            l.classify(&other_value),
            Verdict::Undocumented { hint: None }
        );
        // The same values in a scenario the entry does not list: undocumented, with a hint.
        let elsewhere = row(
            "z",
            3,
            "50 INVALID_TRANSACTION_TIMEOUT",
            "48 INVALID_TXN_STATE",
        );
        assert_eq!(
            l.classify(&elsewhere),
            Verdict::Undocumented {
                hint: Some("wire-50".into())
            }
        );
        // A second field of the same entry, matched by a pattern.
        let mut pid = row("a", 0, "pid#3", "-1");
        pid.path = "producer_id".into();
        assert_eq!(l.classify(&pid), Verdict::Documented("wire-50".into()));
        let other_version = row(
            "a",
            4,
            "50 INVALID_TRANSACTION_TIMEOUT",
            "48 INVALID_TXN_STATE",
        );
        assert_eq!(
            l.classify(&other_version),
            Verdict::Undocumented { hint: None }
        );
        let rows = vec![(ok.clone(), l.classify(&ok))];
        // "b" was run and the deviation did not show there: stale. "c" was not run.
        assert_eq!(
            l.stale(&["a".into(), "b".into(), "c".into()], &rows),
            vec![("wire-50".to_string(), "b".to_string())]
        ); // A difference of timing only is never stale, and still documents where it shows.
        let mut timing = l.clone();
        timing.deviations[0].timing = Some("a poll".into());
        assert!(timing
            .stale(&["a".into(), "b".into(), "c".into()], &rows)
            .is_empty());
        assert_eq!(timing.classify(&ok), Verdict::Documented("wire-50".into()));
    }

    #[test]
    fn a_relative_pair_matches_any_number_and_that_offset_from_it() {
        assert!(values_match("N", "N+1", "4", "5"));
        assert!(values_match("N", "N+1", "0", "1"));
        assert!(!values_match("N", "N+1", "4", "4"));
        assert!(!values_match("N", "N+1", "4", "6"));
        assert!(values_match("N", "N-2", "4", "2"));
        assert!(!values_match("N", "N+1", "x", "y"));
        // Otherwise the globs as they are: "N" is no number there.
        assert!(!values_match("N", "N+1", "N", "N+1"));
        assert!(!values_match("N", "1", "0", "1"));
    }

    #[test]
    fn globs_match_runs_of_characters() {
        assert!(glob("pid#*", "pid#12"));
        assert!(glob("*", ""));
        assert!(glob("a*c*e", "abcde"));
        assert!(!glob("a*c*e", "abde"));
        assert!(!glob("pid#*", "node#1"));
        assert!(glob(
            "47 INVALID_PRODUCER_EPOCH",
            "47 INVALID_PRODUCER_EPOCH"
        ));
        assert!(!glob("ab*ba", "aba"));
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

#[cfg(test)]
mod parse_tests {
    use super::*;

    fn parse(text: &str) -> Result<Ledger, LedgerError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("d.toml");
        std::fs::write(&p, text).unwrap();
        Ledger::load(&p)
    }

    const HEAD: &str = "[[deviation]]\nid = \"x\"\napi = \"EndTxn\"\nspec = \"s\"\njava_client = \"Not reached: j\"\nlibrdkafka_client = \"Not reached: l\"\nscenarios = [\"a\"]\n";

    #[test]
    fn inline_and_listed_field_differences_both_parse() {
        let l = parse(&format!(
            "{HEAD}field = \"error_code\"\nkaas = \"1\"\napache = \"2\"\n[[deviation.shows]]\napi = \"Fetch\"\nfield = \"batches\"\nkaas = \"[]\"\napache = \"*\"\n"
        ))
        .unwrap();
        let fields: Vec<_> = l.deviations[0]
            .field_differences()
            .map(|f| f.field.as_str())
            .collect();
        assert_eq!(fields, ["error_code", "batches"]);
    }

    #[test]
    fn a_shows_with_versions_documents_its_api_at_those_versions_only() {
        let shows = "[[deviation.shows]]\napi = \"*\"\nversions = \"5..=6\"\nfield = \"outcome\"\nkaas = \"missing\"\napache = \"response\"\n";
        let l = parse(&format!("{HEAD}{shows}")).unwrap();
        let row = |version: i16| crate::compare::diff::DiffRow {
            scenario: "a".into(),
            step: format!("s@v{version}"),
            api: "TxnOffsetCommit".into(),
            version: Some(version),
            path: "outcome".into(),
            left: serde_json::json!("missing"),
            right: serde_json::json!("response"),
            detail: None,
        };
        let documented = |v| l.documents_on(&row(v), 1).is_some();
        assert!(documented(5) && documented(6));
        assert!(!documented(4) && !documented(7));
        let e = parse(&format!("{HEAD}{}", shows.replace("api = \"*\"\n", "")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("versions in a shows needs its api"), "{e}");
        let e = parse(&format!("{HEAD}{}", shows.replace("5..=6", "6..=5")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("is empty"), "{e}");
    }

    #[test]
    fn an_entry_without_fields_or_with_a_typo_is_refused() {
        let e = parse(HEAD).unwrap_err().to_string();
        assert!(e.contains("names no field"), "{e}");
        assert!(parse(&format!(
            "{HEAD}feild = \"error_code\"\nkaas = \"1\"\napache = \"2\"\n"
        ))
        .is_err());
    }

    #[test]
    fn a_client_text_says_not_reached_exactly_when_no_claim_is_made_for_that_client() {
        let fields = "field = \"error_code\"\nkaas = \"1\"\napache = \"2\"\n";
        let claim = |client: &str| {
            format!("[[deviation.client]]\nclient = \"{client}\"\nworkload = \"w\"\nfield = \"f\"\nkaas = \"ok\"\napache = \"E\"\n")
        };
        assert!(parse(&format!("{HEAD}{fields}")).is_ok());
        let e = parse(&format!("{HEAD}{fields}{}", claim("java")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("java_client must begin 'Not reached'"), "{e}");
        let reached = HEAD.replace("Not reached: j", "JavaException");
        assert!(parse(&format!("{reached}{fields}{}", claim("java"))).is_ok());
        let e = parse(&format!("{reached}{fields}"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("exactly when no"), "{e}");
        let e = parse(&format!("{reached}{fields}{}", claim("go")))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("client 'go' is none of java, librdkafka, kafkajs"),
            "{e}"
        );
    }

    #[test]
    fn an_entry_whose_versions_name_none_is_refused() {
        let fields = "field = \"error_code\"\nkaas = \"1\"\napache = \"2\"\n";
        assert!(parse(&format!("{HEAD}{fields}versions = \"0..=1\"\n")).is_ok());
        assert!(parse(&format!("{HEAD}{fields}versions = \"4\"\n")).is_ok());
        for bad in ["3..=1", "latest", "-1"] {
            let e = parse(&format!("{HEAD}{fields}versions = \"{bad}\"\n"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("version"), "{bad}: {e}");
        }
    }
}
