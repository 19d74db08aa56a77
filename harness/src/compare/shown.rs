//! A cause's field differences as a ledger entry states them (`[[deviation.shows]]`: the API,
//! the field's name, what kaas answers and what Apache does), so that `kconform ledger draft`
//! can write the entry that documents the cause from a report alone.

use serde::Serialize;

use crate::compare::diff::{text, DiffRow};
use crate::compare::signature::{field_name, framing, symbol_class};

/// At most this many of a cause's field differences are kept: a cause of a hundred
/// differences is drafted from its first kinds, the draft saying to read the rest.
pub const MOST: usize = 12;

/// One field difference as the ledger states it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Shown {
    /// The API of the step.
    pub api: String,
    /// The field: the last part of the difference's path (the ledger matches it as a suffix).
    pub field: String,
    /// What the first target answered, as the ledger's glob: a number other than -1, 0 or 1
    /// and a symbol's number as `*` (`pid#*`), since those vary from run to run.
    pub kaas: String,
    /// What the second target (Apache) answered, likewise.
    pub apache: String,
}

/// Adds `row` to `shows` unless it is there or `shows` holds [`MOST`] already; a malformed
/// answer is stated as the kinds of answer (`outcome`: `malformed` | `response`).
pub fn add(shows: &mut Vec<Shown>, row: &DiffRow) {
    let field = match framing(row) {
        true => "outcome".to_owned(),
        false => field_name(&row.path).to_owned(),
    };
    let shown = Shown {
        api: row.api.clone(),
        field,
        kaas: glob(&text(&row.left)),
        apache: glob(&text(&row.right)),
    };
    if shows.len() < MOST && !shows.contains(&shown) {
        shows.push(shown);
    }
}

/// A value as a ledger glob: a number past -1..=1 as `*`, a symbol (`member#3`, `pid#2, as at
/// init producer_id`: what [`symbol_class`] reads as one) as its kind and `#*`, anything else
/// as it is.
fn glob(value: &str) -> String {
    if value.parse::<i64>().is_ok_and(|n| !(-1..=1).contains(&n)) {
        return "*".into();
    }
    match symbol_class(value) {
        Some(class) => format!("{}#*", class.split('#').next().unwrap_or_default()),
        None => value.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_that_vary_from_run_to_run_are_globbed_and_each_kind_kept_once() {
        let row = |path: &str, l: serde_json::Value, r: serde_json::Value| DiffRow {
            scenario: "s".into(),
            step: "a".into(),
            api: "JoinGroup".into(),
            version: Some(5),
            path: path.into(),
            left: l,
            right: r,
            detail: None,
        };
        let mut shows = Vec::new();
        add(&mut shows, &row("generation_id", json!(2), json!(1)));
        add(&mut shows, &row("generation_id", json!(3), json!(1)));
        add(
            &mut shows,
            &row(
                "leader",
                json!("member#2, as nowhere else"),
                json!("member#1"),
            ),
        );
        add(
            &mut shows,
            &row(
                "members.0.error_code",
                json!("25 UNKNOWN_MEMBER_ID"),
                json!("0 NONE"),
            ),
        );
        let stated: Vec<(&str, &str, &str)> = shows
            .iter()
            .map(|s| (s.field.as_str(), s.kaas.as_str(), s.apache.as_str()))
            .collect();
        assert_eq!(
            stated,
            [
                ("generation_id", "*", "1"),
                ("leader", "member#*", "member#*"),
                ("error_code", "25 UNKNOWN_MEMBER_ID", "0 NONE"),
            ]
        );
    }
}
