//! Where each worker's two coordinators sit: its transactional id's and its group's. kaas
//! documents exactly-once as broken when the two hash to different brokers (the group's
//! transactional offsets are never materialised), so a chaos run places them on purpose —
//! together, apart, or wherever the names fall — and says which.
//!
//! Together, the worker's group and transactional id are one name: kaas routes both by the
//! same hash of the key over the same brokers, so they stay together while brokers go down
//! and come back, where two names that merely land on one broker part at the first kill.

use super::workload::Names;
use crate::clients::placement::{Coordinators, Placement};
use crate::targets::Running;

/// How many transactional ids are tried for one worker before the placement is given up.
const TRIES: u32 = 200;

/// How many names are tried as both transactional id and group before, together, the two
/// get names of their own.
const SAME_NAME_TRIES: u32 = 8;

/// Picks each worker's transactional id (`<prefix>-w<w>-<k>`, the first `k` that fits) so that
/// its coordinator sits as `placement` asks beside its group's, as the target's FindCoordinator
/// names them; together, the group takes the same name, or, where no name puts both on one
/// broker, a name of its own (`group_beside`).
pub async fn place(
    target: &Running,
    names: &mut Names,
    placement: Placement,
) -> Result<(), String> {
    place_on(target, names, placement).await
}

async fn place_on(
    target: &impl Coordinators,
    names: &mut Names,
    placement: Placement,
) -> Result<(), String> {
    if placement == Placement::Any {
        return Ok(());
    }
    if let Some(why) = placement.refused_on(target.brokers()) {
        return Err(why);
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
            let group_at = target.coordinator_of(&group, false).await?;
            if placement.holds(&target.coordinator_of(&id, true).await?, &group_at) {
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
                placement.beside_words(),
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
    target: &impl Coordinators,
    prefix: &str,
    w: usize,
    id: String,
) -> Result<Option<(String, String)>, String> {
    let at = target.coordinator_of(&id, true).await?;
    for j in 0..TRIES {
        let group = format!("{prefix}-g{w}-{j}");
        if target.coordinator_of(&group, false).await? == at {
            tracing::info!(%id, %group, "coordinators together under two names");
            return Ok(Some((id, group)));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clients::placement::tests::Layout;

    async fn placed(layout: &Layout, placement: Placement) -> Names {
        let mut names = Names::new("t", 3);
        place_on(layout, &mut names, placement).await.unwrap();
        for (id, group) in names.transactional_ids.iter().zip(&names.groups) {
            let together = layout.coordinator_of(id, true).await.unwrap()
                == layout.coordinator_of(group, false).await.unwrap();
            assert_eq!(together, placement == Placement::Together, "{id} / {group}");
        }
        names
    }

    #[tokio::test]
    async fn together_is_one_name_where_one_name_will_do_and_two_where_none_will() {
        // One hash for both: every worker's group takes its transactional id's name.
        let same = placed(&Layout::new(3, 0), Placement::Together).await;
        assert_eq!(same.groups, same.transactional_ids);
        // Leaders laid out apart: no name puts both on one broker, so each group gets a name
        // of its own beside the worker's first id.
        let shifted = placed(&Layout::new(3, 1), Placement::Together).await;
        for (w, (id, group)) in shifted
            .transactional_ids
            .iter()
            .zip(&shifted.groups)
            .enumerate()
        {
            assert_eq!(*id, format!("{}-w{w}-0", shifted.prefix));
            assert!(
                group.starts_with(&format!("{}-g{w}-", shifted.prefix)),
                "{group}"
            );
        }
    }

    #[tokio::test]
    async fn apart_keeps_the_groups_and_moves_the_ids() {
        let names = placed(&Layout::new(3, 0), Placement::Apart).await;
        assert_eq!(names.groups, Names::new("t", 3).groups);
        let mut one = Names::new("t", 3);
        let refused = place_on(&Layout::new(1, 0), &mut one, Placement::Apart)
            .await
            .unwrap_err();
        assert!(refused.contains("need a cluster"), "{refused}");
    }
}
