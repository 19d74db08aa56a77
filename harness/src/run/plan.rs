//! Which scenarios a command runs: those named (all when none), of the size and security of
//! the targets, the slow ones only when asked for or named, and on an external cluster only
//! those whose faults it was given commands for. Each refusal names the mend in one line. `run`, `coverage`, `repro` and `topics` choose through here, and tests reach it.

use crate::data::Source;
use crate::scenario::Scenario;
use crate::targets::apache::Release;
use crate::targets::faults::{BrokerAct, FaultCommands};
use crate::targets::{Kind, TargetSpec};

/// Why the scenarios asked for cannot run on the targets given.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// A name no scenario has; the nearest name when one is close.
    #[error("no scenario named '{name}' in {place}{}", nearest.as_ref().map(|n| format!(" (did you mean '{n}'?)")).unwrap_or_default())]
    Unknown {
        /// The name given.
        name: String,
        /// Where the scenarios were read from.
        place: String,
        /// The scenario whose name is nearest, when it is near enough to be a typo.
        nearest: Option<String>,
    },
    /// A security scenario named for plain targets, or a plain one for secured targets.
    #[error("scenario '{name}' is {} security scenario: run it with {hint}", if *.secured { "a" } else { "no" })]
    Security {
        /// The scenario.
        name: String,
        /// Whether it is a security scenario.
        secured: bool,
        /// The targets to run it on.
        hint: String,
    },
    /// A scenario written for another number of brokers than the targets have.
    #[error("scenario '{name}' is written for {brokers} broker(s), these targets have {size}: run it with {hint}")]
    Size {
        /// The scenario.
        name: String,
        /// The brokers it is written for.
        brokers: usize,
        /// The brokers the targets have.
        size: usize,
        /// The targets to run it on.
        hint: String,
    },
    /// Secured targets, and no security scenario among those chosen.
    #[error("no security scenario is chosen")]
    NoSecurityScenario,
    /// No scenario chosen is written for the targets' size.
    #[error("no scenario is written for {0} brokers")]
    NoneOfSize(usize),
    /// A command that compares a fixed number of targets was given another.
    #[error("this command compares exactly {wanted} targets ({given} given)")]
    TargetCount {
        /// What the command compares.
        wanted: usize,
        /// What it was given.
        given: usize,
    },
}

/// The scenarios a run takes, and the slow ones it left out (to be said).
#[derive(Debug)]
pub struct Plan<'a> {
    /// The scenarios to run, in the order loaded.
    pub chosen: Vec<&'a Scenario>,
    /// The slow scenarios left out because they were neither asked for nor named.
    pub slow_left_out: Vec<String>,
}

/// The scenarios named (all when none), refusing an unknown name with the nearest one.
pub fn pick<'a>(
    scenarios: &'a [Scenario],
    names: &[String],
    source: &Source,
) -> Result<Vec<&'a Scenario>, PlanError> {
    if let Some(missing) = names
        .iter()
        .find(|n| !scenarios.iter().any(|s| &s.name == *n))
    {
        let nearest = scenarios
            .iter()
            .map(|s| (edit_distance(missing, &s.name), &s.name))
            .min()
            .filter(|(d, _)| *d <= missing.len().max(4) / 2)
            .map(|(_, n)| n.clone());
        return Err(PlanError::Unknown {
            name: missing.clone(),
            place: source.describe(),
            nearest,
        });
    }
    Ok(scenarios
        .iter()
        .filter(|s| names.is_empty() || names.contains(&s.name))
        .collect())
}

/// Of the scenarios [`pick`]ed for `names` (all when none), those that run on `specs`, whose
/// first target sets the size and security: a scenario named for other targets is refused with
/// the targets to run it on; the slow ones are left out unless `include_slow` or named.
pub fn plan<'a>(
    picked: Vec<&'a Scenario>,
    names: &[String],
    specs: &[TargetSpec],
    include_slow: bool,
) -> Result<Plan<'a>, PlanError> {
    let size = specs.first().map_or(1, |s| s.brokers);
    let secured = specs.first().is_some_and(|s| s.secured);
    if !names.is_empty() {
        if let Some(s) = picked.iter().find(|s| s.secured() != secured) {
            let hint = match (s.secured(), s.brokers) {
                (true, 1) => "--sasl (ref+sasl and apache+sasl)".to_owned(),
                (true, n) => format!("--brokers {n} --sasl (ref:{n}+sasl and apache:{n}+sasl)"),
                (false, _) => "targets without SASL".to_owned(),
            };
            return Err(PlanError::Security {
                name: s.name.clone(),
                secured: s.secured(),
                hint,
            });
        }
        if let Some(s) = picked.iter().find(|s| s.brokers != size) {
            let hint = match s.brokers {
                1 => "targets of one broker (ref and apache)".to_owned(),
                n => format!("--brokers {n} (ref:{n} and apache:{n})"),
            };
            return Err(PlanError::Size {
                name: s.name.clone(),
                brokers: s.brokers,
                size,
                hint,
            });
        }
    }
    let mut chosen = crate::run::session::sized(&picked, size, secured);
    if chosen.is_empty() {
        return Err(match secured {
            true => PlanError::NoSecurityScenario,
            false => PlanError::NoneOfSize(size),
        });
    }
    let slow_left_out: Vec<String> = chosen
        .iter()
        .filter(|s| s.slow && !include_slow && !names.contains(&s.name))
        .map(|s| s.name.clone())
        .collect();
    chosen.retain(|s| !slow_left_out.contains(&s.name));
    Ok(Plan {
        chosen,
        slow_left_out,
    })
}

impl Plan<'_> {
    /// Leaves out the scenarios written for Apache releases other than the run's (every Apache
    /// target's release; 3.7.2, the one kaas claims, where no target is Apache), and says
    /// which: (scenario, the releases it applies to).
    pub fn leave_out_other_releases(&mut self, specs: &[TargetSpec]) -> Vec<(String, String)> {
        let mut releases: Vec<Release> = specs.iter().filter_map(TargetSpec::answers_as).collect();
        if releases.is_empty() {
            releases.push(Release::CLAIMED);
        }
        let mut left_out = Vec::new();
        self.chosen.retain(|scenario| {
            let applies = releases.iter().all(|r| scenario.apache.contains(r));
            if !applies {
                left_out.push((scenario.name.clone(), scenario.apache.to_string()));
            }
            applies
        });
        left_out
    }

    /// For each target answering as a release some chosen scenarios are not written for
    /// (kaas-ref beside Apache 4.4): its name, that release, and those scenarios, whose
    /// expectations do not hold it ([`crate::run::holds_expectations`]).
    pub fn expectations_not_held(
        &self,
        specs: &[TargetSpec],
    ) -> Vec<(String, Release, Vec<String>)> {
        specs
            .iter()
            .filter_map(|spec| {
                let answers_as = spec.answers_as();
                let names: Vec<String> = self
                    .chosen
                    .iter()
                    .filter(|s| !crate::run::holds_expectations(s, answers_as))
                    .map(|s| s.name.clone())
                    .collect();
                let release = answers_as.unwrap_or(Release::CLAIMED);
                (!names.is_empty()).then(|| (spec.name(), release, names))
            })
            .collect()
    }

    /// Leaves out the scenarios that do to a broker what some target cannot (an external
    /// cluster does only the acts `--fault-cmd` gave commands for; Apache's disk cannot be
    /// filled, [`BrokerAct::needs_a_disk_switch`]), and says which and why: (scenario, the
    /// acts it needs that some target cannot do).
    pub fn leave_out_missing_faults(
        &mut self,
        specs: &[TargetSpec],
        faults: &FaultCommands,
    ) -> Vec<(String, Vec<&'static str>)> {
        let can = |act: BrokerAct| {
            specs
                .iter()
                .all(|spec| why_it_cannot(spec, act, faults).is_none())
        };
        let mut left_out = Vec::new();
        self.chosen.retain(|scenario| {
            let missing: Vec<&'static str> = scenario
                .broker_acts()
                .into_iter()
                .filter(|act| !can(*act))
                .map(|act| act.key())
                .collect();
            match missing.is_empty() {
                true => true,
                false => {
                    left_out.push((scenario.name.clone(), missing));
                    false
                }
            }
        });
        left_out
    }
}

/// Why the target `spec` cannot do `act` to its brokers, when it cannot: an external cluster
/// does only the acts `--fault-cmd` gave commands for; Apache's disk (live or recorded) cannot
/// be filled ([`BrokerAct::needs_a_disk_switch`]).
fn why_it_cannot(
    spec: &TargetSpec,
    act: BrokerAct,
    faults: &FaultCommands,
) -> Option<&'static str> {
    match spec.kind {
        Kind::External(_) if spec.brokers > 1 && !faults.has(act) => {
            Some("an external cluster: no --fault-cmd given for the act")
        }
        Kind::Apache(..) | Kind::Recorded(_) if act.needs_a_disk_switch() => {
            Some("Apache: its disk cannot be filled here")
        }
        Kind::Build(bin) => crate::targets::kaas_build::refusal(act, || {
            crate::targets::kaas_build::is_kaas_ref_once(bin)
        }),
        _ => None,
    }
}

/// Why the targets cannot do the acts `left_out` names (as [`Plan::leave_out_missing_faults`]
/// gave them): each reason once, in the targets' order, joined with "; ".
pub fn why_left_out(
    specs: &[TargetSpec],
    faults: &FaultCommands,
    left_out: &[(String, Vec<&'static str>)],
) -> String {
    let acts: Vec<BrokerAct> = BrokerAct::ALL
        .into_iter()
        .filter(|a| left_out.iter().any(|(_, keys)| keys.contains(&a.key())))
        .collect();
    let mut why: Vec<&str> = Vec::new();
    for spec in specs {
        for act in &acts {
            if let Some(reason) = why_it_cannot(spec, *act, faults) {
                if !why.contains(&reason) {
                    why.push(reason);
                }
            }
        }
    }
    why.join("; ")
}

/// Refuses a number of targets other than `wanted`, for a command that compares exactly that
/// many (`repro`: two).
pub fn exactly(wanted: usize, specs: &[TargetSpec]) -> Result<(), PlanError> {
    match specs.len() == wanted {
        true => Ok(()),
        false => Err(PlanError::TargetCount {
            wanted,
            given: specs.len(),
        }),
    }
}

/// The shapes (brokers when more than one, secured) of the scenarios [`pick`]ed, in order, each
/// once: `coverage` with no target named runs each shape on its own pair.
pub fn shapes(picked: &[&Scenario]) -> Vec<(Option<u64>, bool)> {
    let mut shapes: Vec<(usize, bool)> = picked.iter().map(|s| (s.brokers, s.secured())).collect();
    shapes.sort();
    shapes.dedup();
    shapes
        .into_iter()
        .map(|(n, sasl)| ((n > 1).then_some(n as u64), sasl))
        .collect()
}

/// Levenshtein distance: how many single-character edits turn `a` into `b`.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> (Vec<Scenario>, Source) {
        let source = Source::scenarios(None);
        (
            Scenario::load_all(&source).expect("the built-in scenarios load"),
            source,
        )
    }

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_scenario_for_later_releases_runs_only_where_every_apache_is_one() {
        let (all, _) = all();
        let later = "add-partitions-v5-verify-only";
        let kept = |targets: &[&str]| {
            let specs: Vec<TargetSpec> = targets
                .iter()
                .map(|t| TargetSpec::parse(t).unwrap())
                .collect();
            let mut p = plan(all.iter().collect(), &[], &specs, false).unwrap();
            let left_out = p.leave_out_other_releases(&specs);
            let kept = p.chosen.iter().any(|s| s.name == later);
            assert_eq!(
                kept,
                !left_out.iter().any(|(n, r)| n == later && r == "3.8+"),
                "{targets:?}"
            );
            kept
        };
        assert!(kept(&["ref", "apache@3.8"]));
        assert!(kept(&["ref", "apache@4.4+tv2"]));
        assert!(
            !kept(&["ref", "apache"]),
            "3.7.2 has no TRANSACTION_ABORTABLE"
        );
        assert!(!kept(&["ref", "apache-recorded"]));
        assert!(!kept(&["apache", "apache@4.4"]), "not on both");
        assert!(
            !kept(&["ref", "external=127.0.0.1:9092"]),
            "judged by 3.7.2's"
        );
    }

    /// kaas-ref beside Apache 4.4 runs the 4.x scenarios compared only: their expectations
    /// are Apache 4.x's, not kaas-ref's; Apache is held to them, and a target answering as a
    /// release they are written for.
    #[test]
    fn expectations_hold_only_targets_answering_as_a_release_they_are_written_for() {
        let (all, _) = all();
        let specs: Vec<TargetSpec> = ["ref", "apache@4.4+tv2"]
            .iter()
            .map(|t| TargetSpec::parse(t).unwrap())
            .collect();
        let mut p = plan(all.iter().collect(), &[], &specs, false).unwrap();
        p.leave_out_other_releases(&specs);
        let not_held = p.expectations_not_held(&specs);
        assert_eq!(not_held.len(), 1, "only kaas-ref: {not_held:?}");
        let (target, release, names) = &not_held[0];
        assert_eq!((target.as_str(), *release), ("ref", Release::CLAIMED));
        assert!(
            names.contains(&"end-txn-v5-epoch-bump".to_owned()),
            "{names:?}"
        );
        assert!(!names.contains(&"end-txn-commit-and-retry".to_owned()));
        let bump = all
            .iter()
            .find(|s| s.name == "end-txn-v5-epoch-bump")
            .unwrap();
        assert!(!crate::run::holds_expectations(bump, None));
        assert!(crate::run::holds_expectations(bump, specs[1].answers_as()));
        let old = all
            .iter()
            .find(|s| s.name == "end-txn-marker-refused-newer-epoch")
            .unwrap();
        assert!(crate::run::holds_expectations(old, None));
        assert!(!crate::run::holds_expectations(old, specs[1].answers_as()));
    }

    #[test]
    fn edit_distance_counts_single_character_edits() {
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("end-txn", "end-txn"), 0);
        assert_eq!(edit_distance("ab", "ba"), 2);
    }

    #[test]
    fn an_unknown_name_is_refused_with_the_nearest() {
        let (all, source) = all();
        let real = all.iter().find(|s| s.name.len() > 8).unwrap().name.clone();
        let typo = format!("{}x", &real);
        let e = pick(&all, &names(&[&typo]), &source).unwrap_err();
        assert!(
            e.to_string()
                .ends_with(&format!("(did you mean '{real}'?)")),
            "{e}"
        );
        let e = pick(&all, &names(&["zzzzzzzzzzzzzzzzzzzzzz"]), &source).unwrap_err();
        assert!(!e.to_string().contains("did you mean"), "{e}");
    }

    #[test]
    fn a_scenario_named_for_other_targets_is_refused_with_the_targets_to_use() {
        let (all, source) = all();
        let cluster = all.iter().find(|s| s.brokers == 3 && !s.secured()).unwrap();
        let named = names(&[&cluster.name]);
        let e = plan(
            pick(&all, &named, &source).unwrap(),
            &named,
            &[TargetSpec::REF],
            false,
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("--brokers 3 (ref:3 and apache:3)"),
            "{e}"
        );
        let secured = all.iter().find(|s| s.secured() && s.brokers == 1).unwrap();
        let named = names(&[&secured.name]);
        let e = plan(
            pick(&all, &named, &source).unwrap(),
            &named,
            &[TargetSpec::REF],
            false,
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("--sasl (ref+sasl and apache+sasl)"),
            "{e}"
        );
    }

    #[test]
    fn slow_scenarios_run_only_when_asked_for_or_named() {
        let (all, source) = all();
        let every: Vec<&Scenario> = all.iter().collect();
        let slow = all
            .iter()
            .find(|s| s.slow && s.brokers == 1 && !s.secured())
            .expect("a slow one-broker scenario");
        let p = plan(every.clone(), &[], &[TargetSpec::REF], false).unwrap();
        assert!(p.slow_left_out.contains(&slow.name));
        assert!(p.chosen.iter().all(|s| s.name != slow.name));
        let p = plan(every.clone(), &[], &[TargetSpec::REF], true).unwrap();
        assert!(p.slow_left_out.is_empty());
        assert!(p.chosen.iter().any(|s| s.name == slow.name));
        let named = names(&[&slow.name]);
        let p = plan(
            pick(&all, &named, &source).unwrap(),
            &named,
            &[TargetSpec::REF],
            false,
        )
        .unwrap();
        assert_eq!(p.chosen.len(), 1);
    }

    #[test]
    fn an_external_cluster_runs_only_the_scenarios_whose_faults_it_has_commands_for() {
        let (all, _) = all();
        let every: Vec<&Scenario> = all.iter().collect();
        let addr = "127.0.0.1:9092".parse().unwrap();
        let external = [TargetSpec::external(addr).cluster(3)];
        let mut p = plan(every.clone(), &[], &external, true).unwrap();
        let before = p.chosen.len();
        let none = FaultCommands::default();
        let left = p.leave_out_missing_faults(&external, &none);
        let pausing = left
            .iter()
            .find(|(name, _)| name == "cluster-coordinator-alone-not-available")
            .expect("a pausing scenario is left out");
        assert_eq!(pausing.1, ["pause", "resume"]);
        // A kill alone needs the restart that undoes it when the scenario ends.
        let killing = left
            .iter()
            .find(|(name, _)| name == "cluster-coordinator-killed-after-commit")
            .expect("a killing scenario is left out");
        assert_eq!(killing.1, ["kill", "restart"]);
        assert_eq!(p.chosen.len() + left.len(), before);
        assert!(p
            .chosen
            .iter()
            .all(|s| !s.steps.iter().any(|s| s.disrupts())));
        // Holding markers needs the command that lets them through too.
        let holding = left
            .iter()
            .find(|(name, _)| name == "cluster-markers-held-rejoin")
            .expect("a scenario holding markers is left out");
        assert_eq!(holding.1, ["hold_markers", "release_markers"]);
        // Every command given: nothing left out. A cluster kconform starts needs none.
        let four = ["kill=a", "restart=b", "pause=c", "resume=d"].map(String::from);
        let mut p = plan(every.clone(), &[], &external, true).unwrap();
        let left = p.leave_out_missing_faults(&external, &FaultCommands::parse(&four).unwrap());
        let names: Vec<&str> = left.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "cluster-disk-full-end-txn-retried",
                "cluster-disk-full-every-broker-claims-coordinator",
                "cluster-disk-full-transaction-writes-refused",
                "cluster-disk-full-write-txn-markers",
                "cluster-markers-held-rejoin",
                "cluster-markers-held-transaction-stays-prepared"
            ]
        );
        let all = [
            four.as_slice(),
            &["hold_markers=e".into(), "release_markers=f".into()],
            &["fill_disk=g".into(), "free_disk=h".into()],
        ]
        .concat();
        let mut p = plan(every.clone(), &[], &external, true).unwrap();
        assert!(p
            .leave_out_missing_faults(&external, &FaultCommands::parse(&all).unwrap())
            .is_empty());
        let ours = [TargetSpec::REF.cluster(3)];
        let mut p = plan(every, &[], &ours, true).unwrap();
        assert!(p.leave_out_missing_faults(&ours, &none).is_empty());
    }

    #[test]
    fn a_scenario_that_fills_a_disk_runs_where_no_apache_is_named() {
        let (all, _) = all();
        let every: Vec<&Scenario> = all.iter().collect();
        let kaas_only: Vec<&str> = every
            .iter()
            .filter(|s| s.kaas_only())
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(
            kaas_only,
            [
                "cluster-disk-full-end-txn-retried",
                "cluster-disk-full-every-broker-claims-coordinator",
                "cluster-disk-full-transaction-writes-refused",
                "cluster-disk-full-write-txn-markers"
            ]
        );
        let none = FaultCommands::default();
        for apache in ["apache:3", "apache-recorded:3", "apache@4.4:3"] {
            let specs = [
                TargetSpec::REF.cluster(3),
                TargetSpec::parse(apache).unwrap(),
            ];
            let mut p = plan(every.clone(), &[], &specs, true).unwrap();
            let left = p.leave_out_missing_faults(&specs, &none);
            let disk = |name: &str| (name.to_owned(), vec!["fill_disk", "free_disk"]);
            let expected: Vec<_> = kaas_only.iter().map(|name| disk(name)).collect();
            assert_eq!(left, expected, "{apache}");
        }
        // kaas-ref alone runs it; an external cluster, with the commands for both acts.
        let ours = [TargetSpec::REF.cluster(3)];
        let mut p = plan(every.clone(), &[], &ours, true).unwrap();
        assert!(p.leave_out_missing_faults(&ours, &none).is_empty());
        let addr = "127.0.0.1:9092".parse().unwrap();
        let external = [TargetSpec::external(addr).cluster(3)];
        let mut p = plan(every.clone(), &[], &external, true).unwrap();
        let disk = ["fill_disk=a", "free_disk=b"].map(String::from);
        let left = p.leave_out_missing_faults(&external, &FaultCommands::parse(&disk).unwrap());
        assert!(
            left.iter()
                .all(|(name, _)| !kaas_only.contains(&name.as_str())),
            "{left:?}"
        );
        // Why, as the run's targets give it: an external cluster with a command for every act
        // beside Apache leaves the disk scenarios out for Apache's disk alone; without them,
        // for both.
        let beside = [external[0], TargetSpec::parse("apache:3").unwrap()];
        let every_act: Vec<String> = BrokerAct::ALL.map(|a| format!("{}=true", a.key())).to_vec();
        let given = FaultCommands::parse(&every_act).unwrap();
        let mut p = plan(every.clone(), &[], &beside, true).unwrap();
        let left = p.leave_out_missing_faults(&beside, &given);
        assert_eq!(
            why_left_out(&beside, &given, &left),
            "Apache: its disk cannot be filled here"
        );
        let mut p = plan(every, &[], &beside, true).unwrap();
        let left = p.leave_out_missing_faults(&beside, &none);
        assert_eq!(
            why_left_out(&beside, &none, &left),
            "an external cluster: no --fault-cmd given for the act; Apache: its disk cannot be filled here"
        );
    }

    /// A kaas build's processes are killed, restarted, paused and resumed by kconform; its
    /// disk cannot be filled, and its markers held only where the binary is kaas-ref's (a
    /// stand-in script here says which it is when asked its version).
    #[test]
    fn a_build_does_what_its_processes_can() {
        use std::os::unix::fs::PermissionsExt;
        let (all, _) = all();
        let every: Vec<&Scenario> = all.iter().collect();
        let dir = tempfile::tempdir().unwrap();
        let none = FaultCommands::default();
        let mut left = Vec::new();
        for (name, says) in [("kaas", "kaas 0.0.0"), ("kaas-ref", "kaas-ref 0.1.0")] {
            let bin = dir.path().join(name);
            std::fs::write(&bin, format!("#!/bin/sh\necho '{says}'\n")).unwrap();
            std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
            let spec = TargetSpec::parse(&format!("build:3={}", bin.display())).unwrap();
            let mut p = plan(every.clone(), &[], &[spec], true).unwrap();
            let out = p.leave_out_missing_faults(&[spec], &none);
            assert!(p
                .chosen
                .iter()
                .any(|s| s.name == "cluster-broker-restarted-rejoins"));
            left.push((why_left_out(&[spec], &none, &out), out.len()));
        }
        assert_eq!(
            left[0].0,
            "a kaas build: no signal holds its markers; a build's processes: a release binary has no disk switch"
        );
        assert_eq!(
            left[1].0,
            "a build's processes: a release binary has no disk switch"
        );
        assert!(left[0].1 > left[1].1, "{left:?}");
    }

    #[test]
    fn every_chosen_scenario_has_the_targets_shape() {
        let (all, _) = all();
        let every: Vec<&Scenario> = all.iter().collect();
        let p = plan(every.clone(), &[], &[TargetSpec::REF.cluster(3)], true).unwrap();
        assert!(!p.chosen.is_empty());
        assert!(p.chosen.iter().all(|s| s.brokers == 3 && !s.secured()));
        let p = plan(every.clone(), &[], &[TargetSpec::REF.sasl()], true).unwrap();
        assert!(p.chosen.iter().all(|s| s.brokers == 1 && s.secured()));
        let e = plan(every, &[], &[TargetSpec::REF.cluster(7)], true).unwrap_err();
        assert_eq!(e.to_string(), "no scenario is written for 7 brokers");
    }

    #[test]
    fn shapes_list_each_shape_once() {
        let (all, _) = all();
        let s = shapes(&all.iter().collect::<Vec<_>>());
        assert!(s.contains(&(None, false)) && s.contains(&(Some(3), false)));
        let mut deduped = s.clone();
        deduped.dedup();
        assert_eq!(s, deduped);
    }

    #[test]
    fn exactly_refuses_another_count() {
        assert!(exactly(2, &[TargetSpec::REF, TargetSpec::RECORDED]).is_ok());
        let e = exactly(2, &[TargetSpec::REF]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "this command compares exactly 2 targets (1 given)"
        );
    }
}
