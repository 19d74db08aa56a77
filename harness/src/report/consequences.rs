//! "What documented deviations do to clients": for each ledger entry that documented a
//! difference of this run, what its client claims (checked by `kconform clients` with six
//! clients) say it does to applications, worst first. A run of only documented differences
//! passes and still says, first, that a fenced producer's records commit for four clients, or
//! that a zombie fences the live producer for one; `--fail-on-consequence` fails it then.

use std::fmt::Write as _;

use serde::Serialize;

use super::{md, Report};
use crate::compare::ledger::{Consequence, Deviation};

/// One documented deviation's consequence for some clients.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClientHarm {
    /// The ledger entry.
    pub deviation: String,
    /// What it does.
    pub consequence: Consequence,
    /// The clients it does it to (the ledger's names).
    pub clients: Vec<String>,
    /// The workloads of `kconform clients` that show it.
    pub workloads: Vec<String>,
}

/// Adds that `deviation` does `consequence` to `client` in `workload` to `harms`: to its line
/// of that entry and consequence, or a new line; the lines kept worst first.
pub(crate) fn gather(
    harms: &mut Vec<ClientHarm>,
    deviation: &str,
    consequence: Consequence,
    client: &str,
    workload: &str,
) {
    let at = match harms
        .iter()
        .position(|h| h.deviation == deviation && h.consequence == consequence)
    {
        Some(at) => at,
        None => {
            harms.push(ClientHarm {
                deviation: deviation.into(),
                consequence,
                clients: Vec::new(),
                workloads: Vec::new(),
            });
            harms.len() - 1
        }
    };
    let harm = &mut harms[at];
    for (list, value) in [(&mut harm.clients, client), (&mut harm.workloads, workload)] {
        if !list.iter().any(|v| v == value) {
            list.push(value.to_owned());
        }
    }
    harms.sort_by(|a, b| (a.consequence, &a.deviation).cmp(&(b.consequence, &b.deviation)));
}

impl Report {
    /// Notes what `entry`, which documented a difference of this run, does to clients: each
    /// consequence its claims state short of "unchanged" (once per entry).
    pub fn note_client_harms(&mut self, entry: &Deviation) {
        if self.client_harms.iter().any(|h| h.deviation == entry.id) {
            return;
        }
        for claim in &entry.client {
            let consequence = claim.consequence();
            if consequence != Consequence::Unchanged {
                gather(
                    &mut self.client_harms,
                    &entry.id,
                    consequence,
                    &claim.client,
                    &claim.workload,
                );
            }
        }
    }

    /// The worst thing documented deviation `entry` does to clients, if its claims state
    /// anything short of unchanged.
    pub(crate) fn worst_harm(&self, entry: &str) -> Option<&ClientHarm> {
        self.client_harms.iter().find(|h| h.deviation == entry)
    }

    /// How a documented entry's line ends: the worst it does to clients, for whom.
    pub(crate) fn harm_suffix(&self, entry: &str) -> String {
        match self.worst_harm(entry) {
            Some(h) if h.consequence.harms() => {
                format!(
                    "; to clients: {} for {}",
                    h.consequence.name(),
                    h.clients.join(", ")
                )
            }
            _ => String::new(),
        }
    }

    /// The documented deviations whose consequences fail a run gated on them
    /// (`--fail-on-consequence`): those that break exactly-once, stop a client or hand it an
    /// error it does not know.
    pub fn harmful(&self) -> Vec<&ClientHarm> {
        self.client_harms
            .iter()
            .filter(|h| h.consequence.harms())
            .collect()
    }

    /// Whether the run is gated on consequences and one showed.
    pub(crate) fn fails_on_consequence(&self) -> bool {
        self.fail_on_consequence && !self.harmful().is_empty()
    }

    /// The section's lines: one per entry and consequence, worst first.
    fn harm_lines(&self, code: fn(&str) -> String) -> Vec<String> {
        self.client_harms
            .iter()
            .filter(|h| h.consequence != Consequence::Differs)
            .map(|h| {
                let label = match h.consequence.breaks_exactly_once() {
                    true => "BREAKS EXACTLY-ONCE",
                    false => "HARMS",
                };
                format!(
                    "{label} {}: {} ({}) for {} (workloads {})",
                    code(&h.deviation),
                    h.consequence.name(),
                    h.consequence.about(),
                    h.clients.join(", "),
                    h.workloads.join(", ")
                )
            })
            .collect()
    }

    /// The section as the terminal shows it, before the causes (empty when no documented
    /// deviation of the run harms a client).
    pub(crate) fn terminal_harms(&self) -> String {
        let lines = self.harm_lines(str::to_owned);
        if lines.is_empty() {
            return String::new();
        }
        let mut out = String::from("What documented deviations do to clients (ledger claims checked by `kconform clients`):\n");
        for line in lines {
            let _ = writeln!(out, "  {line}");
        }
        if self.fail_on_consequence {
            out.push_str("  --fail-on-consequence: these fail the run\n");
        }
        out.push('\n');
        out
    }

    /// The same for Markdown.
    pub(crate) fn markdown_harms(&self) -> String {
        let lines = self.harm_lines(|id| format!("`{}`", md(id)));
        if lines.is_empty() {
            return String::new();
        }
        let mut out = String::from("### What documented deviations do to clients\n\n");
        for line in lines {
            let _ = writeln!(out, "- {line}");
        }
        out.push('\n');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::ledger::Ledger;
    use std::collections::BTreeSet;

    /// An entry whose claims commit a zombie's records for two clients, hand one an unknown
    /// error, and leave one unchanged.
    fn entry() -> Deviation {
        let claim = |client: &str, kaas: &str, apache: &str, consequence: &str| {
            format!("[[deviation.client]]\nclient = \"{client}\"\nworkload = \"fencing\"\nfield = \"f\"\nkaas = \"{kaas}\"\napache = \"{apache}\"\n{consequence}")
        };
        let text = format!(
            "[[deviation]]\nid = \"rejoin\"\napi = \"InitProducerId\"\nspec = \"s\"\njava_client = \"j\"\nlibrdkafka_client = \"l\"\nscenarios = [\"a\"]\nfield = \"error_code\"\nkaas = \"0\"\napache = \"51\"\n{}{}{}{}",
            claim("java", "A", "B", "consequence = \"zombie-committed\"\n"),
            claim("librdkafka", "A", "B", "consequence = \"zombie-committed\"\n"),
            claim("kafkajs", "U", "K", "consequence = \"unknown-error\"\n"),
            claim("sarama", "S", "S", ""),
        );
        Ledger::parse(&text, "test").unwrap().deviations.remove(0)
    }

    #[test]
    fn a_documented_deviation_says_what_it_does_to_clients_and_gates_when_asked() {
        let mut report = Report::default();
        report.note_client_harms(&entry());
        report.note_client_harms(&entry());
        let got: Vec<(Consequence, Vec<String>)> = report
            .client_harms
            .iter()
            .map(|h| (h.consequence, h.clients.clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    Consequence::ZombieCommitted,
                    vec!["java".to_owned(), "librdkafka".to_owned()]
                ),
                (Consequence::UnknownError, vec!["kafkajs".to_owned()]),
            ],
            "worst first, once per entry, the unchanged claim left out"
        );
        assert!(report.terminal_harms().contains(
            "BREAKS EXACTLY-ONCE rejoin: zombie-committed (a fenced producer's records, or a stale member's offsets, committed) for java, librdkafka (workloads fencing)"
        ));
        assert!(report
            .markdown_harms()
            .contains("- HARMS `rejoin`: unknown-error"));
        assert!(report.passed(), "documented: the run passes");
        report.fail_on_consequence = true;
        assert!(!report.passed(), "gated on consequences: it fails");
        let harmed: BTreeSet<&str> = report
            .harmful()
            .iter()
            .flat_map(|h| h.clients.iter().map(String::as_str))
            .collect();
        assert_eq!(
            harmed.into_iter().collect::<Vec<_>>(),
            ["java", "kafkajs", "librdkafka"]
        );
    }
}
