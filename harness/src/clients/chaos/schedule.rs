//! The faults a chaos run does to a cluster, drawn from a seed so that a run can be repeated:
//! one broker at a time killed (then restarted), paused (then resumed) or sent no transaction
//! markers (held, then let through), at seeded times, for
//! seeded spans. The same seed gives the same schedule on every cluster of a run, so kaas-ref
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
    /// `kill` (undone by a restart), `pause` (undone by a resume) or `hold_markers` (the
    /// markers sent to the broker held, then let through).
    pub act: &'static str,
    /// The broker's node id.
    pub node: i32,
    /// How long the broker stays down.
    pub hold_ms: u64,
}

/// The faults planned from a seed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Schedule {
    /// The seed.
    pub seed: u64,
    /// The faults, in order.
    pub faults: Vec<Fault>,
}

/// The acts a schedule draws from, each undone by its [`BrokerAct::undo`]. A new one goes
/// last: a seed draws from those the target can do, in this order, so the schedules of the
/// acts before it stay as they were.
const ACTS: [BrokerAct; 3] = [BrokerAct::Kill, BrokerAct::Pause, BrokerAct::HoldMarkers];

impl Schedule {
    /// The faults of `seed` over `duration`, on brokers `nodes`, from the acts the target can
    /// do (`kill`, `pause`, `hold_markers`); none when it can do none or has one broker.
    pub fn plan(seed: u64, duration: Duration, nodes: &[i32], can: &[BrokerAct]) -> Schedule {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let acts: Vec<BrokerAct> = ACTS
            .into_iter()
            .filter(|act| can.contains(act) && act.undo().is_some_and(|u| can.contains(&u)))
            .collect();
        let mut faults = Vec::new();
        if nodes.len() < 2 || acts.is_empty() {
            return Schedule { seed, faults };
        }
        let end = duration.as_millis() as u64;
        // The workload gets going before the first fault.
        let mut at = rng.random_range(3_000..6_000);
        while at < end {
            let act = acts[rng.random_range(0..acts.len())];
            let node = nodes[rng.random_range(0..nodes.len())];
            let hold_ms = rng.random_range(500..8_000);
            faults.push(Fault {
                at_ms: at,
                act: act.key(),
                node,
                hold_ms,
            });
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
    ACTS.into_iter()
        .find(|act| act.key() == key)
        .and_then(|act| Some((act, act.undo()?)))
        .ok_or_else(|| format!("no fault of a schedule is called {key}"))
}

async fn act(target: &Running, act: BrokerAct, node: i32) -> Result<(), String> {
    target.act(act, node).await.map_err(|e| e.to_string())
}

/// Does the faults of `schedule` to `target`, each at its time (or as soon as the previous one
/// is undone), until `stop_at`; every fault done is undone before it returns, whatever failed.
pub async fn execute(
    target: &Running,
    schedule: &Schedule,
    started: Instant,
    stop_at: Instant,
) -> Vec<Done> {
    let mut done = Vec::new();
    for fault in &schedule.faults {
        let when = (started + Duration::from_millis(fault.at_ms)).max(Instant::now());
        if when >= stop_at {
            break;
        }
        tokio::time::sleep_until(when.into()).await;
        let done_ms = started.elapsed().as_millis() as u64;
        tracing::debug!(target = %target.name, act = fault.act, node = fault.node, "chaos fault");
        let did = match acts_of(fault.act) {
            Ok((to_do, undo)) => act(target, to_do, fault.node).await.map(|()| undo),
            Err(e) => Err(e),
        };
        let undo = match did {
            Ok(undo) => undo,
            Err(e) => {
                done.push(Done {
                    fault: fault.clone(),
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
            fault: fault.clone(),
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

    const ALL: [BrokerAct; 6] = BrokerAct::ALL;

    #[test]
    fn a_seed_gives_the_same_schedule_and_another_seed_another() {
        let d = Duration::from_secs(120);
        let a = Schedule::plan(7, d, &[0, 1, 2], &ALL);
        assert_eq!(a, Schedule::plan(7, d, &[0, 1, 2], &ALL));
        assert_ne!(a.faults, Schedule::plan(8, d, &[0, 1, 2], &ALL).faults);
        // Over two minutes: a fault every 4 to 16 s, never overlapping, on every broker, of
        // every kind.
        assert!((7..=30).contains(&a.faults.len()), "{}", a.faults.len());
        for pair in a.faults.windows(2) {
            assert!(pair[1].at_ms >= pair[0].at_ms + pair[0].hold_ms + 2_000);
        }
        for node in [0, 1, 2] {
            assert!(a.faults.iter().any(|f| f.node == node), "{node}");
        }
        for act in ["kill", "pause", "hold_markers"] {
            assert!(a.faults.iter().any(|f| f.act == act), "{act}");
        }
    }

    #[test]
    fn only_the_acts_the_target_can_undo_are_planned() {
        let d = Duration::from_secs(120);
        let pauses = Schedule::plan(7, d, &[0, 1, 2], &[BrokerAct::Pause, BrokerAct::Resume]);
        assert!(pauses.faults.iter().all(|f| f.act == "pause"));
        // A kill with no restart to undo it is not planned.
        let none = Schedule::plan(7, d, &[0, 1, 2], &[BrokerAct::Kill]);
        assert!(none.faults.is_empty());
        assert!(Schedule::plan(7, d, &[0], &ALL).faults.is_empty());
    }

    #[test]
    fn each_fault_a_schedule_names_is_done_and_undone_by_its_own_acts() {
        assert_eq!(acts_of("kill"), Ok((BrokerAct::Kill, BrokerAct::Restart)));
        assert_eq!(
            acts_of("hold_markers"),
            Ok((BrokerAct::HoldMarkers, BrokerAct::ReleaseMarkers))
        );
        // An undoing is never drawn as a fault of its own.
        assert!(acts_of("restart").is_err());
    }
}
