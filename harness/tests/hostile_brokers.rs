//! A broker that misbehaves costs one step a recorded "no answer" naming what went wrong,
//! never a hang or a panic: closing the connection, answering bytes that do not decode,
//! answering another request's correlation id, claiming a huge answer, or going silent past
//! the deadline.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::BytesMut;
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::{ApiVersionsResponse, ResponseHeader};
use kafka_protocol::protocol::Encodable;
use kconform::run::{self, Outcome};
use kconform::scenario::Scenario;
use kconform::targets::{Running, TargetSpec};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[derive(Clone, Copy, Debug)]
enum Misbehaviour {
    Close,
    Garbage,
    WrongCorrelation,
    HugeSize,
    Silent,
    Truncated,
}

fn frame(correlation: i32, body: impl FnOnce(&mut BytesMut)) -> Vec<u8> {
    let mut buf = BytesMut::new();
    ResponseHeader::default()
        .with_correlation_id(correlation)
        .encode(&mut buf, 0)
        .unwrap();
    body(&mut buf);
    let mut out = (buf.len() as i32).to_be_bytes().to_vec();
    out.extend_from_slice(&buf);
    out
}

/// Answers ApiVersions (EndTxn v0-3 served), then misbehaves on anything else.
async fn serve(mut s: TcpStream, how: Misbehaviour) {
    loop {
        let mut size = [0u8; 4];
        if s.read_exact(&mut size).await.is_err() {
            return;
        }
        let mut req = vec![0u8; i32::from_be_bytes(size) as usize];
        if s.read_exact(&mut req).await.is_err() {
            return;
        }
        let api = i16::from_be_bytes([req[0], req[1]]);
        let correlation = i32::from_be_bytes([req[4], req[5], req[6], req[7]]);
        let answer = match (api, how) {
            (18, _) => frame(correlation, |b| {
                ApiVersionsResponse::default()
                    .with_api_keys(vec![ApiVersion::default()
                        .with_api_key(26)
                        .with_min_version(0)
                        .with_max_version(3)])
                    .encode(b, 0)
                    .unwrap()
            }),
            (_, Misbehaviour::Close) => return,
            (_, Misbehaviour::Garbage) => frame(correlation, |b| b.extend_from_slice(&[0xff; 3])),
            (_, Misbehaviour::WrongCorrelation) => frame(correlation + 7, |b| {
                b.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
            }),
            (_, Misbehaviour::HugeSize) => i32::MAX.to_be_bytes().to_vec(),
            (_, Misbehaviour::Truncated) => {
                // A size of 10, four bytes of it, then nothing.
                let mut head = 10i32.to_be_bytes().to_vec();
                head.extend(correlation.to_be_bytes());
                if s.write_all(&head).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_secs(3600)).await;
                return;
            }
            (_, Misbehaviour::Silent) => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                return;
            }
        };
        if s.write_all(&answer).await.is_err() {
            return;
        }
    }
}

async fn broker(how: Misbehaviour) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((s, _)) = listener.accept().await {
            tokio::spawn(serve(s, how));
        }
    });
    addr
}

fn scenario() -> Scenario {
    crate::util::scenario_from(
        "hostile",
        "description = \"d\"\n[[step]]\nname = \"end\"\napi = \"EndTxn\"\nversion = 3\nrequest = { transactional_id = \"t\" }\n[[step]]\nname = \"again\"\napi = \"EndTxn\"\nversion = 3\nrequest = { transactional_id = \"t\" }\n",
    )
}

#[tokio::test]
async fn each_misbehaviour_stops_the_scenario_with_a_named_cause() {
    for (how, expected) in [
        (Misbehaviour::Close, "closed the connection"),
        (
            Misbehaviour::Garbage,
            "EndTxn v3 (response header v1): header (tagged fields) at byte 7: needs 1 byte(s)",
        ),
        (Misbehaviour::WrongCorrelation, "correlation id"),
        (
            Misbehaviour::HugeSize,
            "size prefix announces 2147483647 bytes",
        ),
        (Misbehaviour::Silent, "no answer within"),
        (
            Misbehaviour::Truncated,
            "the answer stopped after 4 of the 10 bytes its size announced",
        ),
    ] {
        let addr = broker(how).await;
        let target = Running::start(&TargetSpec::external(addr)).await.unwrap();
        // A safety net against a hang, far above the 200 ms deadline each wait gets.
        let t = tokio::time::timeout(
            Duration::from_secs(30),
            run::run(&scenario(), &target, Duration::from_millis(200)),
        )
        .await
        .unwrap_or_else(|_| panic!("{how:?}: the run hung"));
        assert_eq!(t.steps.len(), 2, "{how:?}: both steps recorded");
        let why = match &t.steps[0].outcome {
            Outcome::NoAnswer(why) => why.clone(),
            Outcome::Malformed(m) => m.summary(),
            other => panic!("{how:?}: {other:?}"),
        };
        assert!(why.contains(expected), "{how:?}: {why}");
        assert!(
            matches!(&t.steps[1].outcome, Outcome::Skipped(s) if s.contains("stopped at 'end'")),
            "{how:?}: {:?}",
            t.steps[1].outcome
        );
        let stopped = t.stopped.as_deref().unwrap_or_default();
        assert!(stopped.starts_with("step 'end' got"), "{how:?}: {stopped}");
        assert!(
            t.failed_expectations
                .iter()
                .any(|f| f.contains("1 later step(s) not sent")),
            "{how:?}: {:?}",
            t.failed_expectations
        );
    }
}

#[tokio::test]
async fn an_unreachable_broker_is_refused_before_any_scenario() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let target = Running::start(&TargetSpec::external(addr)).await.unwrap();
    let e = target
        .reachable(Duration::from_millis(500))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cannot be reached") && e.contains("cannot connect"),
        "{e}"
    );
    // A broker that takes connections and never answers is as unreachable.
    let mute = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = mute.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = mute.accept().await {
            held.push(s);
        }
    });
    let target = Running::start(&TargetSpec::external(addr)).await.unwrap();
    let e = target
        .reachable(Duration::from_millis(300))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("ApiVersions v0 got no answer within"), "{e}");
    // One that answers ApiVersions is reachable, however it answers the rest.
    let silent = broker(Misbehaviour::Silent).await;
    let target = Running::start(&TargetSpec::external(silent)).await.unwrap();
    assert!(target.reachable(Duration::from_millis(300)).await.is_ok());
}

/// A broker that answers, but never what a step's `until` waits for, fails the step with what
/// its last answer still missed: a slow broker is then told from a wrong one.
#[tokio::test]
async fn an_until_that_runs_out_names_what_the_last_answer_missed() {
    let scenario = crate::util::scenario_from(
        "never",
        "description = \"d\"\nunique = [\"txn\"]\n[[step]]\nname = \"init\"\napi = \"InitProducerId\"\nrequest = { transactional_id = \"${txn}\", transaction_timeout_ms = 60000 }\nuntil = { error_code = 0, throttle_time_ms = 7 }\nwithin_ms = 300\n",
    );
    let target = Running::start(&TargetSpec::parse("ref").unwrap())
        .await
        .unwrap();
    let t = run::run(&scenario, &target, Duration::from_secs(5)).await;
    let failed = t.failed_expectations.join(" | ");
    assert!(
        failed.contains("init: 'until' did not hold within 300 ms (last answer: throttle_time_ms is 0, expected 7)"),
        "{failed}"
    );
}
