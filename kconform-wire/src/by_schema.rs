//! Messages written and read by Apache's message definitions alone ([`crate::schema`]):
//! a request body from a tree of values, and an answer's values as a tree, at any version a
//! vendored definition has, including those kafka-protocol 0.15 does not generate (EndTxn v5,
//! TxnOffsetCommit v5 and v6, WriteTxnMarkers v2). One walk of the definition per direction,
//! with Apache's writer's rules: a field the version lacks is dropped when it is at its default
//! or `ignorable`, and refused otherwise; a tagged field is written only away from its default;
//! an absent tagged field reads as its default.
//!
//! The tree names every field as Apache does, in snake_case (`producer_epoch`), as transcripts
//! and scenario steps name them. Values: booleans, numbers, strings, `null`; `bytes` and
//! `records` as lowercase hex; a `uuid` as Apache prints one (22 characters of URL-safe base64).
//! Decoding reads a frame that [`crate::read`] has already found well-formed, and still
//! refuses, without panicking or allocating past the frame, anything it cannot read.

use base64::Engine;
use serde_json::{Map, Value};

use crate::hex::{hex_compact as hex, unhex};
use crate::schema::{Field, Kind, Message};

/// Fields Apache renamed after 3.7 without changing their bytes: a step may give either name.
/// (The later name first, then 3.7.2's.)
const RENAMED: [(&str, &str); 1] = [("generation_id_or_member_epoch", "generation_id")];

/// Why a tree could not be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// A key that names no field of the structure at any version: a typo, which would
    /// otherwise be dropped without a word.
    #[error("unknown field '{field}' (takes {takes})")]
    UnknownField {
        /// The key, nested ones as `topics[].name`.
        field: String,
        /// The fields the structure has, at any version.
        takes: String,
    },
    /// A value of the wrong type or range, or one the version cannot carry.
    #[error("{0}")]
    Invalid(String),
}

/// Writes `tree` (an object) as `message` at `version`. A field the tree leaves out takes the
/// value `defaults` gives for its path (`markers[].transaction_result`), else Apache's default.
pub fn encode(
    message: &Message,
    version: i16,
    tree: &Value,
    defaults: &[(&str, &str)],
) -> Result<Vec<u8>, EncodeError> {
    let mut w = Writer {
        out: Vec::new(),
        version,
        flexible: message.flexible.contains(version),
        defaults,
    };
    let Value::Object(fields) = tree else {
        return Err(EncodeError::Invalid(format!(
            "{}: expected a table of fields, got {tree}",
            message.name
        )));
    };
    w.fields("", &message.fields, fields)?;
    Ok(w.out)
}

/// Reads `bytes` as `message` at `version`, to the last byte: every field's value as a tree.
pub fn decode(message: &Message, version: i16, bytes: &[u8]) -> Result<Value, String> {
    let mut r = Reader {
        bytes,
        pos: 0,
        version,
        flexible: message.flexible.contains(version),
    };
    let tree = r.fields("", &message.fields)?;
    match r.pos == bytes.len() {
        true => Ok(Value::Object(tree)),
        false => Err(format!(
            "{} byte(s) left over after the last field",
            bytes.len() - r.pos
        )),
    }
}

/// `prefix.name`, or `name` at the top: a field's path.
pub(crate) fn join(prefix: &str, name: &str) -> String {
    match prefix.is_empty() {
        true => name.to_owned(),
        false => format!("{prefix}.{name}"),
    }
}

/// Whether the field is sent in its structure's tagged section at `version`.
fn tagged_at(f: &Field, version: i16, flexible: bool) -> bool {
    flexible && f.tagged.is_some_and(|(_, v)| v.contains(version))
}

/// Apache's default of a field, as a tree value (`given` overrides the definition's).
fn default_value(f: &Field, version: i16, given: Option<&str>) -> Result<Value, String> {
    let text = given.or(f.default.as_deref()).unwrap_or("");
    if text == "null" && f.nullable.contains(version) {
        return Ok(Value::Null);
    }
    let bad = || format!("{}: default '{text}' is no {:?}", f.name, f.kind);
    let int = || -> Result<i64, String> {
        if text.is_empty() {
            return Ok(0);
        }
        match text.strip_prefix("0x") {
            Some(hex) => i64::from_str_radix(hex, 16).map_err(|_| bad()),
            None => text.parse().map_err(|_| bad()),
        }
    };
    Ok(match &f.kind {
        Kind::Bool => Value::Bool(text == "true"),
        Kind::Int8 | Kind::Int16 | Kind::Uint16 | Kind::Int32 | Kind::Int64 => Value::from(int()?),
        Kind::Float64 => Value::from(match text {
            "" => 0.0,
            t => t.parse::<f64>().map_err(|_| bad())?,
        }),
        Kind::Uuid => Value::String(uuid_text(&[0; 16])),
        Kind::String => Value::String(text.to_owned()),
        Kind::Bytes | Kind::Records => Value::String(String::new()),
        Kind::Array(_) => Value::Array(Vec::new()),
        Kind::Struct(fields) => {
            let mut tree = Map::new();
            for inner in fields.iter().filter(|g| g.versions.contains(version)) {
                tree.insert(inner.name.clone(), default_value(inner, version, None)?);
            }
            Value::Object(tree)
        }
    })
}

/// Apache's `Uuid.toString`: URL-safe base64 without padding.
pub fn uuid_text(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// A uuid given as Apache prints one, or in the hyphenated hex form.
fn uuid_bytes(text: &str) -> Option<[u8; 16]> {
    if let Ok(u) = uuid::Uuid::parse_str(text) {
        return Some(*u.as_bytes());
    }
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text)
        .ok()?;
    bytes.try_into().ok()
}

struct Writer<'d> {
    out: Vec<u8>,
    version: i16,
    flexible: bool,
    defaults: &'d [(&'d str, &'d str)],
}

/// Appends the shortest unsigned varint of `v`.
fn put_uvarint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

impl Writer<'_> {
    /// A length or count: compact (n + 1, 0 for null) in flexible versions, else an int16
    /// (strings) or an int32 (-1 for null).
    fn length(&mut self, wide: bool, n: Option<usize>, path: &str) -> Result<(), EncodeError> {
        let too_long = || EncodeError::Invalid(format!("{path}: {} is too long", n.unwrap_or(0)));
        match (self.flexible, wide) {
            (true, _) => {
                let n = n.map_or(Ok(0), |n| u32::try_from(n + 1).map_err(|_| too_long()))?;
                put_uvarint(&mut self.out, n);
            }
            (false, true) => {
                let n = n.map_or(Ok(-1), |n| i32::try_from(n).map_err(|_| too_long()))?;
                self.out.extend(n.to_be_bytes());
            }
            (false, false) => {
                let n = n.map_or(Ok(-1), |n| i16::try_from(n).map_err(|_| too_long()))?;
                self.out.extend(n.to_be_bytes());
            }
        }
        Ok(())
    }

    /// The value given for `name` in `tree`, by its name or the name 3.7.2 gave it.
    fn given<'t>(tree: &'t Map<String, Value>, name: &str) -> Option<&'t Value> {
        tree.get(name).or_else(|| {
            RENAMED
                .iter()
                .find(|(later, _)| *later == name)
                .and_then(|(_, old)| tree.get(*old))
        })
    }

    fn fields(
        &mut self,
        prefix: &str,
        fields: &[Field],
        tree: &Map<String, Value>,
    ) -> Result<(), EncodeError> {
        for key in tree.keys() {
            let known = fields.iter().any(|f| {
                f.name == *key
                    || RENAMED
                        .iter()
                        .any(|(later, old)| f.name == *later && old == key)
            });
            if !known {
                let takes: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
                return Err(EncodeError::UnknownField {
                    field: format!("{prefix}{key}"),
                    takes: takes.join(", "),
                });
            }
        }
        let mut tagged: Vec<(u32, Vec<u8>)> = Vec::new();
        for f in fields {
            let path = format!("{prefix}{}", f.name);
            let step_default = self
                .defaults
                .iter()
                .find(|(p, _)| *p == path)
                .map(|(_, d)| *d);
            let schema_default =
                default_value(f, self.version, None).map_err(EncodeError::Invalid)?;
            let given = Self::given(tree, &f.name);
            if !f.versions.contains(self.version) {
                match given {
                    Some(v) if *v != schema_default && !f.ignorable => {
                        return Err(EncodeError::Invalid(format!(
                            "{path}: v{} has no such field, and it is not ignorable",
                            self.version
                        )))
                    }
                    _ => continue,
                }
            }
            let value = match given {
                Some(v) => v.clone(),
                None => {
                    default_value(f, self.version, step_default).map_err(EncodeError::Invalid)?
                }
            };
            if tagged_at(f, self.version, self.flexible) {
                if value != schema_default {
                    let outer = std::mem::take(&mut self.out);
                    let written = self.field(&path, f, &value);
                    let bytes = std::mem::replace(&mut self.out, outer);
                    written?;
                    let tag = f.tagged.map_or(0, |(t, _)| t);
                    tagged.push((tag, bytes));
                }
                continue;
            }
            self.field(&path, f, &value)?;
        }
        if self.flexible {
            tagged.sort_by_key(|(tag, _)| *tag);
            put_uvarint(&mut self.out, tagged.len() as u32);
            for (tag, bytes) in tagged {
                put_uvarint(&mut self.out, tag);
                put_uvarint(&mut self.out, bytes.len() as u32);
                self.out.extend(bytes);
            }
        }
        Ok(())
    }

    /// A field's value: a nullable structure's after the marker byte Apache's generated code
    /// writes (-1 for null, 1 before the structure), as the reader's `field_value` reads it.
    fn field(&mut self, path: &str, f: &Field, v: &Value) -> Result<(), EncodeError> {
        if matches!(f.kind, Kind::Struct(_)) && f.nullable.contains(self.version) {
            if v.is_null() {
                self.out.push(0xff);
                return Ok(());
            }
            self.out.push(1);
        }
        self.value(path, f, &f.kind, v)
    }

    fn value(&mut self, path: &str, f: &Field, kind: &Kind, v: &Value) -> Result<(), EncodeError> {
        let wrong = |what: &str| EncodeError::Invalid(format!("{path}: expected {what}, got {v}"));
        let nullable = f.nullable.contains(self.version);
        if v.is_null() && !matches!(kind, Kind::Struct(_)) {
            if !nullable {
                return Err(EncodeError::Invalid(format!(
                    "{path}: null, which v{} does not allow here",
                    self.version
                )));
            }
            return match kind {
                Kind::String => self.length(false, None, path),
                _ => self.length(true, None, path),
            };
        }
        let int = |lo: i64, hi: i64, name: &str| -> Result<i64, EncodeError> {
            let i = v.as_i64().ok_or_else(|| wrong("an integer"))?;
            match (lo..=hi).contains(&i) {
                true => Ok(i),
                false => Err(EncodeError::Invalid(format!(
                    "{path}: {i} is not an {name}"
                ))),
            }
        };
        match kind {
            Kind::Bool => self
                .out
                .push(u8::from(v.as_bool().ok_or_else(|| wrong("true or false"))?)),
            Kind::Int8 => self.out.push(int(-128, 127, "int8")? as i8 as u8),
            Kind::Int16 => self
                .out
                .extend((int(i16::MIN.into(), i16::MAX.into(), "int16")? as i16).to_be_bytes()),
            Kind::Uint16 => self
                .out
                .extend((int(0, u16::MAX.into(), "uint16")? as u16).to_be_bytes()),
            Kind::Int32 => self
                .out
                .extend((int(i32::MIN.into(), i32::MAX.into(), "int32")? as i32).to_be_bytes()),
            Kind::Int64 => self
                .out
                .extend(int(i64::MIN, i64::MAX, "int64")?.to_be_bytes()),
            Kind::Float64 => self
                .out
                .extend(v.as_f64().ok_or_else(|| wrong("a number"))?.to_be_bytes()),
            Kind::Uuid => {
                let bytes = v
                    .as_str()
                    .and_then(uuid_bytes)
                    .ok_or_else(|| wrong("a uuid"))?;
                self.out.extend(bytes);
            }
            Kind::String => {
                let text = v.as_str().ok_or_else(|| wrong("a string"))?;
                self.length(false, Some(text.len()), path)?;
                self.out.extend(text.as_bytes());
            }
            Kind::Bytes | Kind::Records => {
                let bytes = v
                    .as_str()
                    .and_then(unhex)
                    .ok_or_else(|| wrong("bytes in hex"))?;
                self.length(true, Some(bytes.len()), path)?;
                self.out.extend(bytes);
            }
            Kind::Array(inner) => {
                let items = v.as_array().ok_or_else(|| wrong("an array"))?;
                self.length(true, Some(items.len()), path)?;
                for item in items {
                    if item.is_null() {
                        return Err(EncodeError::Invalid(format!("{path}: a null element")));
                    }
                    self.value(&format!("{path}[]"), f, inner, item)?;
                }
            }
            Kind::Struct(fields) => {
                let empty = Map::new();
                let tree = match v {
                    Value::Object(t) => t,
                    Value::Null => &empty,
                    _ => return Err(wrong("a table")),
                };
                self.fields(&format!("{path}."), fields, tree)?;
            }
        }
        Ok(())
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    version: i16,
    flexible: bool,
}

impl<'a> Reader<'a> {
    fn take(&mut self, path: &str, n: usize) -> Result<&'a [u8], String> {
        if n > self.bytes.len() - self.pos {
            return Err(format!("{path}: needs {n} byte(s) past the end"));
        }
        self.pos += n;
        Ok(&self.bytes[self.pos - n..self.pos])
    }

    fn uvarint(&mut self, path: &str) -> Result<u32, String> {
        let mut value: u64 = 0;
        for i in 0..5 {
            let b = self.take(path, 1)?[0];
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value as u32);
            }
        }
        Err(format!("{path}: varint longer than 5 bytes"))
    }

    /// A length or count; `None` for null.
    fn length(&mut self, path: &str, wide: bool) -> Result<Option<usize>, String> {
        let n: i64 = match (self.flexible, wide) {
            (true, _) => i64::from(self.uvarint(path)?) - 1,
            (false, true) => i64::from(i32::from_be_bytes(
                self.take(path, 4)?.try_into().expect("4 bytes"),
            )),
            (false, false) => i64::from(i16::from_be_bytes(
                self.take(path, 2)?.try_into().expect("2 bytes"),
            )),
        };
        Ok(usize::try_from(n).ok())
    }

    fn fields(&mut self, prefix: &str, fields: &[Field]) -> Result<Map<String, Value>, String> {
        let mut tree = Map::new();
        let version = self.version;
        for f in fields.iter().filter(|f| f.versions.contains(version)) {
            let path = join(prefix, &f.name);
            let value = match tagged_at(f, self.version, self.flexible) {
                true => default_value(f, self.version, None)?,
                false => self.field_value(&path, f)?,
            };
            tree.insert(f.name.clone(), value);
        }
        if self.flexible {
            let section = join(prefix, "(tagged fields)");
            let count = self.uvarint(&section)?;
            for _ in 0..count {
                let tag = self.uvarint(&section)?;
                let size = self.uvarint(&section)? as usize;
                let field = fields.iter().find(|f| {
                    f.versions.contains(self.version)
                        && f.tagged
                            .is_some_and(|(t, v)| t == tag && v.contains(self.version))
                });
                match field {
                    Some(f) => {
                        let path = join(prefix, &f.name);
                        let value = self.field_value(&path, f)?;
                        tree.insert(f.name.clone(), value);
                    }
                    None => {
                        self.take(&section, size)?;
                    }
                }
            }
        }
        Ok(tree)
    }

    /// A field's value: a nullable structure's after its marker byte (negative: null, as
    /// Apache's generated code reads it).
    fn field_value(&mut self, path: &str, f: &Field) -> Result<Value, String> {
        if matches!(f.kind, Kind::Struct(_))
            && f.nullable.contains(self.version)
            && (self.take(path, 1)?[0] as i8) < 0
        {
            return Ok(Value::Null);
        }
        self.value(path, &f.kind)
    }

    fn value(&mut self, path: &str, kind: &Kind) -> Result<Value, String> {
        let int = |b: &[u8]| -> i64 {
            match b.len() {
                1 => i64::from(b[0] as i8),
                2 => i64::from(i16::from_be_bytes([b[0], b[1]])),
                4 => i64::from(i32::from_be_bytes([b[0], b[1], b[2], b[3]])),
                _ => i64::from_be_bytes(b.try_into().expect("8 bytes")),
            }
        };
        Ok(match kind {
            Kind::Bool => Value::Bool(self.take(path, 1)?[0] != 0),
            Kind::Int8 => Value::from(int(self.take(path, 1)?)),
            Kind::Int16 => Value::from(int(self.take(path, 2)?)),
            Kind::Uint16 => {
                let b = self.take(path, 2)?;
                Value::from(u16::from_be_bytes([b[0], b[1]]))
            }
            Kind::Int32 => Value::from(int(self.take(path, 4)?)),
            Kind::Int64 => Value::from(int(self.take(path, 8)?)),
            Kind::Float64 => {
                let b = self.take(path, 8)?;
                Value::from(f64::from_be_bytes(b.try_into().expect("8 bytes")))
            }
            Kind::Uuid => Value::String(uuid_text(self.take(path, 16)?)),
            Kind::String => match self.length(path, false)? {
                None => Value::Null,
                Some(n) => Value::String(String::from_utf8_lossy(self.take(path, n)?).into_owned()),
            },
            Kind::Bytes | Kind::Records => match self.length(path, true)? {
                None => Value::Null,
                Some(n) => Value::String(hex(self.take(path, n)?)),
            },
            Kind::Array(inner) => match self.length(path, true)? {
                None => Value::Null,
                Some(n) => {
                    // Every element takes a byte at least: a count past the bytes left is
                    // refused before anything is set aside for it.
                    if n > self.bytes.len() - self.pos {
                        return Err(format!("{path}: count {n} past the end"));
                    }
                    let mut items = Vec::with_capacity(n);
                    for i in 0..n {
                        items.push(self.value(&format!("{path}[{i}]"), inner)?);
                    }
                    Value::Array(items)
                }
            },
            Kind::Struct(fields) => Value::Object(self.fields(path, fields)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{request_at, response_at};
    use serde_json::json;

    #[test]
    fn end_txn_v5_answers_with_the_next_producer_id_and_epoch() {
        // ThrottleTimeMs 0, ErrorCode 0, ProducerId 7, ProducerEpoch 3, no tagged fields.
        let mut frame = vec![0, 0, 0, 0, 0, 0];
        frame.extend(7i64.to_be_bytes());
        frame.extend(3i16.to_be_bytes());
        frame.push(0);
        let message = response_at("EndTxn", 5).unwrap();
        let tree = decode(message, 5, &frame).unwrap();
        assert_eq!(
            tree,
            json!({"throttle_time_ms": 0, "error_code": 0, "producer_id": 7, "producer_epoch": 3})
        );
        assert_eq!(encode(message, 5, &tree, &[]).unwrap(), frame);
        // At v4 the same answer has no producer fields: two bytes too many, and named so.
        let v4 = response_at("EndTxn", 4).unwrap();
        assert!(decode(v4, 4, &frame).unwrap_err().contains("left over"));
    }

    #[test]
    fn a_request_takes_step_defaults_then_apaches_and_refuses_what_it_cannot_carry() {
        let message = request_at("WriteTxnMarkers", 2).unwrap();
        let tree = json!({"markers": [{"producer_id": 9, "topics": [{"name": "t", "partition_indexes": [0, 1]}]}]});
        let bytes = encode(
            message,
            2,
            &tree,
            &[("markers[].transaction_result", "true")],
        )
        .unwrap();
        let read = decode(message, 2, &bytes).unwrap();
        assert_eq!(read["markers"][0]["transaction_result"], json!(true));
        assert_eq!(read["markers"][0]["transaction_version"], json!(0));
        assert_eq!(read["markers"][0]["coordinator_epoch"], json!(0));
        assert_eq!(
            read["markers"][0]["topics"][0]["partition_indexes"],
            json!([0, 1])
        );
        let typo = json!({"markers": [{"producer_idd": 1}]});
        assert_eq!(
            encode(message, 2, &typo, &[]).unwrap_err().to_string(),
            "unknown field 'markers[].producer_idd' (takes producer_id, producer_epoch, transaction_result, topics, coordinator_epoch, transaction_version)"
        );
        let wide = json!({"markers": [{"producer_epoch": 40000}]});
        assert!(encode(message, 2, &wide, &[])
            .unwrap_err()
            .to_string()
            .contains("not an int16"));
        // An ignorable field the version lacks is dropped (TxnOffsetCommit v6 has topic ids,
        // not names).
        let v6 = request_at("TxnOffsetCommit", 6).unwrap();
        let named = json!({"topics": [{"name": "t", "partitions": []}]});
        let unnamed = json!({"topics": [{"partitions": []}]});
        assert_eq!(encode(v6, 6, &named, &[]), encode(v6, 6, &unnamed, &[]));
        // A field of later versions only that is not ignorable is refused at an earlier one.
        let end = request_at("TxnOffsetCommit", 2).unwrap();
        let member = json!({"member_id": "m"});
        assert!(encode(end, 2, &member, &[])
            .unwrap_err()
            .to_string()
            .contains("v2 has no such field"));
    }

    #[test]
    fn a_later_name_and_3_7s_both_serve() {
        let v5 = request_at("TxnOffsetCommit", 5).unwrap();
        let old = encode(v5, 5, &json!({"generation_id": 4}), &[]).unwrap();
        let new = encode(v5, 5, &json!({"generation_id_or_member_epoch": 4}), &[]).unwrap();
        assert_eq!(old, new);
        assert_eq!(
            decode(v5, 5, &old).unwrap()["generation_id_or_member_epoch"],
            json!(4)
        );
    }

    /// A nullable structure follows a marker byte: -1 for null, 1 before the structure, as the
    /// frame reader reads it and Apache writes it (ConsumerGroupHeartbeat's assignment); an
    /// array's structures carry none.
    #[test]
    fn a_nullable_structure_follows_its_marker() {
        let answer = response_at("ConsumerGroupHeartbeat", 0).unwrap();
        let assigned = json!({"member_epoch": 2, "assignment": {"topic_partitions": [
            {"topic_id": uuid_text(&[7; 16]), "partitions": [0, 1]}
        ]}});
        let bytes = encode(answer, 0, &assigned, &[]).unwrap();
        let marker = 4 + 2 + 1 + 1 + 4 + 4; // throttle, error, message, member id, epoch, interval
        assert_eq!(bytes[marker], 1);
        assert_eq!(bytes[marker + 1], 2, "one topic, then no marker before it");
        let back = decode(answer, 0, &bytes).unwrap();
        assert_eq!(back["assignment"], assigned["assignment"]);
        let none = encode(answer, 0, &json!({"member_epoch": 2}), &[]).unwrap();
        assert_eq!(&none[marker..], &[0xff, 0], "null, then the tagged fields");
        assert_eq!(decode(answer, 0, &none).unwrap()["assignment"], Value::Null);
        // Any negative marker reads as null, as Java's `readByte() < 0` does.
        let mut other = none.clone();
        other[marker] = 0x80;
        assert_eq!(
            decode(answer, 0, &other).unwrap()["assignment"],
            Value::Null
        );
    }

    #[test]
    fn uuids_read_as_apache_prints_them() {
        let bytes: Vec<u8> = (1..=16).collect();
        let text = uuid_text(&bytes);
        assert_eq!(text.len(), 22);
        assert_eq!(uuid_bytes(&text).map(|b| b.to_vec()), Some(bytes));
        assert!(uuid_bytes("not-a-uuid").is_none());
    }

    #[test]
    fn no_byte_sequence_panics_the_reader() {
        let message = response_at("TxnOffsetCommit", 6).unwrap();
        for len in 0..64usize {
            for fill in [0u8, 0x01, 0x7f, 0x80, 0xff] {
                let _ = decode(message, 6, &vec![fill; len]);
                let _ = decode(message, 2, &vec![fill; len]);
            }
        }
    }
}
