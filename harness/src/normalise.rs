//! Turns run-specific values into symbols that keep equality, so transcripts of different runs
//! and different brokers compare: the first producer id seen is `pid#1`, the same id later is
//! `pid#1` again (so "same PID, epoch + 1" stays visible). Node ids, hosts, ports, cluster ids,
//! throttle times and member ids get the same treatment; timestamps become `ts` (two clocks
//! make their order meaningless); error codes get their Apache names;
//! the names a scenario made unique go back to their placeholders.

use std::collections::HashMap;

use serde_json::Value;

use crate::errors;

/// Symbol tables for one transcript.
#[derive(Debug, Default)]
pub struct Normaliser {
    symbols: HashMap<(&'static str, String), usize>,
    counts: HashMap<&'static str, usize>,
    /// (actual unique name, placeholder such as `${txn}`).
    names: Vec<(String, String)>,
}

fn kind_of(key: &str) -> Option<&'static str> {
    Some(match key {
        "producer_id" => "pid",
        "node_id" | "leader_id" | "controller_id" => "node",
        "host" => "host",
        "port" => "port",
        "cluster_id" => "cluster",
        "throttle_time_ms" => "throttle",
        "timestamp" | "log_append_time_ms" => "ts",
        "member_id" | "leader" => "member",
        _ => return None,
    })
}

impl Normaliser {
    /// A normaliser that maps each unique name back to its placeholder.
    pub fn new(names: Vec<(String, String)>) -> Normaliser {
        Normaliser {
            names,
            ..Default::default()
        }
    }

    fn symbol(&mut self, kind: &'static str, raw: String) -> Value {
        let next = self.counts.get(kind).copied().unwrap_or(0) + 1;
        let n = *self.symbols.entry((kind, raw)).or_insert_with(|| next);
        if n == next {
            self.counts.insert(kind, next);
        }
        Value::String(format!("{kind}#{n}"))
    }

    fn name(&self, s: &str) -> Value {
        let mut out = s.to_owned();
        for (actual, placeholder) in &self.names {
            out = out.replace(actual, placeholder);
        }
        Value::String(out)
    }

    /// The normalised copy of a request or response tree.
    pub fn normalise(&mut self, value: &Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), self.field(k, v)))
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(|v| self.normalise(v)).collect()),
            Value::String(s) => self.name(s),
            other => other.clone(),
        }
    }

    fn field(&mut self, key: &str, v: &Value) -> Value {
        if key.ends_with("error_code") {
            if let Some(code) = v.as_i64() {
                return Value::String(errors::label(code as i16));
            }
        }
        match (kind_of(key), v) {
            // -1 and "" mean "none" on the wire: keep them as they are.
            (Some(_), Value::Number(n)) if n.as_i64() == Some(-1) => v.clone(),
            (Some(_), Value::String(s)) if s.is_empty() => v.clone(),
            // A throttle or port of 0 means none; keep it readable.
            (Some("throttle" | "port"), Value::Number(n)) if n.as_i64() == Some(0) => v.clone(),
            // Timestamps come from two clocks (the harness's for records it produces, the
            // broker's for markers and appends): only "there is one" compares.
            (Some("ts"), Value::Number(_)) => Value::String("ts".into()),
            (Some(kind), Value::Number(n)) => self.symbol(kind, n.to_string()),
            (Some(kind), Value::String(s)) => self.symbol(kind, s.clone()),
            _ => self.normalise(v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn symbols_keep_equality_and_codes_get_names() {
        let mut n = Normaliser::new(vec![("tx-abc123".into(), "${txn}".into())]);
        let a = n.normalise(
            &json!({"producer_id": 1099511627776i64, "producer_epoch": 0, "error_code": 0}),
        );
        let b = n.normalise(
            &json!({"producer_id": 1099511627776i64, "producer_epoch": 1, "error_code": 50}),
        );
        let c = n.normalise(
            &json!({"producer_id": 7, "error_code": 48, "name": "tx-abc123", "producer_epoch": -1}),
        );
        assert_eq!(
            a,
            json!({"producer_id": "pid#1", "producer_epoch": 0, "error_code": "0 NONE"})
        );
        assert_eq!(
            b,
            json!({"producer_id": "pid#1", "producer_epoch": 1, "error_code": "50 INVALID_TRANSACTION_TIMEOUT"})
        );
        assert_eq!(
            c,
            json!({"producer_id": "pid#2", "error_code": "48 INVALID_TXN_STATE", "name": "${txn}", "producer_epoch": -1})
        );
        let d = n.normalise(
            &json!({"producer_id": -1, "host": "127.0.0.1", "port": 9092, "throttle_time_ms": 0}),
        );
        assert_eq!(
            d,
            json!({"producer_id": -1, "host": "host#1", "port": "port#1", "throttle_time_ms": 0})
        );
    }
}
