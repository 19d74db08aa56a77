//! What a request frame is, read along Apache's own schemas ([`crate::schema`]): its header,
//! and whether its body is a well-formed request of the API and version the header names
//! (bytes after the body are allowed: Apache ignores them), with the bytes of every field —
//! where the structure-aware mutations ([`crate::mutate`]) put their values, and how a
//! mutated frame is judged: a broker must answer a well-formed request of a version it
//! serves, as Apache does.

use kafka_protocol::messages::ApiKey;

use crate::read::{self, Parser, Span};
use crate::{api_name, schema};

/// A request frame's header, read from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The API key, as sent.
    pub key: i16,
    /// The version, as sent.
    pub version: i16,
    /// The correlation id an answer must carry.
    pub correlation: i32,
}

/// The first eight bytes of a frame, if it has them.
pub fn header(frame: &[u8]) -> Option<Header> {
    let b = frame.get(..8)?;
    Some(Header {
        key: i16::from_be_bytes([b[0], b[1]]),
        version: i16::from_be_bytes([b[2], b[3]]),
        correlation: i32::from_be_bytes([b[4], b[5], b[6], b[7]]),
    })
}

/// A well-formed request of a transaction API: what it is and the bytes of each field.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The API.
    pub api: ApiKey,
    /// The version.
    pub version: i16,
    /// Whether that version is flexible (compact lengths, tagged fields).
    pub flexible: bool,
    /// Header fields (paths `header.`…) then body fields, in frame order.
    pub spans: Vec<Span>,
    /// Where the body ends (bytes after it are ignored).
    pub end: usize,
}

/// The highest version of a transaction API's request any Apache release kconform knows has
/// (3.7.2's definitions, and 4.4.0's beyond them: EndTxn v5, WriteTxnMarkers v2).
pub fn highest_version(api: ApiKey) -> i16 {
    schema::request_defined_up_to(&api_name(api as i16)).unwrap_or(-1)
}

fn integer(path: &str, start: usize, end: usize) -> Span {
    Span {
        path: path.into(),
        start,
        end,
        integer: true,
    }
}

/// Reads `frame` as a request of one of the six transaction APIs: `Err` says why it is not
/// a well-formed one (unknown API, a version no Apache release kconform knows has, a header
/// or body that does not walk), as Apache 3.7's parser reads it.
pub fn parse(frame: &[u8]) -> Result<Parsed, String> {
    parse_as(frame, Parser::default())
}

/// Reads `frame` as [`parse`] does, as `parser` (the release the target answers as) reads it:
/// a request a 4.2 broker is right to close on can be one kaas, claiming 3.7, must answer.
pub fn parse_as(frame: &[u8], parser: Parser) -> Result<Parsed, String> {
    let h = header(frame).ok_or_else(|| format!("{} bytes, no request header", frame.len()))?;
    let api = ApiKey::try_from(h.key).map_err(|_| format!("API key {}", h.key))?;
    let message = schema::request_at(&api_name(h.key), h.version)
        .ok_or_else(|| format!("{api:?} is not a transaction API"))?;
    if !message.valid.contains(h.version) {
        return Err(format!("{api:?} has no v{}", h.version));
    }
    let mut spans = vec![
        integer("header.request_api_key", 0, 2),
        integer("header.request_api_version", 2, 4),
        integer("header.correlation_id", 4, 8),
    ];
    // The client id: always an int16 length (any negative one is null, as Apache reads it).
    let len = frame
        .get(8..10)
        .map(|b| i16::from_be_bytes([b[0], b[1]]))
        .ok_or("the header ends before its client id")?;
    let mut at = 10 + usize::try_from(len).unwrap_or(0);
    if at > frame.len() {
        return Err(format!("client id of {len} bytes past the end"));
    }
    // Bytes that are not UTF-8 are read with replacement characters, as Apache reads them.
    spans.push(Span {
        path: "header.client_id".into(),
        start: 8,
        end: at,
        integer: false,
    });
    if api.request_header_version(h.version) >= 2 {
        let (tags, end) = read::read_tagged_section(frame, at, "header", parser)
            .map(|r| (r.spans, r.end))
            .map_err(|e| format!("header {} at byte {}: {}", e.path, e.offset, e.problem))?;
        spans.extend(tags);
        at = end;
    }
    let (body, end) = read::read_as(message, h.version, frame, at, parser)
        .map(|r| (r.spans, r.end))
        .map_err(|e| format!("{} at byte {}: {}", e.path, e.offset, e.problem))?;
    spans.extend(body);
    Ok(Parsed {
        api,
        version: h.version,
        flexible: message.flexible.contains(h.version),
        spans,
        end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_is_judged_by_apaches_schema() {
        // EndTxn v3: header v2 (client id "c", no tags), then id "t", pid 7, epoch 1, commit.
        let mut frame = vec![0, 26, 0, 3, 0, 0, 0, 9, 0, 1, b'c', 0];
        frame.extend([2, b't', 0, 0, 0, 0, 0, 0, 0, 7, 0, 1, 1, 0]);
        let p = parse(&frame).unwrap();
        assert_eq!((p.api, p.version, p.flexible), (ApiKey::EndTxn, 3, true));
        assert_eq!(p.end, frame.len());
        let paths: Vec<&str> = p.spans.iter().map(|s| s.path.as_str()).collect();
        assert!(paths.contains(&"transactional_id") && paths.contains(&"committed"));
        // Bytes after the body are ignored, as Apache ignores them.
        let mut longer = frame.clone();
        longer.push(0xff);
        assert_eq!(parse(&longer).unwrap().end, frame.len());
        // A cut body, a version Apache lacks, an API that is not a transaction API.
        assert!(parse(&frame[..frame.len() - 2]).is_err());
        let mut v6 = frame.clone();
        v6[3] = 6;
        assert!(parse(&v6).unwrap_err().contains("no v6"));
        // EndTxn v5, 4.0's, walks by 4.4.0's definition (the same fields as v3).
        let mut v5 = frame.clone();
        v5[3] = 5;
        assert_eq!(parse(&v5).unwrap().version, 5);
        let mut fetch = frame.clone();
        fetch[1] = 1;
        assert!(parse(&fetch).is_err());
        assert_eq!(header(&frame).unwrap().correlation, 9);
        assert!(header(&frame[..7]).is_none());
    }
}
