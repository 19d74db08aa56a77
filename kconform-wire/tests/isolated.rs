//! An isolated session outlives the aborts of the decoder it checks: an allocation that no
//! address space holds is a finding (its size named), and the session goes on from the next
//! input, to every defect. One test in its own binary: the session forks, and a fork is only
//! safe where no other thread runs checks.

use kafka_protocol::messages::ApiKey;
use kconform_wire::alloc::Watch;
use kconform_wire::check::{self, Case, Decoded, Direction, Problem, Session, Verdict};
use serde_json::Value;

#[global_allocator]
static ALLOC: Watch = Watch::system();

/// Apache's reading, but for a negative-length reader that takes a null anywhere.
fn negative_length_reader(c: &Case) -> Decoded {
    match check::verdict(c) {
        Verdict::Refuses(r) if r.problem.starts_with("null (length") => {
            Decoded::Values(Value::Object(Default::default()))
        }
        Verdict::Accepts { values, .. } => Decoded::Values(values),
        Verdict::Refuses(r) => Decoded::Refused(r.to_string()),
    }
}

/// And two allocation sites past any address space (a petabyte), as kaas's codec had.
fn aborting(c: &Case) -> Decoded {
    let site = (c.api, c.direction);
    let at_a_site = match site {
        (ApiKey::AddPartitionsToTxn, Direction::Request) => c.body.len() > 120,
        (ApiKey::EndTxn, Direction::Response) => c.body.len() > 40,
        _ => false,
    };
    if at_a_site {
        let v: Vec<u8> = Vec::with_capacity(1 << 50);
        std::hint::black_box(&v);
    }
    negative_length_reader(c)
}

#[test]
fn every_defect_in_one_session_through_its_aborts() {
    const INPUTS: u64 = 3_000;
    // Without aborts, the isolated session counts and finds what the session in process does.
    let mut in_process = Session::new();
    in_process.run(5, INPUTS, negative_length_reader);
    let mut isolated = Session::new();
    isolated.run_isolated(5, INPUTS, negative_length_reader);
    let (a, b) = (in_process.report(), isolated.report());
    assert_eq!(
        (a.cases, a.apache_accepted, a.not_served),
        (b.cases, b.apache_accepted, b.not_served)
    );
    let shown = |r: &check::Report| {
        r.findings
            .iter()
            .map(|(s, seen)| (s.clone(), seen.times, seen.fields.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(shown(&a), shown(&b), "{b}");

    // With them: every input checked, each site once, with the size it asked for.
    let mut session = Session::new();
    session.run_isolated(5, INPUTS, aborting);
    let report = session.report();
    println!("{report}");
    assert_eq!(report.cases, INPUTS, "{report}");
    let signatures: Vec<&str> = report.findings.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(
        signatures,
        [
            "accepts what Apache refuses: null (length N), which vN does not allow here",
            "allocates past the bound: AddPartitionsToTxn request",
            "allocates past the bound: EndTxn response",
        ],
        "{report}"
    );
    for (_, seen) in &report.findings[1..] {
        match seen.first.problem {
            Problem::Aborted { bytes, bound } => {
                assert_eq!(bytes, 1 << 50);
                assert_eq!(bound, check::allocation_bound(seen.first.case.body.len()));
            }
            ref other => panic!("{other}"),
        }
    }
    assert!(
        report.to_string().contains("no address space holds"),
        "{report}"
    );
}
