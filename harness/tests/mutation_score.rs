//! kconform's verdict, proved by mutation: between kconform and kaas-ref sits a proxy that
//! mutates the answers of one transaction API at one version, one generic mutation at a time
//! ([`kconform::mutation::mutants`]). Compared with Apache's recorded answers, every mutant must
//! give a full report that fails, with the mutated step shown as different and a diagnosis
//! that fits the mutation. The score (caught/total) is printed; a mutant that survives is a
//! harness bug.

use crate::util;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use kafka_protocol::messages::ApiKey;
use kconform::mutation::{Mutant, Mutation, Proxy, Scope};
use kconform::report::Report;
use kconform::run::{Outcome, Transcript};
use kconform::scenario::Scenario;
use kconform::targets::{Running, TargetSpec};

/// Each transaction API, its lowest and highest version in Apache 3.7, and the scenario that
/// sweeps them.
const SUBJECTS: [(ApiKey, i16, i16, &str); 6] = [
    (
        ApiKey::InitProducerId,
        0,
        4,
        "init-producer-id-version-sweep",
    ),
    // v4 is the broker-to-broker batched form, which neither kaas nor Apache answers a client.
    (
        ApiKey::AddPartitionsToTxn,
        0,
        3,
        "add-partitions-version-sweep",
    ),
    (ApiKey::AddOffsetsToTxn, 0, 3, "add-offsets-version-sweep"),
    (ApiKey::EndTxn, 0, 3, "end-txn-version-sweep-retries"),
    (
        ApiKey::WriteTxnMarkers,
        0,
        1,
        "write-txn-markers-version-sweep",
    ),
    (
        ApiKey::TxnOffsetCommit,
        0,
        3,
        "txn-offset-commit-version-sweep",
    ),
];

/// The deadline of every wait: short, so a stalled answer costs a second.
const DEADLINE: Duration = Duration::from_millis(1500);

async fn judge(scenario: &Scenario, proxy: &Proxy) -> (Report, Vec<Vec<Transcript>>) {
    util::beside_recorded(proxy.addr, &[scenario], 1, DEADLINE).await
}

/// Whether the report shows the mutant as it should: the run fails, and a step of the mutated
/// (API, version) is different with a diagnosis that fits the mutation. `Err` says why not.
fn caught(m: &Mutant, report: &Report, transcript: &Transcript) -> Result<String, String> {
    if report.passed() {
        return Err("the run passed".into());
    }
    let api = format!("{:?}", m.api);
    let mutated: Vec<_> = transcript
        .steps
        .iter()
        .filter(|s| s.api == api && s.version == Some(m.version))
        .collect();
    let differs = |label: &str| report.differences.iter().any(|d| d.row.step == label);
    let fits = |outcome: &Outcome| -> Option<String> {
        let text = match outcome {
            Outcome::Malformed(x) => x.problem.clone(),
            Outcome::NoAnswer(x) => x.clone(),
            Outcome::Response(v) => v.to_string(),
            _ => return None,
        };
        let ok = match (&m.mutation, outcome) {
            (Mutation::Insert(_), Outcome::Malformed(_)) => text.contains("stray byte"),
            (Mutation::DropLastByte | Mutation::Cut(_), Outcome::Malformed(_)) => {
                text.contains("needs")
            }
            (Mutation::Correlation, Outcome::Malformed(_)) => text.contains("correlation id"),
            (Mutation::Close, Outcome::NoAnswer(_)) => text.contains("closed the connection"),
            (Mutation::Stall, Outcome::NoAnswer(_)) => text.contains("no answer within"),
            (Mutation::ErrorCode(_, code), Outcome::Response(_)) => {
                text.contains(&format!("\"{code} "))
            }
            (Mutation::AddOne(_), Outcome::Response(_)) => true,
            _ => false,
        };
        ok.then_some(text)
    };
    for step in &mutated {
        if !differs(&step.step) {
            continue;
        }
        if let Some(text) = fits(&step.outcome) {
            let short: String = text.chars().take(110).collect();
            return Ok(format!("{}: {short}", step.step));
        }
    }
    Err(format!(
        "no step of {api} v{} is shown different with a fitting diagnosis; steps: {:?}",
        m.version,
        mutated
            .iter()
            .map(|s| (
                s.step.as_str(),
                serde_json::to_string(&s.outcome).unwrap_or_default()
            ))
            .collect::<Vec<_>>()
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_mutant_of_every_transaction_api_is_caught() {
    let broker = Running::start(&TargetSpec::REF)
        .await
        .expect("kaas-ref starts");
    let upstream = broker.addr;
    let scenarios = util::scenarios();
    let scenario = |name: &str| {
        scenarios
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no scenario {name}"))
            .clone()
    };

    // The proxy is transparent: unmutated, every subject scenario passes against Apache's
    // recorded answers, and each (API, version) is answered (the sample its mutants come from).
    let mut work = Vec::new();
    for (api, low, high, name) in SUBJECTS {
        let s = scenario(name);
        let proxy = Proxy::start("127.0.0.1:0".parse().unwrap(), upstream, Scope::None)
            .await
            .unwrap();
        let (report, _) = judge(&s, &proxy).await;
        assert!(
            report.passed(),
            "{name} through an unmutated proxy:\n{}",
            report.terminal(false)
        );
        let seen = proxy.seen.lock().unwrap().clone();
        for version in [low, high] {
            let sample = seen
                .get(&(api as i16, version))
                .unwrap_or_else(|| panic!("{name} never sent {api:?} v{version}"));
            let mutants = kconform::mutation::mutants(api, version, sample)
                .unwrap_or_else(|e| panic!("{api:?} v{version}: {e:?}"));
            work.extend(mutants.into_iter().map(|m| (s.clone(), m)));
        }
    }

    let total = work.len();
    let permits = Arc::new(tokio::sync::Semaphore::new(6));
    let mut set = tokio::task::JoinSet::new();
    for (s, m) in work {
        let permits = permits.clone();
        set.spawn(async move {
            let _permit = permits.acquire_owned().await;
            let proxy = Proxy::start(
                "127.0.0.1:0".parse().unwrap(),
                upstream,
                Scope::One(m.clone()),
            )
            .await
            .unwrap();
            let (report, all) = judge(&s, &proxy).await;
            let verdict = caught(&m, &report, &all[0][0]);
            (m, verdict)
        });
    }
    let mut results = Vec::new();
    while let Some(done) = set.join_next().await {
        results.push(done.expect("a mutant's run panicked"));
    }
    results.sort_by_key(|(m, _)| m.to_string());
    let survivors: Vec<String> = results
        .iter()
        .filter_map(|(m, v)| v.as_ref().err().map(|why| format!("{m}: {why}")))
        .collect();
    for (m, v) in &results {
        if let Ok(how) = v {
            println!("caught {m} — {how}");
        }
    }
    let score = format!("mutation score: {}/{total} caught", total - survivors.len());
    println!("{score}");
    // For ci/test.sh's closing lines: the score of this run.
    let _ = std::fs::write(
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("mutation-score.txt"),
        format!("{score} (6 transaction APIs, lowest and highest versions)\n"),
    );
    broker.stop().await;
    assert!(
        survivors.is_empty(),
        "{score}; survivors:\n{}",
        survivors.join("\n")
    );
}

/// A report's differences as text, one line each: what must not change under an equivalent
/// mutant.
fn difference_lines(report: &Report) -> Vec<String> {
    let mut lines: Vec<String> = report
        .differences
        .iter()
        .map(|d| {
            format!(
                "{} {} {}: {} / {} ({})",
                d.row.scenario,
                d.row.step,
                d.row.path,
                d.row.left,
                d.row.right,
                d.documented_by.as_deref().unwrap_or("UNDOCUMENTED")
            )
        })
        .collect();
    lines.sort();
    lines
}

/// Mutants that change bytes but not meaning ([`kconform::wire::frame::Equivalent`]: every tagged
/// field written at its default, an unknown tag in every section, every varint in five
/// bytes), applied to every answer kaas-ref gives the whole one-broker suite, ApiVersions'
/// included: none may change a verdict. The run through each passes with the same differences
/// as through a transparent proxy, and each mutant rewrote answers (counted from the answers
/// the proxy relayed). The score (unchanged/total) is printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_equivalent_mutant_changes_a_verdict() {
    let broker = Running::start(&TargetSpec::REF)
        .await
        .expect("kaas-ref starts");
    let all = util::scenarios();
    let chosen = util::one_broker(&all);
    let suite = |scope: Scope| {
        let chosen = chosen.clone();
        async move {
            let proxy = Proxy::start("127.0.0.1:0".parse().unwrap(), broker.addr, scope)
                .await
                .unwrap();
            let (report, _) =
                util::beside_recorded(proxy.addr, &chosen, 4, Duration::from_secs(10)).await;
            let answers = proxy.answers.lock().unwrap().kept.clone();
            (report, answers)
        }
    };
    let (plain, answers) = suite(Scope::None).await;
    assert!(
        plain.passed(),
        "the suite through a transparent proxy:\n{}",
        plain.terminal(false)
    );
    let expected = difference_lines(&plain);
    let mut unchanged = 0;
    let mut changed = Vec::new();
    for how in kconform::wire::frame::Equivalent::ALL {
        let rewritten = answers
            .iter()
            .filter(|e| {
                ApiKey::try_from(e.api).is_ok_and(|api| {
                    kconform::wire::frame::rewrite(api, e.version, &e.answer, how)
                        .is_some_and(|again| again != e.answer)
                })
            })
            .count();
        let (report, _) = suite(Scope::AllBut(Mutation::Equivalent(how))).await;
        let lines = difference_lines(&report);
        let same = report.passed() && lines == expected && rewritten > 0;
        println!(
            "equivalent mutant {}: {rewritten} of {} distinct answers rewritten; {} ({} differences, {} before)",
            how.name(),
            answers.len(),
            if same { "verdict unchanged" } else { "VERDICT CHANGED" },
            lines.len(),
            expected.len()
        );
        match same {
            true => unchanged += 1,
            false => changed.push(format!(
                "{}: rewrote {rewritten}; passed {}; differences now:\n{}\n{}",
                how.name(),
                report.passed(),
                lines.join("\n"),
                report.terminal(false)
            )),
        }
    }
    let total = kconform::wire::frame::Equivalent::ALL.len();
    let score = format!("equivalent-mutant score: {unchanged}/{total} unchanged");
    println!("{score}");
    let _ = std::fs::write(
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("equivalent-score.txt"),
        format!("{score} (every answer of the one-broker suite on kaas-ref)\n"),
    );
    broker.stop().await;
    assert!(changed.is_empty(), "{score}:\n{}", changed.join("\n\n"));
}
