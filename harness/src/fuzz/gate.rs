//! What fails a `kconform fuzz` run, keyed for a baseline ([`crate::report::baseline`]): each
//! finding by its signature, which names the defect (what the broker said or died of, the
//! field a frame breaks) with the numbers a run draws already left out, so that two runs of one build that find
//! one defect agree on its key.

use super::report::FuzzReport;
use super::wire::judge::Kind;
use crate::report::gate::{merge, Gated, Judge, Severity};

impl FuzzReport {
    /// Everything that fails this run, worst first.
    pub fn gated(&self) -> Vec<Gated> {
        let mut out = Vec::new();
        for f in self.frames.iter().flat_map(|f| &f.findings) {
            let severity = match f.kind {
                Kind::ClosedWellFormed | Kind::Silent | Kind::Unhealthy => Severity::Crash,
                Kind::Undecodable | Kind::WrongCorrelation => Severity::Unreadable,
                Kind::AnsweredUnknown => Severity::State,
            };
            let key = format!("frame: {}", f.signature);
            out.push(Gated::new(Judge::Fuzz, severity, key, 1));
        }
        for f in &self.findings {
            let key = format!("sequence: {}", f.signature);
            out.push(Gated::new(Judge::Fuzz, Severity::State, key, 1));
        }
        merge(out)
    }
}
