//! Topic configs given at creation, validated as Apache 3.7's controller validates them (same
//! names, types, ranges and refusal messages, checked live by the topic-config-* scenarios),
//! and the ones that change an answer honoured: `max.message.bytes` (Produce answers
//! MESSAGE_TOO_LARGE for a larger batch) and `message.timestamp.type=LogAppendTime` (batches
//! stamped with the broker's time, which Produce answers) and `cleanup.policy=compact` (records
//! without a key refused, INVALID_RECORD with record errors; uncompressed batches only, as
//! kaas-ref does not decompress). Not yet: `message.timestamp.{before,after,difference}.max.ms`
//! (INVALID_TIMESTAMP, whose message carries the broker's clock). `min.insync.replicas` is accepted and, as Apache
//! caps it at the replication factor, changes nothing on one replica. The others are kept and
//! change nothing here (retention, segments, compaction run no differently in kaas-ref).

use std::collections::BTreeMap;

/// Apache's broker default `message.max.bytes` (1 MiB + 12), the topic default of
/// `max.message.bytes`.
pub const DEFAULT_MAX_MESSAGE_BYTES: i32 = 1_048_588;

/// The value types of Apache's `ConfigDef`, with their parse-error texts.
#[derive(Clone, Copy)]
enum Kind {
    Int {
        at_least: Option<i64>,
    },
    Long {
        at_least: Option<i64>,
    },
    /// Apache declares this range with integer bounds, and its messages print them so.
    Double {
        between: (i64, i64),
    },
    Boolean,
    OneOf(&'static [&'static str]),
    ListOf(&'static [&'static str]),
    Text,
}

/// Apache 3.7's topic configs, in the order its `LogConfig` defines them (a request with
/// several bad values is refused for the first in this order, as `ConfigDef.parse` does).
const DEFINITIONS: &[(&str, Kind)] = &[
    ("segment.bytes", Kind::Int { at_least: Some(14) }),
    ("segment.ms", Kind::Long { at_least: Some(1) }),
    ("segment.jitter.ms", Kind::Long { at_least: Some(0) }),
    ("segment.index.bytes", Kind::Int { at_least: Some(4) }),
    ("flush.messages", Kind::Long { at_least: Some(1) }),
    ("flush.ms", Kind::Long { at_least: Some(0) }),
    ("retention.bytes", Kind::Long { at_least: None }),
    ("retention.ms", Kind::Long { at_least: Some(-1) }),
    ("max.message.bytes", Kind::Int { at_least: Some(0) }),
    ("index.interval.bytes", Kind::Int { at_least: Some(0) }),
    ("delete.retention.ms", Kind::Long { at_least: Some(0) }),
    ("min.compaction.lag.ms", Kind::Long { at_least: Some(0) }),
    ("max.compaction.lag.ms", Kind::Long { at_least: Some(1) }),
    ("file.delete.delay.ms", Kind::Long { at_least: Some(0) }),
    (
        "min.cleanable.dirty.ratio",
        Kind::Double { between: (0, 1) },
    ),
    ("cleanup.policy", Kind::ListOf(&["compact", "delete"])),
    ("unclean.leader.election.enable", Kind::Boolean),
    ("min.insync.replicas", Kind::Int { at_least: Some(1) }),
    (
        "compression.type",
        Kind::OneOf(&["uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"]),
    ),
    ("preallocate", Kind::Boolean),
    ("message.format.version", Kind::Text),
    (
        "message.timestamp.type",
        Kind::OneOf(&["CreateTime", "LogAppendTime"]),
    ),
    (
        "message.timestamp.difference.max.ms",
        Kind::Long { at_least: Some(0) },
    ),
    (
        "message.timestamp.before.max.ms",
        Kind::Long { at_least: Some(0) },
    ),
    (
        "message.timestamp.after.max.ms",
        Kind::Long { at_least: Some(0) },
    ),
    ("leader.replication.throttled.replicas", Kind::Text),
    ("follower.replication.throttled.replicas", Kind::Text),
    ("message.downconversion.enable", Kind::Boolean),
    ("remote.storage.enable", Kind::Boolean),
    ("local.retention.ms", Kind::Long { at_least: Some(-2) }),
    ("local.retention.bytes", Kind::Long { at_least: Some(-2) }),
];

/// A topic's configs: what was given at creation, and the values the broker acts on.
#[derive(Debug, Clone, PartialEq)]
pub struct TopicConfig {
    /// Every config given at creation, as given.
    pub given: BTreeMap<String, String>,
    /// The largest record batch a Produce may append (`max.message.bytes`).
    pub max_message_bytes: i32,
    /// `message.timestamp.type=LogAppendTime`: batches are stamped with the broker's time.
    pub log_append_time: bool,
    /// `cleanup.policy` includes `compact`: records without a key are refused.
    pub compacted: bool,
}

impl Default for TopicConfig {
    fn default() -> Self {
        TopicConfig {
            given: BTreeMap::new(),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            log_append_time: false,
            compacted: false,
        }
    }
}

/// A refused config, with Apache's message (answered with INVALID_CONFIG).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

fn invalid(name: &str, value: &str, why: impl std::fmt::Display) -> ConfigError {
    ConfigError(format!(
        "Invalid value {value} for configuration {name}: {why}"
    ))
}

fn check(name: &str, value: &str, kind: Kind) -> Result<(), ConfigError> {
    let v = value.trim();
    let at_least = |n: i64, min: Option<i64>| match min {
        Some(m) if n < m => Err(invalid(name, value, format!("Value must be at least {m}"))),
        _ => Ok(()),
    };
    match kind {
        Kind::Int { at_least: min } => match v.parse::<i32>() {
            Ok(n) => at_least(i64::from(n), min),
            Err(_) => Err(invalid(name, value, "Not a number of type INT")),
        },
        Kind::Long { at_least: min } => match v.parse::<i64>() {
            Ok(n) => at_least(n, min),
            Err(_) => Err(invalid(name, value, "Not a number of type LONG")),
        },
        Kind::Double { between: (lo, hi) } => match v.parse::<f64>() {
            Ok(n) if n < lo as f64 => {
                Err(invalid(name, value, format!("Value must be at least {lo}")))
            }
            Ok(n) if n > hi as f64 => Err(invalid(
                name,
                value,
                format!("Value must be no more than {hi}"),
            )),
            Ok(_) => Ok(()),
            Err(_) => Err(invalid(name, value, "Not a number of type DOUBLE")),
        },
        Kind::Boolean => match v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("false") {
            true => Ok(()),
            false => Err(invalid(
                name,
                value,
                "Expected value to be either true or false",
            )),
        },
        Kind::OneOf(allowed) => match allowed.contains(&v) {
            true => Ok(()),
            false => Err(invalid(
                name,
                value,
                format!("String must be one of: {}", allowed.join(", ")),
            )),
        },
        Kind::ListOf(allowed) => {
            match v
                .split(',')
                .map(str::trim)
                .find(|item| !allowed.contains(item))
            {
                None => Ok(()),
                Some(_) => Err(invalid(
                    name,
                    value,
                    format!("String must be one of: {}", allowed.join(", ")),
                )),
            }
        }
        Kind::Text => Ok(()),
    }
}

impl TopicConfig {
    /// Validates the configs of a CreateTopics topic in Apache's order: null values first,
    /// then unknown names, then each value in definition order.
    pub fn from_request(configs: &[(String, Option<String>)]) -> Result<TopicConfig, ConfigError> {
        let nulls: Vec<&str> = configs
            .iter()
            .filter(|(_, v)| v.is_none())
            .map(|(n, _)| n.as_str())
            .collect();
        if !nulls.is_empty() {
            return Err(ConfigError(format!(
                "Null value not supported for topic configs: {}",
                nulls.join(",")
            )));
        }
        let given: BTreeMap<String, String> = configs
            .iter()
            .map(|(n, v)| (n.clone(), v.clone().unwrap_or_default()))
            .collect();
        Self::from_given(given)
    }

    /// Validates configs as stored (or given without nulls).
    pub fn from_given(given: BTreeMap<String, String>) -> Result<TopicConfig, ConfigError> {
        if let Some(unknown) = given
            .keys()
            .find(|n| !DEFINITIONS.iter().any(|(d, _)| d == n))
        {
            return Err(ConfigError(format!("Unknown topic config name: {unknown}")));
        }
        for (name, kind) in DEFINITIONS {
            if let Some(value) = given.get(*name) {
                check(name, value, *kind)?;
            }
        }
        let max_message_bytes = given
            .get("max.message.bytes")
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(DEFAULT_MAX_MESSAGE_BYTES);
        let log_append_time = given
            .get("message.timestamp.type")
            .is_some_and(|t| t.trim() == "LogAppendTime");
        let compacted = given
            .get("cleanup.policy")
            .is_some_and(|p| p.split(',').any(|x| x.trim() == "compact"));
        Ok(TopicConfig {
            given,
            max_message_bytes,
            log_append_time,
            compacted,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(name: &str, value: Option<&str>) -> Result<TopicConfig, ConfigError> {
        TopicConfig::from_request(&[(name.into(), value.map(Into::into))])
    }

    #[test]
    fn apaches_refusals_word_for_word() {
        // Each message as Apache 3.7.2 answered it (scenario topic-config-invalid-values).
        let cases = [
            ("max.message.bytes", Some("lots"), "Invalid value lots for configuration max.message.bytes: Not a number of type INT"),
            ("max.message.bytes", Some("-1"), "Invalid value -1 for configuration max.message.bytes: Value must be at least 0"),
            ("min.insync.replicas", Some("0"), "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"),
            ("message.timestamp.type", Some("WallClock"), "Invalid value WallClock for configuration message.timestamp.type: String must be one of: CreateTime, LogAppendTime"),
            ("cleanup.policy", Some("shred"), "Invalid value shred for configuration cleanup.policy: String must be one of: compact, delete"),
            ("retention.ms", None, "Null value not supported for topic configs: retention.ms"),
            ("kfake.is_internal", Some("true"), "Unknown topic config name: kfake.is_internal"),
        ];
        for (name, value, message) in cases {
            assert_eq!(
                one(name, value),
                Err(ConfigError(message.into())),
                "{name}={value:?}"
            );
        }
    }

    #[test]
    fn max_message_bytes_is_honoured_and_defaults_to_apaches() {
        assert_eq!(
            one("max.message.bytes", Some("200"))
                .unwrap()
                .max_message_bytes,
            200
        );
        assert_eq!(
            one("retention.ms", Some("1000")).unwrap().max_message_bytes,
            DEFAULT_MAX_MESSAGE_BYTES
        );
        assert!(one("cleanup.policy", Some("compact,delete")).is_ok());
    }
}
