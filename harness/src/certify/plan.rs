//! Which judges apply to a target, on which shape of it and against which shape of Apache,
//! and why each one left out is left out; and how a time budget is divided over the judges
//! whose length can be chosen (chaos and fuzz shrink; the scenarios never do).

use std::time::Duration;

use crate::report::gate::Judge;
use crate::targets::{Kind, TargetSpec};

/// A judge to run: on which form of the target, against which form of Apache (none for a
/// judge that needs no baseline broker, or runs without its control).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Planned {
    /// The judge.
    pub judge: Judge,
    /// The target as this judge runs it (a kaas build of three gives its one-broker form to
    /// the one-broker scenarios).
    pub target: TargetSpec,
    /// What it is judged against.
    pub against: Option<TargetSpec>,
}

/// A judge that does not run, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    /// The judge.
    pub judge: Judge,
    /// Why, in one line.
    pub why: String,
}

/// What `certify` will do.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// The judges to run, in order.
    pub run: Vec<Planned>,
    /// The judges left out.
    pub left_out: Vec<LeftOut>,
}

/// What the user asked of the judges.
#[derive(Debug, Clone, Default)]
pub struct Ask {
    /// Only these judges (empty: every one that applies).
    pub only: Vec<Judge>,
    /// Not these.
    pub skip: Vec<Judge>,
}

/// Why a target cannot be certified at all.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlanError {
    /// Recorded answers are no broker.
    #[error("{0} is Apache's recorded answers, not a broker: certify a broker (build:3=PATH, external=HOST:PORT, ref) against them with --against apache-recorded")]
    Recorded(String),
    /// The security scenarios are a shape of their own.
    #[error("{0} logs in with SASL: certify runs the plain judges; judge the security scenarios with `kconform run --sasl`")]
    Secured(String),
    /// What it is judged against must be Apache.
    #[error(
        "--against {0}: certify judges against Apache (apache, apache@RELEASE or apache-recorded)"
    )]
    NotApache(String),
    /// Nothing left to run.
    #[error("no judge left to run: {0}")]
    Nothing(String),
}

/// `spec` with `n` brokers: a cluster as [`TargetSpec::cluster`] makes one, one broker of the
/// same kind as it stands.
fn sized(spec: TargetSpec, n: usize) -> TargetSpec {
    match n {
        1 => TargetSpec { brokers: 1, ..spec },
        n => spec.cluster(n),
    }
}

/// The target's one-broker form, when it has one: kconform starts kaas-ref and a kaas build
/// at any size; a running broker is what it is.
fn one_broker(target: TargetSpec) -> Result<TargetSpec, String> {
    match (target.kind, target.brokers) {
        (_, 1) => Ok(target),
        (Kind::Ref | Kind::Build(_) | Kind::Apache(..), _) => Ok(sized(target, 1)),
        _ => Err(format!(
            "{} is a running cluster, and kconform cannot start one broker of it: certify one of its brokers as external=HOST:PORT for this judge",
            target.name()
        )),
    }
}

/// The judges that apply to `target` judged against `against`, in the order they run.
pub fn plan(target: TargetSpec, against: TargetSpec, ask: &Ask) -> Result<Plan, PlanError> {
    if target.is_recorded() {
        return Err(PlanError::Recorded(target.name()));
    }
    if target.secured {
        return Err(PlanError::Secured(target.name()));
    }
    if !against.is_apache() && !against.is_recorded() {
        return Err(PlanError::NotApache(against.name()));
    }
    let n = target.brokers;
    let live = !against.is_recorded();
    let mut plan = Plan::default();
    for judge in Judge::ALL {
        let planned = |t: TargetSpec, a: Option<TargetSpec>| Planned {
            judge,
            target: t,
            against: a,
        };
        let decided: Result<Planned, String> = match judge {
            Judge::Scenarios => one_broker(target).map(|t| planned(t, Some(sized(against, 1)))),
            Judge::ClusterScenarios => match n > 1 {
                true => Ok(planned(target, Some(sized(against, n)))),
                false => Err("one broker: the cluster scenarios run on a cluster (build:3=PATH, ref:3)".into()),
            },
            Judge::Clients => match live {
                true => Ok(planned(target, Some(sized(against, n)))),
                false => Err("recorded answers run no client: the workloads need a live Apache (--against apache)".into()),
            },
            Judge::Chaos => match n > 1 {
                // Without a live Apache, chaos runs without its control and says so.
                true => Ok(planned(target, live.then(|| sized(against, n)))),
                false => Err("one broker: faults need a cluster to fail over to (build:3=PATH, ref:3)".into()),
            },
            Judge::Fuzz => one_broker(target).map(|t| planned(t, None)),
            Judge::Peers => match (live, target.kind) {
                _ if !ask.only.contains(&Judge::Peers) => Err("runs only when asked (--judge peers): the suite takes minutes and needs go".into()),
                (_, Kind::Build(_)) => Err("franz-go's suite runs on a broker it is given the address of: certify one broker of the build as external=HOST:PORT".into()),
                (false, _) => Err("franz-go's suite is judged against a live Apache (--against apache)".into()),
                (true, _) => one_broker(target).map(|t| planned(t, Some(sized(against, 1)))),
            },
        };
        let asked =
            (ask.only.is_empty() || ask.only.contains(&judge)) && !ask.skip.contains(&judge);
        match (decided, asked) {
            (Ok(p), true) => plan.run.push(p),
            (Ok(_), false) => plan.left_out.push(LeftOut {
                judge,
                why: "not asked for".into(),
            }),
            (Err(why), _) => plan.left_out.push(LeftOut { judge, why }),
        }
    }
    if plan.run.is_empty() {
        let why: Vec<String> = plan
            .left_out
            .iter()
            .map(|l| format!("{}: {}", l.judge, l.why))
            .collect();
        return Err(PlanError::Nothing(why.join("; ")));
    }
    Ok(plan)
}

/// A judge's time when no budget is given.
pub const DEFAULT_CHAOS: Duration = Duration::from_secs(60);
/// The live-wire fuzzing's time when no budget is given.
pub const DEFAULT_FUZZ: Duration = Duration::from_secs(60);
/// The shortest chaos workload worth running: a kill and a pause, and their recovery.
pub const MIN_CHAOS: Duration = Duration::from_secs(20);
/// The shortest fuzzing worth running.
pub const MIN_FUZZ: Duration = Duration::from_secs(10);
/// What a chaos run costs beyond its workload: two clusters started, the input loaded, the
/// outputs read back and checked (measured on ref:3 beside apache:3: 40-70 s).
pub const CHAOS_OVERHEAD: Duration = Duration::from_secs(70);
/// What a fuzzing run costs beyond its frames: a broker started and stopped.
pub const FUZZ_OVERHEAD: Duration = Duration::from_secs(10);

/// What the judges `after` the one about to start need at least: their shortest runs and set-up.
fn reserved(after: &[Judge]) -> Duration {
    after
        .iter()
        .map(|j| match j {
            Judge::Chaos => MIN_CHAOS + CHAOS_OVERHEAD,
            Judge::Fuzz => MIN_FUZZ + FUZZ_OVERHEAD,
            _ => Duration::ZERO,
        })
        .sum()
}

/// How long a judge whose length can be chosen runs, and why it runs shorter than it would.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Share {
    /// Its length.
    pub duration: Duration,
    /// Set when the budget was spent before it: it runs its shortest, and the certificate says
    /// so (a judge left out would hide what it finds).
    pub over_budget: Option<String>,
}

/// How long the judge about to start may run, with `remaining` of the budget left and `after`
/// the judges still to come after it. Without a budget, each runs its default; with one spent,
/// its shortest, said so.
pub fn share(judge: Judge, remaining: Option<Duration>, after: &[Judge]) -> Share {
    let (default, min, overhead) = match judge {
        Judge::Chaos => (DEFAULT_CHAOS, MIN_CHAOS, CHAOS_OVERHEAD),
        _ => (DEFAULT_FUZZ, MIN_FUZZ, FUZZ_OVERHEAD),
    };
    let Some(remaining) = remaining else {
        return Share {
            duration: default,
            over_budget: None,
        };
    };
    let reserved = reserved(after);
    let left = remaining.saturating_sub(reserved + overhead);
    // Chaos takes two thirds of what is left when fuzzing comes after it, which gets the
    // rest beside its minimum; the last judge takes all.
    let mine = match (judge, after.contains(&Judge::Fuzz)) {
        (Judge::Chaos, true) => left * 2 / 3,
        _ => left,
    };
    let mine = mine.min(default * 4);
    match mine >= min {
        true => Share {
            duration: Duration::from_secs(mine.as_secs()),
            over_budget: None,
        },
        false => Share {
            duration: min,
            over_budget: Some(format!(
                "over budget: {} s were left for its {} s of set-up, so it ran its shortest, {} s",
                remaining.as_secs(),
                overhead.as_secs(),
                min.as_secs()
            )),
        },
    }
}

/// The longest one client workload may take, with `remaining` of the budget left and `after`
/// the judges after the clients: a client's workloads run one after the other, so the time
/// left beside what the judges after need is shared over the most a client runs
/// (`workloads`), between 60 s (twice the slowest correct run seen: librdkafka's eos with its
/// coordinators apart, 36 s on ref:3, whose send_offsets_to_transaction stalls 15 + 5 s) and
/// the 120 s the clients take without a budget. A broker where every call hangs then costs the
/// budget, not two minutes a workload.
pub fn client_deadline(remaining: Option<Duration>, after: &[Judge], workloads: usize) -> Duration {
    const MOST: Duration = Duration::from_secs(120);
    const LEAST: Duration = Duration::from_secs(60);
    let Some(remaining) = remaining else {
        return MOST;
    };
    let reserved = reserved(after);
    let share = remaining.saturating_sub(reserved) / workloads.max(1) as u32;
    share.clamp(LEAST, MOST)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judges(p: &Plan) -> Vec<Judge> {
        p.run.iter().map(|r| r.judge).collect()
    }

    #[test]
    fn a_cluster_gets_every_judge_and_its_one_broker_form_the_one_broker_scenarios() {
        let p = plan(
            TargetSpec::REF.cluster(3),
            TargetSpec::RECORDED,
            &Ask::default(),
        )
        .unwrap();
        assert_eq!(
            judges(&p),
            [
                Judge::Scenarios,
                Judge::ClusterScenarios,
                Judge::Chaos,
                Judge::Fuzz
            ]
        );
        let scenarios = &p.run[0];
        assert_eq!(scenarios.target.brokers, 1);
        assert_eq!(scenarios.against.unwrap().brokers, 1);
        assert_eq!(p.run[1].against.unwrap().brokers, 3);
        // Recorded answers: chaos runs without its control; clients cannot run.
        assert_eq!(p.run[2].against, None);
        let clients = p
            .left_out
            .iter()
            .find(|l| l.judge == Judge::Clients)
            .unwrap();
        assert!(clients.why.contains("live Apache"), "{}", clients.why);
    }

    #[test]
    fn one_broker_gets_no_cluster_judge_and_says_why() {
        let apache = TargetSpec::apache(crate::targets::apache::Backend::Jvm);
        let p = plan(TargetSpec::REF, apache, &Ask::default()).unwrap();
        assert_eq!(judges(&p), [Judge::Scenarios, Judge::Clients, Judge::Fuzz]);
        let why: Vec<&str> = p.left_out.iter().map(|l| l.why.as_str()).collect();
        assert!(
            why.iter()
                .any(|w| w.starts_with("one broker: the cluster scenarios")),
            "{why:?}"
        );
        assert!(
            why.iter().any(|w| w.starts_with("one broker: faults")),
            "{why:?}"
        );
        assert!(why.iter().any(|w| w.contains("--judge peers")), "{why:?}");
    }

    #[test]
    fn only_and_skip_choose_and_a_running_cluster_has_no_one_broker_form() {
        let external = TargetSpec::external(([127, 0, 0, 1], 9092).into()).cluster(3);
        let ask = Ask {
            only: vec![],
            skip: vec![Judge::Chaos],
        };
        let p = plan(external, TargetSpec::RECORDED, &ask).unwrap();
        assert_eq!(judges(&p), [Judge::ClusterScenarios]);
        let scenarios = p
            .left_out
            .iter()
            .find(|l| l.judge == Judge::Scenarios)
            .unwrap();
        assert!(
            scenarios.why.contains("running cluster"),
            "{}",
            scenarios.why
        );
        let only = Ask {
            only: vec![Judge::Fuzz],
            skip: vec![],
        };
        let p = plan(TargetSpec::REF, TargetSpec::RECORDED, &only).unwrap();
        assert_eq!(judges(&p), [Judge::Fuzz]);
    }

    #[test]
    fn a_target_that_cannot_be_certified_is_refused_with_the_reason() {
        let e = plan(TargetSpec::RECORDED, TargetSpec::RECORDED, &Ask::default()).unwrap_err();
        assert!(matches!(e, PlanError::Recorded(_)));
        let e = plan(TargetSpec::REF, TargetSpec::REF, &Ask::default()).unwrap_err();
        assert!(e.to_string().contains("--against ref"), "{e}");
        let e = plan(
            TargetSpec::REF.sasl(),
            TargetSpec::RECORDED,
            &Ask::default(),
        )
        .unwrap_err();
        assert!(matches!(e, PlanError::Secured(_)));
        let nothing = Ask {
            only: vec![Judge::Chaos],
            skip: vec![],
        };
        let e = plan(TargetSpec::REF, TargetSpec::RECORDED, &nothing).unwrap_err();
        assert!(e.to_string().contains("chaos: one broker"), "{e}");
    }

    #[test]
    fn a_budget_shortens_each_client_workloads_deadline_within_bounds() {
        assert_eq!(client_deadline(None, &[], 13), Duration::from_secs(120));
        // 1200 - (20 + 70) - (10 + 10) = 1090 over 13 workloads: 83 s.
        let after = [Judge::Chaos, Judge::Fuzz];
        let d = client_deadline(Some(Duration::from_secs(1200)), &after, 13);
        assert_eq!(d.as_secs(), 83);
        assert_eq!(
            client_deadline(Some(Duration::ZERO), &after, 13),
            Duration::from_secs(60)
        );
        let d = client_deadline(Some(Duration::from_secs(86_400)), &[], 13);
        assert_eq!(d, Duration::from_secs(120));
    }

    #[test]
    fn a_budget_shrinks_chaos_and_fuzz_to_their_shortest_and_says_so() {
        let d = |s: Share| s.duration;
        assert_eq!(d(share(Judge::Chaos, None, &[Judge::Fuzz])), DEFAULT_CHAOS);
        let ten = Duration::from_secs(600);
        let chaos = share(Judge::Chaos, Some(Duration::from_secs(300)), &[Judge::Fuzz]);
        // 300 - (10 + 10) reserved for fuzzing - 70 = 210, two thirds of which: 140.
        assert_eq!(chaos.duration, Duration::from_secs(140));
        assert_eq!(chaos.over_budget, None);
        let fuzz = share(Judge::Fuzz, Some(Duration::from_secs(80)), &[]);
        assert_eq!(fuzz.duration, Duration::from_secs(70));
        assert!(d(share(Judge::Chaos, Some(ten * 10), &[])) <= DEFAULT_CHAOS * 4);
        let spent = share(Judge::Chaos, Some(Duration::from_secs(60)), &[Judge::Fuzz]);
        assert_eq!(spent.duration, MIN_CHAOS);
        let why = spent.over_budget.unwrap();
        assert!(why.starts_with("over budget: 60 s were left"), "{why}");
    }
}
