//! What a client saw running a workload: each call's outcome and what its consumers observed,
//! in one shape for every client (the Java runner prints it as JSON; the librdkafka workloads
//! build it), so two brokers' transcripts of one client compare field by field.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::placement::Placement;

/// One client call and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Call {
    /// What the workload calls it (unique within the workload).
    pub call: String,
    /// `ok`, or the error the client raised: the exception's class for Java, the librdkafka
    /// error code (with `(fatal)` or `(abortable)`) for librdkafka.
    pub result: String,
    /// The error's message, for people: never compared (it may carry a broker's own words).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A workload's transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientTranscript {
    /// The workload's name.
    pub workload: String,
    /// `java` or `librdkafka`.
    pub client: String,
    /// The calls, in order.
    pub calls: Vec<Call>,
    /// What its consumers read and the Admin client listed, by name.
    #[serde(default)]
    pub observed: BTreeMap<String, Value>,
}

impl ClientTranscript {
    /// The compared fields, in order: each call's result under its name, then each
    /// observation as compact JSON. A repeated call name gets ` #2`, ` #3`.
    pub fn fields(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for c in &self.calls {
            let mut name = c.call.clone();
            let mut n = 1;
            while out.iter().any(|(f, _)| *f == name) {
                n += 1;
                name = format!("{} #{n}", c.call);
            }
            out.push((name, c.result.clone()));
        }
        for (k, v) in &self.observed {
            out.push((k.clone(), v.to_string()));
        }
        out
    }
}

/// Where two transcripts of one workload and one client differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClientDiff {
    /// `java` or `librdkafka`.
    pub client: String,
    /// The workload.
    pub workload: String,
    /// The call or observation.
    pub field: String,
    /// The target under test's value (`(absent)` when it has no such field).
    pub left: String,
    /// The baseline's value.
    pub right: String,
    /// Where the run's transaction and group coordinators sat, on a cluster (see
    /// [`super::placement`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coordinators: Option<Placement>,
}

/// What a transcript lacks where the other has a field.
pub const ABSENT: &str = "(absent)";

/// The fields where `left` and `right` differ: those of `left` in its order, then those only
/// `right` has.
pub fn diff(left: &ClientTranscript, right: &ClientTranscript) -> Vec<ClientDiff> {
    let (l, r) = (left.fields(), right.fields());
    let value = |fields: &[(String, String)], name: &str| {
        fields
            .iter()
            .find(|(f, _)| f == name)
            .map(|(_, v)| v.clone())
    };
    let mut names: Vec<&String> = l.iter().map(|(f, _)| f).collect();
    names.extend(
        r.iter()
            .map(|(f, _)| f)
            .filter(|f| !l.iter().any(|(g, _)| g == *f)),
    );
    names
        .into_iter()
        .filter_map(|name| {
            let (a, b) = (value(&l, name), value(&r, name));
            (a != b).then(|| ClientDiff {
                client: left.client.clone(),
                workload: left.workload.clone(),
                field: name.clone(),
                left: a.unwrap_or_else(|| ABSENT.into()),
                right: b.unwrap_or_else(|| ABSENT.into()),
                coordinators: None,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transcript(results: &[(&str, &str)], read: Value) -> ClientTranscript {
        ClientTranscript {
            workload: "w".into(),
            client: "java".into(),
            calls: results
                .iter()
                .map(|(c, r)| Call {
                    call: c.to_string(),
                    result: r.to_string(),
                    message: Some(format!("said by {r}")),
                })
                .collect(),
            observed: [("read_committed".to_string(), read)].into(),
        }
    }

    #[test]
    fn messages_are_not_compared_and_results_are() {
        let a = transcript(&[("init", "ok"), ("commit", "X")], serde_json::json!(["a"]));
        let mut b = a.clone();
        b.calls[1].message = Some("other words".into());
        assert!(diff(&a, &b).is_empty());
        b.calls[1].result = "Y".into();
        b.observed
            .insert("read_committed".into(), serde_json::json!([]));
        let d = diff(&a, &b);
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!((d[0].field.as_str(), d[0].left.as_str()), ("commit", "X"));
        assert_eq!((d[1].left.as_str(), d[1].right.as_str()), ("[\"a\"]", "[]"));
    }

    #[test]
    fn a_call_one_side_lacks_is_absent_and_repeated_names_are_numbered() {
        let a = transcript(&[("init", "ok"), ("init", "ok")], Value::Null);
        let b = transcript(&[("init", "ok")], Value::Null);
        let d = diff(&a, &b);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].field, "init #2");
        assert_eq!(d[0].right, ABSENT);
        let d = diff(&b, &a);
        assert_eq!(d[0].left, ABSENT);
    }
}
