//! Each difference between two brokers' client transcripts against the ledger's client
//! claims: a claim that matches documents it; a claim whose workload ran with its client on
//! both brokers and matched nothing is STALE.

use serde::Serialize;

use super::placement::Placement;
use super::transcript::ClientDiff;
use crate::compare::ledger::{ClientShows, Consequence, Deviation, Ledger};

/// A difference and the entry that documents it, if one does.
#[derive(Debug, Clone, Serialize)]
pub struct JudgedDiff {
    /// The difference.
    #[serde(flatten)]
    pub diff: ClientDiff,
    /// The ledger entry's id; none when undocumented.
    pub documented_by: Option<String>,
    /// What the difference does to the application, as the claim that documents it says, or,
    /// undocumented, as what the client read back shows ([`Consequence::observed`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consequence: Option<Consequence>,
}

impl JudgedDiff {
    /// What it does to the application when no ledger entry documents it and it breaks
    /// exactly-once (committed records lost, aborted ones read, ...): what heads the report.
    pub fn breaks_undocumented(&self) -> Option<Consequence> {
        self.consequence
            .filter(|c| self.documented_by.is_none() && c.breaks_exactly_once())
    }
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
    /// Where the coordinators sat in the runs it did not show in, on a cluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coordinators: Option<Placement>,
}

fn claims(ledger: &Ledger) -> impl Iterator<Item = (&Deviation, &ClientShows)> {
    ledger
        .deviations
        .iter()
        .flat_map(|d| d.client.iter().map(move |c| (d, c)))
}

/// Whether `claim` speaks of a run whose coordinators sat as `run` says: a claim naming no
/// placement speaks of every run; one broker, or a workload without a group, is `together`.
fn applies(claim: &ClientShows, run: Option<Placement>) -> bool {
    match claim.coordinators.as_deref() {
        None => true,
        Some(want) => Placement::of_run(run).name() == want,
    }
}

fn matches(c: &ClientShows, d: &ClientDiff) -> bool {
    applies(c, d.coordinators)
        && Deviation::client_claim_matches(c, &d.client, &d.workload, &d.field, &d.left, &d.right)
}

/// Classifies each difference (kaas on the left, Apache on the right).
pub fn judge(ledger: &Ledger, diffs: Vec<ClientDiff>) -> Vec<JudgedDiff> {
    diffs
        .into_iter()
        .map(|diff| {
            let claim = claims(ledger).find(|(_, c)| matches(c, &diff));
            let consequence = match claim {
                Some((_, c)) => Some(c.consequence()),
                None => Consequence::observed(&diff.field, &diff.left, &diff.right),
            };
            JudgedDiff {
                documented_by: claim.map(|(d, _)| d.id.clone()),
                consequence,
                diff,
            }
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
    /// Where its coordinators sat, on a cluster.
    pub coordinators: Option<Placement>,
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

/// Claims whose (client, workload) was compared, its coordinators placed as the claim says,
/// and whose field did not show what they say on each side: one for each placement of a run it
/// failed in. A claim may state a difference or, with the same value on both sides, that a
/// client sees none (what it says is checked either way).
pub fn stale(ledger: &Ledger, compared: &[Compared]) -> Vec<StaleClaim> {
    let mut out = Vec::new();
    for (d, c) in claims(ledger) {
        let mut failed_in: Vec<Option<Placement>> = Vec::new();
        for x in compared.iter().filter(|x| {
            x.client == c.client && x.workload == c.workload && applies(c, x.coordinators)
        }) {
            if !x.confirms(c) && !failed_in.contains(&x.coordinators) {
                failed_in.push(x.coordinators);
            }
        }
        out.extend(failed_in.into_iter().map(|coordinators| StaleClaim {
            deviation: d.id.clone(),
            client: c.client.clone(),
            workload: c.workload.clone(),
            field: c.field.clone(),
            kaas: c.kaas.clone(),
            apache: c.apache.clone(),
            coordinators,
        }));
    }
    out
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

    /// A run of java's timeout-above-max, placed so, with `left` and `right` as its
    /// initTransactions on each side.
    fn compared(coordinators: Option<Placement>, left: &str, right: &str) -> Compared {
        Compared {
            client: "java".into(),
            workload: "timeout-above-max".into(),
            coordinators,
            left: vec![("initTransactions".into(), left.into())],
            right: vec![("initTransactions".into(), right.into())],
        }
    }

    fn diff(client: &str, left: &str, right: &str) -> ClientDiff {
        ClientDiff {
            client: client.into(),
            workload: "timeout-above-max".into(),
            field: "initTransactions".into(),
            left: left.into(),
            right: right.into(),
            coordinators: None,
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
        let run = |left: &str, right: &str| compared(None, left, right);
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
        let run = |left: &str, right: &str| compared(None, left, right);
        assert!(stale(&ledger, &[run("ok", "ok")]).is_empty());
        assert_eq!(stale(&ledger, &[run("ok", "E")]).len(), 1);
        assert_eq!(stale(&ledger, &[run("E", "E")]).len(), 1);
    }

    #[test]
    fn a_claim_naming_a_placement_speaks_of_runs_placed_so_only() {
        let text = LEDGER.replace(
            "field = \"initTransactions\"",
            "field = \"initTransactions\"\ncoordinators = \"apart\"",
        );
        let ledger = Ledger::parse(&text, "test").unwrap();
        let apache = "org.apache.kafka.common.errors.InvalidTxnTimeoutException";
        let placed = |p: Option<Placement>| ClientDiff {
            coordinators: p,
            ..diff("java", "ok", apache)
        };
        let judged = judge(
            &ledger,
            vec![
                placed(Some(Placement::Apart)),
                placed(Some(Placement::Together)),
                placed(None),
            ],
        );
        let ids: Vec<_> = judged.iter().map(|j| j.documented_by.as_deref()).collect();
        assert_eq!(ids, [Some("timeout"), None, None]);
        let run = |p: Option<Placement>, left: &str| compared(p, left, apache);
        // Runs placed otherwise, or on one broker, neither confirm nor stale it.
        let others = [run(Some(Placement::Together), apache), run(None, apache)];
        assert!(stale(&ledger, &others).is_empty());
        let stale_claims = stale(&ledger, &[run(Some(Placement::Apart), apache)]);
        assert_eq!(stale_claims.len(), 1);
        assert_eq!(stale_claims[0].coordinators, Some(Placement::Apart));
        assert!(stale(&ledger, &[run(Some(Placement::Apart), "ok")]).is_empty());
        // A placement the ledger does not know is refused when it is read.
        let wrong = text.replace("coordinators = \"apart\"", "coordinators = \"beside\"");
        let refused = Ledger::parse(&wrong, "test").unwrap_err().to_string();
        assert!(refused.contains("coordinators 'beside'"), "{refused}");
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
