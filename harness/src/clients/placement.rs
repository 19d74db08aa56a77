//! Where a workload's two coordinators sit on a cluster: its transactional id's and its
//! group's. kaas documents exactly-once as broken when the two hash to different brokers (the
//! group's transactional offsets are never materialised), so on a cluster `kconform clients`
//! runs each workload that has both once with them together and once apart, and `kconform
//! chaos` places its workers as asked ([`super::chaos::placement`]). Where the names fall is
//! chance; a run that left it to chance gave a different verdict from one run to the next.
//!
//! The names a workload uses are made here ([`WorkloadNames::of`]) and given to both clients,
//! so what is placed is what the client uses.

use std::net::SocketAddr;
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

    /// Where a run's coordinators sat: as placed on a cluster, or together (one broker, or a
    /// workload without a group, has them on one broker).
    pub fn of_run(coordinators: Option<Placement>) -> Placement {
        coordinators.unwrap_or(Placement::Together)
    }

    /// Whether it holds for a transaction coordinator at `transaction` and a group
    /// coordinator at `group`.
    pub(crate) fn holds<T: PartialEq>(self, transaction: &T, group: &T) -> bool {
        match self {
            Placement::Together => transaction == group,
            Placement::Apart => transaction != group,
            Placement::Any => true,
        }
    }

    /// Why it cannot be had on a target of `brokers`, when it cannot.
    pub(crate) fn refused_on(self, brokers: usize) -> Option<String> {
        (self == Placement::Apart && brokers < 2)
            .then(|| "coordinators apart need a cluster: one broker coordinates everything".into())
    }

    /// How a transaction coordinator sits beside a group's, for messages ("apart from").
    pub(crate) fn beside_words(self) -> &'static str {
        match self {
            Placement::Apart => "apart from",
            _ => "beside",
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
            Client::Program(p) => p.name(),
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

/// Where a cluster's FindCoordinator puts a key: what placing names needs of a target, so the
/// placing can be tried on a made-up layout in the tests.
pub(crate) trait Coordinators {
    /// How many brokers the cluster has.
    fn brokers(&self) -> usize;
    /// The address of the broker that coordinates `key` (a transactional id, or a group).
    async fn coordinator_of(&self, key: &str, transactional: bool) -> Result<SocketAddr, String>;
}

impl Coordinators for Running {
    fn brokers(&self) -> usize {
        self.brokers
    }

    async fn coordinator_of(&self, key: &str, transactional: bool) -> Result<SocketAddr, String> {
        Running::coordinator_of(self, key, transactional, Duration::from_secs(10))
            .await
            .map_err(|e| e.to_string())
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
    place_run_on(target, client, group, placement).await
}

/// On a cluster, a run of a workload without a group on a topic of its own that kconform
/// creates (one partition), its run id drawn until its transactional id's coordinator is
/// another broker than the partition's leader: the coordinator then hands its markers to a
/// peer, the path on which real kaas lost committed records and showed aborted ones (a run left
/// to chance met it two times in three). The run id and the topic; why not, where the topic
/// cannot be made or no id would do (the caller then runs as before).
pub async fn place_apart_from_leader(
    target: &Running,
    client: Client,
    workload: &str,
) -> Result<(String, String), String> {
    const ASK: Duration = Duration::from_secs(35);
    let prefix = WorkloadNames::of(client, "").transactional_id;
    let prefix = prefix.trim_end_matches("-tx-");
    let topic = format!(
        "{prefix}-{workload}-{}",
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    );
    let made = target
        .provision(
            &[crate::run::topics::Needed {
                name: topic.clone(),
                partitions: 1,
                configs: Default::default(),
            }],
            ASK,
        )
        .await
        .map_err(|e| e.to_string())?;
    if let Some(why) = made.refused.or_else(|| made.failed.first().cloned()) {
        return Err(format!("its topic could not be made: {why}"));
    }
    let leader = crate::targets::brokers::leaders(target.addr, ASK, target.secured, &topic)
        .await?
        .get(&0)
        .copied()
        .ok_or("its topic has no partition 0")?;
    let nodes = crate::targets::brokers::of(target.addr, ASK, target.secured).await?;
    let leader_at = nodes
        .get(&leader)
        .copied()
        .ok_or_else(|| format!("the leader {leader} is not among the brokers listed"))?;
    for _ in 0..TRIES {
        let run = uuid::Uuid::new_v4().simple().to_string();
        let names = WorkloadNames::of(client, &run);
        if Coordinators::coordinator_of(target, &names.transactional_id, true).await? != leader_at {
            return Ok((run, topic));
        }
    }
    Err(format!(
        "no run id of {TRIES} drawn put the transaction coordinator apart from broker {leader}, its topic's leader"
    ))
}

async fn place_run_on(
    target: &impl Coordinators,
    client: Client,
    group: GroupUse,
    placement: Placement,
) -> Result<String, String> {
    let draw = || uuid::Uuid::new_v4().simple().to_string();
    if placement == Placement::Any || group == GroupUse::None {
        return Ok(draw());
    }
    if let Some(why) = placement.refused_on(target.brokers()) {
        return Err(why);
    }
    for _ in 0..TRIES {
        let run = draw();
        let names = WorkloadNames::of(client, &run);
        let Some(group) = names.group_met(group) else {
            return Ok(run);
        };
        let group_at = target.coordinator_of(group, false).await?;
        let transaction_at = target.coordinator_of(&names.transactional_id, true).await?;
        if placement.holds(&transaction_at, &group_at) {
            return Ok(run);
        }
    }
    Err(format!(
        "no run id of {TRIES} drawn put the transaction coordinator {} the group's",
        placement.beside_words()
    ))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A made-up cluster: a key's coordinator is its hash over `brokers`, the transaction-state
    /// topic's leaders laid out from `shift` on (Apache starts each internal topic's leaders
    /// where it chooses; kaas routes both by one hash, shift 0).
    pub(crate) struct Layout {
        pub(crate) brokers: usize,
        pub(crate) shift: usize,
    }

    impl Layout {
        /// `brokers` brokers, the transaction-state leaders `shift` along.
        pub(crate) fn new(brokers: usize, shift: usize) -> Layout {
            Layout { brokers, shift }
        }
    }

    impl Coordinators for Layout {
        fn brokers(&self) -> usize {
            self.brokers
        }

        async fn coordinator_of(
            &self,
            key: &str,
            transactional: bool,
        ) -> Result<SocketAddr, String> {
            let mut hasher = std::hash::DefaultHasher::new();
            std::hash::Hash::hash(key, &mut hasher);
            let hash = std::hash::Hasher::finish(&hasher) as usize;
            let broker = (hash + if transactional { self.shift } else { 0 }) % self.brokers;
            Ok(SocketAddr::from(([127, 0, 0, 1], 9092 + broker as u16)))
        }
    }

    #[tokio::test]
    async fn a_run_is_drawn_until_its_coordinators_sit_as_asked() {
        let three = Layout::new(3, 0);
        for placement in [Placement::Together, Placement::Apart] {
            for group in [GroupUse::Own, GroupUse::Empty] {
                for _ in 0..20 {
                    let run = place_run_on(&three, Client::Java, group, placement)
                        .await
                        .unwrap();
                    let names = WorkloadNames::of(Client::Java, &run);
                    let g = names.group_met(group).unwrap();
                    let together = three.coordinator_of(&names.transactional_id, true).await
                        == three.coordinator_of(g, false).await;
                    assert_eq!(together, placement == Placement::Together, "{run}");
                }
            }
        }
        let one = Layout::new(1, 0);
        let refused = place_run_on(&one, Client::Java, GroupUse::Own, Placement::Apart).await;
        assert!(refused.unwrap_err().contains("need a cluster"));
        // Without a group, or on one broker together, any name does.
        assert!(
            place_run_on(&one, Client::Java, GroupUse::None, Placement::Apart)
                .await
                .is_ok()
        );
        assert!(
            place_run_on(&one, Client::Java, GroupUse::Own, Placement::Together)
                .await
                .is_ok()
        );
    }

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
        assert!(Placement::Together.holds(&1, &1));
        assert!(!Placement::Together.holds(&1, &2));
        assert!(Placement::Apart.holds(&1, &2));
        assert!(!Placement::Apart.holds(&1, &1));
        assert!(Placement::Any.holds(&1, &2));
        for p in [Placement::Together, Placement::Apart, Placement::Any] {
            assert_eq!(Placement::parse(p.name()), Some(p));
        }
        assert_eq!(Placement::parse("beside"), None);
    }
}
