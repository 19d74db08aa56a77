//! Topics provisioned for a run, for brokers where clients cannot create topics (an
//! operator-managed cluster, CreateTopics refused or not permitted).
//!
//! A scenario's set-up CreateTopics steps (`creates_topics = true`) name the topics it needs.
//! `kconform topics` lists them under fixed names (`<var>-<scenario>-kconform`) so an operator can
//! create them once; a run in provisioned mode then binds each such `${var}` to its fixed name,
//! does not send the set-up step, and reads every log offset relative to where the scenario
//! began, so records that earlier runs left in those topics change no verdict.

use std::collections::HashMap;

use serde_json::Value;

use crate::scenario::Scenario;

pub use crate::targets::provision::Needed;

/// The fixed name of a scenario's topic `${var}` when topics are provisioned. It begins as the
/// run's unique names do (`{var}-{scenario}-`), so answers listing topics by name list them in
/// the same order either way.
pub fn provisioned_name(scenario: &str, var: &str) -> String {
    format!("{var}-{scenario}-kconform")
}

/// The topics a scenario's set-up steps create: (`var`, what it needs), in step order.
pub fn of(scenario: &Scenario) -> Vec<(String, Needed)> {
    let mut out = Vec::new();
    let setup = scenario.steps.iter().filter_map(|s| s.request());
    for request in setup.filter(|r| r.creates_topics) {
        let topics = request.fields.get("topics").and_then(toml::Value::as_array);
        for t in topics.into_iter().flatten() {
            let Some(var) = crate::scenario::topic_var(t) else {
                continue;
            };
            let partitions = t
                .get("num_partitions")
                .and_then(toml::Value::as_integer)
                .filter(|n| *n > 0)
                .unwrap_or(1) as i32;
            let configs = t
                .get("configs")
                .and_then(toml::Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|c| {
                    let name = c.get("name")?.as_str()?;
                    let value = c.get("value")?.as_str()?;
                    Some((name.to_owned(), value.to_owned()))
                })
                .collect();
            // A shaped name keeps its shape (a 249-byte topic is one at the limit wherever
            // it was created).
            let fixed = provisioned_name(&scenario.name, var);
            let name = match scenario.shapes.get(var) {
                Some(shape) => shape.name(&fixed, ""),
                None => fixed,
            };
            out.push((
                var.to_owned(),
                Needed {
                    name,
                    partitions,
                    configs,
                },
            ));
        }
    }
    out
}

/// Every topic the scenarios need, in scenario order.
pub fn needed(scenarios: &[&Scenario]) -> Vec<Needed> {
    scenarios
        .iter()
        .flat_map(|s| of(s).into_iter().map(|(_, n)| n))
        .collect()
}

/// Where each provisioned partition's log ended when a scenario began: (topic, partition) →
/// offset.
pub type Bases = HashMap<(String, i32), i64>;

/// An offset as the scenario sees it: relative to where its partition's log ended when the
/// scenario began (an offset before that, such as a log start of 0, is 0; -1 stays -1).
fn relative(offset: i64, base: i64) -> i64 {
    match offset {
        o if o < 0 => o,
        o => (o - base).max(0),
    }
}

/// The log offsets of a Produce, Fetch or ListOffsets answer made relative to `bases`, in
/// place (the answer tree of [`crate::api::response::to_value`], before it is normalised).
pub fn rebase_answer(api: &str, raw: &mut Value, bases: &Bases) {
    let topics_key = match api {
        "Produce" | "Fetch" => "responses",
        "ListOffsets" => "topics",
        _ => return,
    };
    let Some(topics) = raw.get_mut(topics_key).and_then(Value::as_array_mut) else {
        return;
    };
    for t in topics {
        let Some(name) = t.get("name").and_then(Value::as_str).map(str::to_owned) else {
            continue;
        };
        let Some(partitions) = t.get_mut("partitions").and_then(Value::as_array_mut) else {
            continue;
        };
        for p in partitions {
            let index = p
                .get("partition_index")
                .and_then(Value::as_i64)
                .unwrap_or(-1) as i32;
            let Some(&base) = bases.get(&(name.clone(), index)) else {
                continue;
            };
            rebase_fields(p, base);
        }
    }
}

/// Every log offset in a partition's answer: its own fields, aborted transactions, and the
/// batches and records of a Fetch.
fn rebase_fields(v: &mut Value, base: i64) {
    const OFFSETS: [&str; 7] = [
        "base_offset",
        "log_start_offset",
        "high_watermark",
        "last_stable_offset",
        "offset",
        "first_offset",
        "last_offset",
    ];
    match v {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                match (OFFSETS.contains(&k.as_str()), v.as_i64()) {
                    (true, Some(o)) => *v = Value::from(relative(o, base)),
                    _ => rebase_fields(v, base),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|v| rebase_fields(v, base)),
        _ => {}
    }
}

/// A Fetch request's `fetch_offset`, which the scenario gives relative to its beginning, made
/// absolute.
pub fn rebase_fetch(fields: &mut toml::Table, bases: &Bases) {
    let topic = fields
        .get("topic")
        .and_then(toml::Value::as_str)
        .map(str::to_owned);
    let partition = fields
        .get("partition")
        .and_then(toml::Value::as_integer)
        .unwrap_or(0) as i32;
    let Some(base) = topic.and_then(|t| bases.get(&(t, partition)).copied()) else {
        return;
    };
    // Left out, it is 0: the scenario's first offset.
    let offset = fields
        .entry("fetch_offset")
        .or_insert(toml::Value::Integer(0));
    if let toml::Value::Integer(o) = offset {
        if *o >= 0 {
            *o += base;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_are_read_relative_to_where_the_scenario_began() {
        let bases: Bases = [(("t".to_owned(), 0), 100)].into_iter().collect();
        let mut raw = json!({"responses": [{"name": "t", "partitions": [{
            "partition_index": 0, "high_watermark": 103, "last_stable_offset": 101,
            "log_start_offset": 0, "aborted_transactions": [{"first_offset": 101, "producer_id": 7}],
            "batches": [{"base_offset": 100, "records": [{"offset": 100}]}]}]},
            {"name": "other", "partitions": [{"partition_index": 0, "high_watermark": 5}]}]});
        rebase_answer("Fetch", &mut raw, &bases);
        let p = &raw["responses"][0]["partitions"][0];
        assert_eq!(p["high_watermark"], 3);
        assert_eq!(p["last_stable_offset"], 1);
        assert_eq!(p["log_start_offset"], 0);
        assert_eq!(p["aborted_transactions"][0]["first_offset"], 1);
        assert_eq!(p["aborted_transactions"][0]["producer_id"], 7);
        assert_eq!(p["batches"][0]["base_offset"], 0);
        assert_eq!(p["batches"][0]["records"][0]["offset"], 0);
        assert_eq!(raw["responses"][1]["partitions"][0]["high_watermark"], 5);
        let mut produce = json!({"responses": [{"name": "t", "partitions": [
            {"partition_index": 0, "base_offset": -1, "log_start_offset": -1}]}]});
        rebase_answer("Produce", &mut produce, &bases);
        assert_eq!(produce["responses"][0]["partitions"][0]["base_offset"], -1);
        let mut fetch: toml::Table =
            toml::from_str("topic = \"t\"\npartition = 0\nfetch_offset = 2").unwrap();
        rebase_fetch(&mut fetch, &bases);
        assert_eq!(fetch["fetch_offset"].as_integer(), Some(102));
        let mut fetch: toml::Table = toml::from_str("topic = \"t\"").unwrap();
        rebase_fetch(&mut fetch, &bases);
        assert_eq!(fetch["fetch_offset"].as_integer(), Some(100));
    }
}
