//! The faults a chaos run does to a cluster, drawn from a seed so that a run can be repeated:
//! one broker at a time killed (then restarted), paused (then resumed), sent no transaction
//! markers (held, then let through), or a worker's transaction coordinator moved (the broker
//! FindCoordinator names paused until its peers count it out, then resumed), at seeded times,
//! for seeded spans. The same seed gives the same schedule on every cluster of a run, so kaas-ref
//! and Apache suffer the same faults at the same moments.

use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::targets::faults::BrokerAct;
use crate::targets::Running;

/// One fault: at `at_ms` from the start, `act` broker `node`, undone `hold_ms` later.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fault {
    /// When, in milliseconds from the start of the workload (later if the previous fault's
    /// undoing took longer: faults never overlap).
    pub at_ms: u64,
    /// `kill` (undone by a restart), `pause` (undone by a resume), `hold_markers` (the
    /// markers sent to the broker held, then let through) or `move_coordinator` (the broker
    /// coordinating `worker`'s transactional id paused, then resumed).
    pub act: &'static str,
    /// The broker's node id; for `move_coordinator`, the coordinator's as FindCoordinator named
    /// it when the fault was done (-1 in the plan, and when it could not be found).
    pub node: i32,
    /// How long the broker stays down.
    pub hold_ms: u64,
    /// The worker whose transaction coordinator `move_coordinator` moves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker: Option<u32>,
}

/// A fault a schedule can draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A broker act, undone by its [`BrokerAct::undo`]: a kill, a pause, markers held.
    Act(BrokerAct),
    /// A worker's transaction coordinator moved: the broker coordinating its transactional id
    /// paused for at least [`MOVE_HOLD_MIN`], so its peers count it out and another takes its
    /// transactions over, then resumed.
    MoveCoordinator,
}

impl From<BrokerAct> for Kind {
    fn from(act: BrokerAct) -> Kind {
        Kind::Act(act)
    }
}

impl Kind {
    /// Its name in a schedule and a report.
    pub fn key(self) -> &'static str {
        match self {
            Kind::Act(act) => act.key(),
            Kind::MoveCoordinator => "move_coordinator",
        }
    }

    /// Whether a target that can do `can` can do it and undo it.
    pub fn doable(self, can: &[BrokerAct]) -> bool {
        self.acts()
            .is_some_and(|(act, undo)| can.contains(&act) && can.contains(&undo))
    }

    /// The act that does it and the act that undoes it.
    fn acts(self) -> Option<(BrokerAct, BrokerAct)> {
        match self {
            Kind::Act(act) => Some((act, act.undo()?)),
            Kind::MoveCoordinator => Some((BrokerAct::Pause, BrokerAct::Resume)),
        }
    }
}

/// The shortest a moved coordinator's broker stays paused: past the 3 s after which both
/// kinds of cluster count a silent broker out (Apache's broker session, kaas-ref's stamps),
/// with room for the new coordinator to take over.
pub const MOVE_HOLD_MIN: u64 = 5_000;

/// The faults planned from a seed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Schedule {
    /// The seed.
    pub seed: u64,
    /// The faults, in order.
    pub faults: Vec<Fault>,
}

/// The faults a schedule draws from. A new one goes last: a seed draws from those asked for
/// that the target can do, in this order, so the schedules of the faults before it stay as
/// they were.
const KINDS: [Kind; 4] = [
    Kind::Act(BrokerAct::Kill),
    Kind::Act(BrokerAct::Pause),
    Kind::Act(BrokerAct::HoldMarkers),
    Kind::MoveCoordinator,
];

impl Schedule {
    /// The faults of `seed` over `duration`, on brokers `nodes` and `workers` workers, from
    /// the kinds asked for (`wanted`) whose acts the target can do (`can`: kill, pause,
    /// hold_markers, and their undoing); none when it can do none or has one broker.
    pub fn plan(
        seed: u64,
        duration: Duration,
        (nodes, workers): (&[i32], u32),
        wanted: &[Kind],
        can: &[BrokerAct],
    ) -> Schedule {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let kinds: Vec<Kind> = KINDS
            .into_iter()
            .filter(|kind| wanted.contains(kind) && kind.doable(can))
            .collect();
        let mut faults = Vec::new();
        if nodes.len() < 2 || kinds.is_empty() {
            return Schedule { seed, faults };
        }
        let end = duration.as_millis() as u64;
        // The workload gets going before the first fault.
        let mut at = rng.random_range(3_000..6_000);
        while at < end {
            let kind = kinds[rng.random_range(0..kinds.len())];
            let node = nodes[rng.random_range(0..nodes.len())];
            let hold_ms = rng.random_range(500..8_000);
            let fault = match kind {
                Kind::MoveCoordinator => Fault {
                    at_ms: at,
                    act: kind.key(),
                    node: -1,
                    hold_ms: hold_ms.max(MOVE_HOLD_MIN),
                    worker: Some(rng.random_range(0..workers.max(1))),
                },
                Kind::Act(_) => Fault {
                    at_ms: at,
                    act: kind.key(),
                    node,
                    hold_ms,
                    worker: None,
                },
            };
            let hold_ms = fault.hold_ms;
            faults.push(fault);
            at += hold_ms + rng.random_range(2_000..8_000);
        }
        Schedule { seed, faults }
    }
}

/// A fault as it was done.
#[derive(Debug, Clone, Serialize)]
pub struct Done {
    /// The fault planned.
    pub fault: Fault,
    /// When it was done, in milliseconds from the start.
    pub done_ms: u64,
    /// When the broker was back (restarted or resumed, and in sync), in milliseconds from the
    /// start.
    pub back_ms: Option<u64>,
    /// What went wrong doing it or undoing it.
    pub error: Option<String>,
}

/// The act a schedule names by `key`, and its undoing.
fn acts_of(key: &str) -> Result<(BrokerAct, BrokerAct), String> {
    KINDS
        .into_iter()
        .find(|kind| kind.key() == key)
        .and_then(Kind::acts)
        .ok_or_else(|| format!("no fault of a schedule is called {key}"))
}

/// The broker `fault` is done to: the one it names, or for `move_coordinator` the one
/// coordinating its worker's transactional id now.
async fn broker_of(
    target: &Running,
    fault: &Fault,
    transactional_ids: &[String],
) -> Result<i32, String> {
    let Some(w) = fault.worker else {
        return Ok(fault.node);
    };
    let id = transactional_ids
        .get(w as usize)
        .ok_or_else(|| format!("no worker {w}"))?;
    let addr = target
        .coordinator_of(id, true, Duration::from_secs(10))
        .await
        .map_err(|e| e.to_string())?;
    target
        .node_at(addr)
        .ok_or_else(|| format!("{id}'s coordinator {addr} is none of the cluster's brokers"))
}

async fn act(target: &Running, act: BrokerAct, node: i32) -> Result<(), String> {
    target.act(act, node).await.map_err(|e| e.to_string())
}

/// Does the faults of `schedule` to `target`, each at its time (or as soon as the previous one
/// is undone), until `stop_at`; every fault done is undone before it returns, whatever failed.
/// `transactional_ids` are the workers', whose coordinators `move_coordinator` moves.
pub async fn execute(
    target: &Running,
    schedule: &Schedule,
    transactional_ids: &[String],
    (started, stop_at): (Instant, Instant),
) -> Vec<Done> {
    let mut done = Vec::new();
    for fault in &schedule.faults {
        let when = (started + Duration::from_millis(fault.at_ms)).max(Instant::now());
        if when >= stop_at {
            break;
        }
        tokio::time::sleep_until(when.into()).await;
        let done_ms = started.elapsed().as_millis() as u64;
        let mut fault = fault.clone();
        let did = match (
            acts_of(fault.act),
            broker_of(target, &fault, transactional_ids).await,
        ) {
            (Ok((to_do, undo)), Ok(node)) => {
                fault.node = node;
                tracing::debug!(target = %target.name, act = fault.act, node, "chaos fault");
                act(target, to_do, node).await.map(|()| undo)
            }
            (Err(e), _) | (_, Err(e)) => Err(e),
        };
        let undo = match did {
            Ok(undo) => undo,
            Err(e) => {
                done.push(Done {
                    fault,
                    done_ms,
                    back_ms: None,
                    error: Some(e),
                });
                continue;
            }
        };
        tokio::time::sleep(Duration::from_millis(fault.hold_ms)).await;
        let undone = act(target, undo, fault.node).await;
        done.push(Done {
            fault,
            done_ms,
            back_ms: Some(started.elapsed().as_millis() as u64),
            error: undone.err(),
        });
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [BrokerAct; 8] = BrokerAct::ALL;

    #[test]
    fn a_seed_gives_the_same_schedule_and_another_seed_another() {
        let d = Duration::from_secs(120);
        let a = Schedule::plan(7, d, (&[0, 1, 2], 3), &KINDS, &ALL);
        assert_eq!(a, Schedule::plan(7, d, (&[0, 1, 2], 3), &KINDS, &ALL));
        assert_ne!(
            a.faults,
            Schedule::plan(8, d, (&[0, 1, 2], 3), &KINDS, &ALL).faults
        );
        // Over two minutes: a fault every 4 to 16 s, never overlapping, on every broker, of
        // every kind.
        assert!((7..=30).contains(&a.faults.len()), "{}", a.faults.len());
        for pair in a.faults.windows(2) {
            assert!(pair[1].at_ms >= pair[0].at_ms + pair[0].hold_ms + 2_000);
        }
        for node in [0, 1, 2] {
            assert!(a.faults.iter().any(|f| f.node == node), "{node}");
        }
        // Over ten minutes, every kind; a coordinator moved is a worker's, its broker found
        // when it is done, held past the time a silent broker is counted out.
        let long = Schedule::plan(7, d * 5, (&[0, 1, 2], 3), &KINDS, &ALL);
        for act in ["kill", "pause", "hold_markers", "move_coordinator"] {
            assert!(long.faults.iter().any(|f| f.act == act), "{act}");
        }
        for f in &long.faults {
            let moved = f.act == "move_coordinator";
            assert_eq!(f.worker.is_some(), moved, "{f:?}");
            assert!(!moved || (f.node == -1 && f.hold_ms >= MOVE_HOLD_MIN && f.worker < Some(3)));
        }
    }

    #[test]
    fn only_the_faults_asked_for_are_planned() {
        let d = Duration::from_secs(120);
        let asked = [Kind::Act(BrokerAct::Kill), Kind::MoveCoordinator];
        let plan = Schedule::plan(7, d, (&[0, 1, 2], 3), &asked, &ALL);
        assert!(plan.faults.iter().any(|f| f.act == "kill"));
        assert!(plan.faults.iter().any(|f| f.act == "move_coordinator"));
        assert!(plan
            .faults
            .iter()
            .all(|f| ["kill", "move_coordinator"].contains(&f.act)));
        assert!(Schedule::plan(7, d, (&[0, 1, 2], 3), &[], &ALL)
            .faults
            .is_empty());
    }

    #[test]
    fn only_the_acts_the_target_can_undo_are_planned() {
        let d = Duration::from_secs(120);
        let pauses = Schedule::plan(
            7,
            d,
            (&[0, 1, 2], 3),
            &KINDS,
            &[BrokerAct::Pause, BrokerAct::Resume],
        );
        // A coordinator is moved by a pause.
        assert!(pauses
            .faults
            .iter()
            .all(|f| ["pause", "move_coordinator"].contains(&f.act)));
        // A kill with no restart to undo it is not planned.
        let none = Schedule::plan(7, d, (&[0, 1, 2], 3), &KINDS, &[BrokerAct::Kill]);
        assert!(none.faults.is_empty());
        assert!(Schedule::plan(7, d, (&[0], 3), &KINDS, &ALL)
            .faults
            .is_empty());
    }

    #[test]
    fn each_fault_a_schedule_names_is_done_and_undone_by_its_own_acts() {
        assert_eq!(acts_of("kill"), Ok((BrokerAct::Kill, BrokerAct::Restart)));
        assert_eq!(
            acts_of("hold_markers"),
            Ok((BrokerAct::HoldMarkers, BrokerAct::ReleaseMarkers))
        );
        assert_eq!(
            acts_of("move_coordinator"),
            Ok((BrokerAct::Pause, BrokerAct::Resume))
        );
        // An undoing is never drawn as a fault of its own.
        assert!(acts_of("restart").is_err());
    }
}
