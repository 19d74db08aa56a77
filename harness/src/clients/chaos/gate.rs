//! What fails a `kconform chaos` run, keyed for a baseline ([`crate::report::baseline`]): what
//! stays the same from run to run of one build, though the schedule and the counts do not:
//! each kind of anomaly the control did not show, and whether the transaction's coordinator
//! and the leaders of its partitions were together or apart; a cluster whose run did not
//! finish; a client on which too few transactions ended to judge.

use super::checker::Anomaly;
use super::report::{control_kinds, ChaosReport};
use crate::report::gate::{merge, Gated, Judge, Severity};

/// Where an anomaly's transaction was coordinated beside its partitions' leaders.
fn placement(a: &Anomaly) -> &'static str {
    match &a.placement {
        None => "",
        Some(p) if p.leaders.values().all(|&l| l == p.coordinator) => " (together)",
        Some(_) => " (apart)",
    }
}

impl ChaosReport {
    /// Everything that fails this run, worst first.
    pub fn gated(&self) -> Vec<Gated> {
        let control = control_kinds(&self.targets);
        let mut out = Vec::new();
        for t in self.targets.iter().filter(|t| !t.control) {
            if t.error.is_some() {
                out.push(Gated::new(
                    Judge::Chaos,
                    Severity::State,
                    "did not finish",
                    1,
                ));
            }
            for a in t
                .anomalies
                .iter()
                .filter(|a| !a.allowed && !control.contains(&a.kind))
            {
                let key = format!("anomaly: {}{}", a.kind.name(), placement(a));
                out.push(Gated::new(Judge::Chaos, Severity::ExactlyOnce, key, 1));
            }
            for (client, _, _) in t.short_clients() {
                let key = match client {
                    "" => "inconclusive: no worker ran".to_owned(),
                    client => format!("inconclusive: too few transactions ended on {client}"),
                };
                out.push(Gated::new(Judge::Chaos, Severity::State, key, 0));
            }
        }
        merge(out)
    }
}
