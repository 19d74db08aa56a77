//! Hostile frames against a running `kaas-ref` process: each closes its own connection, and
//! the broker keeps serving everyone else.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

fn frame(body: &[u8]) -> Vec<u8> {
    let mut f = (body.len() as i32).to_be_bytes().to_vec();
    f.extend(body);
    f
}

/// ApiVersions v0 with correlation id 7; returns the response's error code.
fn api_versions(addr: &str) -> std::io::Result<i16> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    s.write_all(&frame(&[0, 18, 0, 0, 0, 0, 0, 7, 0xff, 0xff]))?;
    let mut size = [0u8; 4];
    s.read_exact(&mut size)?;
    let mut body = vec![0u8; i32::from_be_bytes(size) as usize];
    s.read_exact(&mut body)?;
    assert_eq!(&body[..4], &7i32.to_be_bytes(), "correlation id echoed");
    Ok(i16::from_be_bytes([body[4], body[5]]))
}

/// True when the server closed the connection without answering.
fn closed_without_answer(addr: &str, bytes: &[u8]) -> bool {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let _ = s.write_all(bytes);
    let mut buf = [0u8; 1];
    matches!(s.read(&mut buf), Ok(0) | Err(_))
}

#[test]
fn hostile_frames_close_only_their_connection() {
    let dir = tempfile::tempdir().unwrap();
    let mut broker =
        common::KaasRef::start(dir.path(), "127.0.0.1:0", &["--max-frame-bytes", "1048576"]);
    let addr = broker.addr.clone();
    assert_eq!(api_versions(&addr).unwrap(), 0);

    let hostile: Vec<(&str, Vec<u8>)> = vec![
        ("negative size", (-5i32).to_be_bytes().to_vec()),
        ("oversized frame", frame(&vec![0u8; 1_048_577])),
        ("too short for a header", frame(&[0, 3])),
        (
            "unknown api key",
            frame(&[0x7f, 0x7f, 0, 0, 0, 0, 0, 1, 0xff, 0xff]),
        ),
        (
            "unsupported Produce version",
            frame(&[0, 0, 0, 99, 0, 0, 0, 1, 0xff, 0xff]),
        ),
        // Metadata v0 claiming i32::MAX topics in four bytes: kafka-protocol reserves memory
        // for the claimed count before reading (see reference_broker::alloc).
        (
            "huge array count",
            frame(&[0, 3, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff]),
        ),
        // Fetch v12 (flexible) claiming u32::MAX-1 topics.
        (
            "huge compact count",
            frame(&[
                0, 1, 0, 12, 0, 0, 0, 1, 0xff, 0xff, 0, 0xff, 0xff, 0xff, 0xff, 0x0f,
            ]),
        ),
        (
            "truncated EndTxn body",
            frame(&[0, 26, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0, 9, b'x']),
        ),
        // Null where the version forbids it: Apache's parser refuses these (kafka-protocol
        // reads them; found by `kconform fuzz --mode frames`, seed 3).
        (
            "Metadata v0 with null topics",
            frame(&[0, 3, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
        ),
        (
            "Metadata v1 with a null topic name",
            frame(&[0, 3, 0, 1, 0, 0, 0, 1, 0xff, 0xff, 0, 0, 0, 1, 0xff, 0xff]),
        ),
    ];
    for (what, bytes) in hostile {
        assert!(
            closed_without_answer(&addr, &bytes),
            "{what}: connection not closed"
        );
        assert_eq!(
            api_versions(&addr).unwrap(),
            0,
            "broker still answers after {what}"
        );
    }
    assert!(broker.running(), "kaas-ref is still running");
    broker.kill();
}
