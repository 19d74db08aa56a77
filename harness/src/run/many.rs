//! Many scenarios on one target: those that share the broker `--jobs` at a time, then those
//! that disrupt it one by one, on each of its lanes (copies of a cluster kconform started)
//! side by side.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

use super::slot::Slot;
use super::{run_in_slot, Done, Provisioning};
use crate::scenario::{Scenario, Step};
use crate::targets::Running;
use crate::transcript::Transcript;

/// Whether a scenario kills or restarts brokers, or is a security scenario: it then runs alone
/// on its target, after the others, so that no other scenario meets a broker it took down or
/// a permission it gave (the users are the same for every scenario, and an ACL such as WRITE
/// on any topic changes what the idempotent InitProducerId answers everyone).
pub fn disrupts(scenario: &Scenario) -> bool {
    scenario.steps.iter().any(Step::disrupts) || scenario.secured()
}

/// Runs `scenarios` on one target, `jobs` at a time (each makes its names unique, so they
/// share the broker; a scenario waiting long on an answer lends its slot to another), then
/// those that kill brokers one at a time on each of the target and its `lanes` (copies of the
/// cluster, each taking the next such scenario when it is free), telling `done` as each
/// finishes; the transcripts come back in the scenarios' order, one per scenario, whatever the
/// target did. With `reads_past`, an answer malformed only in its header's version does not
/// stop its scenario.
#[allow(clippy::too_many_arguments)]
pub async fn run_many(
    scenarios: &[&Scenario],
    target: &Arc<Running>,
    lanes: &[Arc<Running>],
    deadline: Duration,
    jobs: usize,
    provisioning: Option<Provisioning>,
    reads_past: bool,
    done: Done,
) -> Vec<Transcript> {
    let (alone, shared): (Vec<_>, Vec<_>) =
        scenarios.iter().enumerate().partition(|(_, s)| disrupts(s));
    let mut out = Vec::new();
    {
        let batch = shared;
        let permits = Arc::new(Semaphore::new(jobs.max(1)));
        let mut set = tokio::task::JoinSet::new();
        for (i, s) in batch {
            let (s, target, permits, done, provisioning) = (
                (*s).clone(),
                target.clone(),
                permits.clone(),
                done.clone(),
                provisioning.clone(),
            );
            set.spawn(async move {
                let slot = Slot::among(permits).await;
                let t = run_in_slot(&s, &target, deadline, slot, provisioning, reads_past).await;
                done(&s.name);
                (i, t)
            });
        }
        while let Some(joined) = set.join_next().await {
            match joined {
                Ok(done) => out.push(done),
                // A scenario task panicked: a harness bug, shown as it is.
                Err(e) => std::panic::resume_unwind(e.into_panic()),
            }
        }
    }
    // One after the other on each lane, never lending a slot: a scenario that kills a broker
    // must not meet another's kill, nor another meet its dead broker.
    let queue = std::sync::Mutex::new(alone.into_iter());
    let next = || queue.lock().unwrap_or_else(|e| e.into_inner()).next();
    let lane = |target: &Arc<Running>| {
        let (target, provisioning, done) = (target.clone(), provisioning.clone(), done.clone());
        let next = &next;
        async move {
            let mut ran = Vec::new();
            while let Some((i, s)) = next() {
                let slot = Slot::unlimited();
                let t =
                    run_in_slot(s, &target, deadline, slot, provisioning.clone(), reads_past).await;
                done(&s.name);
                ran.push((i, t));
            }
            ran
        }
    };
    let all = std::iter::once(target).chain(lanes);
    for ran in futures::future::join_all(all.map(lane)).await {
        out.extend(ran);
    }
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, t)| t).collect()
}
