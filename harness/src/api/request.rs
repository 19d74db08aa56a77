//! Requests built from a step's TOML fields (after variable substitution), as kafka-protocol
//! messages. Field names are Apache's, in snake_case. A nullable string field left out is null.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

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
    let read = read.into_inner();
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

    #[test]
    fn a_wrong_type_is_invalid_not_unknown() {
        let e = build(ApiKey::EndTxn, 3, &table("producer_id = \"x\"")).unwrap_err();
        assert!(matches!(e, BuildError::Invalid(_)), "{e}");
    }
}
