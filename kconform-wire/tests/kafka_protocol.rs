//! A decoder this project did not write: kafka-protocol 0.15's generated request and response
//! decoders, each message decoded and written again by the crate, held to Apache's reading.
//! What it finds is a finding about kafka-protocol, recorded in a snapshot that a reader can
//! check: each signature, where it was first seen and on what.

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Encodable};
use kconform_wire::alloc::Watch;
use kconform_wire::check::{Case, Decoded, Direction, Session};

#[global_allocator]
static ALLOC: Watch = Watch::system();

fn round<T: Decodable + Encodable>(case: &Case) -> Decoded {
    let mut bytes = Bytes::copy_from_slice(&case.body);
    match T::decode(&mut bytes, case.version) {
        Err(e) => Decoded::Refused(format!("{e:#}")),
        Ok(m) => {
            let mut out = BytesMut::new();
            match m.encode(&mut out, case.version) {
                Ok(()) => Decoded::Reencoded(out.to_vec()),
                Err(e) => Decoded::Refused(format!("decoded, then not written again: {e:#}")),
            }
        }
    }
}

/// The adapter: the message type of the case's API and direction, at the versions
/// kafka-protocol 0.15 generates.
fn kafka_protocol(case: &Case) -> Decoded {
    let v = case.api.valid_versions();
    if !(v.min..=v.max).contains(&case.version) {
        return Decoded::NotServed;
    }
    match (case.direction, case.api) {
        (Direction::Request, ApiKey::InitProducerId) => round::<InitProducerIdRequest>(case),
        (Direction::Request, ApiKey::AddPartitionsToTxn) => {
            round::<AddPartitionsToTxnRequest>(case)
        }
        (Direction::Request, ApiKey::AddOffsetsToTxn) => round::<AddOffsetsToTxnRequest>(case),
        (Direction::Request, ApiKey::EndTxn) => round::<EndTxnRequest>(case),
        (Direction::Request, ApiKey::WriteTxnMarkers) => round::<WriteTxnMarkersRequest>(case),
        (Direction::Request, ApiKey::TxnOffsetCommit) => round::<TxnOffsetCommitRequest>(case),
        (Direction::Response, ApiKey::InitProducerId) => round::<InitProducerIdResponse>(case),
        (Direction::Response, ApiKey::AddPartitionsToTxn) => {
            round::<AddPartitionsToTxnResponse>(case)
        }
        (Direction::Response, ApiKey::AddOffsetsToTxn) => round::<AddOffsetsToTxnResponse>(case),
        (Direction::Response, ApiKey::EndTxn) => round::<EndTxnResponse>(case),
        (Direction::Response, ApiKey::WriteTxnMarkers) => round::<WriteTxnMarkersResponse>(case),
        (Direction::Response, ApiKey::TxnOffsetCommit) => round::<TxnOffsetCommitResponse>(case),
        _ => Decoded::NotServed,
    }
}

#[test]
fn kafka_protocol_0_15_against_apache() {
    let mut session = Session::new();
    session.run(20261204, 30_000, kafka_protocol);
    let report = session.report();
    println!("{report}");
    assert!(report.apache_accepted > 3_000, "{report}");
    let mut record = String::new();
    for (signature, seen) in &report.findings {
        let e_g = seen.first.problem.to_string();
        let e_g = e_g.lines().next().unwrap_or_default();
        record.push_str(&format!(
            "{signature}\n  on {}\n  e.g. {}: {e_g}\n  made by: {}\n",
            seen.shown_on(),
            seen.first.case,
            seen.first.case.how.join("; ")
        ));
    }
    insta::assert_snapshot!(record);
}
