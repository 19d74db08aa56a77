//! Where two value trees differ: the first field, in wire order, whose values are not the same.

use serde_json::Value;

use crate::by_schema::join;

/// A field whose values differ.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// `topics[0].partitions[1].committed_leader_epoch`, `topics (count)`.
    pub path: String,
    /// Apache's value (`null` for a field Apache's definition does not have).
    pub apache: Value,
    /// The decoder's.
    pub theirs: Value,
}

/// The first field where `theirs` differs from `apache`. Objects are compared on the fields
/// `theirs` has (an adapter may map only some), arrays element by element after their length,
/// numbers by value (`1` and `1.0` are one number).
pub fn first_difference(apache: &Value, theirs: &Value) -> Option<Difference> {
    differ("", apache, theirs)
}

fn differ(path: &str, apache: &Value, theirs: &Value) -> Option<Difference> {
    let here = || {
        Some(Difference {
            path: path.to_owned(),
            apache: apache.clone(),
            theirs: theirs.clone(),
        })
    };
    match (apache, theirs) {
        (Value::Object(a), Value::Object(t)) => t.iter().find_map(|(name, tv)| {
            let av = a.get(name).unwrap_or(&Value::Null);
            match a.contains_key(name) {
                true => differ(&join(path, name), av, tv),
                false => Some(Difference {
                    path: join(path, name),
                    apache: Value::Null,
                    theirs: tv.clone(),
                }),
            }
        }),
        (Value::Array(a), Value::Array(t)) if a.len() != t.len() => Some(Difference {
            path: format!("{path} (count)"),
            apache: Value::from(a.len()),
            theirs: Value::from(t.len()),
        }),
        (Value::Array(a), Value::Array(t)) => a
            .iter()
            .zip(t)
            .enumerate()
            .find_map(|(i, (av, tv))| differ(&format!("{path}[{i}]"), av, tv)),
        (Value::Number(a), Value::Number(t)) => {
            let same = match (a.as_i64(), t.as_i64(), a.as_u64(), t.as_u64()) {
                (Some(x), Some(y), _, _) => x == y,
                (_, _, Some(x), Some(y)) => x == y,
                _ => a.as_f64() == t.as_f64(),
            };
            (!same).then(here).flatten()
        }
        (a, t) => (a != t).then(here).flatten(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_first_differing_field_is_named_and_fields_left_out_are_not_compared() {
        let apache = json!({"id": "t", "topics": [{"name": "a", "partitions": [0, 1]}], "n": 1});
        assert_eq!(first_difference(&apache, &json!({"n": 1.0})), None);
        let d = first_difference(&apache, &json!({"topics": [{"partitions": [0, 2]}]})).unwrap();
        assert_eq!(d.path, "topics[0].partitions[1]");
        assert_eq!((d.apache, d.theirs), (json!(1), json!(2)));
        let d = first_difference(&apache, &json!({"topics": []})).unwrap();
        assert_eq!(d.path, "topics (count)");
        let d = first_difference(&apache, &json!({"extra": true})).unwrap();
        assert_eq!((d.path.as_str(), d.apache), ("extra", Value::Null));
        let d = first_difference(&apache, &json!({"id": null})).unwrap();
        assert_eq!(d.path, "id");
    }
}
