//! Exact decoding of a broker's answer: the frame must be a response header of the version the
//! API expects, with the request's correlation id, then a body that is the API's response at
//! the version sent, consuming every byte, and that re-encodes to the same bytes. Anything else
//! is [`Malformed`], never a decoded guess: the diagnosis names the field and the byte where
//! it went wrong (walking Apache's own schema, [`crate::schema`]), and keeps the frame.
//!
//! The walk comes before kafka-protocol decodes anything, so a count or a length past the end
//! of the frame is refused before memory is set aside for it.

use std::fmt;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, ResponseKind};
use kafka_protocol::protocol::Encodable;
use serde::{Deserialize, Serialize};

use crate::errors;
use crate::schema::{self, Field, Kind, Message};

/// An answer that is not a well-formed response: what was wrong, where, and the frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Malformed {
    /// The API of the request (`EndTxn`).
    pub api: String,
    /// The version of the request.
    pub version: i16,
    /// The response header version that API and version answer with.
    pub header_version: i16,
    /// What is wrong, in words.
    pub problem: String,
    /// The field where decoding went wrong (`topics[0].partitions[1].error_code`), if one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The byte of the frame (after its 4-byte size) where the problem is.
    pub offset: usize,
    /// The whole frame after its size, in hex.
    pub frame: String,
}

/// How many bytes of the frame a one-line summary shows.
const SUMMARY_BYTES: usize = 32;

impl Malformed {
    /// One line: API, version, header version, problem, and the start of the frame.
    pub fn summary(&self) -> String {
        let bytes = self.frame.split(' ').filter(|b| !b.is_empty()).count();
        let shown: Vec<&str> = self.frame.split(' ').take(SUMMARY_BYTES).collect();
        let more = match bytes > SUMMARY_BYTES {
            true => " …",
            false => "",
        };
        format!(
            "{} v{} (response header v{}): {}; frame ({bytes} bytes): {}{more}",
            self.api,
            self.version,
            self.header_version,
            self.problem,
            shown.join(" ")
        )
    }
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.summary())
    }
}

/// `00 01 ff`.
pub fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One field's bytes in a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// Field path (`topics[0].name`; an array's own span is its count).
    pub path: String,
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
    /// A fixed-width integer (int8 to int64): a value that can be changed in place.
    pub integer: bool,
}

/// Where and why a walk stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkError {
    /// The field being read.
    pub path: String,
    /// The byte where it starts or where the problem is.
    pub offset: usize,
    /// What is wrong.
    pub problem: String,
}

/// Reads a frame field by field along a schema, recording each field's bytes.
struct Walker<'a> {
    bytes: &'a [u8],
    pos: usize,
    end: usize,
    version: i16,
    flexible: bool,
    spans: Vec<Span>,
}

fn join(prefix: &str, name: &str) -> String {
    match prefix.is_empty() {
        true => name.to_owned(),
        false => format!("{prefix}.{name}"),
    }
}

impl Walker<'_> {
    fn fail<T>(&self, path: &str, offset: usize, problem: String) -> Result<T, WalkError> {
        Err(WalkError {
            path: path.to_owned(),
            offset,
            problem,
        })
    }

    fn take(&mut self, path: &str, n: usize) -> Result<&[u8], WalkError> {
        let left = self.end - self.pos;
        if n > left {
            let what = match left {
                0 => "the frame ends here".to_owned(),
                _ => format!("the frame ends {left} byte(s) into it"),
            };
            return self.fail(path, self.pos, format!("needs {n} byte(s); {what}"));
        }
        let start = self.pos;
        self.pos += n;
        Ok(&self.bytes[start..self.pos])
    }

    fn span(&mut self, path: &str, start: usize) {
        self.spans.push(Span {
            path: path.to_owned(),
            start,
            end: self.pos,
            integer: false,
        });
    }

    fn uvarint(&mut self, path: &str) -> Result<u32, WalkError> {
        let start = self.pos;
        let mut value: u64 = 0;
        for i in 0..5 {
            let b = self.take(path, 1)?[0];
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return u32::try_from(value).or_else(|_| {
                    self.fail(path, start, format!("varint {value} is past 32 bits"))
                });
            }
        }
        self.fail(path, start, "varint longer than 5 bytes".into())
    }

    fn int(&mut self, path: &str, n: usize) -> Result<i64, WalkError> {
        let b = self.take(path, n)?;
        Ok(match n {
            2 => i16::from_be_bytes([b[0], b[1]]).into(),
            _ => i32::from_be_bytes([b[0], b[1], b[2], b[3]]).into(),
        })
    }

    /// A length or count: compact (varint, 0 for null) in flexible versions, else an int16
    /// (strings) or int32 (-1 for null). `None` for null.
    fn length(
        &mut self,
        path: &str,
        wide: bool,
        nullable: bool,
    ) -> Result<Option<usize>, WalkError> {
        let start = self.pos;
        let n: i64 = match self.flexible {
            true => i64::from(self.uvarint(path)?) - 1,
            false => self.int(path, if wide { 4 } else { 2 })?,
        };
        match n {
            -1 if nullable => Ok(None),
            -1 => self.fail(
                path,
                start,
                format!("null, which v{} does not allow here", self.version),
            ),
            n if n < -1 => self.fail(path, start, format!("negative length {n}")),
            n => Ok(Some(n as usize)),
        }
    }

    fn fields(&mut self, prefix: &str, fields: &[Field]) -> Result<(), WalkError> {
        for f in fields {
            if !f.versions.contains(self.version) {
                continue;
            }
            let tagged = f.tagged.is_some_and(|(_, v)| v.contains(self.version));
            if self.flexible && tagged {
                continue;
            }
            self.value(
                &join(prefix, &f.name),
                &f.kind,
                f.nullable.contains(self.version),
            )?;
        }
        if self.flexible {
            self.tags(prefix, fields)?;
        }
        Ok(())
    }

    fn value(&mut self, path: &str, kind: &Kind, nullable: bool) -> Result<(), WalkError> {
        let start = self.pos;
        let fixed = match kind {
            Kind::Bool | Kind::Int8 => Some(1),
            Kind::Int16 | Kind::Uint16 => Some(2),
            Kind::Int32 => Some(4),
            Kind::Int64 | Kind::Float64 => Some(8),
            Kind::Uuid => Some(16),
            _ => None,
        };
        if let Some(n) = fixed {
            self.take(path, n)?;
            self.span(path, start);
            let integer = matches!(
                kind,
                Kind::Int8 | Kind::Int16 | Kind::Uint16 | Kind::Int32 | Kind::Int64
            );
            if let Some(last) = self.spans.last_mut() {
                last.integer = integer;
            }
            return Ok(());
        }
        match kind {
            Kind::String => {
                if let Some(len) = self.length(path, false, nullable)? {
                    let text = self.take(path, len)?;
                    if std::str::from_utf8(text).is_err() {
                        return self.fail(path, start, "not UTF-8".into());
                    }
                }
                self.span(path, start);
            }
            Kind::Bytes | Kind::Records => {
                if let Some(len) = self.length(path, true, nullable)? {
                    self.take(path, len)?;
                }
                self.span(path, start);
            }
            Kind::Array(inner) => {
                let Some(count) = self.length(path, true, nullable)? else {
                    self.span(path, start);
                    return Ok(());
                };
                // Every element takes a byte at least (a flexible struct its tag count), so
                // a count past the bytes left is refused before anything is allocated.
                let left = self.end - self.pos;
                if count > left {
                    return self.fail(
                        path,
                        start,
                        format!("count {count}, but only {left} byte(s) follow"),
                    );
                }
                self.span(&format!("{path} (count)"), start);
                for i in 0..count {
                    self.value(&format!("{path}[{i}]"), inner, false)?;
                }
            }
            Kind::Struct(fields) => self.fields(path, fields)?,
            _ => unreachable!("fixed widths handled above"),
        }
        Ok(())
    }

    /// The tagged fields of a structure: a count, then (tag, size, value) each.
    fn tags(&mut self, prefix: &str, fields: &[Field]) -> Result<(), WalkError> {
        let section = join(prefix, "(tagged fields)");
        let start = self.pos;
        let count = self.uvarint(&section)? as usize;
        if count > self.end - self.pos {
            return self.fail(
                &section,
                start,
                format!(
                    "{count} tagged fields, but only {} byte(s) follow",
                    self.end - self.pos
                ),
            );
        }
        self.span(&section, start);
        let mut last = None;
        for _ in 0..count {
            let at = self.pos;
            let tag = self.uvarint(&section)?;
            if last.is_some_and(|l| tag <= l) {
                return self.fail(&section, at, format!("tag {tag} out of order"));
            }
            last = Some(tag);
            let size = self.uvarint(&section)? as usize;
            let known = fields.iter().find(|f| {
                f.versions.contains(self.version)
                    && f.tagged
                        .is_some_and(|(t, v)| t == tag && v.contains(self.version))
            });
            let Some(f) = known else {
                let path = join(prefix, &format!("(tag {tag})"));
                self.take(&path, size)?;
                self.span(&path, at);
                continue;
            };
            let path = join(prefix, &f.name);
            if size > self.end - self.pos {
                return self.fail(&path, at, format!("tagged size {size} is past the end"));
            }
            let (outer, value_end) = (self.end, self.pos + size);
            self.end = value_end;
            let walked = self.value(&path, &f.kind, f.nullable.contains(self.version));
            self.end = outer;
            walked?;
            if self.pos != value_end {
                return self.fail(
                    &path,
                    at,
                    format!(
                        "tagged size {size}, but its value takes {}",
                        self.pos - (value_end - size)
                    ),
                );
            }
        }
        Ok(())
    }
}

/// Walks `bytes[from..]` as `message` at `version`; the spans of its fields and where it
/// ended.
pub fn walk(
    message: &Message,
    version: i16,
    bytes: &[u8],
    from: usize,
) -> Result<(Vec<Span>, usize), WalkError> {
    let mut w = Walker {
        bytes,
        pos: from,
        end: bytes.len(),
        version,
        flexible: message.flexible.contains(version),
        spans: Vec::new(),
    };
    w.fields("", &message.fields)?;
    Ok((w.spans, w.pos))
}

/// Walks a tagged-field section alone (a count, then tag, size and value each) at
/// `bytes[from..]`, as a flexible request header ends: the spans of its tags and where it
/// ended.
pub fn walk_tagged_section(
    bytes: &[u8],
    from: usize,
    path: &str,
) -> Result<(Vec<Span>, usize), WalkError> {
    let mut w = Walker {
        bytes,
        pos: from,
        end: bytes.len(),
        version: 0,
        flexible: true,
        spans: Vec::new(),
    };
    w.tags(path, &[])?;
    Ok((w.spans, w.pos))
}

/// The schema name of an API (`EndTxn`).
fn api_name(api: ApiKey) -> String {
    errors::api_name(api as i16)
}

/// Every field of a well-formed answer, header first (paths of the header start with
/// `header.`): where a mutation can put a byte.
pub fn spans(api: ApiKey, version: i16, frame: &[u8]) -> Result<Vec<Span>, WalkError> {
    let hv = api.response_header_version(version);
    let (mut spans, body) = walk(schema::response_header(), hv, frame, 0)?;
    for s in &mut spans {
        s.path = format!("header.{}", s.path);
    }
    if let Some(message) = schema::response(&api_name(api)) {
        spans.extend(walk(message, version, frame, body)?.0);
    }
    Ok(spans)
}

/// What [`decode`] found wrong, before the diagnosis is dressed.
struct Problem {
    field: Option<String>,
    offset: usize,
    text: String,
}

/// Decodes `frame` (the bytes after the size) as the answer to `api` v`version` with
/// `correlation`, exactly; or says precisely why it is not one.
pub fn decode(
    api: ApiKey,
    version: i16,
    correlation: i32,
    frame: &[u8],
) -> Result<ResponseKind, Box<Malformed>> {
    let header_version = api.response_header_version(version);
    let malformed = |p: Problem| {
        Box::new(Malformed {
            api: api_name(api),
            version,
            header_version,
            problem: p.text,
            field: p.field,
            offset: p.offset,
            frame: hex(frame),
        })
    };
    match strict(api, version, header_version, correlation, frame) {
        Ok(response) => Ok(response),
        Err(problem) => Err(malformed(explain(
            api,
            version,
            header_version,
            correlation,
            frame,
            problem,
        ))),
    }
}

/// The checks, in order: header, correlation id, the body along Apache's schema, nothing left
/// over, kafka-protocol's decoding, and the same bytes when re-encoded.
fn strict(
    api: ApiKey,
    version: i16,
    header_version: i16,
    correlation: i32,
    frame: &[u8],
) -> Result<ResponseKind, Problem> {
    let from_walk = |e: WalkError| Problem {
        text: format!("{} at byte {}: {}", e.path, e.offset, e.problem),
        field: Some(e.path),
        offset: e.offset,
    };
    let (_, body) = walk(schema::response_header(), header_version, frame, 0).map_err(|e| {
        let mut p = from_walk(e);
        p.text = format!("header {}", p.text);
        p
    })?;
    let answered = i32::from_be_bytes(frame[..4].try_into().expect("the walk read 4 bytes"));
    if answered != correlation {
        return Err(Problem {
            field: Some("header.correlation_id".into()),
            offset: 0,
            text: format!("correlation id {answered}, but the request's was {correlation}"),
        });
    }
    let mut spans = Vec::new();
    if let Some(message) = schema::response(&api_name(api)) {
        let (walked, end) = walk(message, version, frame, body).map_err(from_walk)?;
        spans = walked;
        if end < frame.len() {
            return Err(left_over(frame.len() - end, end, spans.last()));
        }
    }
    let mut buf = Bytes::copy_from_slice(&frame[body..]);
    let response = ResponseKind::decode(api, &mut buf, version).map_err(|e| {
        let at = frame.len() - buf.len();
        Problem {
            field: None,
            offset: at,
            text: format!("kafka-protocol cannot decode it (stopped at byte {at}): {e}"),
        }
    })?;
    if !buf.is_empty() {
        let end = frame.len() - buf.len();
        return Err(left_over(buf.len(), end, None));
    }
    let mut again = BytesMut::new();
    let encoded = encode(&response, &mut again, version);
    if encoded.is_ok() && again[..] != frame[body..] {
        let i = again
            .iter()
            .zip(&frame[body..])
            .position(|(a, b)| a != b)
            .unwrap_or(again.len().min(frame.len() - body));
        let at = body + i;
        let field = spans
            .iter()
            .find(|s| (s.start..s.end).contains(&at))
            .map(|s| s.path.clone());
        return Err(Problem {
            text: format!(
                "decodes, but not in the canonical encoding: byte {at}{} is {}, where encoding the decoded answer gives {}",
                field.as_deref().map(|f| format!(" ({f})")).unwrap_or_default(),
                frame.get(at).map_or("past the end".into(), |b| format!("{b:02x}")),
                again.get(i).map_or("nothing".into(), |b| format!("{b:02x}")),
            ),
            field,
            offset: at,
        });
    }
    Ok(response)
}

fn left_over(n: usize, at: usize, last: Option<&Span>) -> Problem {
    Problem {
        field: None,
        offset: at,
        text: format!(
            "{n} byte(s) left over after the last field{}",
            last.map(|s| format!(" ({}, bytes {}..{})", s.path, s.start, s.end))
                .unwrap_or_default()
        ),
    }
}

/// kafka-protocol's encoder for any response kind.
fn encode(response: &ResponseKind, buf: &mut BytesMut, version: i16) -> Result<(), String> {
    macro_rules! each {
        ($($kind:ident),*) => {
            match response {
                $(ResponseKind::$kind(r) => r.encode(buf, version).map_err(|e| e.to_string()),)*
                _ => Err("no encoder".to_owned()),
            }
        };
    }
    each!(
        ApiVersions,
        CreateTopics,
        FindCoordinator,
        Metadata,
        Produce,
        Fetch,
        ListOffsets,
        OffsetFetch,
        JoinGroup,
        SyncGroup,
        Heartbeat,
        LeaveGroup,
        OffsetCommit,
        DeleteGroups,
        InitProducerId,
        AddPartitionsToTxn,
        AddOffsetsToTxn,
        EndTxn,
        WriteTxnMarkers,
        TxnOffsetCommit
    )
}

/// A diagnosis a kaas engineer can act on: when the frame would be well-formed with the other
/// header version, or without one byte, that is what it says (both, when both would do: a
/// frame of zeros can be read either way).
fn explain(
    api: ApiKey,
    version: i16,
    header_version: i16,
    correlation: i32,
    frame: &[u8],
    problem: Problem,
) -> Problem {
    let mut fixes: Vec<Problem> = Vec::new();
    let other = 1 - header_version.clamp(0, 1);
    if strict(api, version, other, correlation, frame).is_ok() {
        fixes.push(Problem {
            field: Some("header".into()),
            offset: 4,
            text: format!(
                "the response header is v{other}, but {} v{version} answers with header v{header_version}",
                api_name(api),
            ),
        });
    }
    // One byte too many: the bytes without which the frame is well-formed. A frame of zeros
    // often has several; a non-zero one is the likelier intruder, and the others are named.
    if frame.len() <= 4096 {
        let candidates: Vec<usize> = (0..frame.len())
            .filter(|&i| {
                let mut without = frame.to_vec();
                without.remove(i);
                strict(api, version, header_version, correlation, &without).is_ok()
            })
            .collect();
        let likeliest = candidates
            .iter()
            .copied()
            .find(|&i| frame[i] != 0)
            .or(candidates.first().copied());
        if let Some(i) = likeliest {
            let mut without = frame.to_vec();
            let stray = without.remove(i);
            let field = spans(api, version, &without)
                .ok()
                .and_then(|s| s.into_iter().find(|s| s.start >= i))
                .map(|s| s.path);
            let place = match &field {
                Some(f) => format!(", before {f}"),
                None => ", after the last field".to_owned(),
            };
            let others: Vec<String> = candidates
                .iter()
                .filter(|&&c| c != i)
                .map(|c| c.to_string())
                .collect();
            let also = match others.len() {
                0 => String::new(),
                1..=3 => format!(" (so it is without byte {})", others.join(" or ")),
                n => format!(
                    " (so it is without byte {} or {} others)",
                    others[..3].join(", "),
                    n - 3
                ),
            };
            fixes.push(Problem {
                text: format!(
                    "a stray byte {stray:02x} at byte {i}{place}: without it the answer is well-formed{also}"
                ),
                field,
                offset: i,
            });
        }
    }
    if fixes.is_empty() {
        return problem;
    }
    let text = fixes
        .iter()
        .map(|f| f.text.as_str())
        .collect::<Vec<_>>()
        .join("; or ");
    let first = fixes.swap_remove(0);
    Problem {
        text: format!("{text} (as sent: {})", problem.text),
        ..first
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::{EndTxnResponse, ResponseHeader};

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
        let ResponseKind::EndTxn(r) = decode(ApiKey::EndTxn, 3, 7, &frame).unwrap() else {
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
        // A stray byte inside: named with the field it precedes.
        let mut stray = v3.clone();
        stray.insert(9, 0xab);
        let p = decode(ApiKey::EndTxn, 3, 7, &stray).unwrap_err();
        assert_eq!(p.offset, 9);
        assert!(
            p.problem
                .contains("stray byte ab at byte 9, before error_code"),
            "{}",
            p.problem
        );
        // A non-canonical varint (tag count 0 written in two bytes) decodes but is refused.
        let mut long = v3.clone();
        long.pop();
        long.extend([0x80, 0x00]);
        let p = decode(ApiKey::EndTxn, 3, 7, &long).unwrap_err();
        assert!(
            p.problem.contains("not in the canonical encoding"),
            "{}",
            p.problem
        );
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
