//! The topics the fuzzer's sequences run on: one per slot of `--jobs`, kept from sequence to
//! sequence while both brokers leave it quiet, a fresh one when they do not.
//!
//! Creating a topic for every sequence cost Apache about 190 ms of a sequence's 290 (its
//! controller commits each creation; the partitions then come up one by one), and an overnight
//! run would have left it hundreds of thousands of partitions. A slot's topic is therefore
//! provisioned ([`crate::run::topics`]): created once on both brokers under a fixed name, the
//! sequence's set-up CreateTopics not sent, and every log offset read relative to where the
//! sequence began. What one sequence leaves there cannot reach the next: the read-back ends
//! with a rejoin and an abort by the rejoined producer (unjudged: [`super::script`]), each
//! answered once its markers are in every log, and the topic is kept only if, after them,
//! each partition's last stable offset is its high watermark on both brokers and the two
//! agree ([`fit_for_reuse`]). A topic a broker left a transaction hanging in, or that showed a
//! finding, is retired and the slot's next sequence gets a new one; retired topics are
//! deleted on both brokers before the slot's next is created, and the whole pool at the end
//! of the run ([`TopicPool::delete_all`]). Findings are confirmed and shrunk on topics of
//! their own, as their scenario files replay.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;

use super::script::CLEANUP;
use super::FuzzError;
use crate::run::topics;
use crate::scenario::Scenario;
use crate::targets::Running;
use crate::transcript::{Outcome, Transcript};

/// The slots' topics: which generation each slot is on, and which topics exist.
pub struct TopicPool {
    /// Names this run's topics apart from another run's on the same brokers.
    nonce: String,
    /// Each slot's generation: a retired topic's slot moves to the next.
    generations: Mutex<Vec<u32>>,
    /// Topics created on both brokers (a shaped topic is a topic of its own).
    created: Mutex<HashSet<String>>,
    /// Each slot's topics: those of its current generation, and those retired and not yet
    /// deleted.
    topics: Mutex<Vec<SlotTopics>>,
    /// Slots whose topic was retired so far.
    retired: AtomicU64,
}

/// The topics one slot made.
#[derive(Debug, Default, Clone)]
struct SlotTopics {
    /// Of the slot's current generation.
    current: Vec<String>,
    /// Of its retired generations, to delete.
    retired: Vec<String>,
}

impl TopicPool {
    /// A pool of `slots` slots, none with a topic yet.
    pub fn new(slots: usize) -> TopicPool {
        TopicPool {
            nonce: uuid::Uuid::new_v4().simple().to_string()[..6].to_owned(),
            generations: Mutex::new(vec![0; slots]),
            created: Mutex::new(HashSet::new()),
            topics: Mutex::new(vec![SlotTopics::default(); slots]),
            retired: AtomicU64::new(0),
        }
    }

    /// The name a sequence in `slot` runs under: its provisioned topics are named after it
    /// (`topic-<name>-kconform`), so the slot keeps its topic until [`TopicPool::retire`].
    pub fn scenario_name(&self, slot: usize) -> String {
        let generations = self.generations.lock().expect("no panic while held");
        let generation = generations.get(slot).copied().unwrap_or_default();
        format!("s{slot}g{generation}-{}", self.nonce)
    }

    /// Gives `slot` a new topic for its next sequence.
    pub fn retire(&self, slot: usize) {
        let mut generations = self.generations.lock().expect("no panic while held");
        if let Some(g) = generations.get_mut(slot) {
            *g += 1;
            self.retired.fetch_add(1, Ordering::Relaxed);
        }
        let mut topics = self.topics.lock().expect("no panic while held");
        if let Some(t) = topics.get_mut(slot) {
            let current = std::mem::take(&mut t.current);
            t.retired.extend(current);
        }
    }

    /// Slots whose topic was retired so far.
    pub fn retired(&self) -> u64 {
        self.retired.load(Ordering::Relaxed)
    }

    /// Topics created so far (on each broker).
    pub fn created(&self) -> usize {
        self.created.lock().expect("no panic while held").len()
    }

    /// Creates the topics `scenario` (in `slot`) needs that do not exist yet, on both
    /// brokers, after deleting the slot's retired ones; the sequence then runs on them
    /// provisioned.
    pub async fn provide(
        &self,
        scenario: &Scenario,
        slot: usize,
        target: &Running,
        oracle: &Running,
        deadline: Duration,
    ) -> Result<(), FuzzError> {
        delete(&self.take_retired(slot), target, oracle, deadline).await;
        let missing: Vec<topics::Needed> = {
            let created = self.created.lock().expect("no panic while held");
            topics::of(scenario)
                .into_iter()
                .map(|(_, needed)| needed)
                .filter(|n| !created.contains(&n.name))
                .collect()
        };
        if missing.is_empty() {
            return Ok(());
        }
        let (left, right) = tokio::join!(
            target.provision(&missing, deadline),
            oracle.provision(&missing, deadline)
        );
        for (running, provisioned) in [(target, left), (oracle, right)] {
            let provisioned = provisioned.map_err(|e| FuzzError::Target(e.to_string()))?;
            if provisioned.refused.is_some() || !provisioned.failed.is_empty() {
                return Err(FuzzError::Target(format!(
                    "{}: the sequences' topics: {}",
                    running.name,
                    provisioned.summary()
                )));
            }
        }
        self.record(slot, missing.into_iter().map(|n| n.name).collect());
        Ok(())
    }

    /// Notes `names` as created on both brokers for `slot`'s current generation.
    fn record(&self, slot: usize, names: Vec<String>) {
        let mut topics = self.topics.lock().expect("no panic while held");
        if let Some(t) = topics.get_mut(slot) {
            t.current.extend(names.iter().cloned());
        }
        let mut created = self.created.lock().expect("no panic while held");
        created.extend(names);
    }

    /// The topics `slot` retired and has not deleted yet, handed over for deletion.
    fn take_retired(&self, slot: usize) -> Vec<String> {
        let mut topics = self.topics.lock().expect("no panic while held");
        topics
            .get_mut(slot)
            .map(|t| std::mem::take(&mut t.retired))
            .unwrap_or_default()
    }

    /// Every topic of the pool, current and retired, handed over for deletion.
    fn take_all(&self) -> Vec<String> {
        let mut topics = self.topics.lock().expect("no panic while held");
        topics
            .iter_mut()
            .flat_map(|t| {
                let mut all = std::mem::take(&mut t.current);
                all.append(&mut t.retired);
                all
            })
            .collect()
    }

    /// Deletes every topic of the pool on both brokers, current and retired: the run is over.
    pub async fn delete_all(&self, target: &Running, oracle: &Running, deadline: Duration) {
        delete(&self.take_all(), target, oracle, deadline).await;
    }
}

/// Deletes `names` on both brokers. A broker that will not delete them keeps them (an
/// external broker may not let clients delete topics): said in the log, not an error, as
/// the run loses nothing by it.
async fn delete(names: &[String], target: &Running, oracle: &Running, deadline: Duration) {
    if names.is_empty() {
        return;
    }
    let (left, right) = tokio::join!(
        target.delete_topics(names, deadline),
        oracle.delete_topics(names, deadline)
    );
    for (running, deleted) in [(target, left), (oracle, right)] {
        if let Err(e) = deleted {
            tracing::info!(target = %running.name, error = %e, "the fuzzer's retired topics stay");
        }
    }
}

/// Whether the topic a sequence ran on can carry the next: both runs went to the end, and
/// after the clean-up every partition's last stable offset is its high watermark on both
/// brokers, at the same (relative) offset.
pub fn fit_for_reuse(left: &Transcript, right: &Transcript) -> bool {
    let (l, r) = (quiet_ends(left), quiet_ends(right));
    tracing::trace!(scenario = %left.scenario, target = ?l, oracle = ?r, "where the partitions ended");
    matches!((l, r), (Some(l), Some(r)) if l == r)
}

/// Where each partition ends after the clean-up, when the run went to the end and nothing
/// holds a partition's last stable offset back.
fn quiet_ends(t: &Transcript) -> Option<Vec<i64>> {
    if t.stopped.is_some() || !t.failed_expectations.is_empty() {
        return None;
    }
    let offset = |step: String| {
        let record = t.steps.iter().find(|s| s.step == step)?;
        let Outcome::Response(v) = &record.outcome else {
            return None;
        };
        let p = v.pointer("/topics/0/partitions/0")?;
        let code = p.get("error_code").map(error_code)?;
        (code == 0).then(|| p.get("offset").and_then(Value::as_i64))?
    };
    let mut ends = Vec::new();
    for partition in 0..2 {
        let high = offset(format!("{CLEANUP}high-watermark-{partition}"))?;
        let stable = offset(format!("{CLEANUP}last-stable-offset-{partition}"))?;
        if high != stable {
            return None;
        }
        ends.push(high);
    }
    Some(ends)
}

/// An error code as a normalised answer writes it ("0 NONE") or as a number.
fn error_code(v: &Value) -> i64 {
    match v {
        Value::Number(n) => n.as_i64().unwrap_or(-1),
        Value::String(s) => s
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(-1),
        _ => -1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::StepRecord;
    use serde_json::json;

    fn transcript(ends: [(i64, i64); 2]) -> Transcript {
        let mut steps = Vec::new();
        for (partition, (high, stable)) in ends.into_iter().enumerate() {
            for (name, offset) in [("high-watermark", high), ("last-stable-offset", stable)] {
                steps.push(StepRecord {
                    step: format!("{CLEANUP}{name}-{partition}"),
                    api: "ListOffsets".into(),
                    version: Some(8),
                    request: Value::Null,
                    outcome: Outcome::Response(json!({"topics": [{"partitions": [
                        {"error_code": "0 NONE", "offset": offset}]}]})),
                    encoding: Vec::new(),
                });
            }
        }
        Transcript {
            scenario: "s0g0".into(),
            target: "t".into(),
            steps,
            failed_expectations: Vec::new(),
            stopped: None,
            readback: Vec::new(),
        }
    }

    #[test]
    fn a_topic_is_kept_only_while_both_brokers_leave_it_quiet_and_agree() {
        let quiet = transcript([(3, 3), (0, 0)]);
        assert!(fit_for_reuse(&quiet, &quiet.clone()));
        // A transaction left hanging on one broker (its last stable offset held back).
        assert!(!fit_for_reuse(&quiet, &transcript([(3, 2), (0, 0)])));
        // Both quiet, at different offsets.
        assert!(!fit_for_reuse(&quiet, &transcript([(4, 4), (0, 0)])));
        // A run that stopped, or never read the offsets after the rejoin.
        let mut stopped = quiet.clone();
        stopped.stopped = Some("a step failed".into());
        assert!(!fit_for_reuse(&stopped, &quiet));
        let mut short = quiet.clone();
        short.steps.pop();
        assert!(!fit_for_reuse(&quiet, &short));
        // An answer with an error.
        let mut refused = quiet.clone();
        refused.steps[0].outcome = Outcome::Response(
            json!({"topics": [{"partitions": [{"error_code": "6 NOT_LEADER_OR_FOLLOWER", "offset": 3}]}]}),
        );
        assert!(!fit_for_reuse(&refused, &quiet));
    }

    #[test]
    fn a_retired_slot_gets_a_new_name() {
        let pool = TopicPool::new(2);
        let first = pool.scenario_name(1);
        assert_eq!(first, pool.scenario_name(1));
        assert_ne!(first, pool.scenario_name(0));
        pool.retire(1);
        assert_ne!(first, pool.scenario_name(1));
        assert_eq!(pool.retired(), 1);
    }

    #[test]
    fn retired_topics_are_handed_over_for_deletion_once_and_the_rest_at_the_end() {
        let pool = TopicPool::new(2);
        pool.record(1, vec!["a".into(), "a-shaped".into()]);
        pool.record(0, vec!["b".into()]);
        assert!(pool.take_retired(1).is_empty(), "nothing retired yet");
        pool.retire(1);
        assert_eq!(pool.take_retired(1), ["a", "a-shaped"]);
        assert!(pool.take_retired(1).is_empty(), "handed over once");
        pool.record(1, vec!["c".into()]);
        pool.retire(0);
        let mut all = pool.take_all();
        all.sort();
        assert_eq!(all, ["b", "c"]);
        assert!(pool.take_all().is_empty());
        assert_eq!(pool.created(), 4);
    }
}
