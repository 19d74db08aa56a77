//! Apache Kafka 3.7's own definitions of the responses kconform reads and of the six
//! transaction requests: the message JSON files that kafka-clients 3.7.2 ships
//! (`common/message/*Response.json`, `*Request.json`), kept unchanged in `kconform-wire/schema/`.
//! They say, for every version, which fields a message has, in what order, of what type, which
//! may be null and which are tagged — what [`crate::read`] needs to walk a broker's answer byte
//! by byte, name the field where it goes wrong, and refuse a count or a length past the end
//! before anything is allocated for it; and what the live-wire fuzzer
//! (kconform's `fuzz::wire`) needs to find the fields of a request frame it mutates and to tell
//! a well-formed request from a malformed one.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::Value;

/// An inclusive range of versions (`"0+"`, `"1-3"`, `"4"`, `"none"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Versions {
    lo: i16,
    hi: i16,
}

impl Versions {
    /// No version.
    pub const NONE: Versions = Versions { lo: 1, hi: 0 };

    fn parse(s: &str) -> Result<Versions, String> {
        let s = s.trim();
        let bad = || format!("version range '{s}'");
        if s == "none" || s.is_empty() {
            return Ok(Versions::NONE);
        }
        if let Some(lo) = s.strip_suffix('+') {
            let lo = lo.parse().map_err(|_| bad())?;
            return Ok(Versions { lo, hi: i16::MAX });
        }
        if let Some((lo, hi)) = s.split_once('-') {
            return Ok(Versions {
                lo: lo.parse().map_err(|_| bad())?,
                hi: hi.parse().map_err(|_| bad())?,
            });
        }
        let v = s.parse().map_err(|_| bad())?;
        Ok(Versions { lo: v, hi: v })
    }

    /// Whether `version` is in the range.
    pub fn contains(self, version: i16) -> bool {
        (self.lo..=self.hi).contains(&version)
    }

    /// The highest version in the range.
    pub fn highest(self) -> i16 {
        self.hi
    }
}

/// A field's type.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// `bool`: one byte.
    Bool,
    /// `int8`.
    Int8,
    /// `int16`.
    Int16,
    /// `uint16`.
    Uint16,
    /// `int32`.
    Int32,
    /// `int64`.
    Int64,
    /// `float64`.
    Float64,
    /// `uuid`: 16 bytes.
    Uuid,
    /// `string`: UTF-8 with a length.
    String,
    /// `bytes`.
    Bytes,
    /// `records`: a record set, bytes with a length.
    Records,
    /// `[]T`.
    Array(Box<Kind>),
    /// A structure of fields, followed in flexible versions by its tagged fields.
    Struct(Vec<Field>),
}

impl Kind {
    /// The fields of a structure, or of the structures an array holds; none for a value.
    pub fn structure(&self) -> Option<&[Field]> {
        match self {
            Kind::Struct(fields) => Some(fields),
            Kind::Array(inner) => inner.structure(),
            _ => None,
        }
    }
}

/// One field of a message or structure.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Apache's name in snake_case (`producer_epoch`), as transcripts name it.
    pub name: String,
    /// Its type.
    pub kind: Kind,
    /// The versions that have it.
    pub versions: Versions,
    /// The versions in which it may be null.
    pub nullable: Versions,
    /// Its tag and the versions in which it is sent tagged (after the fixed fields).
    pub tagged: Option<(u32, Versions)>,
    /// Apache's `default`, as written (`-1`, `null`, `true`), if the file gives one: what a
    /// parser reads when a tagged field is absent, and so what Apache's writer leaves out.
    pub default: Option<String>,
    /// Apache's `ignorable`: a writer drops a value the version cannot carry instead of
    /// refusing the request.
    pub ignorable: bool,
}

/// A response message.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Apache's name (`EndTxnResponse`).
    pub name: String,
    /// The versions that exist.
    pub valid: Versions,
    /// The versions that use compact lengths and tagged fields.
    pub flexible: Versions,
    /// The fields, in wire order.
    pub fields: Vec<Field>,
}

/// A later release's file, by its name without `.json`.
macro_rules! later {
    ($name:literal) => {
        (
            $name,
            include_str!(concat!("../schema/4.4.0/", $name, ".json")),
        )
    };
}

/// The schema files, by name: Apache's text, comments and licence header included.
const FILES: [(&str, &str); 28] = [
    (
        "ResponseHeader",
        include_str!("../schema/ResponseHeader.json"),
    ),
    (
        "ApiVersions",
        include_str!("../schema/ApiVersionsResponse.json"),
    ),
    (
        "SaslHandshake",
        include_str!("../schema/SaslHandshakeResponse.json"),
    ),
    (
        "SaslAuthenticate",
        include_str!("../schema/SaslAuthenticateResponse.json"),
    ),
    (
        "CreateAcls",
        include_str!("../schema/CreateAclsResponse.json"),
    ),
    (
        "DescribeAcls",
        include_str!("../schema/DescribeAclsResponse.json"),
    ),
    (
        "DeleteAcls",
        include_str!("../schema/DeleteAclsResponse.json"),
    ),
    (
        "CreateTopics",
        include_str!("../schema/CreateTopicsResponse.json"),
    ),
    (
        "DescribeConfigs",
        include_str!("../schema/DescribeConfigsResponse.json"),
    ),
    (
        "FindCoordinator",
        include_str!("../schema/FindCoordinatorResponse.json"),
    ),
    ("Metadata", include_str!("../schema/MetadataResponse.json")),
    ("Produce", include_str!("../schema/ProduceResponse.json")),
    ("Fetch", include_str!("../schema/FetchResponse.json")),
    (
        "ListOffsets",
        include_str!("../schema/ListOffsetsResponse.json"),
    ),
    (
        "OffsetFetch",
        include_str!("../schema/OffsetFetchResponse.json"),
    ),
    (
        "JoinGroup",
        include_str!("../schema/JoinGroupResponse.json"),
    ),
    (
        "SyncGroup",
        include_str!("../schema/SyncGroupResponse.json"),
    ),
    (
        "Heartbeat",
        include_str!("../schema/HeartbeatResponse.json"),
    ),
    (
        "LeaveGroup",
        include_str!("../schema/LeaveGroupResponse.json"),
    ),
    (
        "ConsumerGroupHeartbeat",
        include_str!("../schema/ConsumerGroupHeartbeatResponse.json"),
    ),
    (
        "OffsetCommit",
        include_str!("../schema/OffsetCommitResponse.json"),
    ),
    (
        "DeleteGroups",
        include_str!("../schema/DeleteGroupsResponse.json"),
    ),
    (
        "InitProducerId",
        include_str!("../schema/InitProducerIdResponse.json"),
    ),
    (
        "AddPartitionsToTxn",
        include_str!("../schema/AddPartitionsToTxnResponse.json"),
    ),
    (
        "AddOffsetsToTxn",
        include_str!("../schema/AddOffsetsToTxnResponse.json"),
    ),
    ("EndTxn", include_str!("../schema/EndTxnResponse.json")),
    (
        "WriteTxnMarkers",
        include_str!("../schema/WriteTxnMarkersResponse.json"),
    ),
    (
        "TxnOffsetCommit",
        include_str!("../schema/TxnOffsetCommitResponse.json"),
    ),
];

/// The request files, by API name: the six transaction APIs, whose request frames the
/// live-wire fuzzer mutates.
const REQUEST_FILES: [(&str, &str); 6] = [
    (
        "InitProducerId",
        include_str!("../schema/InitProducerIdRequest.json"),
    ),
    (
        "AddPartitionsToTxn",
        include_str!("../schema/AddPartitionsToTxnRequest.json"),
    ),
    (
        "AddOffsetsToTxn",
        include_str!("../schema/AddOffsetsToTxnRequest.json"),
    ),
    ("EndTxn", include_str!("../schema/EndTxnRequest.json")),
    (
        "WriteTxnMarkers",
        include_str!("../schema/WriteTxnMarkersRequest.json"),
    ),
    (
        "TxnOffsetCommit",
        include_str!("../schema/TxnOffsetCommitRequest.json"),
    ),
];

/// The release whose definitions cover the versions 3.7.2 does not have: the newest kconform
/// targets. Kafka never changes a version once released, so a version both releases have reads
/// the same in each; 3.7.2's are used where it has the version (its names are the ones
/// scenarios and transcripts use), this one's beyond (EndTxn v5, TxnOffsetCommit v5 and v6,
/// WriteTxnMarkers v2, InitProducerId v5 and v6, AddPartitionsToTxn v5, AddOffsetsToTxn v4).
pub const LATER_RELEASE: &str = "4.4.0";

/// The six transaction APIs' requests and responses as kafka-clients [`LATER_RELEASE`] ships
/// them (`kconform-wire/schema/4.4.0/`), by file name.
const LATER_FILES: [(&str, &str); 14] = [
    later!("InitProducerIdRequest"),
    later!("InitProducerIdResponse"),
    later!("AddPartitionsToTxnRequest"),
    later!("AddPartitionsToTxnResponse"),
    later!("AddOffsetsToTxnRequest"),
    later!("AddOffsetsToTxnResponse"),
    later!("EndTxnRequest"),
    later!("EndTxnResponse"),
    later!("WriteTxnMarkersRequest"),
    later!("WriteTxnMarkersResponse"),
    later!("TxnOffsetCommitRequest"),
    later!("TxnOffsetCommitResponse"),
    // Produce v12 (4.0, KIP-890 part 2: a partition added to its transaction implicitly),
    // which kafka-protocol 0.15 writes as the v11 it says it is the same as.
    later!("ProduceRequest"),
    later!("ProduceResponse"),
];

/// The later release's file names, for the test that they are Apache's.
pub fn later_file_names() -> impl Iterator<Item = String> {
    LATER_FILES.iter().map(|(name, _)| format!("{name}.json"))
}

/// The embedded text of a later release's file, by its file name.
pub fn later_file_text(file: &str) -> Option<&'static str> {
    LATER_FILES
        .iter()
        .find(|(name, _)| file.strip_suffix(".json") == Some(name))
        .map(|(_, text)| *text)
}

/// The file names of `FILES` and `REQUEST_FILES`, for the test that they are Apache's.
pub fn file_names() -> impl Iterator<Item = String> {
    FILES
        .iter()
        .map(|(name, _)| match *name {
            "ResponseHeader" => "ResponseHeader.json".to_owned(),
            api => format!("{api}Response.json"),
        })
        .chain(
            REQUEST_FILES
                .iter()
                .map(|(api, _)| format!("{api}Request.json")),
        )
}

/// The embedded text of a schema file, by its file name.
pub fn file_text(file: &str) -> Option<&'static str> {
    FILES
        .iter()
        .chain(REQUEST_FILES.iter())
        .zip(file_names())
        .find(|(_, name)| name == file)
        .map(|((_, text), _)| *text)
}

/// Each embedded file parsed, by name (a file that does not parse is a bug of this build).
fn parse_files(files: &[(&'static str, &'static str)]) -> BTreeMap<&'static str, Message> {
    files
        .iter()
        .map(|(name, text)| {
            let message = parse(text)
                .unwrap_or_else(|e| panic!("the embedded schema of {name} does not parse: {e}"));
            (*name, message)
        })
        .collect()
}

fn parsed() -> &'static BTreeMap<&'static str, Message> {
    static PARSED: OnceLock<BTreeMap<&'static str, Message>> = OnceLock::new();
    PARSED.get_or_init(|| parse_files(&FILES))
}

/// The response of the API named as Apache names it (`EndTxn`), if kconform knows it.
pub fn response(api: &str) -> Option<&'static Message> {
    parsed().get(api).filter(|_| api != "ResponseHeader")
}

/// The response of the API at `version`: 3.7.2's definition where 3.7.2 has the version,
/// else [`LATER_RELEASE`]'s where that has it (else 3.7.2's, which then reads no such version).
pub fn response_at(api: &str, version: i16) -> Option<&'static Message> {
    at(response(api)?, later(api, "Response"), version)
}

/// The request of a transaction API at `version`, chosen as [`response_at`] chooses.
pub fn request_at(api: &str, version: i16) -> Option<&'static Message> {
    at(request(api)?, later(api, "Request"), version)
}

/// The highest version of a transaction API's request that a vendored definition has (4.4.0's
/// EndTxn: 5); none for another API.
pub fn request_defined_up_to(api: &str) -> Option<i16> {
    let claimed = request(api)?.valid.highest();
    Some(later_request(api).map_or(claimed, |l| l.valid.highest().max(claimed)))
}

/// The ignorable fields of a transaction API's request in any vendored definition, by path
/// (`markers[].transaction_version`): what Apache's writer drops, without a word, at a
/// version that lacks them, so a step may give them to every version of a sweep.
pub fn ignorable_request_fields(api: &str) -> Vec<String> {
    fn walk(fields: &[Field], at: &str, out: &mut Vec<String>) {
        for f in fields {
            let path = format!("{at}{}", f.name);
            if f.ignorable {
                out.push(path.clone());
            }
            if let Some(fields) = f.kind.structure() {
                walk(fields, &format!("{path}[]."), out);
            }
        }
    }
    let mut out = Vec::new();
    for message in request(api).into_iter().chain(later_request(api)) {
        walk(&message.fields, "", &mut out);
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The later release's definition of `api`'s `Request` or `Response`.
fn later(api: &str, kind: &str) -> Option<&'static Message> {
    static PARSED: OnceLock<BTreeMap<&'static str, Message>> = OnceLock::new();
    PARSED
        .get_or_init(|| parse_files(&LATER_FILES))
        .get(format!("{api}{kind}").as_str())
}

/// A request as kafka-clients [`LATER_RELEASE`] defines it (`Produce`), for an API whose
/// 3.7.2 request kconform does not vendor.
pub fn later_request(api: &str) -> Option<&'static Message> {
    later(api, "Request")
}

/// Whether `message` is written alike at versions `a` and `b`: the same fields, each present,
/// nullable and tagged (with the same tag) at both, and both flexible or neither. Apache's
/// "version 12 is the same as version 11", read from its definition instead of its comment.
pub fn same_wire(message: &Message, a: i16, b: i16) -> bool {
    fn fields_alike(fields: &[Field], a: i16, b: i16) -> bool {
        fields.iter().all(|f| {
            let tag = |v: i16| f.tagged.filter(|(_, t)| t.contains(v)).map(|(tag, _)| tag);
            f.versions.contains(a) == f.versions.contains(b)
                && f.nullable.contains(a) == f.nullable.contains(b)
                && tag(a) == tag(b)
                && f.kind
                    .structure()
                    .is_none_or(|children| fields_alike(children, a, b))
        })
    }
    message.valid.contains(a)
        && message.valid.contains(b)
        && message.flexible.contains(a) == message.flexible.contains(b)
        && fields_alike(&message.fields, a, b)
}

fn at(
    claimed: &'static Message,
    later: Option<&'static Message>,
    version: i16,
) -> Option<&'static Message> {
    match later {
        Some(l) if !claimed.valid.contains(version) && l.valid.contains(version) => Some(l),
        _ => Some(claimed),
    }
}

/// The response header.
pub fn response_header() -> &'static Message {
    &parsed()["ResponseHeader"]
}

/// The request of a transaction API named as Apache names it (`EndTxn`); `None` for the
/// others.
pub fn request(api: &str) -> Option<&'static Message> {
    static PARSED: OnceLock<BTreeMap<&'static str, Message>> = OnceLock::new();
    PARSED.get_or_init(|| parse_files(&REQUEST_FILES)).get(api)
}

/// Parses one message file (JSON with `//` comment lines).
pub fn parse(text: &str) -> Result<Message, String> {
    let json: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let v: Value = serde_json::from_str(&json).map_err(|e| e.to_string())?;
    let text_of = |key: &str| v.get(key).and_then(Value::as_str).unwrap_or("none");
    let mut common = BTreeMap::new();
    for s in v
        .get("commonStructs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = s
            .get("name")
            .and_then(Value::as_str)
            .ok_or("a common struct has no name")?;
        common.insert(name.to_owned(), s.clone());
    }
    Ok(Message {
        name: text_of("name").to_owned(),
        valid: Versions::parse(text_of("validVersions"))?,
        flexible: Versions::parse(text_of("flexibleVersions"))?,
        fields: fields(v.get("fields"), &common)?,
    })
}

fn fields(list: Option<&Value>, common: &BTreeMap<String, Value>) -> Result<Vec<Field>, String> {
    list.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|f| field(f, common))
        .collect()
}

fn field(f: &Value, common: &BTreeMap<String, Value>) -> Result<Field, String> {
    let get = |key: &str| f.get(key).and_then(Value::as_str);
    let name = get("name").ok_or("a field has no name")?;
    let ty = get("type").ok_or_else(|| format!("field {name} has no type"))?;
    let tagged = match (f.get("tag").and_then(Value::as_u64), get("taggedVersions")) {
        (Some(tag), Some(v)) => Some((tag as u32, Versions::parse(v)?)),
        _ => None,
    };
    Ok(Field {
        name: snake_case(name),
        kind: kind(ty, f, common)?,
        versions: Versions::parse(get("versions").unwrap_or("none"))?,
        nullable: Versions::parse(get("nullableVersions").unwrap_or("none"))?,
        tagged,
        // Apache writes most defaults as strings, a few as numbers (`"default": -1`).
        default: f.get("default").map(|d| match d.as_str() {
            Some(text) => text.to_owned(),
            None => d.to_string(),
        }),
        ignorable: f.get("ignorable").and_then(Value::as_bool).unwrap_or(false),
    })
}

fn kind(ty: &str, f: &Value, common: &BTreeMap<String, Value>) -> Result<Kind, String> {
    if let Some(inner) = ty.strip_prefix("[]") {
        return Ok(Kind::Array(Box::new(kind(inner, f, common)?)));
    }
    Ok(match ty {
        "bool" => Kind::Bool,
        "int8" => Kind::Int8,
        "int16" => Kind::Int16,
        "uint16" => Kind::Uint16,
        "int32" => Kind::Int32,
        "int64" => Kind::Int64,
        "float64" => Kind::Float64,
        "uuid" => Kind::Uuid,
        "string" => Kind::String,
        "bytes" => Kind::Bytes,
        "records" => Kind::Records,
        name => match f.get("fields") {
            Some(list) => Kind::Struct(fields(Some(list), common)?),
            None => {
                let shared = common
                    .get(name)
                    .ok_or_else(|| format!("unknown type '{name}'"))?;
                Kind::Struct(fields(shared.get("fields"), common)?)
            }
        },
    })
}

/// `ProducerEpoch` → `producer_epoch`.
pub(crate) fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_schema_parses_with_its_versions() {
        for (name, _) in FILES {
            let m = &parsed()[name];
            assert!(!m.fields.is_empty(), "{name}");
        }
        for (name, _) in REQUEST_FILES {
            assert!(!request(name).unwrap().fields.is_empty(), "{name}Request");
        }
        let apt = request("AddPartitionsToTxn").unwrap();
        assert!(apt.valid.contains(4) && apt.flexible.contains(3) && !apt.flexible.contains(2));
        assert_eq!(apt.fields[0].name, "transactions");
        assert!(request("Fetch").is_none());
        let end = response("EndTxn").unwrap();
        assert!(end.valid.contains(3) && !end.valid.contains(4));
        assert!(end.flexible.contains(3) && !end.flexible.contains(2));
        let names: Vec<&str> = end.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["throttle_time_ms", "error_code"]);
        // A common struct resolves, and tagged fields keep their tags.
        let apt = response("AddPartitionsToTxn").unwrap();
        assert!(
            matches!(&apt.fields[2].kind, Kind::Array(inner) if matches!(**inner, Kind::Struct(_)))
        );
        let fetch = response("Fetch").unwrap();
        let Kind::Array(topic) = &fetch.fields[3].kind else {
            panic!()
        };
        let Kind::Struct(topic) = &**topic else {
            panic!()
        };
        let Kind::Array(partition) = &topic[2].kind else {
            panic!()
        };
        let Kind::Struct(partition) = &**partition else {
            panic!()
        };
        let diverging = partition
            .iter()
            .find(|f| f.name == "diverging_epoch")
            .unwrap();
        assert_eq!(diverging.tagged.map(|(tag, _)| tag), Some(0));
        assert_eq!(snake_case("ThrottleTimeMs"), "throttle_time_ms");
        assert_eq!(Versions::parse("none").unwrap(), Versions::NONE);
        assert!(Versions::parse("x+").is_err());
    }

    #[test]
    fn a_version_past_3_7_reads_by_the_later_release() {
        let end = response_at("EndTxn", 5).unwrap();
        let names: Vec<&str> = end.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names[2..], ["producer_id", "producer_epoch"]);
        assert!(end.valid.contains(5));
        // 3.7.2's own where it has the version: its names (generation_id, not 4.4's
        // generation_id_or_member_epoch).
        let commit = request_at("TxnOffsetCommit", 3).unwrap();
        assert!(commit.fields.iter().any(|f| f.name == "generation_id"));
        let commit = request_at("TxnOffsetCommit", 6).unwrap();
        assert!(commit
            .fields
            .iter()
            .any(|f| f.name == "generation_id_or_member_epoch"));
        assert_eq!(
            response_at("WriteTxnMarkers", 2).unwrap().valid.highest(),
            2
        );
        assert_eq!(response_at("Fetch", 17).unwrap().valid.highest(), 16);
        // A number as a default (InitProducerId v6's ongoing_txn_producer_id) reads as text.
        let init = response_at("InitProducerId", 6).unwrap();
        assert_eq!(init.fields[4].default.as_deref(), Some("-1"));
    }
}
