//! Each difference between two brokers' client transcripts against the ledger's client
//! claims: a claim that matches documents it; a claim whose workload ran with its client on
//! both brokers and matched nothing is STALE.

use serde::Serialize;

use super::transcript::ClientDiff;
use crate::compare::ledger::{ClientShows, Deviation, Ledger};

/// A difference and the entry that documents it, if one does.
#[derive(Debug, Clone, Serialize)]
pub struct JudgedDiff {
    /// The difference.
    #[serde(flatten)]
    pub diff: ClientDiff,
    /// The ledger entry's id; none when undocumented.
    pub documented_by: Option<String>,
}

/// A claim no difference confirmed.
#[derive(Debug, Clone, Serialize)]
pub struct StaleClaim {
    /// The entry making it.
    pub deviation: String,
    /// The client.
    pub client: String,
    /// The workload.
    pub workload: String,
    /// The field.
    pub field: String,
    /// What the claim says kaas shows.
    pub kaas: String,
    /// What the claim says Apache shows.
    pub apache: String,
}

fn claims(ledger: &Ledger) -> impl Iterator<Item = (&Deviation, &ClientShows)> {
    ledger
        .deviations
        .iter()
        .flat_map(|d| d.client.iter().map(move |c| (d, c)))
}

fn matches(c: &ClientShows, d: &ClientDiff) -> bool {
    Deviation::client_claim_matches(c, &d.client, &d.workload, &d.field, &d.left, &d.right)
}

/// Classifies each difference (kaas on the left, Apache on the right).
pub fn judge(ledger: &Ledger, diffs: Vec<ClientDiff>) -> Vec<JudgedDiff> {
    diffs
        .into_iter()
        .map(|diff| JudgedDiff {
            documented_by: claims(ledger)
                .find(|(_, c)| matches(c, &diff))
                .map(|(d, _)| d.id.clone()),
            diff,
        })
        .collect()
}

/// A workload run by one client on both targets: its fields on each (see
/// [`super::transcript::ClientTranscript::fields`]).
#[derive(Debug, Clone)]
pub struct Compared {
    /// The client.
    pub client: String,
    /// The workload.
    pub workload: String,
    /// The target under test's fields (kaas).
    pub left: Vec<(String, String)>,
    /// The baseline's fields (Apache).
    pub right: Vec<(String, String)>,
}

impl Compared {
    fn confirms(&self, c: &ClientShows) -> bool {
        let value = |fields: &[(String, String)]| {
            fields
                .iter()
                .find(|(f, _)| *f == c.field)
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| super::transcript::ABSENT.into())
        };
        Deviation::client_claim_matches(
            c,
            &self.client,
            &self.workload,
            &c.field,
            &value(&self.left),
            &value(&self.right),
        )
    }
}

/// Claims whose (client, workload) was compared and whose field did not show what they say
/// on each side. A claim may state a difference or, with the same value on both sides, that
/// a client sees none (what it says is checked either way).
pub fn stale(ledger: &Ledger, compared: &[Compared]) -> Vec<StaleClaim> {
    claims(ledger)
        .filter_map(|(d, c)| {
            let runs: Vec<&Compared> = compared
                .iter()
                .filter(|x| x.client == c.client && x.workload == c.workload)
                .collect();
            (!runs.is_empty() && !runs.iter().all(|x| x.confirms(c))).then(|| StaleClaim {
                deviation: d.id.clone(),
                client: c.client.clone(),
                workload: c.workload.clone(),
                field: c.field.clone(),
                kaas: c.kaas.clone(),
                apache: c.apache.clone(),
            })
        })
        .collect()
}

/// Claims naming a workload that does not exist: (entry id, workload).
pub fn unknown_workloads<'a>(ledger: &'a Ledger, known: &[&str]) -> Vec<(&'a str, &'a str)> {
    claims(ledger)
        .filter(|(_, c)| !known.contains(&c.workload.as_str()))
        .map(|(d, c)| (d.id.as_str(), c.workload.as_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEDGER: &str = r#"
[[deviation]]
id = "timeout"
api = "InitProducerId"
field = "error_code"
kaas = "0 NONE"
apache = "50 INVALID_TRANSACTION_TIMEOUT"
spec = "s"
java_client = "initTransactions succeeds where Apache's raises InvalidTxnTimeoutException"
librdkafka_client = "Not reached: r"
scenarios = ["x"]
[[deviation.client]]
client = "java"
workload = "timeout-above-max"
field = "initTransactions"
kaas = "ok"
apache = "*InvalidTxnTimeoutException"
"#;

    fn diff(client: &str, left: &str, right: &str) -> ClientDiff {
        ClientDiff {
            client: client.into(),
            workload: "timeout-above-max".into(),
            field: "initTransactions".into(),
            left: left.into(),
            right: right.into(),
        }
    }

    #[test]
    fn a_claim_documents_its_difference_only_and_goes_stale_without_it() {
        let ledger = Ledger::parse(LEDGER, "test").unwrap();
        let apache = "org.apache.kafka.common.errors.InvalidTxnTimeoutException";
        let judged = judge(
            &ledger,
            vec![
                diff("java", "ok", apache),
                diff("librdkafka", "ok", apache),
                diff("java", "ProducerFencedException", apache),
            ],
        );
        let ids: Vec<_> = judged.iter().map(|j| j.documented_by.as_deref()).collect();
        assert_eq!(ids, [Some("timeout"), None, None]);
        let run = |left: &str, right: &str| Compared {
            client: "java".into(),
            workload: "timeout-above-max".into(),
            left: vec![("initTransactions".into(), left.into())],
            right: vec![("initTransactions".into(), right.into())],
        };
        assert!(stale(&ledger, &[run("ok", apache)]).is_empty());
        let stale_claims = stale(&ledger, &[run("ok", "ok")]);
        assert_eq!(stale_claims.len(), 1);
        assert_eq!(stale_claims[0].deviation, "timeout");
        // A workload that did not run leaves its claims unjudged.
        assert!(stale(&ledger, &[]).is_empty());
    }

    #[test]
    fn a_claim_of_no_difference_is_checked_too() {
        let text = LEDGER.replace(
            "apache = \"*InvalidTxnTimeoutException\"",
            "apache = \"ok\"",
        );
        let ledger = Ledger::parse(&text, "test").unwrap();
        let run = |left: &str, right: &str| Compared {
            client: "java".into(),
            workload: "timeout-above-max".into(),
            left: vec![("initTransactions".into(), left.into())],
            right: vec![("initTransactions".into(), right.into())],
        };
        assert!(stale(&ledger, &[run("ok", "ok")]).is_empty());
        assert_eq!(stale(&ledger, &[run("ok", "E")]).len(), 1);
        assert_eq!(stale(&ledger, &[run("E", "E")]).len(), 1);
    }

    #[test]
    fn a_claim_naming_an_unknown_workload_is_found() {
        let ledger = Ledger::parse(LEDGER, "test").unwrap();
        assert!(unknown_workloads(&ledger, &["timeout-above-max"]).is_empty());
        assert_eq!(
            unknown_workloads(&ledger, &["eos"]),
            [("timeout", "timeout-above-max")]
        );
    }
}
