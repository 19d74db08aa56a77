//! `scenarios/spec-lines.toml` maps every "Handling", "Deviations" and "Verified by" line of
//! the kaas spec to the scenarios that show it, or says why one broker cannot. This keeps the
//! map honest: each quote is still in the spec, each scenario exists, each line has scenarios
//! or a reason, and the repository's copy of the spec is the current one.

use std::collections::BTreeSet;
use std::path::Path;

use kconform::scenario::Scenario;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    section: String,
    text: String,
    #[serde(default)]
    scenarios: Vec<String>,
    not_shown: Option<String>,
    #[allow(dead_code)]
    note: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Lines {
    line: Vec<Line>,
}

fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn every_spec_line_is_shown_by_a_scenario_or_says_why_not() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let spec = words(&std::fs::read_to_string(root.join("docs/kaas-transaction-apis.md")).unwrap());
    let lines: Lines =
        toml::from_str(&std::fs::read_to_string(root.join("scenarios/spec-lines.toml")).unwrap())
            .unwrap();
    let scenarios: BTreeSet<String> = Scenario::load_dir(&root.join("scenarios"))
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    let mut shown = 0;
    for l in &lines.line {
        assert!(
            spec.contains(&words(&l.text)),
            "{}: no longer in the spec: {:?}",
            l.section,
            l.text
        );
        for s in &l.scenarios {
            assert!(scenarios.contains(s), "{}: no scenario '{s}'", l.section);
        }
        assert!(
            !l.scenarios.is_empty() || l.not_shown.is_some(),
            "{}: {:?} has neither scenarios nor a reason",
            l.section,
            l.text
        );
        // Clusters and an authorizer run here: no line waits for a second broker or for ACLs.
        if let Some(why) = &l.not_shown {
            for phrase in ["authorizer", "ACLs"] {
                assert!(
                    !why.contains(phrase),
                    "{}: {:?} is not shown because it {why:?}; security scenarios (ref+sasl, apache+sasl) can show it",
                    l.section,
                    l.text
                );
            }
            for phrase in [
                "second broker",
                "peer brokers",
                "one broker leads",
                "different brokers",
            ] {
                assert!(
                    !why.contains(phrase),
                    "{}: {:?} is not shown because it {why:?}; cluster scenarios (brokers = 3) can show it",
                    l.section,
                    l.text
                );
            }
        }
        shown += usize::from(!l.scenarios.is_empty());
    }
    // Every section of every API is represented.
    for api in kconform::api::coverage::TRANSACTION_APIS {
        for part in ["Handling", "Deviations", "Verified by"] {
            let section = format!("{api} — {part}");
            assert!(
                lines.line.iter().any(|l| l.section == section),
                "no line of {section}"
            );
        }
    }
    println!(
        "{} spec lines: {shown} shown by scenarios, {} not shown on the wire (each says why)",
        lines.line.len(),
        lines.line.len() - shown
    );
}

#[test]
fn the_repository_copy_of_the_spec_is_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let upstream = root.join("../shared/spec/kaas-transaction-apis.md");
    let Ok(current) = std::fs::read_to_string(&upstream) else {
        println!(
            "SKIPPED: {} is not on this machine; docs/kaas-transaction-apis.md is the copy in force",
            upstream.display()
        );
        return;
    };
    let copy = std::fs::read_to_string(root.join("docs/kaas-transaction-apis.md")).unwrap();
    assert!(
        copy == current,
        "the kaas spec changed: copy it to docs/ and review scenarios/spec-lines.toml"
    );
}

/// Each ledger entry names the brokers its scenarios need, so that `kconform fuzz`, which
/// judges a sequence by the values an entry documents, takes no cluster's gap for a single
/// broker's answer.
#[test]
fn each_deviation_needs_the_brokers_its_scenarios_need() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let ledger =
        kconform::compare::ledger::Ledger::load(&root.join("scenarios/deviations.toml")).unwrap();
    let scenarios = Scenario::load_dir(&root.join("scenarios")).unwrap();
    let brokers = |name: &str| scenarios.iter().find(|s| s.name == name).map(|s| s.brokers);
    for d in &ledger.deviations {
        let fewest = d.scenarios.iter().filter_map(|s| brokers(s)).min();
        assert_eq!(
            Some(d.brokers),
            fewest,
            "deviation '{}' says brokers = {}; its scenarios {:?} need {fewest:?}",
            d.id,
            d.brokers,
            d.scenarios
        );
    }
}
