//! What fails a `kconform clients` run, keyed for a baseline ([`crate::report::baseline`]):
//! each undocumented difference by client, workload, placement, field and the two values
//! without their numbers; each stale claim; each run that gave no transcript.

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
                "difference: {} {}{} {}: {} | {}",
                c.client,
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
                "stale: {} for {} {}{} {}",
                s.deviation,
                s.client,
                s.workload,
                placed(s.coordinators),
                s.field
            );
            out.push(Gated::new(Judge::Clients, Severity::Stale, key, 0));
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
