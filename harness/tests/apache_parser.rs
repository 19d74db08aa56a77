//! Apache's parser decides what is malformed. kconform's frame check ([`kconform::frame::accept`])
//! and Apache's own parser (kafka-clients 3.7.2, [`kconform::apache::parser`]) are given the same
//! frames: every distinct answer a live Apache gave the whole one-broker suite, each written
//! again in every equivalent encoding ([`kconform::frame::Equivalent`]), and thousands of
//! structure-aware mutations per API and version, from the wire fuzzer's mutators (lengths
//! and counts null, negative, one off, huge or in long varints; unknown tags; tag counts past
//! the end; integers at their edges; bytes flipped, cut, added, removed, repeated). They must
//! agree on every frame, accepted or refused, and where both accept, on the values: Apache's
//! writer encoding what Apache read gives the bytes kafka-protocol's encoder gives for what
//! kconform read. The figures (frames compared per API and version, disagreements) are
//! printed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use kafka_protocol::messages::ApiKey;
use kconform::apache::parser::{ApacheParser, Verdict};
use kconform::data::Source;
use kconform::frame::{self, Equivalent};
use kconform::fuzz::model::Rng;
use kconform::fuzz::wire::mutate::mutate_along;
use kconform::fuzz::wire::shape::Parsed;
use kconform::mutation::{Exchange, Proxy, Scope};
use kconform::scenario::Scenario;
use kconform::session::Session;
use kconform::target::{Running, TargetSpec};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Mutated frames per (API, version).
const MUTATIONS_PER_VERSION: usize = 2_000;

/// What the two parsers made of the frames of one (API, version).
#[derive(Default)]
struct Tally {
    compared: usize,
    accepted: usize,
    equivalents: usize,
    disagreements: Vec<String>,
}

/// The fields of an answer, for the structure-aware mutators (`None` when it does not read).
fn shape(api: ApiKey, version: i16, frame: &[u8]) -> Option<Parsed> {
    let spans = frame::spans(api, version, frame).ok()?;
    let name = kconform::errors::api_name(api as i16);
    let flexible = kconform::schema::response(&name)?
        .flexible
        .contains(version);
    Some(Parsed {
        api,
        version,
        flexible,
        end: frame.len(),
        spans,
    })
}

/// Both verdicts on one frame; a line for each way they differ.
fn compare(
    parser: &mut ApacheParser,
    e: &Exchange,
    frame: &[u8],
    what: &str,
) -> (bool, Option<String>) {
    let api = ApiKey::try_from(e.api).expect("a known API");
    let ours = frame::accept(api, e.version, e.correlation, frame);
    let theirs = parser
        .response(e.api, e.version, e.correlation, frame)
        .expect("Apache's parser answers");
    let at = || {
        format!(
            "{api:?} v{} ({what}; frame {})",
            e.version,
            frame::hex_compact(frame)
        )
    };
    match (&ours, &theirs) {
        (Ok(decoded), Verdict::Accepted(apache_body)) => {
            // The KIP-511 fallback reads a v0 body that Apache writes again at the version
            // asked: no value comparison there.
            if decoded.notes.iter().any(|n| n.what.contains("KIP-511")) {
                return (true, None);
            }
            match frame::encode_body(&decoded.response, e.version) {
                Ok(ours) if &ours == apache_body => (true, None),
                Ok(ours) => (
                    true,
                    Some(format!(
                        "{}: values differ: kconform's read encodes as {}, Apache's as {}",
                        at(),
                        frame::hex_compact(&ours),
                        frame::hex_compact(apache_body)
                    )),
                ),
                Err(why) => (
                    true,
                    Some(format!(
                        "{}: kafka-protocol cannot encode what kconform read: {why}",
                        at()
                    )),
                ),
            }
        }
        (Err(_), Verdict::Refused(_)) => (false, None),
        (Ok(_), Verdict::Refused(why)) => (
            true,
            Some(format!("{}: kconform accepts, Apache refuses: {why}", at())),
        ),
        (Err(why), Verdict::Accepted(_)) => (
            false,
            Some(format!("{}: Apache accepts, kconform refuses: {why}", at())),
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kconform_and_apaches_parser_agree_on_every_answer_and_its_mutants() {
    if let Err(why) = kconform::apache::available() {
        println!("skipped: no live Apache and no Apache parser here ({why})");
        return;
    }
    let apache = Running::start(&TargetSpec::Apache(kconform::apache::Backend::Jvm))
        .await
        .expect("Apache starts");
    let proxy = Proxy::start("127.0.0.1:0".parse().unwrap(), apache.addr, Scope::None)
        .await
        .unwrap();
    let all = Scenario::load_dir(&root().join("scenarios")).expect("scenarios load");
    let chosen: Vec<&Scenario> =
        kconform::session::sized(&all.iter().collect::<Vec<_>>(), 1, false)
            .into_iter()
            .filter(|s| !s.slow)
            .collect();
    let (scenarios, snapshots) = (
        Source::Dir(root().join("scenarios")),
        Source::Dir(root().join("snapshots")),
    );
    let session = Session {
        scenarios: &scenarios,
        snapshots: &snapshots,
        deadline: Duration::from_secs(10),
        provisioned_topics: false,
        strict_encoding: false,
    };
    session
        .run(
            &chosen,
            &[TargetSpec::External(proxy.addr), TargetSpec::Recorded],
            4,
            std::sync::Arc::new(kconform::session::Quiet),
        )
        .await
        .expect("the suite runs against Apache");
    let corpus: Vec<Exchange> = proxy.answers.lock().unwrap().kept.clone();
    drop(proxy);
    apache.stop().await;
    assert!(corpus.len() > 200, "only {} answers recorded", corpus.len());

    let mut parser = ApacheParser::start().expect("Apache's parser starts");
    let mut tallies: BTreeMap<(String, i16), Tally> = BTreeMap::new();
    let mut by_version: BTreeMap<(i16, i16), Vec<&Exchange>> = BTreeMap::new();
    for e in &corpus {
        by_version.entry((e.api, e.version)).or_default().push(e);
    }
    let mut rng = Rng::new(20261202);
    for ((key, version), answers) in &by_version {
        let Ok(api) = ApiKey::try_from(*key) else {
            continue;
        };
        let tally = tallies.entry((format!("{api:?}"), *version)).or_default();
        let mut judge = |frame: &[u8], e: &Exchange, what: &str, tally: &mut Tally| {
            let (accepted, disagreement) = compare(&mut parser, e, frame, what);
            tally.compared += 1;
            tally.accepted += usize::from(accepted);
            tally.disagreements.extend(disagreement);
            accepted
        };
        for e in answers {
            // A live Apache's own answer is well-formed by both.
            assert!(
                judge(&e.answer, e, "as Apache sent it", tally),
                "{api:?} v{version}: Apache's own answer refused"
            );
            for how in Equivalent::ALL {
                if let Some(again) = frame::rewrite(api, *version, &e.answer, how) {
                    if again != e.answer {
                        tally.equivalents += 1;
                        let accepted = judge(&again, e, how.name(), tally);
                        if !accepted {
                            tally.disagreements.push(format!(
                                "{api:?} v{version}: the {} form of an answer is refused",
                                how.name()
                            ));
                        }
                    }
                }
            }
        }
        for i in 0..MUTATIONS_PER_VERSION {
            let e = answers[i % answers.len()];
            let mut frame = e.answer.clone();
            let done = mutate_along(&mut frame, &mut rng, |f| shape(api, *version, f));
            judge(&frame, e, &done.join(", "), tally);
        }
    }

    let mut total = (0, 0, 0);
    println!(
        "{:<22} {:>3} {:>9} {:>9} {:>12} {:>14}",
        "API", "v", "compared", "accepted", "equivalents", "disagreements"
    );
    for ((api, version), t) in &tallies {
        println!(
            "{api:<22} {version:>3} {:>9} {:>9} {:>12} {:>14}",
            t.compared,
            t.accepted,
            t.equivalents,
            t.disagreements.len()
        );
        total.0 += t.compared;
        total.1 += t.accepted;
        total.2 += t.disagreements.len();
    }
    println!(
        "Apache's parser and kconform: {} frames compared ({} accepted by both, {} answers from a live Apache), {} disagreements",
        total.0, total.1, corpus.len(), total.2
    );
    let _ = std::fs::write(
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("apache-parser-agreement.txt"),
        format!(
            "Apache's parser agreement: {} frames, {} disagreements\n",
            total.0, total.2
        ),
    );
    let lines: Vec<&String> = tallies.values().flat_map(|t| &t.disagreements).collect();
    assert!(
        lines.is_empty(),
        "{} disagreements, the first 20:\n{}",
        lines.len(),
        lines
            .iter()
            .take(20)
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}
