//! What a frame's fate says: the judge of one frame ([`judge`]), pure, given what the target
//! did with it ([`Happened`]), the versions it serves and the parser of the release it answers
//! as. An undecodable answer's signature is its defect ([`defect`]), not the API it was seen
//! on: one framing defect of every API is one finding.

use std::time::Duration;

use kafka_protocol::messages::ApiKey;
use serde::Serialize;

use super::{seeds, shape};
use crate::wire::error_codes;
use crate::wire::frame::{Malformed, Parser};

/// The kinds of finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// The answer does not decode as the response to the request.
    Undecodable,
    /// The answer carries another correlation id.
    WrongCorrelation,
    /// An answer to a version the target does not serve, or to an API no one knows.
    AnsweredUnknown,
    /// A well-formed request of a served version was not answered; the connection closed.
    ClosedWellFormed,
    /// Neither an answer nor a close within the deadline.
    Silent,
    /// A fresh connection's ApiVersions is refused afterwards.
    Unhealthy,
}

impl Kind {
    /// The word a signature starts with.
    pub fn word(self) -> &'static str {
        match self {
            Kind::Undecodable => "undecodable answer",
            Kind::WrongCorrelation => "wrong correlation id",
            Kind::AnsweredUnknown => "answered an unknown version",
            Kind::ClosedWellFormed => "closed on a well-formed request",
            Kind::Silent => "silent",
            Kind::Unhealthy => "stopped answering",
        }
    }

    /// The signature of a finding of this kind that the broker's last words name.
    pub fn said(self, words: &str) -> String {
        format!("{}: {words}", self.word())
    }
}

/// What came back for one frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Happened {
    /// An answer frame (without its size).
    Answered(Vec<u8>),
    /// The connection closed without an answer.
    Closed,
    /// Nothing within the deadline.
    Silent(Duration),
    /// An answer that could not be read whole: cut short, or a size past the limit.
    Unreadable(String),
    /// No connection could be made.
    Unreachable(String),
}

impl Happened {
    /// In words.
    pub fn describe(&self) -> String {
        match self {
            Happened::Answered(a) => format!("answered ({} bytes)", a.len()),
            Happened::Closed => "closed the connection without an answer".into(),
            Happened::Silent(d) => format!("neither answered nor closed within {d:?}"),
            Happened::Unreadable(why) => format!("answered unreadably: {why}"),
            Happened::Unreachable(why) => format!("could not be reached: {why}"),
        }
    }
}

/// A frame's finding: its kind, its signature (kind, API and version, and what was wrong),
/// and the details.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    /// The kind.
    pub kind: Kind,
    /// What distinguishes it from other findings.
    pub signature: String,
    /// The details (the malformed answer's diagnosis).
    pub detail: String,
}

/// Whether Apache answers `key` v`version` without listing it in ApiVersions: the two client
/// telemetry APIs (KIP-714), GetTelemetrySubscriptions (71) and PushTelemetry (72), v0. Apache
/// 3.7 enables them on every broker listener and answers them (with an error when no metrics
/// reporter takes client telemetry), but lists them only when one does; a 10-minute run
/// against Apache 3.7.2 had it answer GetTelemetrySubscriptions v0 unlisted.
pub fn answered_unlisted(key: i16, version: i16) -> bool {
    matches!(key, 71 | 72) && version == 0
}

/// Whether a silence on `frame` is judged only against an oracle that answers it: for the two
/// APIs only brokers send each other, WriteTxnMarkers and AddPartitionsToTxn v4+ (the
/// verification a partition leader asks of the coordinator), Apache itself leaves well-formed
/// requests unanswered past any deadline. Seen on Apache 3.7.2, each on a fresh connection:
/// a WriteTxnMarkers v0 with an `__consumer_offsets` partition listed twice in one marker,
/// or its topic twice, or that partition's marker followed by a marker without topics (a
/// coordinator never sends them; no client waits on either API). Without an oracle such a
/// silence is counted, not reported; a broker that hangs whole is still a crash.
pub fn silence_needs_oracle(frame: &[u8]) -> bool {
    match shape::header(frame) {
        Some(h) if h.key == ApiKey::WriteTxnMarkers as i16 => true,
        Some(h) => h.key == ApiKey::AddPartitionsToTxn as i16 && h.version >= 4,
        None => false,
    }
}

/// `API vN` of a frame's header, as far as it has one.
pub(super) fn named(frame: &[u8]) -> String {
    match shape::header(frame) {
        Some(h) => format!("{} v{}", error_codes::api_name(h.key), h.version),
        None => format!("a {}-byte frame", frame.len()),
    }
}

/// Judges what the target did with `frame`, given the versions it serves ((key, min, max))
/// and the parser of the release it answers as (a close on a frame that parser refuses is
/// no finding). Pure: the health of the target afterwards is checked apart (`healthy`).
pub fn judge(
    frame: &[u8],
    happened: &Happened,
    served: &[(i16, i16, i16)],
    parser: Parser,
) -> Option<Judged> {
    let finding = |kind: Kind, detail: String| {
        Some(Judged {
            kind,
            signature: format!("{}: {}", kind.word(), named(frame)),
            detail,
        })
    };
    match happened {
        Happened::Answered(answer) => {
            let h = shape::header(frame)?;
            let range = served.iter().find(|(k, _, _)| *k == h.key);
            let serves = range.is_some_and(|&(_, lo, hi)| (lo..=hi).contains(&h.version))
                || answered_unlisted(h.key, h.version);
            let api = ApiKey::try_from(h.key).ok();
            // KIP-511: an ApiVersions of a version the broker lacks is answered in v0.
            let version = match (api, serves) {
                (Some(ApiKey::ApiVersions), false) => 0,
                _ => h.version,
            };
            let Some(api) = api.filter(|a| serves || *a == ApiKey::ApiVersions) else {
                // One defect however many versions and keys show it (a broker that answers
                // what it does not list is fixed in one place): the signature names none,
                // and each API and version it is seen on again is listed on the finding.
                return Some(Judged {
                    kind: Kind::AnsweredUnknown,
                    signature: format!(
                        "{}: answers API versions it does not list",
                        Kind::AnsweredUnknown.word()
                    ),
                    detail: format!(
                        "answered a frame naming API key {} v{}, which it does not serve (Apache closes the connection)",
                        h.key, h.version
                    ),
                });
            };
            if !crate::wire::frame::can_read(api, version) {
                // A version kconform has no definition of (a later Apache's, beyond the six):
                // the answer cannot be judged, and is no finding of the broker's.
                return None;
            }
            match crate::wire::frame::decode(api, version, h.correlation, answer) {
                Ok(_) => None,
                Err(m) if m.field.as_deref() == Some("header.correlation_id") => {
                    finding(Kind::WrongCorrelation, m.summary())
                }
                Err(m) => Some(Judged {
                    kind: Kind::Undecodable,
                    signature: format!("{}: {}", Kind::Undecodable.word(), defect(&m)),
                    detail: format!("{}: {}", m.field.clone().unwrap_or_default(), m.summary()),
                }),
            }
        }
        Happened::Closed => {
            let p = shape::parse_as(frame, parser).ok()?;
            let serves = served
                .iter()
                .any(|&(k, lo, hi)| k == p.api as i16 && (lo..=hi).contains(&p.version));
            serves.then_some(())?;
            finding(
                Kind::ClosedWellFormed,
                "the frame is a well-formed request of a version the target serves, which Apache answers".into(),
            )
        }
        // Silence is no finding for the other APIs (an acks=0 Produce is not answered, a
        // Fetch may wait for records): their frames come from a mutated API key.
        Happened::Silent(d) => {
            transaction_api(frame)?;
            finding(Kind::Silent, format!("no answer and no close within {d:?}"))
        }
        Happened::Unreadable(why) => Some(Judged {
            kind: Kind::Undecodable,
            signature: format!("{}: {}", Kind::Undecodable.word(), numbers_out(why)),
            detail: format!("size: {why}"),
        }),
        Happened::Unreachable(_) => None,
    }
}

/// What is wrong with a malformed answer, whatever API and version it answered: the header
/// version when the other one reads it whole ("response header v1 where v0 is due"), else the
/// field where Apache's parser stopped (array indexes out) and the problem's first reading,
/// numbers out. Two frames of one defect on two APIs have one defect; the finding lists the
/// APIs it was seen on.
pub fn defect(m: &Malformed) -> String {
    let first = m.problem.split("; or ").next().unwrap_or_default();
    if m.field.as_deref() == Some("header") && first.starts_with("the response header is v") {
        let sent = first
            .strip_prefix("the response header is v")
            .and_then(|r| r.split(',').next())
            .unwrap_or("?");
        return format!("response header v{sent} where v{} is due", m.header_version);
    }
    if let Some(body) = short_body(m) {
        // kaas answers a version it does not serve, or a request it cannot decode, with a body
        // of its error code alone: one defect, whichever field of which API comes first.
        return format!(
            "a body of {} byte(s) after the correlation id, short of the fields the API has",
            numbers_out(&body.to_string())
        );
    }
    let field = m.field.as_deref().map(indexes_out).unwrap_or_default();
    let first = first.split(" (as sent:").next().unwrap_or(first);
    let api_named = format!("{} v{}", m.api, m.version);
    let problem = numbers_out(&first.replace(&api_named, "the API"));
    match field.is_empty() || problem.starts_with(&field) {
        true => problem,
        false => format!("{field}: {problem}"),
    }
}

/// The length of what follows a malformed answer's correlation id when it is an error code
/// alone at most, with or without an empty tagged-field section before it (three bytes or
/// fewer): a real kaas build answers so on APIs of either header version, with header v1
/// where v0 is due (`00 00 00 0a 00 00 23`), so that the field its reading stops at varies.
fn short_body(m: &Malformed) -> Option<usize> {
    let bytes = m.frame.split_whitespace().count();
    let body = bytes.checked_sub(4)?;
    (body <= 3).then_some(body)
}

pub use kconform_wire::text::{indexes_out, numbers_out};

/// `markers (count): count 2147483647, but ...` as `markers (count)`; `producer_id = 7` as
/// `producer_id`: the field, without the value that varies.
pub(super) fn field_of(matters: &str) -> String {
    let field = matters
        .split([':', '='])
        .next()
        .unwrap_or(matters)
        .split(" at byte")
        .next()
        .unwrap_or_default()
        .trim()
        .to_owned();
    indexes_out(&field)
}

/// The API a frame's header names ("EndTxn"), as far as it has a header.
pub(super) fn api_of(frame: &[u8]) -> String {
    match shape::header(frame) {
        Some(h) => error_codes::api_name(h.key).to_string(),
        None => format!("a {}-byte frame", frame.len()),
    }
}

/// The transaction API a frame's header names, if it names one.
pub(super) fn transaction_api(frame: &[u8]) -> Option<ApiKey> {
    let key = shape::header(frame)?.key;
    seeds::APIS.into_iter().find(|a| *a as i16 == key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end_txn_v3() -> Vec<u8> {
        let mut frame = vec![0, 26, 0, 3, 0, 0, 0, 9, 0, 1, b'c', 0];
        frame.extend([2, b't', 0, 0, 0, 0, 0, 0, 0, 7, 0, 1, 1, 0]);
        frame
    }

    const SERVED: [(i16, i16, i16); 1] = [(26, 0, 3)];

    /// Apache 3.7.2 answered a GetTelemetrySubscriptions v0 it does not list (seen live): an
    /// exact answer to it is no finding; the same answer to a key no one answers unlisted is.
    #[test]
    fn the_telemetry_apis_are_answered_unlisted_as_apache_answers_them() {
        use kafka_protocol::messages::GetTelemetrySubscriptionsResponse;
        use kafka_protocol::protocol::Encodable;
        // Header v2: key 71, v0, correlation 5, client id "c", no tags; an empty body.
        let frame = vec![0, 71, 0, 0, 0, 0, 0, 5, 0, 1, b'c', 0, 0, 0];
        let mut answer = bytes::BytesMut::from(&[0u8, 0, 0, 5, 0][..]);
        GetTelemetrySubscriptionsResponse::default()
            .with_error_code(35)
            .encode(&mut answer, 0)
            .unwrap();
        let answered = Happened::Answered(answer.to_vec());
        assert_eq!(judge(&frame, &answered, &SERVED, Parser::default()), None);
        let mut other_key = frame.clone();
        other_key[1] = 70;
        let j = judge(&other_key, &answered, &SERVED, Parser::default()).unwrap();
        assert_eq!(j.kind, Kind::AnsweredUnknown);
        let mut v1 = frame;
        v1[3] = 1;
        let j = judge(&v1, &answered, &SERVED, Parser::default()).unwrap();
        assert_eq!(j.kind, Kind::AnsweredUnknown);
        // One defect, one signature: an unknown key and an unknown version sign alike
        // (a real kaas build's fifteen findings of it were one), the detail keeps which.
        let other = judge(&other_key, &answered, &SERVED, Parser::default()).unwrap();
        assert_eq!(j.signature, other.signature);
        assert!(!j.signature.contains("v1"), "{}", j.signature);
        assert!(j.detail.contains("v1"), "{}", j.detail);
    }

    /// Silence on the APIs brokers send each other waits for an oracle; on the others it does
    /// not (the frames Apache 3.7.2 left unanswered here are of the first kind).
    #[test]
    fn silence_on_broker_to_broker_apis_waits_for_an_oracle() {
        // WriteTxnMarkers v0, one marker, __consumer_offsets partition 0 three times.
        let mut markers = vec![0, 27, 0, 0, 0, 0, 0, 7, 0, 1, b'x', 0, 0, 0, 1];
        markers.extend([0; 10]);
        markers.push(1);
        markers.extend([0, 0, 0, 1, 0, 18]);
        markers.extend(b"__consumer_offsets");
        markers.extend([0, 0, 0, 3]);
        markers.extend([0; 12]);
        markers.extend([0, 0, 0, 1]);
        assert!(shape::parse(&markers).is_ok(), "well-formed");
        assert!(silence_needs_oracle(&markers));
        let silent = Happened::Silent(Duration::from_secs(10));
        let served = [(27, 0, 1)];
        let j = judge(&markers, &silent, &served, Parser::default()).unwrap();
        assert_eq!(
            j.kind,
            Kind::Silent,
            "still judged silent: the run asks the oracle"
        );
        assert!(!silence_needs_oracle(&end_txn_v3()));
        let mut v4 = end_txn_v3();
        v4[1] = 24;
        v4[3] = 4;
        assert!(silence_needs_oracle(&v4));
        v4[3] = 3;
        assert!(!silence_needs_oracle(&v4), "v3 comes from clients");
    }

    /// Each kind of finding, and what is none: a close on a malformed frame, a close on a
    /// version the target does not serve, an exact answer.
    #[test]
    fn the_judge_tells_findings_from_closes_it_may_make() {
        let frame = end_txn_v3();
        // EndTxn v3 answer: correlation 9, header tags, throttle 0, error 0, tags.
        let good = vec![0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(
            judge(
                &frame,
                &Happened::Answered(good.clone()),
                &SERVED,
                Parser::default()
            ),
            None
        );
        let mut other = good.clone();
        other[3] = 8;
        let j = judge(
            &frame,
            &Happened::Answered(other),
            &SERVED,
            Parser::default(),
        )
        .unwrap();
        assert_eq!(j.kind, Kind::WrongCorrelation);
        let j = judge(
            &frame,
            &Happened::Answered(good[..10].to_vec()),
            &SERVED,
            Parser::default(),
        )
        .unwrap();
        assert_eq!(j.kind, Kind::Undecodable);
        assert_eq!(
            j.signature,
            "undecodable answer: error_code at byte N: needs N byte(s); the frame ends N byte(s) into it"
        );
        let j = judge(&frame, &Happened::Closed, &SERVED, Parser::default()).unwrap();
        assert_eq!(j.kind, Kind::ClosedWellFormed);
        assert_eq!(j.signature, "closed on a well-formed request: EndTxn v3");
        assert_eq!(
            judge(&frame, &Happened::Closed, &[(26, 0, 2)], Parser::default()),
            None
        );
        assert_eq!(
            judge(
                &frame[..frame.len() - 3],
                &Happened::Closed,
                &SERVED,
                Parser::default()
            ),
            None
        );
        // A tagged-field count of -1 closing the body: 3.7 to 4.1 read no tagged field, so
        // a close on it is a finding; 4.2's parser refuses it, so a 4.2 broker may close.
        let mut minus_one = frame[..frame.len() - 1].to_vec();
        minus_one.extend([0xff, 0xff, 0xff, 0xff, 0x0f]);
        let j = judge(&minus_one, &Happened::Closed, &SERVED, Parser::Until4_1).unwrap();
        assert_eq!(j.kind, Kind::ClosedWellFormed);
        assert_eq!(
            judge(&minus_one, &Happened::Closed, &SERVED, Parser::From4_2),
            None
        );
        let mut v9 = frame.clone();
        v9[3] = 9;
        let j = judge(&v9, &Happened::Answered(good), &SERVED, Parser::default()).unwrap();
        assert_eq!(j.kind, Kind::AnsweredUnknown);
        let silent = Happened::Silent(Duration::from_secs(1));
        assert_eq!(
            judge(&frame, &silent, &SERVED, Parser::default())
                .unwrap()
                .kind,
            Kind::Silent
        );
        // An unanswered Produce (acks=0) is no finding.
        let mut produce = frame.clone();
        produce[1] = 0;
        assert_eq!(judge(&produce, &silent, &SERVED, Parser::default()), None);
        // ApiVersions of a version not served: answered in v0 (KIP-511), as Apache does.
        let api_versions = [0u8, 18, 0, 4, 0, 0, 0, 5, 0, 0];
        let v0 = vec![0, 0, 0, 5, 0, 35, 0, 0, 0, 0];
        let served = [(18, 0, 3)];
        assert_eq!(
            judge(
                &api_versions,
                &Happened::Answered(v0),
                &served,
                Parser::default()
            ),
            None
        );
    }

    /// One framing defect on two APIs is one signature: the header version, not the field the
    /// misreading would hit.
    #[test]
    fn a_framing_defect_is_one_signature_on_every_api() {
        let end_txn = end_txn_v3();
        // EndTxn v3's answer with header v0 (no tagged fields after the correlation id).
        let answer = vec![0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0];
        let served = [(26, 0, 3), (22, 0, 4)];
        let a = judge(
            &end_txn,
            &Happened::Answered(answer),
            &served,
            Parser::default(),
        )
        .unwrap();
        // InitProducerId v2 ("t", timeout 60000), answered with header v0.
        let mut init = vec![0, 22, 0, 2, 0, 0, 0, 9, 0, 1, b'c', 0];
        init.extend([2, b't', 0, 0, 0xea, 0x60, 0]);
        let answer = vec![
            0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 1, 0,
        ];
        let b = judge(
            &init,
            &Happened::Answered(answer),
            &served,
            Parser::default(),
        )
        .unwrap();
        assert_eq!(
            a.signature,
            "undecodable answer: response header v0 where v1 is due"
        );
        // An error code alone where the answer has fields: one defect on every API, whichever
        // field comes first (InitProducerId v2's throttle_time_ms, EndTxn v3's...).
        let alone = |frame: &[u8], header: &[u8]| {
            let answer = [header, &[0, 35]].concat();
            judge(
                frame,
                &Happened::Answered(answer),
                &served,
                Parser::default(),
            )
            .unwrap()
            .signature
        };
        assert_eq!(
            alone(&init, &[0, 0, 0, 9, 0]),
            "undecodable answer: a body of N byte(s) after the correlation id, short of the fields the API has"
        );
        assert_eq!(
            alone(&init, &[0, 0, 0, 9, 0]),
            alone(&end_txn, &[0, 0, 0, 9, 0])
        );
        // Header v1 where v0 is due, then the error code (a real kaas build's answer to
        // WriteTxnMarkers v0, `00 00 00 00 00 00 23`): the same defect.
        let markers_v0 = [0, 27, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0];
        let served = [(27, 0, 1), (22, 0, 4), (26, 0, 3)];
        let j = judge(
            &markers_v0,
            &Happened::Answered(vec![0, 0, 0, 9, 0, 0, 35]),
            &served,
            Parser::default(),
        )
        .unwrap();
        assert_eq!(j.signature, alone(&init, &[0, 0, 0, 9, 0]));
        assert_eq!(a.signature, b.signature, "{} / {}", a.detail, b.detail);
        assert_eq!(
            field_of("markers (count) at byte 14: count 2147483647, but only 0 byte(s) follow"),
            "markers (count)"
        );
        assert_eq!(
            field_of("topics[2].partitions[0] = 2147483647"),
            "topics[].partitions[]"
        );
    }
}
