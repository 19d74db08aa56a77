//! What every judge gates on, said the same way: the judge that found a thing, a key that stays
//! the same from run to run and machine to machine, and how much it matters. `run`, `clients`,
//! `chaos`, `peers` and `fuzz` each give their failing findings as [`Gated`] items, so that one
//! baseline file ([`super::baseline`]) holds all of them and `kconform certify` ranks them
//! worst first across judges.

use serde::{Deserialize, Serialize};

/// A judge of a broker: one kind of evidence, with its own report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Judge {
    /// The scenarios written for one broker (`kconform run`).
    Scenarios,
    /// The scenarios written for a cluster (`kconform run --brokers N`).
    ClusterScenarios,
    /// The client workloads (`kconform clients`).
    Clients,
    /// The exactly-once workload under faults (`kconform chaos`).
    Chaos,
    /// The live-wire fuzzing of the broker's decoders (`kconform fuzz`).
    Fuzz,
    /// A peer's test suite (`kconform peers`).
    Peers,
}

impl Judge {
    /// Every judge, in the order `certify` runs them.
    pub const ALL: [Judge; 6] = [
        Judge::Scenarios,
        Judge::ClusterScenarios,
        Judge::Clients,
        Judge::Chaos,
        Judge::Fuzz,
        Judge::Peers,
    ];

    /// Its name, as the command line, the baseline file and the reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            Judge::Scenarios => "scenarios",
            Judge::ClusterScenarios => "cluster-scenarios",
            Judge::Clients => "clients",
            Judge::Chaos => "chaos",
            Judge::Fuzz => "fuzz",
            Judge::Peers => "peers",
        }
    }

    /// The judge a name spells, for the command line.
    pub fn parse(name: &str) -> Result<Judge, String> {
        Judge::ALL
            .into_iter()
            .find(|j| j.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Judge::ALL.iter().map(|j| j.name()).collect();
                format!("'{name}' is no judge: one of {}", names.join(", "))
            })
    }
}

impl std::fmt::Display for Judge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How much a finding matters to the applications on the broker, worst first: the order a
/// certificate ranks findings in, whichever judge found them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    /// Exactly-once broken: a committed transaction's records lost, an aborted one's read, a
    /// duplicate, a torn transaction.
    ExactlyOnce,
    /// The broker died, or closed on a well-formed request.
    Crash,
    /// An answer a client cannot read.
    Unreadable,
    /// What a client acts on: an error code, a state, a workload that went otherwise, a run
    /// that could not judge.
    State,
    /// A ledger entry or allowlist entry that no longer shows: the docs have rotted.
    Stale,
    /// A field clients only log.
    Logged,
}

impl Severity {
    /// The word the reports use.
    pub fn label(self) -> &'static str {
        match self {
            Severity::ExactlyOnce => "exactly-once",
            Severity::Crash => "crash",
            Severity::Unreadable => "unreadable",
            Severity::State => "state",
            Severity::Stale => "stale",
            Severity::Logged => "logged",
        }
    }
}

/// One thing that fails a judge's run, keyed for a baseline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Gated {
    /// The judge that found it.
    pub judge: Judge,
    /// What identifies it from run to run: no address, no generated name, no seed-drawn
    /// number (`cause: SIGNATURE`, `anomaly: aborted-read (apart)`, `crash: SIGNATURE`).
    pub key: String,
    /// How much it matters.
    pub severity: Severity,
    /// How many differences, rows or occurrences it stands for (0 where it counts none).
    pub rows: usize,
}

impl Gated {
    /// A finding of `judge`.
    pub fn new(judge: Judge, severity: Severity, key: impl Into<String>, rows: usize) -> Gated {
        Gated {
            judge,
            key: key.into(),
            severity,
            rows,
        }
    }
}

/// `found` sorted worst first, one item per judge and key, its rows added.
pub fn merge(mut found: Vec<Gated>) -> Vec<Gated> {
    found.sort_by(|a, b| (a.severity, a.judge, &a.key).cmp(&(b.severity, b.judge, &b.key)));
    let mut out: Vec<Gated> = Vec::new();
    for g in found {
        match out
            .iter_mut()
            .find(|o| o.judge == g.judge && o.key == g.key)
        {
            Some(o) => o.rows += g.rows,
            None => out.push(g),
        }
    }
    out
}

/// Digits replaced by `N`: a value keyed without the numbers a run draws (offsets, producer
/// ids, seconds), as the scenarios' signatures are.
pub fn without_numbers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_number = false;
    for c in text.chars() {
        match c.is_ascii_digit() {
            true if !in_number => {
                out.push('N');
                in_number = true;
            }
            true => {}
            false => {
                out.push(c);
                in_number = false;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_judge_is_spelled_and_read_back_the_same() {
        for j in Judge::ALL {
            assert_eq!(Judge::parse(j.name()), Ok(j));
        }
        let e = Judge::parse("scenario").unwrap_err();
        assert!(e.contains("one of scenarios, cluster-scenarios"), "{e}");
    }

    #[test]
    fn numbers_are_left_out_of_a_key_but_nothing_else() {
        assert_eq!(
            without_numbers("offset 13826 of out-1, pid 7"),
            "offset N of out-N, pid N"
        );
        assert_eq!(without_numbers("no digits"), "no digits");
    }

    #[test]
    fn exactly_once_outranks_a_crash_and_a_logged_field_comes_last() {
        let mut all = [
            Severity::Logged,
            Severity::State,
            Severity::Crash,
            Severity::ExactlyOnce,
        ];
        all.sort();
        assert_eq!(all[0], Severity::ExactlyOnce);
        assert_eq!(all[3], Severity::Logged);
    }
}
