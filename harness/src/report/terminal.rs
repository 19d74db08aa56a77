//! The terminal report: where each target's answers came from, a line per scenario, then the
//! root causes (or, with `--flat`, each difference), the ledger's stale and unreached entries,
//! a baseline's new and fixed, and the totals.

use std::collections::BTreeMap;

use super::{Report, Tone};

impl Report {
    /// The terminal report: where each target's answers came from, one line per scenario with
    /// its status on each target, then the root causes (undocumented ones first, each with an
    /// example and its `repro` command; with `flat`, each difference on a line of its own, the
    /// documented ones one line per ledger entry unless `verbose`), stale and unreached ledger
    /// entries, and the totals. Plain text.
    pub fn terminal(&self, verbose: bool) -> String {
        self.terminal_painted(verbose, &|_, text| text.to_owned())
    }

    /// [`Report::terminal`], each part painted by `paint` in its tone (the binary colours them
    /// on a terminal).
    pub fn terminal_painted(&self, verbose: bool, paint: &dyn Fn(Tone, &str) -> String) -> String {
        let mut out = String::new();
        self.terminal_table(&mut out, paint);
        out.push_str(&self.terminal_harms());
        match self.flat {
            true => self.terminal_flat(&mut out, verbose, paint),
            false => self.terminal_causes(&mut out, verbose, paint),
        }
        self.terminal_ledger(&mut out, paint);
        let verdict = match self.passed() {
            true => paint(Tone::Good, "PASSED"),
            false => paint(Tone::Bad, "FAILED"),
        };
        let causes = match self.flat {
            true => String::new(),
            false => format!(
                " in {} root cause(s) ({} undocumented)",
                self.causes.len(),
                self.undocumented_causes()
            ),
        };
        let not_reached = match self.not_reached.len() {
            0 => String::new(),
            n => format!(", {n} not reached"),
        };
        let not_reached = match self.judged_past_framing() {
            0 => not_reached,
            n => format!("{not_reached}, {n} steps judged past a framing defect"),
        };
        out.push_str(&format!(
            "{verdict}: {}, {} ({} undocumented){causes}, {} stale{not_reached}\n",
            super::counted(self.runs.len(), "transcript"),
            super::counted(self.differences.len(), "difference"),
            self.undocumented(),
            self.stale.len()
        ));
        out
    }

    /// Where each target's answers came from, and one line per scenario with its status on
    /// each target and its differences.
    fn terminal_table(&self, out: &mut String, paint: &dyn Fn(Tone, &str) -> String) {
        use std::fmt::Write;
        for o in &self.origins {
            let _ = writeln!(
                out,
                "{}",
                paint(Tone::Dim, &format!("{}: {}", o.target, o.origin))
            );
        }
        let w = self
            .targets
            .iter()
            .map(String::len)
            .max()
            .unwrap_or(0)
            .max(8);
        let header: String = self.targets.iter().map(|t| format!(" {t:>w$}")).collect();
        let _ = writeln!(
            out,
            "{}",
            paint(
                Tone::Bold,
                &format!("{:48}{header}  differences", "scenario")
            )
        );
        // One target's cell of a scenario's line, right-aligned in its column.
        let cell = |tone: Tone, text: &str| format!(" {}", paint(tone, &format!("{text:>w$}")));
        for s in self.scenarios() {
            let mut line = format!("{s:48}");
            let mut failures = Vec::new();
            let mut stops = Vec::new();
            for t in &self.targets {
                match self.runs.iter().find(|r| r.scenario == s && r.target == *t) {
                    Some(r) if r.failed_expectations.is_empty() && r.stopped.is_none() => {
                        line.push_str(&cell(Tone::Good, "ok"))
                    }
                    // A stop where the scenario's expectations do not hold the target (written
                    // for a later release): no failure, its differences judge it.
                    Some(r) if r.failed_expectations.is_empty() => {
                        line.push_str(&cell(Tone::Warn, "stopped"));
                        stops.extend(r.stopped.iter().map(|why| {
                            format!(
                                "{t}: stopped, compared only (written for other releases): {why}"
                            )
                        }));
                    }
                    Some(r) => {
                        line.push_str(&cell(Tone::Bad, &r.status().to_uppercase()));
                        failures.extend(r.failed_expectations.iter().map(|f| format!("{t}: {f}")));
                    }
                    None => line.push_str(&format!(" {:>w$}", "-")),
                }
            }
            let diffs: Vec<_> = self
                .differences
                .iter()
                .filter(|d| d.row.scenario == s)
                .collect();
            let undocumented = diffs.iter().filter(|d| d.documented_by.is_none()).count();
            let summary = match (diffs.len(), undocumented) {
                (0, _) => paint(Tone::Dim, "none"),
                (n, 0) => paint(Tone::Warn, &format!("{n} documented")),
                (n, u) => paint(Tone::Bad, &format!("{n}, {u} UNDOCUMENTED")),
            };
            let _ = writeln!(out, "{line}  {summary}");
            for f in failures {
                let _ = writeln!(out, "    {}", paint(Tone::Bad, &f));
            }
            for f in stops {
                let _ = writeln!(out, "    {}", paint(Tone::Dim, &f));
            }
        }
    }

    /// Each undocumented difference on a line, then the documented ones: one line per ledger
    /// entry, or each with `verbose`.
    fn terminal_flat(&self, out: &mut String, verbose: bool, paint: &dyn Fn(Tone, &str) -> String) {
        use std::fmt::Write;
        for d in self
            .differences
            .iter()
            .filter(|d| d.documented_by.is_none())
        {
            let label = match &d.same_values_as {
                Some(id) => format!("UNDOCUMENTED (like {id}, which does not list this scenario)"),
                None => "UNDOCUMENTED".to_owned(),
            };
            let _ = writeln!(
                out,
                "{} {} {} {}: {}",
                paint(Tone::Bad, &label),
                d.row.scenario,
                d.row.step,
                d.row.path,
                self.values(&d.row.left, &d.row.right)
            );
        }
        let documented = self
            .differences
            .iter()
            .filter(|d| d.documented_by.is_some());
        if verbose {
            for d in documented {
                let _ = writeln!(
                    out,
                    "{} {} {} {}: {}",
                    paint(Tone::Warn, &{
                        let id = d.documented_by.as_deref().unwrap_or("");
                        format!("{} {id}", self.documented_label(id))
                    }),
                    d.row.scenario,
                    d.row.step,
                    d.row.path,
                    self.values(&d.row.left, &d.row.right)
                );
            }
            return;
        }
        // entry → (differences, scenarios)
        let mut by_entry: BTreeMap<&str, (usize, Vec<&str>)> = BTreeMap::new();
        for d in documented {
            let e = by_entry
                .entry(d.documented_by.as_deref().unwrap_or(""))
                .or_default();
            e.0 += 1;
            if !e.1.contains(&d.row.scenario.as_str()) {
                e.1.push(&d.row.scenario);
            }
        }
        for (entry, (n, scenarios)) in &by_entry {
            let _ = writeln!(
                out,
                "{} {entry}: {n} difference(s) in {}",
                paint(Tone::Warn, &self.documented_label(entry)),
                match scenarios.len() {
                    1 => scenarios[0].to_owned(),
                    k => format!("{k} scenarios"),
                }
            );
        }
        if !by_entry.is_empty() {
            let _ = writeln!(
                out,
                "{}",
                paint(Tone::Dim, "(--verbose lists each documented difference)")
            );
        }
    }

    /// Stale ledger entries (which fail the run), and those whose scenario stopped before they
    /// could show.
    fn terminal_ledger(&self, out: &mut String, paint: &dyn Fn(Tone, &str) -> String) {
        use std::fmt::Write;
        for st in &self.stale {
            let _ = writeln!(
                out,
                "{} {}: documented in {}, but it did not show",
                paint(Tone::Bad, "STALE"),
                st.entry,
                st.scenario
            );
        }
        for n in &self.not_reached {
            let _ = writeln!(
                out,
                "{} {}: documented in {}, which stopped before it could show ({})",
                paint(Tone::Warn, "NOT REACHED"),
                n.entry,
                n.scenario,
                n.stopped
            );
        }
        if let Some(b) = &self.baseline {
            for k in &b.new {
                let _ = writeln!(out, "{} {}", paint(Tone::Bad, "NEW"), k.key);
            }
            for k in &b.fixed {
                let _ = writeln!(out, "{} {}", paint(Tone::Good, "FIXED"), k.key);
            }
            let _ = writeln!(
                out,
                "baseline: {} known, {} new, {} fixed; the run fails only on what is new",
                b.known,
                b.new.len(),
                b.fixed.len()
            );
        }
    }
}
