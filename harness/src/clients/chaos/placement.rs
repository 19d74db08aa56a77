//! Where each worker's two coordinators sit: its transactional id's and its group's. kaas
//! documents exactly-once as broken when the two hash to different brokers (the group's
//! transactional offsets are never materialised), so a chaos run places them on purpose —
//! together, apart, or wherever the names fall — and says which.
//!
//! Together, the worker's group and transactional id are one name: kaas routes both by the
//! same hash of the key over the same brokers, so they stay together while brokers go down
//! and come back, where two names that merely land on one broker part at the first kill.

use std::time::Duration;

use super::workload::Names;
use crate::clients::placement::Placement;
use crate::targets::Running;

/// How many transactional ids are tried for one worker before the placement is given up.
const TRIES: u32 = 200;

/// How many names are tried as both transactional id and group before, together, the two
/// get names of their own.
const SAME_NAME_TRIES: u32 = 8;

/// The address of the broker that coordinates `key` (a transactional id, or a group).
async fn coordinator_of(
    target: &Running,
    key: &str,
    transactional: bool,
) -> Result<std::net::SocketAddr, String> {
    target
        .coordinator_of(key, transactional, Duration::from_secs(10))
        .await
        .map_err(|e| e.to_string())
}

/// Picks each worker's transactional id (`<prefix>-w<w>-<k>`, the first `k` that fits) so that
/// its coordinator sits as `placement` asks beside its group's, as the target's FindCoordinator
/// names them; together, the group takes the same name, or, where no name puts both on one
/// broker, a name of its own ([`group_beside`]).
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
    let together = placement == Placement::Together;
    for w in 0..names.groups.len() {
        let id_of = |k: u32| format!("{}-w{w}-{k}", names.prefix);
        let mut placed = None;
        for k in 0..TRIES {
            let id = id_of(k);
            let group = match together {
                true => id.clone(),
                false => names.groups[w].clone(),
            };
            let group_at = coordinator_of(target, &group, false).await?;
            if (coordinator_of(target, &id, true).await? == group_at) == together {
                placed = Some((id, group));
                break;
            }
            // Together, one name decides for every name where the broker lays out its two
            // internal topics alike; where it does not (Apache rotates each topic's leaders
            // from its own start), no name will do: the group gets a name of its own.
            if together && k + 1 == SAME_NAME_TRIES {
                placed = group_beside(target, &names.prefix, w, id_of(0)).await?;
                break;
            }
        }
        let (id, group) = placed.ok_or_else(|| {
            format!(
                "no transactional id of {TRIES} tried has its coordinator {} group {}'s",
                match placement {
                    Placement::Apart => "apart from",
                    _ => "beside",
                },
                names.groups[w]
            )
        })?;
        names.transactional_ids[w] = id;
        names.groups[w] = group;
    }
    Ok(())
}

/// Worker `w`'s transactional id `id` with a group of a name of its own (`<prefix>-g<w>-<j>`,
/// the first `j` whose coordinator is `id`'s), for a broker on which no one name puts both
/// coordinators on one broker; none when no `j` tried does.
async fn group_beside(
    target: &Running,
    prefix: &str,
    w: usize,
    id: String,
) -> Result<Option<(String, String)>, String> {
    let at = coordinator_of(target, &id, true).await?;
    for j in 0..TRIES {
        let group = format!("{prefix}-g{w}-{j}");
        if coordinator_of(target, &group, false).await? == at {
            tracing::info!(%id, %group, "coordinators together under two names");
            return Ok(Some((id, group)));
        }
    }
    Ok(None)
}
