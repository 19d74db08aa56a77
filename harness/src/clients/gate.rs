//! What fails a `kconform clients` run, keyed for a baseline ([`crate::report::baseline`]):
//! each undocumented difference by workload, placement, field and the two values without their
//! numbers, one for every client that saw it (one broker behaviour, met by six clients, is one
//! finding: its rows count the clients; a client that meets a known one later adds nothing
//! new); each stale claim by ledger entry, workload, placement and field, likewise; each run
//! that gave no transcript, by client.

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
            let key = format!(
                "difference: {}{} {}: {} | {}",
                c.workload,
                placed(c.coordinators),
                c.field,
                without_numbers(&c.left),
                without_numbers(&c.right)
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
                    "difference: fencing commit (fenced producer): KafkaJSError | (absent)"
                        .to_owned(),
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
}
