//! The fields of a refused answer: where one answer's error code differs (`Produce error_code:
//! 0 | 87`), the other fields of the same answer that differ with it (that answer's
//! `base_offset N | -1`, `log_start_offset`, `log_append_time_ms`; a JoinGroup's `members`,
//! `generation_id`, `leader`, `protocol_name` beside `0 | 79`) are what the refusal decides,
//! not defects of their own: each is folded under the error code's cause, shown there. Only
//! where the error codes differ: where they agree, every field's difference stays a cause.

use super::diff::DiffRow;

/// The path of the element an error code belongs to: `topics.0.partitions.1.error_code` →
/// `topics.0.partitions.1.`, `error_code` → `` (the whole answer); none for another field.
fn refusal_scope(path: &str) -> Option<&str> {
    match path.strip_suffix("error_code") {
        Some(scope) if scope.is_empty() || scope.ends_with('.') => Some(scope),
        _ => None,
    }
}

/// What of an answer a difference at `path` changes, for the values later steps take from
/// it: an error code its whole element (`topics.0.error_code` → `topics.0`; the answer's own
/// → `outcome`, all of it), since every value of a refused element is what the refusal
/// decided; any other field itself.
pub fn reach(path: &str) -> &str {
    match refusal_scope(path) {
        Some("") => "outcome",
        Some(scope) => scope.trim_end_matches('.'),
        None => path,
    }
}

/// For each of `rows` (each with whether it may fold or be folded under: a difference of its
/// own, undocumented, no malformed answer), the index of the error code difference of the same
/// answer whose element holds it, the innermost where several do; none for an error code
/// itself, a row that may not fold, or a field no differing error code holds.
pub fn refused_by(rows: &[(&DiffRow, bool)]) -> Vec<Option<usize>> {
    rows.iter()
        .map(|&(row, plain)| {
            if !plain || refusal_scope(&row.path).is_some() {
                return None;
            }
            rows.iter()
                .enumerate()
                .filter(|(_, (e, plain))| {
                    *plain && e.scenario == row.scenario && e.step == row.step
                })
                .filter_map(|(j, (e, _))| Some((j, refusal_scope(&e.path)?)))
                .filter(|(_, scope)| row.path.starts_with(scope))
                .max_by_key(|(_, scope)| scope.len())
                .map(|(j, _)| j)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(step: &str, path: &str) -> DiffRow {
        DiffRow {
            scenario: "s".into(),
            step: step.into(),
            api: "Produce".into(),
            version: Some(9),
            path: path.into(),
            left: json!(1),
            right: json!(2),
            detail: None,
        }
    }

    fn refused(rows: &[DiffRow], documented: &[Option<&str>]) -> Vec<Option<usize>> {
        let plain: Vec<(&DiffRow, bool)> = rows
            .iter()
            .zip(documented)
            .map(|(row, d)| (row, d.is_none()))
            .collect();
        refused_by(&plain)
    }

    #[test]
    fn the_fields_of_a_refused_element_fold_under_its_error_code_and_no_other() {
        let rows = [
            row("produce", "responses.0.partitions.0.error_code"),
            row("produce", "responses.0.partitions.0.base_offset"),
            row("produce", "responses.0.partitions.1.base_offset"),
            row("produce", "throttle_time_ms"),
            row("fetch", "responses.0.partitions.0.high_watermark"),
        ];
        let none = [None; 5];
        // Only the refused partition's field; another partition's, the answer's own field and
        // another step's stay causes of their own.
        assert_eq!(refused(&rows, &none), [None, Some(0), None, None, None]);
    }

    #[test]
    fn a_top_level_error_code_holds_the_whole_answer_and_the_innermost_wins() {
        let rows = [
            row("join", "error_code"),
            row("join", "members"),
            row("join", "generation_id"),
            row("join", "topics.0.error_code"),
            row("join", "topics.0.leader"),
        ];
        assert_eq!(
            refused(&rows, &[None; 5]),
            [None, Some(0), Some(0), None, Some(3)]
        );
    }

    /// Where the error codes agree there is no error code difference: nothing folds. A
    /// documented error code (or a malformed answer) folds nothing, as in the flow rule.
    #[test]
    fn nothing_folds_without_an_undocumented_error_code_difference() {
        let rows = [row("p", "base_offset"), row("p", "log_start_offset")];
        assert_eq!(refused(&rows, &[None, None]), [None, None]);
        let rows = [row("p", "error_code"), row("p", "base_offset")];
        assert_eq!(refused(&rows, &[Some("entry"), None]), [None, None]);
        assert_eq!(refusal_scope("xerror_code"), None);
    }

    #[test]
    fn a_refusal_reaches_every_value_of_its_element() {
        assert_eq!(reach("error_code"), "outcome");
        assert_eq!(
            reach("topics.0.partitions.1.error_code"),
            "topics.0.partitions.1"
        );
        assert_eq!(
            reach("topics.0.partitions.1.base_offset"),
            "topics.0.partitions.1.base_offset"
        );
    }
}
