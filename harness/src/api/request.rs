//! Requests built from a step's TOML fields (after variable substitution), as kafka-protocol
//! messages. Field names are Apache's, in snake_case. A nullable string field left out is null.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

use crate::api::Reading;
use crate::wire::by_schema::{self, EncodeError};
use crate::wire::client::Body;

/// A variable's value: captured from a response, or a unique name.
#[derive(Debug, Clone, PartialEq)]
pub enum Var {
    /// Text.
    Str(String),
    /// A number.
    Int(i64),
}

/// Variables in scope for a scenario run.
pub type Vars = BTreeMap<String, Var>;

/// Replaces `${name}` in every string of `value`; a string that is exactly `${name}` of a
/// number becomes that number.
pub fn substitute(value: &toml::Value, vars: &Vars) -> Result<toml::Value, String> {
    Ok(match value {
        toml::Value::String(s) => {
            if let Some(name) = s.strip_prefix("${").and_then(|r| r.strip_suffix('}')) {
                match vars.get(name) {
                    Some(Var::Int(i)) => return Ok(toml::Value::Integer(*i)),
                    Some(Var::Str(v)) => return Ok(toml::Value::String(v.clone())),
                    None => return Err(format!("unknown variable ${{{name}}}")),
                }
            }
            let mut out = s.clone();
            for (k, v) in vars {
                let text = match v {
                    Var::Str(s) => s.clone(),
                    Var::Int(i) => i.to_string(),
                };
                out = out.replace(&format!("${{{k}}}"), &text);
            }
            if out.contains("${") {
                return Err(format!("unknown variable in '{s}'"));
            }
            toml::Value::String(out)
        }
        toml::Value::Array(a) => toml::Value::Array(
            a.iter()
                .map(|v| substitute(v, vars))
                .collect::<Result<_, _>>()?,
        ),
        toml::Value::Table(t) => toml::Value::Table(
            t.iter()
                .map(|(k, v)| Ok((k.clone(), substitute(v, vars)?)))
                .collect::<Result<_, String>>()?,
        ),
        other => other.clone(),
    })
}

/// The `topics` of an offset commit, [{ name, partitions = [{ partition_index,
/// committed_offset, committed_leader_epoch, committed_metadata }] }], as `$topic` and
/// `$partition`: OffsetCommit and TxnOffsetCommit carry the same fields in generated types of
/// their own.
macro_rules! committed_topics {
    ($f:expr, $topic:ty, $partition:ty) => {
        $f.tables("topics")?
            .iter()
            .map(|t| {
                Ok(<$topic>::default()
                    .with_name(TopicName(t.str("name")?))
                    .with_partitions(
                        t.tables("partitions")?
                            .iter()
                            .map(|p| {
                                Ok(<$partition>::default()
                                    .with_partition_index(p.i32("partition_index", 0)?)
                                    .with_committed_offset(p.int("committed_offset", 0)?)
                                    .with_committed_leader_epoch(
                                        p.i32("committed_leader_epoch", -1)?,
                                    )
                                    .with_committed_metadata(p.opt_str("committed_metadata")?))
                            })
                            .collect::<Result<_, String>>()?,
                    ))
            })
            .collect::<Result<_, String>>()?
    };
}

/// A request table as the builder reads it: every key read is noted (`topics[].name`), so
/// that a key no version of the API reads, a typo, is refused instead of silently dropped.
pub(super) struct Fields<'a> {
    table: &'a toml::Table,
    /// Where this table sits: "" for the request, `topics[].` for each of its topics.
    at: String,
    read: &'a RefCell<BTreeSet<String>>,
}

impl<'a> Fields<'a> {
    fn new(table: &'a toml::Table, read: &'a RefCell<BTreeSet<String>>) -> Fields<'a> {
        Fields {
            table,
            at: String::new(),
            read,
        }
    }

    /// The value of `key`, noted as read.
    pub(super) fn get(&self, key: &str) -> Option<&'a toml::Value> {
        self.read.borrow_mut().insert(format!("{}{key}", self.at));
        self.table.get(key)
    }

    pub(super) fn int(&self, key: &str, default: i64) -> Result<i64, String> {
        match self.get(key) {
            None => Ok(default),
            Some(toml::Value::Integer(i)) => Ok(*i),
            Some(other) => Err(format!("{key}: expected an integer, got {other}")),
        }
    }
    pub(super) fn i32(&self, key: &str, default: i32) -> Result<i32, String> {
        let v = self.int(key, default.into())?;
        i32::try_from(v).map_err(|_| format!("{key}: {v} is not an int32"))
    }
    pub(super) fn i16(&self, key: &str, default: i16) -> Result<i16, String> {
        let v = self.int(key, default.into())?;
        i16::try_from(v).map_err(|_| format!("{key}: {v} is not an int16"))
    }
    pub(super) fn boolean(&self, key: &str, default: bool) -> Result<bool, String> {
        match self.get(key) {
            None => Ok(default),
            Some(toml::Value::Boolean(b)) => Ok(*b),
            Some(other) => Err(format!("{key}: expected true or false, got {other}")),
        }
    }
    pub(super) fn opt_str(&self, key: &str) -> Result<Option<StrBytes>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(StrBytes::from_string(s.clone()))),
            Some(other) => Err(format!("{key}: expected a string, got {other}")),
        }
    }
    pub(super) fn str(&self, key: &str) -> Result<StrBytes, String> {
        Ok(self.opt_str(key)?.unwrap_or_default())
    }
    pub(super) fn tables(&self, key: &str) -> Result<Vec<Fields<'a>>, String> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(toml::Value::Array(a)) => a
                .iter()
                .map(|v| match v {
                    toml::Value::Table(t) => Ok(Fields {
                        table: t,
                        at: format!("{}{key}[].", self.at),
                        read: self.read,
                    }),
                    other => Err(format!("{key}: expected tables, got {other}")),
                })
                .collect(),
            Some(other) => Err(format!("{key}: expected an array of tables, got {other}")),
        }
    }
    pub(super) fn strs(&self, key: &str) -> Result<Vec<StrBytes>, String> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(toml::Value::Array(a)) => a
                .iter()
                .map(|v| match v {
                    toml::Value::String(s) => Ok(StrBytes::from_string(s.clone())),
                    other => Err(format!("{key}: expected strings, got {other}")),
                })
                .collect(),
            Some(other) => Err(format!("{key}: expected an array, got {other}")),
        }
    }
    pub(super) fn i32s(&self, key: &str) -> Result<Vec<i32>, String> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(toml::Value::Array(a)) => a
                .iter()
                .map(|v| match v {
                    toml::Value::Integer(i) => i32::try_from(*i).map_err(|_| format!("{key}: {i}")),
                    other => Err(format!("{key}: expected integers, got {other}")),
                })
                .collect(),
            Some(other) => Err(format!("{key}: expected an array, got {other}")),
        }
    }
}

/// The API key of an Apache API name (one of [`crate::api::APIS`]).
pub fn api_key(name: &str) -> Option<ApiKey> {
    crate::api::by_name(name).map(|a| a.key)
}

/// Why a request could not be built from a step's fields.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// A field no version of the API's request takes: the scenario's mistake (a typo), which
    /// would otherwise be dropped without a word and the request sent without it.
    #[error("unknown field '{field}' ({api} takes {takes})")]
    UnknownField {
        /// The field, nested ones as `topics[].name`.
        field: String,
        /// The API.
        api: String,
        /// The fields the API's request takes, at any version.
        takes: String,
    },
    /// A value of the wrong type or range, or a request this version cannot carry.
    #[error("{0}")]
    Invalid(String),
}

/// Builds the request of `api` at `version` from substituted fields. A field that the request
/// of `api` takes at no version (a typo: `transactionl_id`) is refused, naming the fields it
/// takes; a field of other versions only is fine (a version sweep sends one table to all).
pub fn build(api: ApiKey, version: i16, table: &toml::Table) -> Result<RequestKind, BuildError> {
    let read = RefCell::new(BTreeSet::new());
    let request = build_reading(api, version, table, &read).map_err(BuildError::Invalid)?;
    let given = keys(table, "");
    if given.iter().all(|k| read.borrow().contains(k)) {
        return Ok(request);
    }
    // Read at another version, perhaps: the fields of every version count.
    let highest = crate::api::by_key(api).map_or(version, |a| a.apache_max().max(version));
    for v in 0..=highest {
        let _ = build_reading(api, v, table, &read);
    }
    let mut read = read.into_inner();
    // A field a later version added and Apache's writer drops where the version lacks it
    // (WriteTxnMarkers v2's transaction_version) is no typo at an earlier version either.
    read.extend(crate::wire::schema::ignorable_request_fields(
        &crate::wire::error_codes::api_name(api as i16),
    ));
    match given.iter().find(|k| !read.contains(*k)) {
        None => Ok(request),
        Some(unknown) => {
            let mut takes: Vec<&str> = read.iter().map(String::as_str).collect();
            takes.sort_unstable();
            Err(BuildError::UnknownField {
                field: unknown.clone(),
                api: crate::wire::error_codes::api_name(api as i16),
                takes: takes.join(", "),
            })
        }
    }
}

/// A request ready to send: kafka-protocol's message, or the bytes Apache's definitions wrote
/// where kafka-protocol does not generate the version.
#[derive(Debug, Clone)]
pub enum Built {
    /// kafka-protocol's message (boxed: it is large beside the bytes).
    Typed(Box<RequestKind>),
    /// A body written by Apache's definitions ([`crate::wire::by_schema`]).
    Written(Vec<u8>),
}

impl Built {
    /// The body, as the client sends it.
    pub fn body(&self) -> Body<'_> {
        match self {
            Built::Typed(request) => Body::Typed(request),
            Built::Written(bytes) => Body::Written(bytes),
        }
    }
}

/// Builds the request as [`build`] does; or, for a transaction API at a version kafka-protocol
/// does not generate (EndTxn v5, TxnOffsetCommit v5 and v6, WriteTxnMarkers v2), writes it by
/// Apache's definition of that version, a field the step leaves out taking the step default
/// the typed builder gives it (else Apache's).
pub fn build_body(api: ApiKey, version: i16, table: &toml::Table) -> Result<Built, BuildError> {
    let name = crate::wire::error_codes::api_name(api as i16);
    let defaults = match crate::api::by_key(api).map(|a| a.read) {
        Some(Reading::Definitions { defaults, .. }) => defaults,
        _ => return build_typed(api, version, table),
    };
    let message = match crate::wire::schema::request_at(&name, version) {
        Some(m) if m.valid.contains(version) && !by_schema::kafka_protocol_has(api, version) => m,
        _ => return build(api, version, table).map(|r| Built::Typed(Box::new(r))),
    };
    let tree = serde_json::to_value(table).map_err(|e| BuildError::Invalid(e.to_string()))?;
    by_schema::encode(message, version, &tree, defaults)
        .map(Built::Written)
        .map_err(|e| match e {
            EncodeError::UnknownField { field, takes } => BuildError::UnknownField {
                field,
                api: name,
                takes,
            },
            EncodeError::Invalid(text) => BuildError::Invalid(text),
        })
}

/// The typed request; where kafka-protocol does not generate the version but writes it alike
/// at its highest ([`by_schema::kafka_protocol_version`]: Produce v12 as v11), those bytes.
fn build_typed(api: ApiKey, version: i16, table: &toml::Table) -> Result<Built, BuildError> {
    match by_schema::kafka_protocol_version(api, version) {
        Some(generated) if generated != version => {
            let request = build(api, generated, table)?;
            let mut body = bytes::BytesMut::new();
            request
                .encode(&mut body, generated)
                .map_err(|e| BuildError::Invalid(format!("{api:?} v{generated}: {e}")))?;
            Ok(Built::Written(body.to_vec()))
        }
        _ => build(api, version, table).map(|r| Built::Typed(Box::new(r))),
    }
}

/// Every key of `table`, nested ones as `topics[].name` (for arrays of tables).
fn keys(table: &toml::Table, at: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (key, value) in table {
        out.push(format!("{at}{key}"));
        if let toml::Value::Array(items) = value {
            for item in items {
                if let toml::Value::Table(t) = item {
                    out.extend(keys(t, &format!("{at}{key}[].")));
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// [`build`] at one version, noting in `read` every field it read.
fn build_reading(
    api: ApiKey,
    version: i16,
    table: &toml::Table,
    read: &RefCell<BTreeSet<String>>,
) -> Result<RequestKind, String> {
    let f = Fields::new(table, read);
    match crate::api::by_key(api) {
        Some(a) => (a.build)(version, &f),
        None => Err(format!("{api:?} is not a scenario API yet")),
    }
}

/// `isolation_level`: 0 / "read_uncommitted" (default) or 1 / "read_committed".
pub(super) fn isolation(f: &Fields<'_>) -> Result<i8, String> {
    match f.get("isolation_level") {
        None => Ok(0),
        Some(toml::Value::String(s)) if s == "read_uncommitted" => Ok(0),
        Some(toml::Value::String(s)) if s == "read_committed" => Ok(1),
        Some(toml::Value::Integer(i @ 0..=1)) => Ok(*i as i8),
        Some(other) => Err(format!(
            "isolation_level: expected read_committed or read_uncommitted, got {other}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn a_misspelt_field_is_refused_with_the_fields_the_api_takes() {
        let e = build(
            ApiKey::EndTxn,
            3,
            &table("transactional_id = \"t\"\ncomitted = true"),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown field 'comitted' (EndTxn takes committed, producer_epoch, producer_id, transactional_id)"
        );
    }

    #[test]
    fn a_misspelt_nested_field_is_refused_by_its_path() {
        let e = build(
            ApiKey::AddPartitionsToTxn,
            3,
            &table("transactional_id = \"t\"\ntopics = [{ name = \"x\", partition = [0] }]"),
        )
        .unwrap_err();
        assert!(
            matches!(&e, BuildError::UnknownField { field, .. } if field == "topics[].partition"),
            "{e}"
        );
    }

    #[test]
    fn a_field_of_another_version_is_taken() {
        // verify_only is a field of the v4 (broker) shape only; a sweep sends it to v3 too.
        let fields = table("transactional_id = \"t\"\nverify_only = true");
        assert!(build(ApiKey::AddPartitionsToTxn, 3, &fields).is_ok());
        assert!(build(ApiKey::AddPartitionsToTxn, 4, &fields).is_ok());
    }

    /// kafka-protocol's writer is the second, independent one: at every version both write,
    /// the bytes Apache's definitions write from a step's fields (with the step defaults of
    /// [`crate::api::Reading::Definitions`]) are kafka-protocol's, fields left out included.
    #[test]
    fn both_writers_write_the_same_bytes_from_the_same_step() {
        let mut rng = crate::fuzz::model::Rng::new(7);
        let mut compared = 0;
        for api in crate::api::TRANSACTION_KEYS {
            let name = crate::wire::error_codes::api_name(api as i16);
            let Some(Reading::Definitions { defaults, .. }) =
                crate::api::by_key(api).map(|a| a.read)
            else {
                panic!("{name} is read by its definitions");
            };
            let generated = api.valid_versions();
            for version in generated.min..=generated.max {
                // AddPartitionsToTxn's steps name its fields otherwise than Apache
                // (`transactional_id` for v0-3's `v3_and_below_transactional_id`, and one
                // transaction for v4's batch): kafka-protocol writes every version it has
                // (to v5), so Apache's definitions never write it.
                if api == ApiKey::AddPartitionsToTxn {
                    continue;
                }
                let message = crate::wire::schema::request_at(&name, version).unwrap();
                for round in 0..200 {
                    let fields = crate::fuzz::wire::seeds::fields(api, version, &mut rng);
                    let mut table: toml::Table =
                        serde_json::from_value(serde_json::Value::Object(fields)).unwrap();
                    if round % 2 == 1 {
                        let keys: Vec<String> = table.keys().cloned().collect();
                        for key in keys {
                            if rng.one_in(2) {
                                table.remove(&key);
                            }
                        }
                    }
                    let typed = build(api, version, &table)
                        .map_err(|e| e.to_string())
                        .and_then(|r| {
                            let mut buf = bytes::BytesMut::new();
                            r.encode(&mut buf, version).map_err(|e| e.to_string())?;
                            Ok(buf.to_vec())
                        });
                    let tree = serde_json::to_value(&table).unwrap();
                    let written = by_schema::encode(message, version, &tree, defaults);
                    match (&typed, &written) {
                        (Ok(a), Ok(b)) => assert_eq!(a, b, "{name} v{version}: {table}"),
                        (Err(_), Err(_)) => {}
                        _ => panic!("{name} v{version}: kafka-protocol {typed:?}, definitions {written:?}: {table}"),
                    }
                    compared += 1;
                }
            }
        }
        assert!(compared > 3000, "{compared}");
    }

    /// The body kafka-protocol writes for `fields` at `version`, which it generates.
    fn typed_bytes(api: ApiKey, version: i16, fields: &toml::Table) -> Vec<u8> {
        let Built::Typed(request) = build_body(api, version, fields).unwrap() else {
            panic!("{api:?} v{version} is kafka-protocol's");
        };
        let mut typed = bytes::BytesMut::new();
        request.encode(&mut typed, version).unwrap();
        typed.to_vec()
    }

    #[test]
    fn past_kafka_protocol_a_request_is_written_by_its_definition() {
        let fields = table("transactional_id = \"t\"\nproducer_id = 5\nproducer_epoch = 2");
        let Built::Written(v5) = build_body(ApiKey::EndTxn, 5, &fields).unwrap() else {
            panic!("EndTxn v5 is past kafka-protocol 0.15");
        };
        // v5 changed only the answer: the same bytes as kafka-protocol's v4.
        assert_eq!(v5, typed_bytes(ApiKey::EndTxn, 4, &fields));
        let message = crate::wire::schema::request_at("EndTxn", 5).unwrap();
        let read = by_schema::decode(message, 5, &v5).unwrap();
        assert_eq!(read["committed"], serde_json::json!(true));
        assert_eq!(read["transactional_id"], serde_json::json!("t"));
        let typo = table("transactionl_id = \"t\"");
        assert!(matches!(
            build_body(ApiKey::EndTxn, 5, &typo),
            Err(BuildError::UnknownField { field, .. }) if field == "transactionl_id"
        ));
        // A version no release kconform knows defines is left to kafka-protocol, which refuses it.
        assert!(matches!(
            build_body(ApiKey::EndTxn, 9, &fields),
            Ok(Built::Typed(_))
        ));
    }

    /// Produce v12 goes out as the bytes kafka-protocol writes for v11, which Apache's
    /// definitions say are the same; v13 (topic ids) is left to kafka-protocol, which refuses it.
    #[test]
    fn produce_v12_is_written_as_v11() {
        let fields = table(
            "transactional_id = \"t\"\ntopic = \"x\"\npartition = 1\nproducer_id = 5\nproducer_epoch = 0\nbase_sequence = 0\ntransactional = true\nrecords = [{ key = \"k\", value = \"v\" }]",
        );
        let Built::Written(v12) = build_body(ApiKey::Produce, 12, &fields).unwrap() else {
            panic!("Produce v12 is past kafka-protocol 0.15");
        };
        // The record batch carries the time it was built: the same length, and v12's bytes
        // read back as kafka-protocol's v11 with the step's values, to the last byte.
        assert_eq!(v12.len(), typed_bytes(ApiKey::Produce, 11, &fields).len());
        let mut buf = bytes::Bytes::from(v12);
        let read =
            <ProduceRequest as kafka_protocol::protocol::Decodable>::decode(&mut buf, 11).unwrap();
        assert!(buf.is_empty());
        assert_eq!(
            read.transactional_id.as_ref().map(|t| t.as_str()),
            Some("t")
        );
        let topic = &read.topic_data[0];
        assert_eq!(
            (topic.name.as_str(), topic.partition_data[0].index),
            ("x", 1)
        );
        assert!(matches!(
            build_body(ApiKey::Produce, 13, &fields),
            Ok(Built::Typed(_))
        ));
    }

    #[test]
    fn a_later_versions_ignorable_field_is_dropped_not_refused() {
        let fields = table(
            "markers = [{ producer_id = 1, transaction_version = 2, topics = [{ name = \"t\", partition_indexes = [0] }] }]",
        );
        assert!(matches!(
            build_body(ApiKey::WriteTxnMarkers, 1, &fields),
            Ok(Built::Typed(_))
        ));
        assert!(matches!(
            build_body(ApiKey::WriteTxnMarkers, 2, &fields),
            Ok(Built::Written(_))
        ));
        // 4.4's new name for TxnOffsetCommit's generation is not ignorable: at v3, where the
        // typed builder reads 3.7's name, it is refused rather than dropped.
        let renamed = table("generation_id_or_member_epoch = 3");
        assert!(matches!(
            build(ApiKey::TxnOffsetCommit, 3, &renamed),
            Err(BuildError::UnknownField { .. })
        ));
    }

    #[test]
    fn a_wrong_type_is_invalid_not_unknown() {
        let e = build(ApiKey::EndTxn, 3, &table("producer_id = \"x\"")).unwrap_err();
        assert!(matches!(e, BuildError::Invalid(_)), "{e}");
    }
}
