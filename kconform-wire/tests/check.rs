//! The check holds each kind of broken decoder to account, and a decoder that reads as Apache
//! reads gives no finding. The decoders here are Apache's own reading, with one thing broken.

use kconform_wire::alloc::Watch;
use kconform_wire::check::{self, Case, Decoded, Direction, Problem, Session, Verdict};
use kconform_wire::Rng;
use serde_json::Value;

#[global_allocator]
static ALLOC: Watch = Watch::system();

/// Apache's reading of the case, as a decoder that gets everything right would give it.
fn faithful(case: &Case) -> Decoded {
    match check::verdict(case) {
        Verdict::Accepts { values, .. } => Decoded::Values(values),
        Verdict::Refuses(r) => Decoded::Refused(r.to_string()),
    }
}

fn session_with(decoder: impl FnMut(&Case) -> Decoded, cases: u64) -> Session {
    let mut s = Session::new();
    s.run(20261204, cases, decoder);
    s
}

#[test]
fn a_faithful_decoder_has_no_finding_over_many_inputs() {
    let s = session_with(faithful, 20_000);
    let report = s.report();
    assert!(report.findings.is_empty(), "{report}");
    assert!(report.allocations_watched);
    // Mutated inputs are both read and refused.
    assert!(report.apache_accepted > 2_000, "{report}");
    assert!(report.apache_accepted < 18_000, "{report}");
}

#[test]
fn each_broken_decoder_is_one_finding_of_its_kind() {
    type Broken = fn(&Case) -> Decoded;
    let cases: [(Broken, &str); 6] = [
        (
            |c| match c.api == kafka_protocol::messages::ApiKey::EndTxn && c.body.len() > 20 {
                true => panic!("index out of range: {}", c.body.len()),
                false => faithful(c),
            },
            "panics: index out of range: N at kconform-wire/tests/check.rs:",
        ),
        (
            |c| {
                let count = c
                    .body
                    .get(..4)
                    .map_or(0, |b| u32::from_be_bytes(b.try_into().unwrap()));
                let v: Vec<u8> = Vec::with_capacity((count as usize).min(1 << 40));
                std::hint::black_box(v);
                faithful(c)
            },
            "allocates past the bound",
        ),
        (
            |_| Decoded::Values(Value::Object(Default::default())),
            "accepts what Apache refuses",
        ),
        (
            |_| Decoded::Refused("no".into()),
            "refuses what Apache accepts",
        ),
        (
            |c| match faithful(c) {
                Decoded::Values(mut v) if v.get("producer_epoch").is_some() => {
                    let e = v["producer_epoch"].as_i64().unwrap();
                    v["producer_epoch"] = Value::from(e.wrapping_add(1));
                    Decoded::Values(v)
                }
                other => other,
            },
            "reads other values than Apache",
        ),
        (
            |c| match faithful(c) {
                Decoded::Values(_) => {
                    let mut again = c.body.clone();
                    again.push(0);
                    Decoded::Reencoded(again)
                }
                other => other,
            },
            "writes again what Apache cannot read",
        ),
    ];
    for (decoder, expected) in cases {
        let s = session_with(decoder, 3_000);
        let report = s.report();
        println!("{report}");
        assert!(
            !report.findings.is_empty(),
            "{expected}: nothing found\n{report}"
        );
        assert!(
            report
                .findings
                .iter()
                .all(|(sig, _)| sig.starts_with(expected.split(':').next().unwrap())),
            "{expected}:\n{report}"
        );
        if expected.contains(" at ") {
            assert!(
                report
                    .findings
                    .iter()
                    .any(|(sig, _)| sig.starts_with(expected)),
                "{report}"
            );
        }
    }
}

#[test]
fn an_allocation_is_measured_and_a_huge_one_does_not_abort() {
    let mut rng = Rng::new(3);
    let case = Case::valid(
        Direction::Request,
        kafka_protocol::messages::ApiKey::EndTxn,
        3,
        &mut rng,
    )
    .unwrap();
    // 38 GB asked for on a 30-byte body: served as a reservation, named, not an abort.
    let found = check::check(&case, |c| {
        let v: Vec<u64> = Vec::with_capacity(38_626_170_144 / 8);
        std::hint::black_box(&v);
        faithful(c)
    })
    .unwrap_err();
    match found.problem {
        Problem::Allocated { bytes, bound } => {
            assert_eq!(bytes, 38_626_170_144);
            assert_eq!(bound, check::allocation_bound(case.body.len()));
        }
        other => panic!("{other}"),
    }
    assert_eq!(
        found.signature(),
        "allocates past the bound: EndTxn request"
    );
}

#[test]
fn a_fuzzer_input_reads_back_as_the_case_it_was_written_from() {
    let mut rng = Rng::new(9);
    for _ in 0..200 {
        let case = Case::draw(&mut rng);
        let bytes = case.to_fuzz_input().unwrap();
        let back = Case::from_fuzz_input(&bytes).unwrap();
        assert_eq!(
            (back.direction, back.api, back.version, &back.body),
            (case.direction, case.api, case.version, &case.body)
        );
    }
    assert!(Case::from_fuzz_input(&[1]).is_none());
}

/// One reader that takes a negative length for an empty array, wherever the definition allows
/// no null: Apache's reader names it alike on every array, so it is one defect with its
/// fields listed, not one per array, API and direction.
#[test]
fn one_reader_wrong_on_every_array_is_one_finding_with_its_fields() {
    let negative_length_reader = |c: &Case| match check::verdict(c) {
        Verdict::Refuses(r) if r.problem.starts_with("null (length") => {
            Decoded::Values(Value::Object(Default::default()))
        }
        Verdict::Accepts { values, .. } => Decoded::Values(values),
        Verdict::Refuses(r) => Decoded::Refused(r.to_string()),
    };
    let report = session_with(negative_length_reader, 20_000).report();
    assert_eq!(report.findings.len(), 1, "{report}");
    let (signature, seen) = &report.findings[0];
    assert_eq!(
        signature,
        "accepts what Apache refuses: null (length N), which vN does not allow here"
    );
    let apis: std::collections::BTreeSet<&str> = seen
        .fields
        .iter()
        .map(|f| f.split(':').next().unwrap())
        .collect();
    assert!(seen.fields.len() >= 4 && apis.len() >= 3, "{report}");
    assert!(report.to_string().contains(" field(s): "), "{report}");
}
