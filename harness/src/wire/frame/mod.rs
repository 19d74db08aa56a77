//! Exact decoding of a broker's answer: a frame is well-formed when Apache 3.7's own parser reads
//! it to its last byte (`read` reads as that parser does), with a response header of the
//! version the API answers with and the request's correlation id. Anything else is
//! [`Malformed`], never a decoded guess: the diagnosis names the field and the byte where it went
//! wrong and keeps the frame. What Apache's parser accepts but no canonical encoder writes (a
//! tagged field at its default, an unknown tag, a long varint) is a [`Note`] beside the answer,
//! never a verdict; kafka-protocol decodes the same values in their canonical encoding.
//!
//! The read comes before kafka-protocol decodes anything, so a count or a length past the end
//! of the frame is refused before memory is set aside for it. Beside this module: the field by
//! field reader ([`kconform_wire::read`], with the one rule later releases' parsers changed, [`Parser`]), the
//! diagnosis of a malformed answer (`diagnosis`), and the answer written again (`encode`).

mod diagnosis;
mod encode;
mod malformed;

pub use kconform_wire::java_utf8;

use bytes::Bytes;
use kafka_protocol::messages::{ApiKey, ResponseKind};

use crate::wire::by_schema;
use crate::wire::error_codes;
use crate::wire::schema::{self, Message};

use diagnosis::{explain, left_over, Problem};
pub use encode::{encode_answer, encode_body, rewrite};
pub use kconform_wire::read::{read, read_as, Equivalent, Note, Parser, Read, Span, WalkError};
pub use malformed::Malformed;

pub use crate::wire::hex::{hex, hex_compact};

/// Walks `bytes[from..]` as `message` at `version`, as Apache's parser reads it; the spans of
/// its fields and where it ended.
pub fn walk(
    message: &Message,
    version: i16,
    bytes: &[u8],
    from: usize,
) -> Result<(Vec<Span>, usize), WalkError> {
    read(message, version, bytes, from).map(|r| (r.spans, r.end))
}

/// Walks a tagged-field section alone (a count, then tag, size and value each) at
/// `bytes[from..]`, as a flexible request header ends and as `parser` reads it: the spans of
/// its tags and where it ended.
pub fn walk_tagged_section(
    bytes: &[u8],
    from: usize,
    path: &str,
    parser: Parser,
) -> Result<(Vec<Span>, usize), WalkError> {
    kconform_wire::read::read_tagged_section(bytes, from, path, parser).map(|r| (r.spans, r.end))
}

/// The schema name of an API (`EndTxn`).
fn api_name(api: ApiKey) -> String {
    error_codes::api_name(api as i16)
}

/// Every field of a well-formed answer, header first (paths of the header start with
/// `header.`): where a mutation can put a byte.
pub fn spans(api: ApiKey, version: i16, frame: &[u8]) -> Result<Vec<Span>, WalkError> {
    let hv = api.response_header_version(version);
    let (mut spans, body) = walk(schema::response_header(), hv, frame, 0)?;
    for s in &mut spans {
        s.path = format!("header.{}", s.path);
    }
    if let Some(message) = schema::response_at(&api_name(api), version) {
        spans.extend(walk(message, version, frame, body)?.0);
    }
    Ok(spans)
}

/// A well-formed answer: its values, and what was unusual in how it was written.
#[derive(Debug, Clone)]
pub struct Decoded {
    /// kafka-protocol's decoding of the answer, where it generates the version (every version
    /// Apache 3.7 serves; not EndTxn v5, TxnOffsetCommit v5 and v6, WriteTxnMarkers v2).
    pub response: Option<ResponseKind>,
    /// The answer's values read by Apache's definitions ([`crate::wire::by_schema`]), for the
    /// six transaction APIs: what their transcripts record. Where kafka-protocol decodes the
    /// version too, the two readings are held to the same bytes.
    pub values: Option<serde_json::Value>,
    /// Encodings Apache's parser reads but no canonical encoder writes, header first.
    pub notes: Vec<Note>,
}

/// Decodes `frame` (the bytes after the size) as the answer to `api` v`version` with
/// `correlation`, exactly as Apache's parser reads it; or says precisely why it is not one.
pub fn decode(
    api: ApiKey,
    version: i16,
    correlation: i32,
    frame: &[u8],
) -> Result<Decoded, Box<Malformed>> {
    let header_version = api.response_header_version(version);
    match strict(api, version, header_version, correlation, frame) {
        Ok(decoded) => Ok(decoded),
        Err(problem) => {
            let p = explain(api, version, header_version, correlation, frame, problem);
            Err(Box::new(Malformed {
                api: api_name(api),
                version,
                header_version,
                problem: p.text,
                field: p.field,
                offset: p.offset,
                frame: hex(frame),
                read_past_as_header: None,
                read_past_answer: None,
            }))
        }
    }
}

/// An answer [`decode`] found malformed only in its response header's version (the other
/// version reads the frame whole: the diagnosis's first reading), read under that version: what
/// a scenario goes on with, the answer still recorded as malformed. `None` for any other
/// defect. The header version read as comes back with the answer.
pub fn read_past(api: ApiKey, version: i16, m: &Malformed) -> Option<(Decoded, i16)> {
    if m.field.as_deref() != Some("header") || !m.problem.starts_with("the response header is v") {
        return None;
    }
    let frame = crate::wire::hex::unhex(&m.frame.replace(' ', ""))?;
    let correlation = i32::from_be_bytes(frame.get(..4)?.try_into().ok()?);
    let other = 1 - m.header_version.clamp(0, 1);
    let decoded = strict(api, version, other, correlation, &frame).ok()?;
    Some((decoded, other))
}

/// The frame read as Apache's parser reads an answer (`AbstractResponse.parseResponse` with
/// the request's header): the response header, the correlation id, the body, and, unlike the
/// Java client, nothing left over. An ApiVersions body that does not read at the version sent
/// is read as v0, as Apache's `ApiVersionsResponse.parse` does (KIP-511); the version it was
/// read at comes back with it.
fn read_answer(
    api: ApiKey,
    version: i16,
    header_version: i16,
    correlation: i32,
    frame: &[u8],
) -> Result<(Read, i16), Problem> {
    let from_walk = |e: WalkError| Problem {
        text: format!("{} at byte {}: {}", e.path, e.offset, e.problem),
        field: Some(e.path),
        offset: e.offset,
    };
    let header = read(schema::response_header(), header_version, frame, 0).map_err(|e| {
        let mut p = from_walk(e);
        p.text = format!("header {}", p.text);
        p
    })?;
    let answered = i32::from_be_bytes(frame[..4].try_into().expect("the read took 4 bytes"));
    if answered != correlation {
        return Err(Problem {
            field: Some("header.correlation_id".into()),
            offset: 0,
            text: format!("correlation id {answered}, but the request's was {correlation}"),
        });
    }
    let mut notes: Vec<Note> = header
        .notes
        .into_iter()
        .map(|mut n| {
            n.field = format!("header.{}", n.field);
            n
        })
        .collect();
    let Some(message) = schema::response_at(&api_name(api), version) else {
        return Ok((
            Read {
                end: frame.len(),
                canonical: frame[header.end..].to_vec(),
                notes,
                ..Read::default()
            },
            version,
        ));
    };
    let (mut body, read_as) = match read(message, version, frame, header.end) {
        Ok(body) => (body, version),
        Err(e) if api == ApiKey::ApiVersions && version != 0 => {
            match read(message, 0, frame, header.end) {
                Ok(body) => (body, 0),
                Err(_) => return Err(from_walk(e)),
            }
        }
        Err(e) => return Err(from_walk(e)),
    };
    if read_as != version {
        notes.push(Note {
            field: "(body)".into(),
            offset: header.end,
            what: format!("an ApiVersions answer that reads as v0, not v{version}: Apache's client reads it as v0 (KIP-511)"),
        });
    }
    if body.end < frame.len() {
        return Err(left_over(
            frame.len() - body.end,
            body.end,
            body.spans.last(),
        ));
    }
    notes.append(&mut body.notes);
    body.notes = notes;
    Ok((body, read_as))
}

/// Whether kconform can read an answer to `api` v`version` at all: Apache's definitions have
/// it (the six transaction APIs to 4.4.0's versions), or kafka-protocol 0.15 generates it (or
/// one written alike). An answer at a version neither has (one a later Apache brought to
/// another API: ConsumerGroupDescribe v1, DescribeLogDirs v5) cannot be judged, and is not.
pub fn can_read(api: ApiKey, version: i16) -> bool {
    schema::response_at(&api_name(api), version).is_some()
        || by_schema::kafka_protocol_version(api, version).is_some()
}

/// The definition of a well-formed answer without the diagnosis [`decode`] dresses a refusal
/// in (which re-reads the frame once per byte): what the differential test holds against
/// Apache's parser frame by frame. `Err` says why not.
pub fn accept(
    api: ApiKey,
    version: i16,
    correlation: i32,
    frame: &[u8],
) -> Result<Decoded, String> {
    strict(
        api,
        version,
        api.response_header_version(version),
        correlation,
        frame,
    )
    .map_err(|p| p.text)
}

/// The checks, in order: the frame as Apache's parser reads it, then kafka-protocol's decoding
/// of the same values in their canonical encoding.
fn strict(
    api: ApiKey,
    version: i16,
    header_version: i16,
    correlation: i32,
    frame: &[u8],
) -> Result<Decoded, Problem> {
    let (read, read_as) = read_answer(api, version, header_version, correlation, frame)?;
    let harness_fault = |text: String| Problem {
        field: None,
        offset: 0,
        text,
    };
    let values = match schema::response_at(&api_name(api), read_as) {
        // The six transaction APIs, the ones whose requests' definitions are vendored too.
        Some(message) if schema::request(&api_name(api)).is_some() => Some(
            by_schema::decode(message, read_as, &read.canonical).map_err(|e| {
                harness_fault(format!(
                    "Apache's definitions cannot read the values Apache's parser reads: {e}"
                ))
            })?,
        ),
        _ => None,
    };
    if values.is_some() && !by_schema::kafka_protocol_has(api, read_as) {
        return Ok(Decoded {
            response: None,
            values,
            notes: read.notes,
        });
    }
    // Produce v12 is read as the v11 Apache's definitions say it is written as.
    let generated = by_schema::kafka_protocol_version(api, read_as).unwrap_or(read_as);
    let mut buf = Bytes::from(read.canonical.clone());
    let response = ResponseKind::decode(api, &mut buf, generated).map_err(|e| {
        harness_fault(format!(
            "kafka-protocol cannot decode the values Apache's parser reads: {e}"
        ))
    })?;
    if !buf.is_empty() {
        return Err(harness_fault(format!(
            "kafka-protocol reads the values Apache's parser reads with {} byte(s) to spare",
            buf.len()
        )));
    }
    // The second reading held to the first: kafka-protocol writes again the bytes both read.
    if values.is_some() && encode_body(&response, generated).as_deref() != Ok(&read.canonical[..]) {
        return Err(harness_fault(
            "kafka-protocol and Apache's definitions read these values differently".into(),
        ));
    }
    let mut notes = read.notes;
    let response = as_apache_sees_it(response, read_as, &read.spans, &mut notes);
    Ok(Decoded {
        response: Some(response),
        values,
        notes,
    })
}

/// What Apache's response classes change in the values their parser read, before a client
/// sees them (found by the differential test against Apache's parser): JoinGroup v7+ reads an
/// empty protocol name as null (`JoinGroupResponse`'s constructor).
fn as_apache_sees_it(
    response: ResponseKind,
    version: i16,
    spans: &[Span],
    notes: &mut Vec<Note>,
) -> ResponseKind {
    let at = |path: &str| spans.iter().find(|s| s.path == path).map_or(0, |s| s.start);
    match response {
        ResponseKind::JoinGroup(mut r)
            if version >= 7 && r.protocol_name.as_deref() == Some("") =>
        {
            r.protocol_name = None;
            notes.push(Note {
                field: "protocol_name".into(),
                offset: at("protocol_name"),
                what: "empty, which Apache's JoinGroupResponse reads as null (v7+)".into(),
            });
            ResponseKind::JoinGroup(r)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BytesMut;
    use kafka_protocol::messages::{EndTxnResponse, ResponseHeader};
    use kafka_protocol::protocol::Encodable;

    fn end_txn_frame(version: i16, correlation: i32, error: i16) -> Vec<u8> {
        let mut buf = BytesMut::new();
        ResponseHeader::default()
            .with_correlation_id(correlation)
            .encode(&mut buf, ApiKey::EndTxn.response_header_version(version))
            .unwrap();
        EndTxnResponse::default()
            .with_error_code(error)
            .encode(&mut buf, version)
            .unwrap();
        buf.to_vec()
    }

    #[test]
    fn a_well_formed_answer_decodes_and_its_fields_have_spans() {
        let frame = end_txn_frame(3, 7, 48);
        let ResponseKind::EndTxn(r) = decode(ApiKey::EndTxn, 3, 7, &frame)
            .unwrap()
            .response
            .unwrap()
        else {
            panic!()
        };
        assert_eq!(r.error_code, 48);
        let paths: Vec<String> = spans(ApiKey::EndTxn, 3, &frame)
            .unwrap()
            .into_iter()
            .map(|s| format!("{}@{}..{}", s.path, s.start, s.end))
            .collect();
        assert_eq!(
            paths,
            [
                "header.correlation_id@0..4",
                "header.(tagged fields)@4..5",
                "throttle_time_ms@5..9",
                "error_code@9..11",
                "(tagged fields)@11..12"
            ]
        );
    }

    /// kconform reads an answer where Apache's definitions or kafka-protocol have its
    /// version: not ConsumerGroupDescribe v1 (4.0's, neither has it), which Apache 4.0 and 4.4
    /// gave a fuzzed frame and kconform once called undecodable.
    #[test]
    fn kconform_reads_the_versions_it_has_a_definition_of() {
        assert!(can_read(ApiKey::ConsumerGroupDescribe, 0));
        assert!(!can_read(ApiKey::ConsumerGroupDescribe, 1));
        assert!(can_read(ApiKey::EndTxn, 5), "4.4.0's definition");
        assert!(can_read(ApiKey::Produce, 12), "read as v11");
        let frame = [0, 0, 0x0d, 0x32, 0, 0, 0, 0, 0, 1, 0];
        assert!(decode(ApiKey::ConsumerGroupDescribe, 0, 0x0d32, &frame).is_ok());
    }

    /// A negative tagged-field count: no tagged fields to 3.7 through 4.1's parsers (a note),
    /// refused by 4.2's and later.
    #[test]
    fn a_negative_tag_count_is_release_dependent() {
        let mut frame = end_txn_frame(3, 7, 0);
        frame.pop();
        frame.extend([0xff, 0xff, 0xff, 0xff, 0x0f]);
        let message = schema::response_at("EndTxn", 3).unwrap();
        let lenient = read_as(message, 3, &frame, 5, Parser::of_release(4, 1)).unwrap();
        assert_eq!(lenient.end, frame.len());
        assert!(lenient.notes[0].what.contains("Java reads no tagged field"));
        let e = read_as(message, 3, &frame, 5, Parser::of_release(4, 2)).unwrap_err();
        assert_eq!(e.path, "(tagged fields)");
        assert!(e.problem.contains("4.2 and later refuse"), "{}", e.problem);
        assert_eq!(Parser::of_release(3, 7), Parser::default());
        assert_eq!(Parser::of_release(5, 0), Parser::From4_2);
    }

    /// A Produce v12 answer (4.0) reads as the v11 it is written like, and writes again to
    /// its own bytes.
    #[test]
    fn a_produce_v12_answer_reads_as_v11() {
        use kafka_protocol::messages::produce_response::{
            PartitionProduceResponse, TopicProduceResponse,
        };
        use kafka_protocol::messages::ProduceResponse;
        let mut buf = BytesMut::new();
        ResponseHeader::default()
            .with_correlation_id(3)
            .encode(&mut buf, ApiKey::Produce.response_header_version(12))
            .unwrap();
        let header_len = buf.len();
        ProduceResponse::default()
            .with_responses(vec![TopicProduceResponse::default()
                .with_name(kafka_protocol::messages::TopicName::from(
                    kafka_protocol::protocol::StrBytes::from_static_str("t"),
                ))
                .with_partition_responses(vec![PartitionProduceResponse::default()
                    .with_index(1)
                    .with_error_code(0)
                    .with_base_offset(7)])])
            .encode(&mut buf, 11)
            .unwrap();
        let frame = buf.to_vec();
        let decoded = decode(ApiKey::Produce, 12, 3, &frame).unwrap();
        let Some(ResponseKind::Produce(r)) = &decoded.response else {
            panic!("a Produce answer")
        };
        assert_eq!(r.responses[0].partition_responses[0].base_offset, 7);
        assert_eq!(
            encode_answer(&decoded, ApiKey::Produce, 12).unwrap(),
            frame[header_len..]
        );
    }

    #[test]
    fn each_kind_of_wrong_frame_is_named() {
        let good = end_txn_frame(0, 7, 0);
        let diagnose = |frame: &[u8], correlation: i32| {
            decode(ApiKey::EndTxn, 0, correlation, frame)
                .unwrap_err()
                .problem
        };
        let mut extra = good.clone();
        extra.push(0);
        assert!(
            diagnose(&extra, 7).contains("stray byte 00"),
            "{}",
            diagnose(&extra, 7)
        );
        let mut extra = good.clone();
        extra.extend([1, 2]);
        let p = diagnose(&extra, 7);
        assert!(
            p.contains("2 byte(s) left over after the last field (error_code, bytes 8..10)"),
            "{p}"
        );
        let p = diagnose(&good[..9], 7);
        assert!(p.contains("error_code at byte 8: needs 2 byte(s)"), "{p}");
        assert!(diagnose(&good, 8).contains("correlation id 7, but the request's was 8"));
        // EndTxn v3 answered with header v0: one byte short, and said so.
        let v3 = end_txn_frame(3, 7, 0);
        let mut wrong_header = v3[..4].to_vec();
        wrong_header.extend(&v3[5..]);
        let p = decode(ApiKey::EndTxn, 3, 7, &wrong_header).unwrap_err();
        assert!(
            p.problem
                .starts_with("the response header is v0, but EndTxn v3 answers with header v1"),
            "{}",
            p.problem
        );
        assert!(
            p.summary().contains("EndTxn v3 (response header v1)"),
            "{}",
            p.summary()
        );
        // Read past: under header v0 it is the answer it would have been, error code and all.
        let (past, as_header) = read_past(ApiKey::EndTxn, 3, &p).expect("read under v0");
        assert_eq!(as_header, 0);
        let right = decode(ApiKey::EndTxn, 3, 7, &v3).unwrap();
        assert_eq!(past.values, right.values);
        assert!(past.values.is_some());
        // A stray byte inside: named with the field it precedes.
        let mut stray = v3.clone();
        stray.insert(9, 0xab);
        let p = decode(ApiKey::EndTxn, 3, 7, &stray).unwrap_err();
        assert_eq!(p.offset, 9);
        // Not a header defect: nothing to read past.
        assert!(read_past(ApiKey::EndTxn, 3, &p).is_none());
        assert!(
            p.problem
                .contains("stray byte ab at byte 9, before error_code"),
            "{}",
            p.problem
        );
    }

    /// The encodings Apache's parser reads though no canonical encoder writes them: each is
    /// accepted, decoded to the same values, and noted (the re-encoding rule refused them all).
    #[test]
    fn what_apaches_parser_reads_is_well_formed_and_noted() {
        let v3 = end_txn_frame(3, 7, 48);
        let accepted = |frame: &[u8]| -> (i16, Vec<String>) {
            let d = decode(ApiKey::EndTxn, 3, 7, frame).unwrap_or_else(|m| panic!("{m}"));
            let Some(ResponseKind::EndTxn(r)) = d.response else {
                panic!()
            };
            (
                r.error_code,
                d.notes
                    .iter()
                    .map(|n| format!("{}: {}", n.field, n.what))
                    .collect(),
            )
        };
        // The tag count 0 in two bytes.
        let mut long = v3.clone();
        long.pop();
        long.extend([0x80, 0x00]);
        let (code, notes) = accepted(&long);
        assert_eq!(code, 48);
        assert_eq!(
            notes,
            ["(tagged fields): varint 0 in 2 bytes, where 1 would do"]
        );
        // An unknown tag in the body and one in the header.
        let mut unknown = v3.clone();
        unknown.pop();
        unknown.extend([1, 5, 2, 0xab, 0xcd]);
        unknown[4] = 1;
        unknown.splice(5..5, [3, 0]);
        let (code, notes) = accepted(&unknown);
        assert_eq!(code, 48);
        assert_eq!(
            notes,
            [
                "header.(tag 3): unknown tag 3 (0 byte(s)), which Java keeps unread",
                "(tag 5): unknown tag 5 (2 byte(s)), which Java keeps unread"
            ]
        );
        // Past 32 bits, the fifth byte's high bits are dropped: 0x70 << 28 is 0 in an int.
        let mut wide = v3.clone();
        wide.pop();
        wide.extend([0x80, 0x80, 0x80, 0x80, 0x70]);
        let (_, notes) = accepted(&wide);
        assert!(
            notes[0].contains("past 32 bits: Java keeps the low 32, 0"),
            "{notes:?}"
        );
        // A continuation bit on the fifth byte is refused, as Java refuses it.
        let mut six = v3.clone();
        six.pop();
        six.extend([0x80, 0x80, 0x80, 0x80, 0x80, 0x00]);
        let m = decode(ApiKey::EndTxn, 3, 7, &six).unwrap_err();
        assert!(
            m.problem.contains("varint longer than 5 bytes"),
            "{}",
            m.problem
        );
    }

    #[test]
    fn tagged_fields_read_as_apache_reads_them() {
        // CreateTopics v5: one topic whose TopicConfigErrorCode (tag 0) is written at its
        // default, then again with a size that is not its value's.
        let topic = |tags: &[u8]| {
            let mut f = vec![0, 0, 0, 7, 0]; // correlation 7, header tags
            f.extend([0, 0, 0, 0]); // throttle
            f.push(2); // one topic
            f.extend([2, b't']); // name "t"
            f.extend([0, 0]); // error_code
            f.push(0); // error_message null
            f.extend(3i32.to_be_bytes()); // num_partitions
            f.extend(1i16.to_be_bytes()); // replication_factor
            f.push(0); // configs null
            f.extend(tags);
            f.push(0); // the body's tags
            f
        };
        let read = |frame: &[u8]| {
            let d = decode(ApiKey::CreateTopics, 5, 7, frame).unwrap_or_else(|m| panic!("{m}"));
            let Some(ResponseKind::CreateTopics(r)) = d.response else {
                panic!()
            };
            let notes: Vec<String> = d.notes.iter().map(|n| n.what.clone()).collect();
            (r.topics[0].topic_config_error_code, notes)
        };
        let (code, notes) = read(&topic(&[1, 0, 2, 0, 0]));
        assert_eq!(code, 0);
        assert_eq!(
            notes,
            ["present at its default value, which Apache's writer leaves out"]
        );
        // Java reads the int16 and ignores the size (here 5, the value takes 2).
        let (code, notes) = read(&topic(&[1, 0, 5, 0, 42]));
        assert_eq!(code, 42);
        assert!(
            notes[0].contains("tagged size 5, but its value takes 2"),
            "{notes:?}"
        );
        // Twice: the last counts; out of order is read all the same.
        let (code, notes) = read(&topic(&[2, 0, 2, 0, 1, 0, 2, 0, 9]));
        assert_eq!(code, 9);
        assert!(notes[0].contains("tag 0 again"), "{notes:?}");
        // A tagged-field count that is negative as an int: Java reads none.
        let (code, notes) = read(&topic(&[0xff, 0xff, 0xff, 0xff, 0x0f]));
        assert_eq!(code, 0);
        assert!(notes[0].contains("Java reads no tagged field"), "{notes:?}");
        // A tag a field has only in later versions is refused: Produce v9 has no
        // NodeEndpoints (tag 0) until v10. No topics, no throttle, then that tag.
        let mut produce = vec![0, 0, 0, 7, 0, 1, 0, 0, 0, 0];
        produce.extend([1, 0, 1, 0]);
        let m = decode(ApiKey::Produce, 9, 7, &produce).unwrap_err();
        assert!(
            m.problem.contains("which v9 does not have"),
            "{}",
            m.problem
        );
    }

    #[test]
    fn lengths_and_strings_read_as_apache_reads_them() {
        // EndTxn has no string; FindCoordinator v2 (not flexible) has a nullable error message.
        let coordinator = |message: &[u8]| {
            let mut f = vec![0, 0, 0, 7];
            f.extend([0, 0, 0, 0, 0, 15]); // throttle, error 15
            f.extend(message);
            f.extend(1i32.to_be_bytes()); // node_id
            f.extend([0, 1, b'h']); // host
            f.extend(9092i32.to_be_bytes());
            f
        };
        let read = |frame: &[u8]| {
            let d = decode(ApiKey::FindCoordinator, 2, 7, frame).unwrap_or_else(|m| panic!("{m}"));
            let Some(ResponseKind::FindCoordinator(r)) = d.response else {
                panic!()
            };
            (r.error_message.map(|m| m.to_string()), d.notes)
        };
        // Any negative length of a nullable string is null.
        let (message, notes) = read(&coordinator(&(-2i16).to_be_bytes()));
        assert_eq!(message, None);
        assert!(
            notes[0].what.contains("length -2 reads as null"),
            "{notes:?}"
        );
        // Bytes that are not UTF-8 read with replacement characters.
        let (message, notes) = read(&coordinator(&[0, 2, 0xff, b'x']));
        assert_eq!(message.as_deref(), Some("\u{fffd}x"));
        assert!(notes[0].what.contains("not UTF-8"), "{notes:?}");
        // A non-nullable string's negative length is refused.
        let mut bad = coordinator(&[0xff, 0xff]);
        let host = bad.len() - 7;
        bad[host..host + 2].copy_from_slice(&(-1i16).to_be_bytes());
        let m = decode(ApiKey::FindCoordinator, 2, 7, &bad).unwrap_err();
        assert!(m.problem.contains("host at byte"), "{}", m.problem);
    }

    #[test]
    fn a_count_past_the_end_is_refused_before_any_allocation() {
        // TxnOffsetCommit v0: throttle, then a topics count of i32::MAX in a 14-byte frame.
        let mut frame = vec![0, 0, 0, 7, 0, 0, 0, 0];
        frame.extend(i32::MAX.to_be_bytes());
        let p = decode(ApiKey::TxnOffsetCommit, 0, 7, &frame).unwrap_err();
        assert!(
            p.problem
                .contains("topics at byte 8: count 2147483647, but only 0 byte(s) follow"),
            "{}",
            p.problem
        );
        assert_eq!(p.field.as_deref(), Some("topics"));
    }
}
