//! The root causes of a run ([`crate::compare::causes`]) in the report: grouped from its
//! differences, marked where a target's configuration explains them, and shown in each form (a
//! line each on the terminal, rows of a Markdown table, JUnit test cases; the JSON report
//! carries them as they are).

use std::fmt::Write as _;

use crate::compare::causes::{self as grouping, Cause, Classified, FieldClasses};
use crate::compare::flow::Flows;

use super::junit::Case;
use super::{md, Report, Tone};
use crate::compare::ledger::Consequence;

/// Scenarios named on a cause's line before "and N more".
const NAMED: usize = 3;

impl Report {
    /// Groups the differences into root causes (`classes`: which fields clients only log),
    /// each step skipped after a stop folded under the cause that stopped its scenario, each
    /// difference a differing value flowed into (`flows`) under the cause of that value's.
    pub fn group_causes(&mut self, classes: &FieldClasses, flows: &Flows) {
        let classified: Vec<Classified<'_>> = self
            .differences
            .iter()
            .map(|d| Classified {
                row: &d.row,
                documented_by: d.documented_by.as_deref(),
            })
            .collect();
        let stops: Vec<grouping::Stop<'_>> = self
            .runs
            .iter()
            .filter_map(|r| {
                let side = self.targets.iter().take(2).position(|t| *t == r.target)?;
                Some(grouping::Stop {
                    scenario: &r.scenario,
                    side,
                    why: r.stopped.as_deref()?,
                })
            })
            .collect();
        self.causes = grouping::group(&classified, &stops, classes, flows);
        self.rank_documented_by_harm();
        self.mark_kept_from_reach();
    }

    /// One ranking for every form of the report (terminal, HTML, Markdown, JSON, JUnit):
    /// undocumented causes first, as grouping ranked them; then the documented ones by the
    /// worst their entry does to clients (what breaks exactly-once first), grouping's rank
    /// kept among equals.
    fn rank_documented_by_harm(&mut self) {
        use crate::compare::consequence::Consequence;
        let keys: Vec<(bool, Consequence)> = self
            .causes
            .iter()
            .map(|c| {
                let harm = c.documented_by.as_deref().and_then(|e| self.worst_harm(e));
                (
                    c.documented_by.is_some(),
                    harm.map_or(Consequence::Unchanged, |h| h.consequence),
                )
            })
            .collect();
        let mut ranked: Vec<(usize, Cause)> = self.causes.drain(..).enumerate().collect();
        ranked.sort_by_key(|(i, _)| keys[*i]);
        self.causes = ranked.into_iter().map(|(_, c)| c).collect();
    }

    /// Names under each cause the ledger entries it kept from being reached: those of a
    /// scenario that stopped at one of its steps (`not_reached` says where each stopped).
    fn mark_kept_from_reach(&mut self) {
        for nr in &self.not_reached {
            // "TARGET: step 'x' got ...": the step after the target's name.
            let why = nr
                .stopped
                .split_once(": ")
                .map_or(nr.stopped.as_str(), |(_, w)| w);
            let Some(step) = grouping::stopping_step(why) else {
                continue;
            };
            let at = (nr.scenario.clone(), step.to_owned());
            for c in self.causes.iter_mut().filter(|c| c.steps.contains(&at)) {
                if !c.kept_from_reach.contains(&nr.entry) {
                    c.kept_from_reach.push(nr.entry.clone());
                }
            }
        }
    }

    /// Marks each undocumented cause whose every scenario depends on a setting that a target
    /// has otherwise (`misconfigured`: target, setting) as that target's configuration.
    pub fn mark_configuration(
        &mut self,
        scenarios: &[&crate::scenario::Scenario],
        misconfigured: &[(String, crate::targets::settings::Differs)],
    ) {
        for cause in self.causes.iter_mut().filter(|c| c.documented_by.is_none()) {
            let depends = |(_, d): &&(String, crate::targets::settings::Differs)| {
                cause.scenarios.iter().all(|name| {
                    scenarios
                        .iter()
                        .find(|s| s.name == *name)
                        .is_some_and(|s| s.settings.contains(&d.property))
                })
            };
            let why: Vec<String> = misconfigured
                .iter()
                .filter(depends)
                .map(|(target, d)| {
                    format!(
                        "{target}'s {} is {} (the scenarios assume {})",
                        d.property,
                        d.found.as_deref().unwrap_or("unset"),
                        d.assumed
                    )
                })
                .collect();
            if !why.is_empty() {
                cause.configuration = Some(why.join("; "));
            }
        }
    }

    /// Root causes with no ledger entry.
    pub fn undocumented_causes(&self) -> usize {
        self.causes
            .iter()
            .filter(|c| c.documented_by.is_none())
            .count()
    }

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
        let flags: String = self.repro_flags.iter().map(|f| format!(" {f}")).collect();
        format!("kconform repro {}{targets}{flags}", cause.example.scenario)
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
            let mut count = match c.folded {
                0 => format!("{}", c.differences),
                n => format!("{} + {n} skipped after its stops", c.differences),
            };
            if c.consequences > 0 {
                count.push_str(&format!(
                    " + {} consequence(s) in later steps",
                    c.consequences
                ));
            }
            let versions = match c.versions.is_empty() {
                true => String::new(),
                false => format!(" ({})", c.versions),
            };
            match &c.documented_by {
                Some(id) => {
                    let _ = writeln!(
                        out,
                        "{} {} {}{versions}: {count} in {}",
                        paint(Tone::Warn, &format!("{} {id}", self.documented_label(id))),
                        c.notice.label(),
                        c.title,
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
                        c.title,
                        scenarios(&c.scenarios),
                        e.scenario,
                        e.step,
                        e.path,
                        clip(&self.values(&e.left, &e.right)),
                        paint(Tone::Dim, &format!("repro: {}", self.repro_command(c)))
                    );
                    if !c.kept_from_reach.is_empty() {
                        let _ = writeln!(
                            out,
                            "  kept {} ledger entr{} from being reached: {}",
                            c.kept_from_reach.len(),
                            if c.kept_from_reach.len() == 1 {
                                "y"
                            } else {
                                "ies"
                            },
                            c.kept_from_reach.join(", ")
                        );
                    }
                    if verbose {
                        for chain in &c.consequence_chains {
                            let _ =
                                writeln!(out, "  then: {} ({})", chain.signature, chain.words());
                        }
                    }
                }
            }
        }
        // Ranked by what they do to clients, worst first (a stable sort: else as they came).
        by_entry.sort_by_key(|(entry, ..)| {
            self.worst_harm(entry)
                .map_or(Consequence::Unchanged, |h| h.consequence)
        });
        for (entry, causes, rows, names) in &by_entry {
            let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
            let _ = writeln!(
                out,
                "{} {entry}: {rows} difference(s), {causes} cause(s), in {}{}",
                paint(Tone::Warn, &self.documented_label(entry)),
                scenarios(&names),
                self.harm_suffix(entry)
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
        let (open, documented): (Vec<&Cause>, Vec<&Cause>) =
            self.causes.iter().partition(|c| c.documented_by.is_none());
        if !open.is_empty() {
            let kept = open.iter().any(|c| !c.kept_from_reach.is_empty());
            out.push_str(&format!(
                "### Undocumented root causes\n\n| | notice | cause | versions | differences | steps skipped after its stops | later steps it changed | {}scenarios | example | repro |\n|---|---|---|---|---|---|---|{}---|---|---|\n",
                if kept { "ledger entries it kept from being reached | " } else { "" },
                if kept { "---|" } else { "" },
            ));
            for c in open {
                let e = &c.example;
                let kept_cell = match kept {
                    true => format!("{} | ", md(&c.kept_from_reach.join(", "))),
                    false => String::new(),
                };
                let _ = writeln!(
                    out,
                    "| {} | {} | `{}` | {} | {} | {} | {} | {kept_cell}{} | {} '{}' `{}`: {} | `{}` |",
                    match &c.configuration {
                        Some(why) => format!("**configuration**: {}", md(why)),
                        None => "**undocumented**".to_owned(),
                    },
                    c.notice.label(),
                    md(&c.title),
                    c.versions,
                    c.differences,
                    c.folded,
                    c.consequences,
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
        if documented.is_empty() {
            return;
        }
        let rows: usize = documented.iter().map(|c| c.rows()).sum();
        let _ = write!(
            out,
            "<details><summary>{} documented root cause(s), {} row(s)</summary>\n\n| ledger entry | notice | cause | versions | rows | scenarios |\n|---|---|---|---|---|---|\n",
            documented.len(),
            rows
        );
        for c in documented {
            let _ = writeln!(
                out,
                "| {} | {} | `{}` | {} | {} | {} |",
                c.documented_by.as_deref().unwrap_or_default(),
                c.notice.label(),
                md(&c.title),
                c.versions,
                c.rows(),
                c.scenarios.len()
            );
        }
        out.push_str("\n</details>\n\n");
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
                            "{}: {} difference(s), {} step(s) skipped after its stops, {} consequence(s) in later steps, in {}",
                            c.configuration
                                .as_deref()
                                .map_or("undocumented".to_owned(), |why| format!(
                                    "configuration ({why})"
                                )),
                            c.differences,
                            c.folded,
                            c.consequences,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::diff::DiffRow;
    use crate::compare::ledger::Verdict;
    use crate::report::tests::{row, run};
    use crate::report::Run;
    use serde_json::{json, Value};

    /// The grouped forms (the default): every form shows the same causes, the counts add up
    /// to the flat list, and a scenario's stop folds the steps skipped after it.
    #[test]
    fn every_form_shows_the_same_root_causes() {
        let mut r = Report {
            targets: vec!["external=127.0.0.1:9092".into(), "apache".into()],
            ..Default::default()
        };
        r.runs.push(Run {
            stopped: Some("step 'end' got a malformed answer: ...".into()),
            failed_expectations: vec!["stopped".into()],
            ..run("s", "external=127.0.0.1:9092")
        });
        r.runs.push(run("s", "apache"));
        let malformed = DiffRow {
            scenario: "s".into(),
            path: "outcome".into(),
            left: json!("malformed"),
            right: json!("response"),
            detail: Some("the response header is v1, but EndTxn v3 answers with header v0".into()),
            ..row("x")
        };
        let skipped = |step: &str| DiffRow {
            step: step.into(),
            left: json!("skipped"),
            ..malformed.clone()
        };
        for d in [malformed.clone(), skipped("a"), skipped("b")] {
            r.add_difference(d, &Verdict::Undocumented { hint: None }, None);
        }
        r.add_difference(
            row("50 INVALID_TRANSACTION_TIMEOUT"),
            &Verdict::Documented("wire-50".into()),
            None,
        );
        r.group_causes(&FieldClasses::default(), &Flows::default());
        assert_eq!(r.causes.len(), 2, "{:#?}", r.causes);
        assert_eq!(
            r.causes.iter().map(Cause::rows).sum::<usize>(),
            r.differences.len()
        );
        assert!(r
            .terminal(false)
            .contains("DOCUMENTED wire-50: 1 difference(s), 1 cause(s), in s<1>"));
        let text = r.terminal(true);
        // Shown in its diagnosis's words, versions kept; signed (and keyed) shaped.
        assert!(text.contains("UNDOCUMENTED unreadable malformed (malformed | response): the response header is v1, but EndTxn v3 answers with header v0 (v3)"), "{text}");
        assert_eq!(
            r.causes[0].signature,
            "malformed (malformed | response): the response header is vN, but <API> answers with header vN"
        );
        assert!(
            text.contains("1 + 2 skipped after its stops in s"),
            "{text}"
        );
        assert!(
            text.contains(
                "repro: kconform repro s --target external=127.0.0.1:9092 --target apache"
            ),
            "{text}"
        );
        assert!(text.contains("DOCUMENTED wire-50 state EndTxn error_code: 50 INVALID_TRANSACTION_TIMEOUT | 48 INVALID_TXN_STATE (v3): 1 in s<1>"), "{text}");
        // The flags that made the finding go with its repro: another suite, another ledger.
        let mut with_flags = r.clone();
        with_flags.repro_flags = vec!["--scenarios my-suite".into(), "--provisioned-topics".into()];
        assert!(
            with_flags.terminal(true).contains(
                "repro: kconform repro s --target external=127.0.0.1:9092 --target apache --scenarios my-suite --provisioned-topics"
            ),
            "{}",
            with_flags.terminal(true)
        );
        assert!(
            text.contains("in 2 root cause(s) (1 undocumented)"),
            "{text}"
        );
        let junit = r.junit();
        assert!(
            junit.contains("classname=\"kconform.cause.unreadable\""),
            "{junit}"
        );
        assert!(junit.contains("tests=\"4\" failures=\"2\""), "{junit}");
        let md = r.markdown();
        assert!(
            md.contains("### Undocumented root causes") && md.contains("**undocumented**"),
            "{md}"
        );
        // The flat list is not there; the documented cause is folded away, for a comment.
        assert!(!md.contains("| scenario | step | field |"), "{md}");
        let folded = md.split("<details>").nth(1).unwrap_or_default();
        assert!(folded.contains("| wire-50 |"), "{md}");
        let json: Value = serde_json::from_str(&r.json()).unwrap();
        assert_eq!(json["causes"][0]["folded"], 2);
        assert_eq!(json["totals"]["undocumented_causes"], 1);
        assert_eq!(json["baseline"], Value::Null);
    }
}
