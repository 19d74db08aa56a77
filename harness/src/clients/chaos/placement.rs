//! Where each worker's two coordinators sit: its transactional id's and its group's. kaas
//! documents exactly-once as broken when the two hash to different brokers (the group's
//! transactional offsets are never materialised), so a chaos run places them on purpose —
//! together, apart, or wherever the names fall — and says which.
//!
//! Together, the worker's group and transactional id are one name: kaas routes both by the
//! same hash of the key over the same brokers, so they stay together while brokers go down
//! and come back, where two names that merely land on one broker part at the first kill.

use std::time::Duration;

use serde::Serialize;

use super::workload::Names;
use crate::targets::Running;

/// How many transactional ids are tried for one worker before the placement is given up.
const TRIES: u32 = 200;

/// Where a worker's transaction and group coordinators sit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// On the same broker.
    Together,
    /// On different brokers.
    Apart,
    /// Wherever the names fall.
    Any,
}

impl Placement {
    /// Its name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Placement::Together => "together",
            Placement::Apart => "apart",
            Placement::Any => "any",
        }
    }
}

/// Picks each worker's transactional id (`<prefix>-w<w>-<k>`, the first `k` that fits) so that
/// its coordinator sits as `placement` asks beside its group's, as the target's FindCoordinator
/// names them; together, the group takes the same name.
pub async fn place(
    target: &Running,
    names: &mut Names,
    placement: Placement,
) -> Result<(), String> {
    if placement == Placement::Any {
        return Ok(());
    }
    if placement == Placement::Apart && target.brokers < 2 {
        return Err("coordinators apart need a cluster: one broker coordinates everything".into());
    }
    let deadline = Duration::from_secs(10);
    let together = placement == Placement::Together;
    for w in 0..names.groups.len() {
        let mut placed = None;
        for k in 0..TRIES {
            let id = format!("{}-w{w}-{k}", names.prefix);
            let group = match together {
                true => &id,
                false => &names.groups[w],
            };
            let group = target
                .coordinator_of(group, false, deadline)
                .await
                .map_err(|e| e.to_string())?;
            let coordinator = target
                .coordinator_of(&id, true, deadline)
                .await
                .map_err(|e| e.to_string())?;
            if (coordinator == group) == together {
                if together {
                    names.groups[w] = id.clone();
                }
                placed = Some(id);
                break;
            }
        }
        names.transactional_ids[w] = placed.ok_or_else(|| {
            format!(
                "no transactional id of {TRIES} tried has its coordinator {} group {}'s",
                match placement {
                    Placement::Apart => "apart from",
                    _ => "beside",
                },
                names.groups[w]
            )
        })?;
    }
    Ok(())
}
