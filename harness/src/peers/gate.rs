//! What fails a `kconform peers` run, keyed for a baseline ([`crate::report::baseline`]): each
//! undocumented finding by test and kind, each stale allowlist entry.

use super::report::PeersReport;
use crate::report::gate::{merge, Gated, Judge, Severity};

impl PeersReport {
    /// Everything that fails this run, worst first.
    pub fn gated(&self) -> Vec<Gated> {
        let mut out = Vec::new();
        for f in self.findings.iter().filter(|f| f.documented_by.is_none()) {
            let key = format!("finding: {} {:?}", f.finding.test, f.finding.kind).to_lowercase();
            out.push(Gated::new(Judge::Peers, Severity::State, key, 1));
        }
        for s in &self.stale {
            let key = format!("stale: {} {:?}", s.entry.test, s.entry.kind).to_lowercase();
            out.push(Gated::new(Judge::Peers, Severity::Stale, key, 0));
        }
        merge(out)
    }
}
