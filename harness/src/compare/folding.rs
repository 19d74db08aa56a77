//! Which differences fold under another's cause rather than making one of their own: those a
//! differing value flowed into ([`super::flow`]), and the fields of a refused answer
//! ([`super::refusal`]). What [`super::causes`] groups by.

use std::collections::{BTreeMap, BTreeSet};

use crate::compare::diff::DiffRow;
use crate::compare::flow::Flows;
use crate::compare::signature::{framing, Notice};
use crate::scenario::step_of;

/// One difference as grouping sees it: the row, and the ledger entry that documents it.
#[derive(Debug, Clone, Copy)]
pub struct Classified<'a> {
    /// The difference.
    pub row: &'a DiffRow,
    /// The documenting entry, if one does.
    pub documented_by: Option<&'a str>,
}

/// A difference that a differing value flowed into: the difference whose cause it is
/// counted under, and the values that carried it there.
pub(super) struct Flowed {
    /// The index of the root difference (a cause, not itself a consequence).
    pub(super) root: usize,
    /// Each hop from the root's step to this difference's (`'init'.producer_epoch as ${epoch}`).
    pub(super) follows: Vec<String>,
}

impl Flowed {
    /// For each of `differences` (signed as `signed`, in the same order; skipped steps
    /// unsigned), whether it is a consequence and of what. A difference is one when a step it
    /// was recorded at took a value (`flows`) from an earlier step's answer where an
    /// undocumented difference on that value's path shows, which hands it on; and it is
    /// undocumented, no malformed answer, and its signature is no scenario's first difference
    /// anywhere (a defect that shows first elsewhere shows without help: a cause of its own).
    /// A difference hands nothing on when it is documented (that would pass the run on what no
    /// ledger entry says), a field clients only log, or a malformed answer (read past, its
    /// scenario goes on as if the answer were right). A consequence's root is its giver's root.
    pub(super) fn of(
        differences: &[Classified<'_>],
        signed: &[Option<(Notice, String)>],
        flows: &Flows,
    ) -> Vec<Option<Flowed>> {
        let firsts = first_signatures(differences, signed);
        // (scenario, step) → the indices of the rows there that hand their value on
        let mut givers: BTreeMap<(&str, &str), Vec<usize>> = BTreeMap::new();
        let mut out: Vec<Option<Flowed>> = Vec::with_capacity(differences.len());
        for (i, (d, signed)) in differences.iter().zip(signed).enumerate() {
            let Some((notice, signature)) = signed else {
                out.push(None);
                continue;
            };
            let scenario = d.row.scenario.as_str();
            // Undocumented behaviour: what can take a value, or hand one on.
            let plain = d.documented_by.is_none() && !framing(d.row);
            let takes = plain && !firsts.contains(signature.as_str());
            let flowed = takes
                .then(|| {
                    flows.takes(scenario, &d.row.step).iter().find_map(|taken| {
                        // Not the record's own answer: a sweep's earlier versions only.
                        let giver = givers
                            .get(&(scenario, taken.from.as_str()))?
                            .iter()
                            .copied()
                            .filter(|&j| differences[j].row.step != d.row.step)
                            .find(|&j| {
                                // A value of a refused element carries the refusal.
                                taken.is_touched_by(super::refusal::reach(&differences[j].row.path))
                            })?;
                        let (root, mut follows) = match &out[giver] {
                            Some(f) => (f.root, f.follows.clone()),
                            None => (giver, Vec::new()),
                        };
                        follows.push(taken.describe());
                        Some(Flowed { root, follows })
                    })
                })
                .flatten();
            if plain && *notice != Notice::Logged {
                givers
                    .entry((scenario, step_of(&d.row.step)))
                    .or_default()
                    .push(i);
            }
            out.push(flowed);
        }
        out
    }
}

/// Each field of a refused answer ([`super::refusal`]) that no value flowed into, made a
/// consequence of the answer's error code (of that one's root, where it is a consequence
/// itself); then every consequence rooted at a cause, a root that became a consequence handing
/// its own on.
pub(super) fn fold_refusals(
    flowed: &mut [Option<Flowed>],
    differences: &[Classified<'_>],
    signed: &[Option<(Notice, String)>],
) {
    let plain: Vec<(&DiffRow, bool)> = differences
        .iter()
        .zip(signed)
        .map(|(d, signed)| {
            let plain = signed.is_some() && d.documented_by.is_none() && !framing(d.row);
            (d.row, plain)
        })
        .collect();
    let refused = super::refusal::refused_by(&plain);
    for (i, by) in refused.into_iter().enumerate() {
        let Some(j) = by.filter(|_| flowed[i].is_none()) else {
            continue;
        };
        let (root, mut follows) = match &flowed[j] {
            Some(f) => (f.root, f.follows.clone()),
            None => (j, Vec::new()),
        };
        follows.push(format!(
            "the answer that refused with '{}'.{}",
            differences[j].row.step, differences[j].row.path
        ));
        flowed[i] = Some(Flowed { root, follows });
    }
    // Bounded: each pass moves a root one consequence up, and a chain is no longer than the
    // differences.
    for _ in 0..flowed.len() {
        let mut moved = false;
        for k in 0..flowed.len() {
            let Some(root) = flowed[k].as_ref().map(|f| f.root) else {
                continue;
            };
            if let Some(up) = flowed[root]
                .as_ref()
                .map(|f| f.root)
                .filter(|&up| up != root)
            {
                if let Some(f) = flowed[k].as_mut() {
                    f.root = up;
                }
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
}

/// The signatures of the differences at the first differing step of each scenario (skipped
/// steps and malformed answers aside).
fn first_signatures<'s>(
    differences: &[Classified<'_>],
    signed: &'s [Option<(Notice, String)>],
) -> BTreeSet<&'s str> {
    let mut first: BTreeMap<&str, &str> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for (d, signed) in differences.iter().zip(signed) {
        let Some((_, signature)) = signed.as_ref().filter(|_| !framing(d.row)) else {
            continue;
        };
        let step = *first
            .entry(d.row.scenario.as_str())
            .or_insert(d.row.step.as_str());
        if step == d.row.step {
            out.insert(signature.as_str());
        }
    }
    out
}
