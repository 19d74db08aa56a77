//! The root causes of a run ([`crate::compare::causes`]) as each form shows them: a few lines
//! each on the terminal, rows of a Markdown table, JUnit test cases. The JSON report carries
//! them as they are.

use std::fmt::Write as _;

use crate::compare::causes::Cause;

use super::junit::Case;
use super::{md, Report, Tone};

/// Scenarios named on a cause's line before "and N more".
const NAMED: usize = 3;

impl Report {
    /// `kconform repro` of a cause's example on this run's first two targets.
    pub fn repro_command(&self, cause: &Cause) -> String {
        let named = match self.target_args.is_empty() {
            true => &self.targets,
            false => &self.target_args,
        };
        let targets: String = named
            .iter()
            .take(2)
            .map(|t| format!(" --target {t}"))
            .collect();
        format!("kconform repro {}{targets}", cause.example.scenario)
    }

    /// The causes on the terminal, a line each: each undocumented one with its count, the
    /// scenarios it spans, an example and the command that reproduces it; the documented ones
    /// one line per ledger entry, or each on a line with `verbose`.
    pub(super) fn terminal_causes(
        &self,
        out: &mut String,
        verbose: bool,
        paint: &dyn Fn(Tone, &str) -> String,
    ) {
        let mut by_entry: Vec<(&str, usize, usize, Vec<&str>)> = Vec::new();
        for c in &self.causes {
            if let (Some(id), false) = (&c.documented_by, verbose) {
                let at = match by_entry.iter().position(|(e, ..)| e == id) {
                    Some(at) => at,
                    None => {
                        by_entry.push((id, 0, 0, Vec::new()));
                        by_entry.len() - 1
                    }
                };
                let entry = &mut by_entry[at];
                entry.1 += 1;
                entry.2 += c.rows();
                for s in &c.scenarios {
                    if !entry.3.contains(&s.as_str()) {
                        entry.3.push(s);
                    }
                }
                continue;
            }
            let count = match c.folded {
                0 => format!("{}", c.differences),
                n => format!("{} + {n} skipped after its stops", c.differences),
            };
            let versions = match c.versions.is_empty() {
                true => String::new(),
                false => format!(" ({})", c.versions),
            };
            match &c.documented_by {
                Some(id) => {
                    let _ = writeln!(
                        out,
                        "{} {} {}{versions}: {count} in {}",
                        paint(Tone::Warn, &format!("DOCUMENTED {id}")),
                        c.notice.label(),
                        c.signature,
                        scenarios(&c.scenarios)
                    );
                }
                None => {
                    // One line a cause: what it is, how much it stands for, where, an example,
                    // and the command that shows it.
                    let label = match &c.configuration {
                        Some(_) => "CONFIGURATION",
                        None => "UNDOCUMENTED",
                    };
                    let configured = c.configuration.as_deref().map_or(String::new(), |why| {
                        format!("; the broker is configured otherwise, not misbehaving: {why} (kconform settings)")
                    });
                    let e = &c.example;
                    let _ = writeln!(
                        out,
                        "{} {} {}{versions}: {count} in {}{configured}; e.g. {} '{}' {}: {}; {}",
                        paint(Tone::Bad, label),
                        c.notice.label(),
                        c.signature,
                        scenarios(&c.scenarios),
                        e.scenario,
                        e.step,
                        e.path,
                        clip(&self.values(&e.left, &e.right)),
                        paint(Tone::Dim, &format!("repro: {}", self.repro_command(c)))
                    );
                }
            }
        }
        for (entry, causes, rows, names) in &by_entry {
            let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
            let _ = writeln!(
                out,
                "{} {entry}: {rows} difference(s), {causes} cause(s), in {}",
                paint(Tone::Warn, "DOCUMENTED"),
                scenarios(&names)
            );
        }
        if !by_entry.is_empty() {
            let _ = writeln!(
                out,
                "{}",
                paint(Tone::Dim, "(--verbose lists each documented cause)")
            );
        }
    }

    /// The causes as a Markdown table.
    pub(super) fn markdown_causes(&self, out: &mut String) {
        if self.causes.is_empty() {
            return;
        }
        out.push_str("### Root causes\n\n| | notice | cause | versions | differences | skipped after its stops | scenarios | example | repro |\n|---|---|---|---|---|---|---|---|---|\n");
        for c in &self.causes {
            let e = &c.example;
            let _ = writeln!(
                out,
                "| {} | {} | `{}` | {} | {} | {} | {} | {} '{}' `{}`: {} | `{}` |",
                match (&c.documented_by, &c.configuration) {
                    (Some(id), _) => format!("documented: {id}"),
                    (None, Some(why)) => format!("**configuration**: {}", md(why)),
                    (None, None) => "**undocumented**".to_owned(),
                },
                c.notice.label(),
                md(&c.signature),
                c.versions,
                c.differences,
                c.folded,
                md(&scenarios(&c.scenarios)),
                e.scenario,
                e.step,
                e.path,
                md(&self.values(&e.left, &e.right)),
                self.repro_command(c)
            );
        }
        out.push('\n');
    }

    /// One JUnit case per cause, failed where undocumented.
    pub(super) fn junit_causes(&self) -> Vec<Case> {
        self.causes
            .iter()
            .map(|c| {
                let class = format!("kconform.cause.{}", c.notice.label());
                let known = !self.fails(&format!("cause: {}", c.signature));
                match &c.documented_by {
                    Some(_) => Case::passed(class, &c.signature),
                    None if known => {
                        Case::passed(class, format!("{} (in the baseline)", c.signature))
                    }
                    None => Case::failed(
                        class,
                        &c.signature,
                        format!(
                            "{}: {} difference(s), {} step(s) skipped after its stops, in {}",
                            c.configuration
                                .as_deref()
                                .map_or("undocumented".to_owned(), |why| format!(
                                    "configuration ({why})"
                                )),
                            c.differences,
                            c.folded,
                            scenarios(&c.scenarios)
                        ),
                        format!(
                            "e.g. {} '{}' {}: {}\nrepro: {}",
                            c.example.scenario,
                            c.example.step,
                            c.example.path,
                            self.values(&c.example.left, &c.example.right),
                            self.repro_command(c)
                        ),
                    ),
                }
            })
            .collect()
    }
}

/// The most characters of an example's values a terminal line shows (`repro` shows them all).
const EXAMPLE_CHARS: usize = 160;

/// `text`, cut at [`EXAMPLE_CHARS`] with what was left out counted.
fn clip(text: &str) -> String {
    let total = text.chars().count();
    match total > EXAMPLE_CHARS {
        true => format!(
            "{}… ({} more characters; repro shows them)",
            text.chars().take(EXAMPLE_CHARS).collect::<String>(),
            total - EXAMPLE_CHARS
        ),
        false => text.to_owned(),
    }
}

/// "a", "a, b", "a, b, c and 4 more".
fn scenarios(names: &[String]) -> String {
    match names.len() {
        0 => "no scenario".into(),
        n if n <= NAMED => names.join(", "),
        n => format!("{} and {} more", names[..NAMED].join(", "), n - NAMED),
    }
}
