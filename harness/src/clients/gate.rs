//! What fails a `kconform clients` run, keyed for a baseline ([`crate::report::baseline`]):
//! each undocumented difference by workload, placement, field and the two values without their
//! numbers, one for every client that saw it (one broker behaviour, met by six clients, is one
//! finding: its rows count the clients; a client that meets a known one later adds nothing
//! new); each stale claim by ledger entry, workload, placement and field, likewise; each run
//! that gave no transcript, by client. A read's difference is keyed by how the records
//! differ, not which ones ([`read_kind`]): on a broker whose reads vary from run to run (real
//! kaas loses one run's records and not the next's) two runs of one build then agree, and a
//! read that loses records is still another finding than one that shows aborted ones.

use super::report::ClientsReport;
use crate::report::gate::{merge, without_numbers, Gated, Judge, Severity};

impl ClientsReport {
    /// Everything that fails this run, worst first.
    pub fn gated(&self) -> Vec<Gated> {
        let mut out = Vec::new();
        let placed = |p: Option<super::placement::Placement>| match p {
            Some(p) => format!(" ({})", p.name()),
            None => String::new(),
        };
        for d in self
            .differences
            .iter()
            .filter(|d| d.documented_by.is_none())
        {
            let severity = match d.breaks_undocumented() {
                Some(_) => Severity::ExactlyOnce,
                None => Severity::State,
            };
            let c = &d.diff;
            let values = match read_kind(&c.left, &c.right) {
                Some(kind) => kind.to_owned(),
                None => format!("{} | {}", outcome(&c.left), outcome(&c.right)),
            };
            let key = format!(
                "difference: {}{} {}: {values}",
                c.workload,
                placed(c.coordinators),
                c.field,
            );
            out.push(Gated::new(Judge::Clients, severity, key, 1));
        }
        for s in &self.stale {
            let key = format!(
                "stale: {} for {}{} {}",
                s.deviation,
                s.workload,
                placed(s.coordinators),
                s.field
            );
            out.push(Gated::new(Judge::Clients, Severity::Stale, key, 1));
        }
        for r in self.runs.iter().filter(|r| r.error.is_some()) {
            let side = match Some(&r.target) == self.right.as_ref() {
                true => "the baseline",
                false => "the target",
            };
            let key = format!(
                "no transcript: {} {}{} on {side}",
                r.client,
                r.workload,
                placed(r.coordinators)
            );
            out.push(Gated::new(Judge::Clients, Severity::State, key, 1));
        }
        merge(out)
    }
}

/// What a call's outcome is, for the key: `ok`, `(absent)` (the call was not made), a value
/// with its numbers left out (a group's offsets), or `an error`: which exception a client
/// raised is its own way of saying the broker refused (`KError 47`, `RangeError`,
/// `ProducerFencedError`), and it varies from run to run on a broker that refuses for
/// different reasons each time; the report shows it, the key keeps that the call failed.
fn outcome(text: &str) -> String {
    let value = text.starts_with(['{', '[', '"']) || text.parse::<f64>().is_ok();
    match text {
        "ok" | "(absent)" => text.to_owned(),
        _ if value => without_numbers(text),
        _ => "an error".to_owned(),
    }
}

/// How the records one read returned on the target (`left`) differ from the baseline's
/// (`right`), both lists of record names (`["o1","n2"]`): "reads records the baseline did not",
/// "lacks records the baseline read", both, or "the same records in another order"; none when
/// either is no list of names (an error, "(absent)").
fn read_kind(left: &str, right: &str) -> Option<&'static str> {
    let names = |text: &str| -> Option<Vec<String>> {
        let mut names: Vec<String> = serde_json::from_str(text).ok()?;
        names.sort();
        Some(names)
    };
    let (target, baseline) = (names(left)?, names(right)?);
    let same = target == baseline;
    // Each kind of record (its numbers left out) counted up on the target, down on the
    // baseline: what stays above zero only the target read, below zero only the baseline.
    let mut counts: std::collections::BTreeMap<String, i64> = Default::default();
    for (names, step) in [(&target, 1), (&baseline, -1)] {
        for name in names {
            *counts.entry(without_numbers(name)).or_default() += step;
        }
    }
    let (more, fewer) = (
        counts.values().any(|&n| n > 0),
        counts.values().any(|&n| n < 0),
    );
    Some(match (!more, !fewer) {
        (true, true) if same => "the same records in another order",
        (true, true) => "the same kinds of records, others of them",
        (false, true) => "reads records the baseline did not",
        (true, false) => "lacks records the baseline read",
        (false, false) => "lacks records the baseline read, and reads others",
    })
}

#[cfg(test)]
mod tests {
    use super::super::judge::{JudgedDiff, StaleClaim};
    use super::super::transcript::ClientDiff;
    use super::*;

    fn differing(client: &str, left: &str) -> JudgedDiff {
        JudgedDiff {
            diff: ClientDiff {
                client: client.into(),
                workload: "fencing".into(),
                field: "commit (fenced producer)".into(),
                left: left.into(),
                right: "(absent)".into(),
                coordinators: None,
            },
            documented_by: None,
            consequence: None,
        }
    }

    fn report(differences: Vec<JudgedDiff>, stale: Vec<StaleClaim>) -> ClientsReport {
        ClientsReport {
            schema_version: 1,
            targets: Vec::new(),
            left: None,
            right: None,
            runs: Vec::new(),
            differences,
            stale,
            consequences: Vec::new(),
            notes: Vec::new(),
            verdict: "failed".into(),
        }
    }

    /// One broker behaviour seen by several clients is one finding, its rows the clients; a
    /// client that saw something else is another.
    #[test]
    fn clients_that_saw_the_same_difference_are_one_finding() {
        let stale = |client: &str| StaleClaim {
            deviation: "d".into(),
            client: client.into(),
            workload: "fencing".into(),
            field: "commit (fenced producer)".into(),
            kaas: "k".into(),
            apache: "a".into(),
            coordinators: None,
        };
        let r = report(
            vec![
                differing("java", "ok"),
                differing("sarama", "ok"),
                differing("kafkajs", "KafkaJSError"),
            ],
            vec![stale("java"), stale("librdkafka")],
        );
        let keys: Vec<(String, usize)> = r.gated().into_iter().map(|g| (g.key, g.rows)).collect();
        assert_eq!(
            keys,
            [
                (
                    "difference: fencing commit (fenced producer): an error | (absent)".to_owned(),
                    1
                ),
                (
                    "difference: fencing commit (fenced producer): ok | (absent)".to_owned(),
                    2
                ),
                (
                    "stale: d for fencing commit (fenced producer)".to_owned(),
                    2
                ),
            ]
        );
    }

    /// A read keys by how its records differ: two runs that lost different records agree; a
    /// read that shows records the baseline did not is another finding.
    #[test]
    fn reads_key_by_how_their_records_differ() {
        let read = |left: &str, right: &str| {
            let mut d = differing("java", left);
            d.diff.field = "read_uncommitted".into();
            d.diff.right = right.into();
            d
        };
        let r = report(
            vec![
                read(r#"["o1","o2"]"#, r#"["o1","o2","n3"]"#),
                read(r#"["n4"]"#, r#"["o3","n4"]"#),
                read(r#"["c1","a2","x3"]"#, r#"["c1","x3"]"#),
                read("KError 48", r#"["c1"]"#),
            ],
            Vec::new(),
        );
        let keys: Vec<(String, usize)> = r.gated().into_iter().map(|g| (g.key, g.rows)).collect();
        assert_eq!(
            keys,
            [
                (
                    "difference: fencing read_uncommitted: an error | [\"cN\"]".to_owned(),
                    1
                ),
                (
                    "difference: fencing read_uncommitted: lacks records the baseline read"
                        .to_owned(),
                    2
                ),
                (
                    "difference: fencing read_uncommitted: reads records the baseline did not"
                        .to_owned(),
                    1
                ),
            ]
        );
        assert_eq!(
            read_kind(r#"["o2","o1"]"#, r#"["o1","o2"]"#),
            Some("the same records in another order")
        );
        assert_eq!(
            read_kind(r#"["o1"]"#, r#"["o2"]"#),
            Some("the same kinds of records, others of them")
        );
    }
}
