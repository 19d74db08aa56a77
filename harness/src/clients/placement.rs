//! Where a workload's two coordinators sit on a cluster: its transactional id's and its
//! group's. kaas documents exactly-once as broken when the two hash to different brokers (the
//! group's transactional offsets are never materialised), so on a cluster `kconform clients`
//! runs each workload that has both once with them together and once apart, and `kconform
//! chaos` places its workers as asked ([`super::chaos::placement`]). Where the names fall is
//! chance; a run that left it to chance gave a different verdict from one run to the next.
//!
//! The names a workload uses are made here ([`WorkloadNames::of`]) and given to both clients,
//! so what is placed is what the client uses.

use std::time::Duration;

use serde::Serialize;

use super::{Client, GroupUse};
use crate::targets::Running;

/// How many run ids are tried before a placement is given up: each is a fresh draw of the two
/// names, landing together about once in as many tries as the cluster has brokers.
const TRIES: u32 = 64;

/// Where a transaction coordinator sits beside its group's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// On the same broker (what one broker always does).
    Together,
    /// On different brokers.
    Apart,
    /// Wherever the names fall.
    Any,
}

impl Placement {
    /// Its name on the command line, in reports and in the ledger.
    pub fn name(self) -> &'static str {
        match self {
            Placement::Together => "together",
            Placement::Apart => "apart",
            Placement::Any => "any",
        }
    }

    /// The placement a ledger claim or a report names (`together` or `apart`).
    pub fn parse(name: &str) -> Option<Placement> {
        [Placement::Together, Placement::Apart, Placement::Any]
            .into_iter()
            .find(|p| p.name() == name)
    }
}

/// The transactional id and group of one client's run of a workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadNames {
    /// The producers' transactional id.
    pub transactional_id: String,
    /// The consumers' group.
    pub group: String,
}

impl WorkloadNames {
    /// The names of `client`'s run `run` (unique per run, so runs never share state).
    pub fn of(client: Client, run: &str) -> WorkloadNames {
        let prefix = match client {
            Client::Java => "java",
            Client::Librdkafka => "rdk",
        };
        WorkloadNames {
            transactional_id: format!("{prefix}-tx-{run}"),
            group: format!("{prefix}-g-{run}"),
        }
    }

    /// The group whose coordinator a workload that uses `group` meets: its own, or `""`.
    fn group_met(&self, group: GroupUse) -> Option<&str> {
        match group {
            GroupUse::None => None,
            GroupUse::Own => Some(&self.group),
            GroupUse::Empty => Some(""),
        }
    }
}

/// Whether `placement` holds for a transaction coordinator at `transaction` and a group
/// coordinator at `group`.
fn holds<T: PartialEq>(placement: Placement, transaction: &T, group: &T) -> bool {
    match placement {
        Placement::Together => transaction == group,
        Placement::Apart => transaction != group,
        Placement::Any => true,
    }
}

/// A run id for `client`'s run of a workload that uses `group`, whose names put the two
/// coordinators as `placement` asks, as `target`'s FindCoordinator names them: fresh ids are
/// drawn until one does. Why none would, when none does.
pub async fn place_run(
    target: &Running,
    client: Client,
    group: GroupUse,
    placement: Placement,
) -> Result<String, String> {
    let draw = || uuid::Uuid::new_v4().simple().to_string();
    if placement == Placement::Any || group == GroupUse::None {
        return Ok(draw());
    }
    if placement == Placement::Apart && target.brokers < 2 {
        return Err("coordinators apart need a cluster: one broker coordinates everything".into());
    }
    let deadline = Duration::from_secs(10);
    let coordinator_of = |key: String, transactional: bool| async move {
        target
            .coordinator_of(&key, transactional, deadline)
            .await
            .map_err(|e| e.to_string())
    };
    for _ in 0..TRIES {
        let run = draw();
        let names = WorkloadNames::of(client, &run);
        let Some(group) = names.group_met(group) else {
            return Ok(run);
        };
        let group_at = coordinator_of(group.to_owned(), false).await?;
        let transaction_at = coordinator_of(names.transactional_id.clone(), true).await?;
        if holds(placement, &transaction_at, &group_at) {
            return Ok(run);
        }
    }
    Err(format!(
        "no run id of {TRIES} drawn put the transaction coordinator {} the group's",
        match placement {
            Placement::Apart => "apart from",
            _ => "beside",
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_client_names_its_run_apart_from_the_other() {
        let java = WorkloadNames::of(Client::Java, "r1");
        let rdk = WorkloadNames::of(Client::Librdkafka, "r1");
        assert_eq!(java.transactional_id, "java-tx-r1");
        assert_eq!(rdk.group, "rdk-g-r1");
        assert_ne!(java, rdk);
        assert_eq!(java.group_met(GroupUse::Empty), Some(""));
        assert_eq!(java.group_met(GroupUse::None), None);
        assert_eq!(java.group_met(GroupUse::Own), Some("java-g-r1"));
    }

    #[test]
    fn a_placement_holds_only_where_it_says() {
        assert!(holds(Placement::Together, &1, &1));
        assert!(!holds(Placement::Together, &1, &2));
        assert!(holds(Placement::Apart, &1, &2));
        assert!(!holds(Placement::Apart, &1, &1));
        assert!(holds(Placement::Any, &1, &2));
        for p in [Placement::Together, Placement::Apart, Placement::Any] {
            assert_eq!(Placement::parse(p.name()), Some(p));
        }
        assert_eq!(Placement::parse("beside"), None);
    }
}
