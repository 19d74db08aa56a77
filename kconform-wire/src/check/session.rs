//! Many checks, one finding per defect: a [`Session`] counts the inputs, keeps the first body
//! of each signature with the versions and the number of times it was seen, and says when each
//! was first found.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::{Duration, Instant};

use super::{check, Case, Decoded, Direction, Finding, Problem, Verdict};
use crate::{alloc, api_name, Rng};

/// One defect: its first finding and how often it showed.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The first body that showed it.
    pub first: Finding,
    /// How many bodies showed it.
    pub times: u64,
    /// The APIs (by key), directions and versions it showed on.
    pub versions: BTreeSet<(i16, Direction, i16)>,
    /// The fields it showed on, for a defect signed without them ([`Finding::field`]).
    pub fields: BTreeSet<String>,
    /// How many inputs had been checked when it was first seen (1 for the first input).
    pub after_cases: u64,
    /// And how long after the session started.
    pub after: Duration,
}

impl Seen {
    /// `EndTxn request v0-v3, WriteTxnMarkers response v1`: where it showed.
    pub fn shown_on(&self) -> String {
        let mut by: BTreeMap<(i16, Direction), Vec<i16>> = BTreeMap::new();
        for &(api, direction, version) in &self.versions {
            by.entry((api, direction)).or_default().push(version);
        }
        let each = by.into_iter().map(|((api, direction), versions)| {
            let (lo, hi) = (versions[0], versions[versions.len() - 1]);
            let span = match (lo, hi) {
                _ if lo == hi => format!("v{lo}"),
                _ if versions.len() as i16 == hi - lo + 1 => format!("v{lo}-v{hi}"),
                _ => versions
                    .iter()
                    .map(|v| format!("v{v}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            format!("{} {direction} {span}", api_name(api))
        });
        each.collect::<Vec<_>>().join("; ")
    }
}

/// See the module documentation.
#[derive(Debug)]
pub struct Session {
    seen: BTreeMap<String, Seen>,
    pub(super) cases: u64,
    pub(super) apache_accepted: u64,
    pub(super) not_served: u64,
    started: Instant,
}

impl Default for Session {
    fn default() -> Self {
        Session::new()
    }
}

impl Session {
    /// A session starting now.
    pub fn new() -> Session {
        super::quiet_panics();
        Session {
            seen: BTreeMap::new(),
            cases: 0,
            apache_accepted: 0,
            not_served: 0,
            started: Instant::now(),
        }
    }

    /// Checks one case; the finding when it is the first of its signature.
    pub fn check<F: FnOnce(&Case) -> Decoded>(&mut self, case: &Case, decoder: F) -> Option<&Seen> {
        self.cases += 1;
        let finding = match check(case, decoder) {
            Ok(Some(verdict)) => {
                self.apache_accepted += u64::from(matches!(verdict, Verdict::Accepts { .. }));
                return None;
            }
            Ok(None) => {
                self.not_served += 1;
                return None;
            }
            Err(f) => f,
        };
        self.record(*finding)
    }

    /// Counts one more showing of a defect already seen, and gives it back (`None` when
    /// `signature` is new): what an isolated session's child reports, without the body.
    pub(super) fn again(
        &mut self,
        signature: &str,
        version: (i16, Direction, i16),
        field: Option<String>,
    ) -> Option<&mut Seen> {
        let seen = self.seen.get_mut(signature)?;
        seen.times += 1;
        seen.versions.insert(version);
        seen.fields.extend(field);
        Some(seen)
    }

    /// Counts `finding` under its signature; the defect when it is the first of it.
    pub(super) fn record(&mut self, finding: Finding) -> Option<&Seen> {
        let signature = finding.signature();
        let case = &finding.case;
        let version = (case.api as i16, case.direction, case.version);
        let field = finding.field();
        if !self.seen.contains_key(&signature) {
            let seen = Seen {
                first: finding,
                times: 1,
                versions: BTreeSet::from([version]),
                fields: field.into_iter().collect(),
                after_cases: self.cases,
                after: self.started.elapsed(),
            };
            return Some(&*self.seen.entry(signature).or_insert(seen));
        }
        let seen = self.again(&signature, version, field)?;
        // A site that also kills the process is shown by an input that does: the worst of
        // what the defect does is what a reader of the report must see.
        let kills = |p: &Problem| matches!(p, Problem::Aborted { .. } | Problem::Died(_));
        if kills(&finding.problem) && !kills(&seen.first.problem) {
            seen.first = finding;
        }
        None
    }

    /// Checks `count` cases drawn from `seed` ([`Case::draw`]).
    pub fn run<F>(&mut self, seed: u64, count: u64, mut decoder: F)
    where
        F: FnMut(&Case) -> Decoded,
    {
        let mut rng = Rng::new(seed);
        for _ in 0..count {
            let case = Case::draw(&mut rng);
            self.check(&case, &mut decoder);
        }
    }

    /// The defects found so far, by signature.
    pub fn findings(&self) -> &BTreeMap<String, Seen> {
        &self.seen
    }

    /// What the session did and found.
    pub fn report(&self) -> Report {
        Report {
            cases: self.cases,
            apache_accepted: self.apache_accepted,
            not_served: self.not_served,
            elapsed: self.started.elapsed(),
            allocations_watched: alloc::installed(),
            findings: self
                .seen
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        }
    }
}

/// What a session did and found, for people ([`fmt::Display`]).
#[derive(Debug, Clone)]
pub struct Report {
    /// Inputs checked.
    pub cases: u64,
    /// Of them, the ones Apache's parser reads and the decoder read alike.
    pub apache_accepted: u64,
    /// Of them, the ones the decoder does not serve (not compared).
    pub not_served: u64,
    /// How long it took.
    pub elapsed: Duration,
    /// Whether [`alloc::Watch`] is the global allocator: without it no allocation is seen.
    pub allocations_watched: bool,
    /// Each defect by signature.
    pub findings: Vec<(String, Seen)>,
}

impl Report {
    /// Inputs per second.
    pub fn per_second(&self) -> f64 {
        self.cases as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} input(s) in {:.1} s ({:.0}/s), {} read alike by Apache and the decoder, {} of versions it does not serve; {} defect(s)",
            self.cases,
            self.elapsed.as_secs_f64(),
            self.per_second(),
            self.apache_accepted,
            self.not_served,
            self.findings.len()
        )?;
        if !self.allocations_watched {
            writeln!(
                f,
                "allocations not watched: install kconform_wire::alloc::Watch as the global allocator"
            )?;
        }
        for (signature, seen) in &self.findings {
            writeln!(
                f,
                "- {signature}\n  seen {} time(s) on {}{}, first after {} input(s) ({:.2} s)\n  {}",
                seen.times,
                seen.shown_on(),
                match seen.fields.is_empty() {
                    true => String::new(),
                    false => format!(
                        "\n  on {} field(s): {}",
                        seen.fields.len(),
                        seen.fields.iter().cloned().collect::<Vec<_>>().join("; ")
                    ),
                },
                seen.after_cases,
                seen.after.as_secs_f64(),
                seen.first.to_string().replace('\n', "\n  "),
            )?;
        }
        Ok(())
    }
}
