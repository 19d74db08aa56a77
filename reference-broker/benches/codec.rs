//! Our codecs against kafka-protocol's: encode and decode of each of the six requests and
//! responses at their highest version, on the populated sample messages.
//!
//! `ci/bench-codec.sh` runs this and prints ours/theirs time ratios from criterion's estimates.

use std::hint::black_box;
use std::time::Duration;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion};
use kafka_protocol::protocol::{Decodable, Encodable};
use reference_broker::codec::differential::Counterpart;
use reference_broker::codec::samples::{populated_request, populated_response};
use reference_broker::codec::{ApiKey, Request, Response};

fn bench_message<T: Counterpart>(c: &mut Criterion, label: &str, m: &T) {
    let version = T::API.versions().1;
    let theirs = m.to_theirs();
    let bytes = m.encode(version).expect("sample encodes");
    let mut group = c.benchmark_group(label);
    group.bench_function("encode/ours", |b| {
        b.iter(|| black_box(m).encode(version).unwrap())
    });
    group.bench_function("encode/kafka-protocol", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(64);
            black_box(&theirs).encode(&mut out, version).unwrap();
            out
        })
    });
    group.bench_function("decode/ours", |b| {
        b.iter(|| T::decode(version, black_box(&bytes)).unwrap())
    });
    let shared = Bytes::copy_from_slice(&bytes);
    group.bench_function("decode/kafka-protocol", |b| {
        b.iter(|| {
            // Bytes::clone is a reference-count bump: the input is not copied.
            let mut buf = black_box(&shared).clone();
            T::Theirs::decode(&mut buf, version).unwrap()
        })
    });
    group.finish();
}

fn codecs(c: &mut Criterion) {
    for api in ApiKey::ALL {
        let v = api.versions().1;
        let req = format!("{}Request", api.name());
        let resp = format!("{}Response", api.name());
        match (populated_request(api, v), populated_response(api, v)) {
            (Request::InitProducerId(q), Response::InitProducerId(r)) => {
                bench_message(c, &req, &q);
                bench_message(c, &resp, &r);
            }
            (Request::AddPartitionsToTxn(q), Response::AddPartitionsToTxn(r)) => {
                bench_message(c, &req, &q);
                bench_message(c, &resp, &r);
            }
            (Request::AddOffsetsToTxn(q), Response::AddOffsetsToTxn(r)) => {
                bench_message(c, &req, &q);
                bench_message(c, &resp, &r);
            }
            (Request::EndTxn(q), Response::EndTxn(r)) => {
                bench_message(c, &req, &q);
                bench_message(c, &resp, &r);
            }
            (Request::WriteTxnMarkers(q), Response::WriteTxnMarkers(r)) => {
                bench_message(c, &req, &q);
                bench_message(c, &resp, &r);
            }
            (Request::TxnOffsetCommit(q), Response::TxnOffsetCommit(r)) => {
                bench_message(c, &req, &q);
                bench_message(c, &resp, &r);
            }
            _ => unreachable!("samples match their API"),
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = codecs
}
criterion_main!(benches);
