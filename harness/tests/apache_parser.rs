//! Apache's parser decides what is malformed. kconform's frame check ([`kconform::wire::frame::accept`])
//! and Apache's own parser (kafka-clients 3.7.2, [`kconform::targets::apache::parser`]) are given the same
//! frames: every distinct answer a live Apache gave the whole one-broker suite, each written
//! again in every equivalent encoding ([`kconform::wire::frame::Equivalent`]), and thousands of
//! structure-aware mutations per API and version, from the wire fuzzer's mutators (lengths
//! and counts null, negative, one off, huge or in long varints; unknown tags; tag counts past
//! the end; integers at their edges; bytes flipped, cut, added, removed, repeated). They must
//! agree on every frame, accepted or refused, and where both accept, on the values: Apache's
//! writer encoding what Apache read gives the bytes kafka-protocol's encoder gives for what
//! kconform read. The figures (frames compared per API and version, disagreements) are
//! printed.

use crate::util;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use kafka_protocol::messages::ApiKey;
use kconform::fuzz::model::Rng;
use kconform::fuzz::wire::mutate::mutate_along;
use kconform::fuzz::wire::shape::{self, Parsed};
use kconform::mutation::{Exchange, Proxy, Scope};
use kconform::targets::apache::parser::{ApacheParser, Verdict};
use kconform::targets::{Running, TargetSpec};
use kconform::wire::frame::{self, Equivalent, Parser};

/// Mutated frames per (API, version).
const MUTATIONS_PER_VERSION: usize = 2_000;

/// What the two parsers made of the frames of one (API, version).
#[derive(Default)]
struct Tally {
    compared: usize,
    accepted: usize,
    equivalents: usize,
    proxy_mutants: usize,
    disagreements: Vec<String>,
}

/// The fields of an answer, for the structure-aware mutators (`None` when it does not read).
fn shape(api: ApiKey, version: i16, frame: &[u8]) -> Option<Parsed> {
    let spans = frame::spans(api, version, frame).ok()?;
    let name = kconform::wire::error_codes::api_name(api as i16);
    let flexible = kconform::wire::schema::response(&name)?
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
pub(crate) fn compare(
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
            match frame::encode_answer(decoded, api, e.version) {
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
    if let Err(why) = kconform::targets::apache::available() {
        println!("skipped: no live Apache and no Apache parser here ({why})");
        return;
    }
    let apache = Running::start(&TargetSpec::apache(kconform::targets::apache::Backend::Jvm))
        .await
        .expect("Apache starts");
    let proxy = Proxy::start("127.0.0.1:0".parse().unwrap(), apache.addr, Scope::None)
        .await
        .unwrap();
    let all = util::scenarios();
    let chosen = util::one_broker(&all);
    util::beside_recorded(proxy.addr, &chosen, 4, Duration::from_secs(10)).await;
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
        // Every mutant `kconform proxy` makes of the first answers (a byte inserted at each
        // field boundary, the last byte dropped, a cut, error codes replaced, integers plus
        // one, another correlation id).
        for e in answers.iter().take(3) {
            let Ok(mutants) = kconform::mutation::mutants(api, *version, &e.answer) else {
                continue;
            };
            for m in mutants {
                if let kconform::mutation::Answer::Send(frame) =
                    kconform::mutation::apply(&m.mutation, api, *version, &e.answer)
                {
                    tally.proxy_mutants += 1;
                    judge(&frame, e, &m.mutation.to_string(), tally);
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
        "{:<22} {:>3} {:>9} {:>9} {:>12} {:>14} {:>14}",
        "API", "v", "compared", "accepted", "equivalents", "proxy mutants", "disagreements"
    );
    for ((api, version), t) in &tallies {
        println!(
            "{api:<22} {version:>3} {:>9} {:>9} {:>12} {:>14} {:>14}",
            t.compared,
            t.accepted,
            t.equivalents,
            t.proxy_mutants,
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
    keep_figure(
        "apache-parser-agreement",
        &format!(
            "Apache's parser and kconform: {} answer frames compared, {} disagreements",
            total.0, total.2
        ),
    );
    assert_agreement(&tallies);
}

/// A nullable structure follows a marker byte (negative: null), as Apache's generated code
/// writes and reads it: ConsumerGroupHeartbeat v0's `assignment`, as Apache 4.4.0 answered a
/// member's join (kconform once called it malformed, a byte stray). The answer as sent, with
/// the assignment null, with a marker of 0 (read as present), without its marker, and 2,000
/// mutations of it: kconform and Apache's parser agree on each.
#[test]
fn a_nullable_structure_reads_as_apaches_parser_reads_it() {
    if let Err(why) = kconform::targets::apache::available() {
        println!("skipped: no Apache parser here ({why})");
        return;
    }
    let hex = "0000000c00000000000000001735305659305930 5f5241324e4f746f36564f4f4b6d670000000200 001388010276450da3f30b4838b912801745a7c9 60030000000000000001000000";
    let sent: Vec<u8> = (0..hex.replace(' ', "").len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex.replace(' ', "")[i..i + 2], 16).unwrap())
        .collect();
    let marker = 43; // after the header, throttle, error, message, member id, epoch, interval
    assert_eq!(sent[marker], 1);
    let with = |marker_byte: Option<u8>, keep_struct: bool| {
        let mut f = sent[..marker].to_vec();
        f.extend(marker_byte);
        if keep_struct {
            f.extend(&sent[marker + 1..sent.len() - 1]);
        }
        f.push(0); // the answer's own tagged fields
        f
    };
    let e = Exchange {
        api: ApiKey::ConsumerGroupHeartbeat as i16,
        version: 0,
        correlation: 12,
        answer: sent.clone(),
    };
    let mut parser = ApacheParser::start().expect("Apache's parser starts");
    let mut disagreements = Vec::new();
    for (what, frame, accepted) in [
        ("as sent", sent.clone(), true),
        ("assignment null", with(Some(0xff), false), true),
        ("marker 0", with(Some(0), true), true),
        ("no marker", with(None, true), false),
    ] {
        let (ours, disagreement) = compare(&mut parser, &e, &frame, what);
        assert_eq!(ours, accepted, "{what}: {disagreement:?}");
        disagreements.extend(disagreement);
    }
    let mut rng = Rng::new(20261204);
    for _ in 0..2_000 {
        let mut frame = sent.clone();
        let done = mutate_along(&mut frame, &mut rng, |f| {
            shape(ApiKey::ConsumerGroupHeartbeat, 0, f)
        });
        disagreements.extend(compare(&mut parser, &e, &frame, &done.join(", ")).1);
    }
    assert!(disagreements.is_empty(), "{disagreements:#?}");
}

/// Mutated request frames per (API, version).
const REQUEST_MUTATIONS_PER_VERSION: usize = 3_000;

/// The same definition for requests: a request frame Apache's broker reads
/// (`RequestHeader.parse`, then `AbstractRequest.parseRequest`; trailing bytes ignored, as the
/// broker ignores them) is one kaas-ref's own codec reads, and the other way round; and it is
/// one the wire fuzzer's judge calls well-formed ([`kconform::fuzz::wire::shape::parse`], behind
/// its "closed on a well-formed request" finding). The frames: the wire fuzzer's seeds of the
/// six transaction APIs at every version Apache 3.7 has, and their mutations. Where Apache and
/// kaas-ref both read a frame, they read the same values: kaas-ref's encoder writes the
/// request it read as Apache's writer writes the one Apache read.
#[test]
fn kaas_ref_and_the_wire_judge_read_requests_as_apaches_broker_does() {
    if let Err(why) = kconform::targets::apache::available() {
        println!("skipped: no Apache parser here ({why})");
        return;
    }
    let mut parser = ApacheParser::start().expect("Apache's parser starts");
    // The parser is 3.7.2's: the versions 3.7 has (the fuzzer draws 4.4's too).
    let tallies = judge_requests(&mut parser, Parser::default(), 424242, |api| {
        (0, highest_in_3_7(api))
    });
    print_request_tallies(
        &tallies,
        "request-agreement",
        "Apache's broker, kaas-ref and the wire judge",
    );
    assert_agreement(&tallies);
}

/// The same at the versions only a later release has (3.8's v4 and v5, 4.0's EndTxn v5 and
/// TxnOffsetCommit v5, 4.2's WriteTxnMarkers v2, 4.4's TxnOffsetCommit v6 and InitProducerId
/// v6), which the wire fuzzer draws on a 4.x target: Apache 4.4.0's broker parser decides
/// there. kaas-ref serves none of them, so only the wire judge is compared.
#[test]
fn the_wire_judge_reads_later_versions_as_apache_4_4s_broker_does() {
    if let Err(why) = kconform::targets::apache::available() {
        println!("skipped: no Apache parser here ({why})");
        return;
    }
    let release = kconform::targets::apache::Release::parse("4.4.0").expect("a release");
    let mut parser = match ApacheParser::start_at(&release) {
        Ok(parser) => parser,
        Err(why) => {
            panic!("Apache 4.4.0's parser starts (its jars fetched from Maven Central): {why}")
        }
    };
    let tallies = judge_requests(&mut parser, release.parser(), 440440, |api| {
        (highest_in_3_7(api) + 1, shape::highest_version(api))
    });
    assert!(
        tallies.len() >= 9,
        "the versions past 3.7's: {:?}",
        tallies.keys().collect::<Vec<_>>()
    );
    print_request_tallies(
        &tallies,
        "request-agreement-4.4",
        "Apache 4.4.0's broker and the wire judge, at the versions past 3.7's",
    );
    assert_agreement(&tallies);
}

/// The highest version of `api` Apache 3.7.2 has.
fn highest_in_3_7(api: ApiKey) -> i16 {
    let name = kconform::wire::error_codes::api_name(api as i16);
    kconform::wire::schema::request(&name).map_or(-1, |m| m.valid.highest())
}

/// Seeds of the six transaction APIs at the versions `versions` gives for each (lowest,
/// highest), and their mutations, judged by `parser` (Apache's broker), the wire judge with
/// `rules` (that release's) and, where it serves the version a frame names, kaas-ref's codec.
fn judge_requests(
    parser: &mut ApacheParser,
    rules: Parser,
    seed: u64,
    versions: impl Fn(ApiKey) -> (i16, i16),
) -> BTreeMap<(String, i16), Tally> {
    use kconform::fuzz::wire::{mutate, seeds};
    use reference_broker::codec;
    let mut rng = Rng::new(seed);
    let mut tallies: BTreeMap<(String, i16), Tally> = BTreeMap::new();
    for api in seeds::APIS {
        let (lowest, highest) = versions(api);
        assert!(highest <= shape::highest_version(api));
        for version in lowest..=highest {
            let tally = tallies.entry((format!("{api:?}"), version)).or_default();
            for i in 0..REQUEST_MUTATIONS_PER_VERSION {
                let seed = seeds::draw(api, version, i as i32, &mut rng).expect("a seed");
                let mut frame = seed.frame.clone();
                let done = match i % 10 {
                    0 => Vec::new(),
                    _ => mutate::mutate(&mut frame, &mut rng),
                };
                let apache = parser.request(&frame).expect("Apache's parser answers");
                let named = shape::header(&frame);
                let at = || {
                    format!(
                        "{api:?} v{version} ({}; frame {})",
                        done.join(", "),
                        frame::hex_compact(&frame)
                    )
                };
                tally.compared += 1;
                let accepted = matches!(apache, Verdict::Accepted(_));
                tally.accepted += usize::from(accepted);
                // The wire judge, on frames naming a transaction API.
                // A version outside the range judged (a mutated header) is one the wire judge
                // knows from another release's definitions and this parser may refuse as a
                // version: not compared.
                let transaction = named.is_some_and(|h| {
                    let Some(api) = seeds::APIS.iter().find(|a| **a as i16 == h.key) else {
                        return false;
                    };
                    let (lowest, highest) = versions(*api);
                    (lowest..=highest).contains(&h.version)
                });
                let judged = shape::parse_as(&frame, rules);
                if transaction && judged.is_ok() != accepted {
                    tally.disagreements.push(format!(
                        "{}: the wire judge says {}, Apache's broker {}",
                        at(),
                        match &judged {
                            Ok(_) => "well-formed".to_owned(),
                            Err(why) => format!("malformed ({why})"),
                        },
                        match &apache {
                            Verdict::Accepted(_) => "reads it".to_owned(),
                            Verdict::Refused(why) => format!("refuses it: {why}"),
                        }
                    ));
                }
                // kaas-ref, on frames naming a version it serves (and judged here).
                let served = named.filter(|_| transaction).and_then(|h| {
                    let key = codec::ApiKey::from_key(h.key).ok()?;
                    key.check_version(h.version).ok()
                });
                if served.is_none() {
                    continue;
                }
                let ours = codec::header::decode_request_ignoring_trailing(&frame);
                match (&ours, &apache) {
                    (Ok((header, decoded, _)), Verdict::Accepted(apache_body)) => {
                        let ours = codec::header::encode_request(header, &decoded.message)
                            .expect("kaas-ref encodes what it read");
                        let header_len = header
                            .write(
                                codec::ApiKey::from_key(header.api_key)
                                    .expect("read above")
                                    .request_header_version(header.api_version),
                            )
                            .expect("a header")
                            .len();
                        // kaas-ref writes back the unknown tags it read; Apache's side leaves
                        // them out: compare without them.
                        let schema = kconform::wire::schema::request(
                            &kconform::wire::error_codes::api_name(header.api_key),
                        )
                        .expect("a transaction API");
                        let without_unknown = |body: &[u8]| {
                            frame::read(schema, header.api_version, body, 0)
                                .map(|r| r.canonical)
                                .unwrap_or_else(|e| {
                                    body.iter()
                                        .copied()
                                        .chain(format!("{e:?}").bytes())
                                        .collect()
                                })
                        };
                        let ours = without_unknown(&ours[header_len..]);
                        if ours != without_unknown(apache_body) {
                            tally.disagreements.push(format!(
                                "{}: values differ: kaas-ref's read encodes as {}, Apache's as {}",
                                at(),
                                frame::hex_compact(&ours),
                                frame::hex_compact(apache_body)
                            ));
                        }
                    }
                    (Err(_), Verdict::Refused(_)) => {}
                    (Ok(_), Verdict::Refused(why)) => tally.disagreements.push(format!(
                        "{}: kaas-ref reads it, Apache's broker refuses: {why}",
                        at()
                    )),
                    (Err(why), Verdict::Accepted(_)) => tally.disagreements.push(format!(
                        "{}: Apache's broker reads it, kaas-ref refuses: {why}",
                        at()
                    )),
                }
            }
        }
    }
    tallies
}

/// Prints the figures of `tallies` and keeps the total as `figure` for CI's closing lines.
fn print_request_tallies(tallies: &BTreeMap<(String, i16), Tally>, figure: &str, who: &str) {
    let mut total = (0, 0, 0);
    println!(
        "{:<22} {:>3} {:>9} {:>9} {:>14}",
        "request", "v", "compared", "accepted", "disagreements"
    );
    for ((api, version), t) in tallies {
        println!(
            "{api:<22} {version:>3} {:>9} {:>9} {:>14}",
            t.compared,
            t.accepted,
            t.disagreements.len()
        );
        total.0 += t.compared;
        total.1 += t.accepted;
        total.2 += t.disagreements.len();
    }
    let line = format!(
        "{who}: {} request frames compared ({} read by Apache), {} disagreements",
        total.0, total.1, total.2
    );
    println!("{line}");
    keep_figure(figure, &line);
}

/// Fails with every disagreement of `tallies`, counted by kind, and the first 20 in full.
fn assert_agreement(tallies: &BTreeMap<(String, i16), Tally>) {
    let lines: Vec<&String> = tallies.values().flat_map(|t| &t.disagreements).collect();
    assert!(
        lines.is_empty(),
        "{} disagreements, by kind:\n{}\nthe first 20:\n{}",
        lines.len(),
        kinds(&lines),
        lines
            .iter()
            .take(20)
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Keeps a figure for ci/test.sh's closing lines (`target/tmp/NAME.txt`).
pub(crate) fn keep_figure(name: &str, figure: &str) {
    let _ = std::fs::write(
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.txt")),
        format!("{figure}\n"),
    );
}

/// Disagreements counted by kind: what follows the frame, digits and hex folded.
fn kinds(lines: &[&String]) -> String {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for l in lines {
        let api = l.split(" (").next().unwrap_or_default();
        let what = l.rsplit("): ").next().unwrap_or_default();
        let folded: String = what
            .split(' ')
            .map(|w| match w.chars().any(|c| c.is_ascii_digit()) {
                true => "N",
                false => w,
            })
            .collect::<Vec<_>>()
            .join(" ");
        let folded: String = folded.chars().take(140).collect();
        *counts.entry(format!("{api}: {folded}")).or_default() += 1;
    }
    counts
        .iter()
        .map(|(k, n)| format!("{n:>6}  {k}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Strings as Java reads them: kconform's reading of bytes that are not UTF-8
/// ([`kconform::wire::frame::java_utf8`]) and `new String(bytes, UTF_8)` on a JVM give the same
/// characters, over byte strings drawn from the bytes where UTF-8's rules change (lead bytes
/// of each length, the continuation range's edges, overlong and surrogate starts, bytes no
/// sequence starts with).
#[test]
fn strings_read_as_java_reads_them() {
    if let Err(why) = kconform::targets::apache::available() {
        println!("skipped: no JVM here ({why})");
        return;
    }
    const EDGES: [u8; 27] = [
        0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1,
        0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xf7, 0xf8, 0xff,
    ];
    let mut parser = ApacheParser::start().expect("Apache's parser starts");
    let mut rng = Rng::new(7);
    let mut differ = Vec::new();
    let n = 50_000;
    for _ in 0..n {
        let len = 1 + rng.below(7) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|_| EDGES[rng.below(EDGES.len() as u64) as usize])
            .collect();
        let ours = kconform::wire::frame::java_utf8::decode(&bytes)
            .unwrap_or_else(|| String::from_utf8(bytes.clone()).expect("UTF-8"));
        let Verdict::Accepted(java) = parser.utf8(&bytes).expect("the JVM answers") else {
            panic!("the JVM refused to read {bytes:02x?}");
        };
        if ours.as_bytes() != java {
            differ.push(format!(
                "{}: kconform {}, Java {}",
                frame::hex_compact(&bytes),
                frame::hex_compact(ours.as_bytes()),
                frame::hex_compact(&java)
            ));
        }
    }
    println!(
        "strings read as Java reads them: {n} byte strings, {} differ",
        differ.len()
    );
    assert!(
        differ.is_empty(),
        "{} differ:\n{}",
        differ.len(),
        differ[..differ.len().min(20)].join("\n")
    );
}
