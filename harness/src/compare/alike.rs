//! Refusals alike across APIs: where one scenario shows the same error code pair on several
//! APIs (`Heartbeat`, `SyncGroup` and `LeaveGroup` each `25 UNKNOWN_MEMBER_ID | 82
//! FENCED_INSTANCE_ID` for a fenced static member; `EndTxn`, `AddPartitionsToTxn`,
//! `AddOffsetsToTxn` and `InitProducerId` each `0 NONE | 51 CONCURRENT_TRANSACTIONS` while a
//! transaction completes), the broker made one decision (the member is gone, the transaction
//! is over) and answered each API by it: one cause, its APIs listed. The same pair on APIs
//! that never meet in a scenario stays a cause per API, for nothing ties them together.

use std::collections::{BTreeMap, BTreeSet};

use crate::compare::diff::DiffRow;
use crate::compare::signature::{field_name, is_error_code, Notice};

/// The error code pair of an error code difference (`0 NONE | 51 CONCURRENT_TRANSACTIONS`),
/// whatever the field is called (`error_code`, `partition_error_code`); none for another row.
fn pair(row: &DiffRow) -> Option<String> {
    if !field_name(&row.path).ends_with("error_code") {
        return None;
    }
    let (l, r) = (row.left.as_str()?, row.right.as_str()?);
    (is_error_code(l) && is_error_code(r)).then(|| format!("{l} | {r}"))
}

/// Renames in `signed` the signatures of rows that are alike refusals (of `rows`, only those
/// marked in `mergeable`: undocumented causes of their own) to one signature per group: the
/// APIs and the pair (`AddOffsetsToTxn, EndTxn error codes: 0 NONE | 51
/// CONCURRENT_TRANSACTIONS`). Signatures group when they share the pair and a scenario, and
/// through one another; a signature alone in its group keeps its name.
pub(super) fn merge(
    rows: &[&DiffRow],
    mergeable: &[bool],
    signed: &mut [Option<(Notice, String)>],
) {
    // signature → (pair, API, scenarios)
    let mut by_signature: BTreeMap<String, (String, String, BTreeSet<&str>)> = BTreeMap::new();
    for ((row, &ok), signed) in rows.iter().zip(mergeable).zip(signed.iter()) {
        let (Some((Notice::State, signature)), true) = (signed, ok) else {
            continue;
        };
        let Some(pair) = pair(row) else { continue };
        by_signature
            .entry(signature.clone())
            .or_insert_with(|| (pair, row.api.clone(), BTreeSet::new()))
            .2
            .insert(row.scenario.as_str());
    }
    let signatures: Vec<&String> = by_signature.keys().collect();
    let mut group: Vec<usize> = (0..signatures.len()).collect();
    // Bounded: each pass joins at least two groups, or ends.
    loop {
        let mut joined = false;
        for a in 0..signatures.len() {
            for b in a + 1..signatures.len() {
                let (pa, _, sa) = &by_signature[signatures[a]];
                let (pb, _, sb) = &by_signature[signatures[b]];
                if group[a] != group[b] && pa == pb && !sa.is_disjoint(sb) {
                    let (from, to) = (group[b].max(group[a]), group[b].min(group[a]));
                    group
                        .iter_mut()
                        .filter(|g| **g == from)
                        .for_each(|g| *g = to);
                    joined = true;
                }
            }
        }
        if !joined {
            break;
        }
    }
    let mut renamed: BTreeMap<&String, String> = BTreeMap::new();
    for g in group.iter().copied().collect::<BTreeSet<usize>>() {
        let members: Vec<usize> = (0..signatures.len()).filter(|&i| group[i] == g).collect();
        if members.len() < 2 {
            continue;
        }
        let apis: BTreeSet<&str> = members
            .iter()
            .map(|&i| by_signature[signatures[i]].1.as_str())
            .collect();
        let pair = &by_signature[signatures[g]].0;
        let name = format!(
            "{} error codes: {pair}",
            apis.into_iter().collect::<Vec<_>>().join(", ")
        );
        for &i in &members {
            renamed.insert(signatures[i], name.clone());
        }
    }
    for (signed, &ok) in signed.iter_mut().zip(mergeable) {
        if let (Some((_, signature)), true) = (signed.as_mut(), ok) {
            if let Some(name) = renamed.get(signature) {
                *signature = name.clone();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::causes::{Classified, FieldClasses};
    use crate::compare::flow::Flows;
    use serde_json::json;

    fn row(scenario: &str, api: &str, path: &str, l: &str, r: &str) -> DiffRow {
        DiffRow {
            scenario: scenario.into(),
            step: format!("{api}-step"),
            api: api.into(),
            version: Some(1),
            path: path.into(),
            left: json!(l),
            right: json!(r),
            detail: None,
        }
    }

    fn merged(rows: &[DiffRow]) -> Vec<String> {
        let refs: Vec<&DiffRow> = rows.iter().collect();
        let mut signed: Vec<Option<(Notice, String)>> = rows
            .iter()
            .map(|r| {
                Some((
                    Notice::State,
                    format!("{} {}: {} | {}", r.api, r.path, r.left, r.right),
                ))
            })
            .collect();
        merge(&refs, &vec![true; rows.len()], &mut signed);
        signed.into_iter().map(|s| s.unwrap().1).collect()
    }

    const GONE: (&str, &str) = ("25 UNKNOWN_MEMBER_ID", "82 FENCED_INSTANCE_ID");

    #[test]
    fn one_pair_on_apis_of_one_scenario_is_one_signature() {
        let rows = [
            row("static", "Heartbeat", "error_code", GONE.0, GONE.1),
            row("static", "SyncGroup", "error_code", GONE.0, GONE.1),
            row(
                "static",
                "LeaveGroup",
                "members.0.error_code",
                GONE.0,
                GONE.1,
            ),
        ];
        let names = merged(&rows);
        let want = "Heartbeat, LeaveGroup, SyncGroup error codes: \
                    25 UNKNOWN_MEMBER_ID | 82 FENCED_INSTANCE_ID";
        assert!(names.iter().all(|n| n == want), "{names:?}");
    }

    #[test]
    fn scenarios_chain_the_apis_of_one_pair() {
        let busy = ("0 NONE", "51 CONCURRENT_TRANSACTIONS");
        let rows = [
            row("a", "EndTxn", "error_code", busy.0, busy.1),
            row("b", "EndTxn", "error_code", busy.0, busy.1),
            row("b", "InitProducerId", "error_code", busy.0, busy.1),
            row("a", "AddOffsetsToTxn", "error_code", busy.0, busy.1),
        ];
        let names = merged(&rows);
        assert!(
            names.iter().all(|n| n
                .starts_with("AddOffsetsToTxn, EndTxn, InitProducerId error codes: 0 NONE | 51")),
            "{names:?}"
        );
    }

    #[test]
    fn apis_that_never_meet_or_pairs_that_differ_stay_apart() {
        let rows = [
            row(
                "a",
                "AddPartitionsToTxn",
                "error_code",
                "0 NONE",
                "3 UNKNOWN_TOPIC_OR_PARTITION",
            ),
            row(
                "b",
                "TxnOffsetCommit",
                "error_code",
                "0 NONE",
                "3 UNKNOWN_TOPIC_OR_PARTITION",
            ),
            row("c", "Heartbeat", "error_code", GONE.0, GONE.1),
            row("c", "OffsetCommit", "error_code", "0 NONE", GONE.1),
            row("c", "JoinGroup", "generation_id", "2", "1"),
        ];
        let names = merged(&rows);
        assert!(
            names.iter().all(|n| !n.contains("error codes:")),
            "{names:?}"
        );
    }

    #[test]
    fn a_row_not_mergeable_keeps_its_signature() {
        let rows = [
            row("static", "Heartbeat", "error_code", GONE.0, GONE.1),
            row("static", "SyncGroup", "error_code", GONE.0, GONE.1),
        ];
        let refs: Vec<&DiffRow> = rows.iter().collect();
        let mut signed = vec![
            Some((Notice::State, "h".to_owned())),
            Some((Notice::State, "s".to_owned())),
        ];
        merge(&refs, &[true, false], &mut signed);
        assert_eq!(signed[0].as_ref().unwrap().1, "h");
        assert_eq!(signed[1].as_ref().unwrap().1, "s");
    }

    #[test]
    fn one_refusal_on_the_apis_of_a_scenario_is_one_cause_and_a_documented_one_stays_out() {
        let mut rows = [
            row("static", "Heartbeat", "error_code", GONE.0, GONE.1),
            row("static", "SyncGroup", "error_code", GONE.0, GONE.1),
            row("static", "LeaveGroup", "error_code", GONE.0, GONE.1),
        ];
        for (r, v) in rows.iter_mut().zip([4, 5, 5]) {
            r.version = Some(v);
        }
        let mut classified: Vec<Classified<'_>> = rows
            .iter()
            .map(|row| Classified {
                row,
                documented_by: None,
            })
            .collect();
        let group = |c: &[Classified<'_>]| {
            crate::compare::causes::group(c, &[], &FieldClasses::default(), &Flows::default())
        };
        let causes = group(&classified);
        assert_eq!(causes.len(), 1, "{causes:#?}");
        assert_eq!(causes[0].differences, 3);
        assert_eq!(
            causes[0].versions,
            "Heartbeat v4; LeaveGroup v5; SyncGroup v5"
        );
        classified[2].documented_by = Some("leave-fenced");
        assert_eq!(group(&classified).len(), 2);
    }
}
