//! Which targets a command runs on: those the user named, each once, or kaas-ref beside Apache
//! of the size and security asked for, live where Apache can run here and its recorded answers
//! where it cannot. Every command that takes `--target` chooses the same way; the policy lives
//! here, not in the binary, so that tests reach it.

use crate::targets::apache::Backend;
use crate::targets::{Kind, TargetError, TargetSpec};

/// The targets chosen, and why Apache's recorded answers stand in for a live Apache when they
/// do (the caller says so: the report then names recorded answers as the judge).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The targets, the one under test first.
    pub specs: Vec<TargetSpec>,
    /// Why no live Apache runs here, when the defaults fell back to its recorded answers.
    pub recorded_because: Option<String>,
}

/// Why the targets asked for cannot be run: each a one-line refusal naming the mend.
#[derive(Debug, thiserror::Error)]
pub enum ChoiceError {
    /// `--brokers N` beside `--target`: the first picks the targets itself.
    #[error("--brokers {0} picks the targets itself: give it without --target, or name ref:{0} and apache:{0} as targets")]
    BrokersBesideTargets(u64),
    /// `--sasl` beside `--target`.
    #[error("--sasl picks the targets itself: give it without --target, or name ref+sasl and apache+sasl as targets")]
    SaslBesideTargets,
    /// A target named twice: a run compares different targets.
    #[error("--target {0} is given twice: a run compares different targets, each once")]
    Twice(String),
    /// A target that does not parse.
    #[error(transparent)]
    Target(#[from] TargetError),
}

/// The default pair's three candidates for `brokers` and `sasl`: kaas-ref of that shape, a live
/// Apache of that shape launched by `backend`, and Apache's recorded answers of that shape.
pub fn defaults(
    brokers: Option<u64>,
    sasl: bool,
    backend: Backend,
) -> (TargetSpec, TargetSpec, TargetSpec) {
    let shape = |one: TargetSpec| {
        let spec = match brokers.map(|n| n as usize) {
            Some(n) => one.cluster(n),
            None => one,
        };
        match sasl {
            true => spec.sasl(),
            false => spec,
        }
    };
    (
        shape(TargetSpec::REF),
        shape(TargetSpec::apache(backend)),
        shape(TargetSpec::RECORDED),
    )
}

/// Whether `live` can run here: a cluster runs as JVMs whatever the backend.
fn live_usable(live: &TargetSpec, backend: Backend) -> Result<(), String> {
    let release = live.release().unwrap_or_default();
    match live.brokers {
        1 => backend.usable(&release),
        _ => Backend::Jvm.usable(&release),
    }
    .map_err(|e| e.to_string())
}

/// The targets `named` (each once, Apache launched by `backend`), or with none named the
/// default pair of the shape `brokers` × `sasl`: kaas-ref and a live Apache when one can run
/// here, else kaas-ref and Apache's recorded answers, with the reason.
pub fn choose(
    named: &[String],
    backend: Backend,
    brokers: Option<u64>,
    sasl: bool,
) -> Result<Choice, ChoiceError> {
    if named.is_empty() {
        let (ours, live, recorded) = defaults(brokers, sasl, backend);
        return Ok(match live_usable(&live, backend) {
            Ok(()) => Choice {
                specs: vec![ours, live],
                recorded_because: None,
            },
            Err(why) => Choice {
                specs: vec![ours, recorded],
                recorded_because: Some(why),
            },
        });
    }
    if let Some(n) = brokers {
        return Err(ChoiceError::BrokersBesideTargets(n));
    }
    if sasl {
        return Err(ChoiceError::SaslBesideTargets);
    }
    Ok(Choice {
        specs: parse_each_once(named, backend)?,
        recorded_because: None,
    })
}

/// What a target is judged against (`kconform certify --against`): the Apache `named`
/// (launched by `backend`), or with none named a live Apache 3.7.2 where one can run here, else
/// its recorded answers, with the reason.
pub fn against(
    named: Option<&str>,
    backend: Backend,
) -> Result<(TargetSpec, Option<String>), ChoiceError> {
    if let Some(name) = named {
        let spec = parse_each_once(&[name.to_owned()], backend)?;
        return Ok((spec[0], None));
    }
    let (_, live, recorded) = defaults(None, false, backend);
    Ok(match live_usable(&live, backend) {
        Ok(()) => (live, None),
        Err(why) => (recorded, Some(why)),
    })
}

/// `named` parsed, Apache launched by `backend`, refusing a target named twice.
fn parse_each_once(named: &[String], backend: Backend) -> Result<Vec<TargetSpec>, ChoiceError> {
    let mut specs: Vec<TargetSpec> = Vec::with_capacity(named.len());
    for name in named {
        let mut spec = TargetSpec::parse(name)?;
        if spec.is_apache() && spec.brokers == 1 {
            if let Kind::Apache(_, release) = spec.kind {
                spec.kind = Kind::Apache(backend, release);
            }
        }
        if specs.iter().any(|earlier| earlier.name() == spec.name()) {
            return Err(ChoiceError::Twice(spec.name()));
        }
        specs.push(spec);
    }
    Ok(specs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn named_targets_take_the_backend_and_keep_their_order() {
        let c = choose(&named(&["apache", "ref"]), Backend::Jvm, None, false).unwrap();
        assert_eq!(c.specs, [TargetSpec::apache(Backend::Jvm), TargetSpec::REF]);
        assert_eq!(c.recorded_because, None);
    }

    #[test]
    fn a_target_named_twice_is_refused_by_its_name() {
        let e = choose(
            &named(&["ref", "apache", "ref"]),
            Backend::Auto,
            None,
            false,
        );
        assert_eq!(
            e.unwrap_err().to_string(),
            "--target ref is given twice: a run compares different targets, each once"
        );
    }

    #[test]
    fn shape_flags_beside_named_targets_are_refused_with_the_mend() {
        let e = choose(&named(&["ref"]), Backend::Auto, Some(3), false).unwrap_err();
        assert!(e.to_string().contains("name ref:3 and apache:3"), "{e}");
        let e = choose(&named(&["ref"]), Backend::Auto, None, true).unwrap_err();
        assert!(
            e.to_string().contains("name ref+sasl and apache+sasl"),
            "{e}"
        );
        let e = choose(&named(&["nonsense"]), Backend::Auto, None, false).unwrap_err();
        assert!(
            e.to_string().starts_with("unknown target 'nonsense'"),
            "{e}"
        );
    }

    #[test]
    fn the_default_pair_has_the_shape_asked_for() {
        let b = Backend::Container;
        assert_eq!(
            defaults(None, false, b),
            (TargetSpec::REF, TargetSpec::apache(b), TargetSpec::RECORDED)
        );
        assert_eq!(
            defaults(Some(3), true, b),
            (
                TargetSpec::REF.cluster(3).sasl(),
                TargetSpec::apache(Backend::Jvm).cluster(3).sasl(),
                TargetSpec::RECORDED.cluster(3).sasl()
            )
        );
        let (ours, live, recorded) = defaults(Some(5), false, b);
        for spec in [&ours, &live, &recorded] {
            assert_eq!(spec.brokers, 5);
            assert!(!spec.secured);
        }
        assert!(recorded.is_recorded() && !live.is_recorded());
    }

    #[test]
    fn with_no_target_named_the_pair_is_ref_and_an_apache_live_or_recorded() {
        let c = choose(&[], Backend::Jvm, None, false).unwrap();
        assert_eq!(c.specs[0], TargetSpec::REF);
        match &c.recorded_because {
            None => assert_eq!(c.specs[1], TargetSpec::apache(Backend::Jvm)),
            Some(why) => {
                assert_eq!(c.specs[1], TargetSpec::RECORDED);
                assert!(!why.is_empty());
            }
        }
    }
}
