//! Reading a cluster back once the chaos workload stopped and every fault was undone: each output
//! partition from the beginning as a read_committed reader sees it, where its log and its last
//! stable offset end, and each worker's committed group offset. Through librdkafka, a client
//! written apart from both brokers and from kconform's own wire code.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};

use super::checker::{PartitionRead, Readback, Stall};
use super::workload::{config, Names, Shape};

/// The longest one call of the read-back waits.
const CALL: Duration = Duration::from_secs(10);
/// The longest the reading of every output partition may take.
const READ: Duration = Duration::from_secs(90);
/// How long the reader may go without a record or a partition's end before the partitions
/// it has not read to their end count as stalled.
const STALL: Duration = Duration::from_secs(15);

/// A consumer of `group` at `isolation`. A reader past the last record sees no more messages,
/// only markers and aborted records it skips: librdkafka tells it has reached a partition's end
/// (its last stable offset, read_committed) by an end-of-partition event.
fn consumer(bootstrap: &str, group: &str, isolation: &str) -> Result<BaseConsumer, String> {
    config(bootstrap)
        .set("group.id", group)
        .set("isolation.level", isolation)
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .set("enable.partition.eof", "true")
        .create()
        .map_err(|e| format!("read-back consumer: {e}"))
}

/// Whether a reader that stopped at offset `stopped`, no end-of-partition event seen, fell
/// short of the partition's end: one at or past the last stable offset has read all that a
/// read_committed reader can (the event did not come: a broker whose Fetch names another end
/// than its ListOffsets), and is not stalled.
fn short_of_end(stopped: i64, last_stable: i64) -> bool {
    stopped < last_stable
}

/// Where each output partition ends, as a reader of `isolation` sees it (librdkafka asks
/// ListOffsets with the reader's isolation level: read_committed gets the last stable offset).
fn ends(c: &BaseConsumer, topic: &str, partitions: i32) -> Result<Vec<i64>, String> {
    (0..partitions)
        .map(|p| {
            c.fetch_watermarks(topic, p, CALL)
                .map(|(_, high)| high)
                .map_err(|e| format!("{topic}-{p}: {e}"))
        })
        .collect()
}

/// Reads the cluster at `bootstrap` back, waiting up to `settle` for every output partition's
/// last stable offset to reach its high watermark (transactions a fault left open end at their
/// timeout) before reading; the group offsets of the workers that `began` a transaction.
pub fn read_back(
    bootstrap: &str,
    names: &Names,
    shape: Shape,
    settle: Duration,
    began: &BTreeSet<u32>,
) -> Result<Readback, String> {
    let reader_group = format!("{}-reader", names.prefix);
    let uncommitted = consumer(bootstrap, &reader_group, "read_uncommitted")?;
    let reader = consumer(bootstrap, &reader_group, "read_committed")?;
    let started = Instant::now();
    let (high, stable) = loop {
        let high = ends(&uncommitted, &names.output, shape.outputs);
        let stable = ends(&reader, &names.output, shape.outputs);
        match (high, stable) {
            (Ok(h), Ok(s)) if h == s || started.elapsed() >= settle => break (h, s),
            (Err(e), _) | (_, Err(e)) if started.elapsed() >= settle => {
                return Err(format!("the output's ends could not be read: {e}"))
            }
            _ => std::thread::sleep(Duration::from_millis(250)),
        }
    };
    let mut outputs: BTreeMap<i32, PartitionRead> = (0..shape.outputs)
        .map(|p| {
            (
                p,
                PartitionRead {
                    records: Vec::new(),
                    high_watermark: high[p as usize],
                    last_stable: stable[p as usize],
                    stalled: None,
                },
            )
        })
        .collect();
    let mut tpl = TopicPartitionList::new();
    for p in 0..shape.outputs {
        tpl.add_partition_offset(&names.output, p, Offset::Offset(names.output_base(p)))
            .map_err(|e| e.to_string())?;
    }
    reader.assign(&tpl).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + READ;
    let mut at_end: BTreeSet<i32> = BTreeSet::new();
    let mut progress = Instant::now();
    while at_end.len() < outputs.len() && Instant::now() < deadline && progress.elapsed() < STALL {
        match reader.poll(Duration::from_millis(100)) {
            Some(Ok(m)) => {
                progress = Instant::now();
                if let Some(part) = outputs.get_mut(&m.partition()) {
                    let payload = String::from_utf8_lossy(m.payload().unwrap_or_default());
                    part.records.push((m.offset(), payload.into_owned()));
                }
            }
            Some(Err(KafkaError::PartitionEOF(p))) => {
                progress = Instant::now();
                at_end.insert(p);
            }
            Some(Err(e)) => tracing::debug!(error = %e, "chaos read-back"),
            None => {}
        }
    }
    // A partition whose end the reader never reached: where it stopped, and what a
    // read_uncommitted reader finds past its last record.
    let position = reader.position().ok();
    for (p, part) in outputs.iter_mut().filter(|(p, _)| !at_end.contains(p)) {
        let stopped = position
            .as_ref()
            .and_then(|t| t.find_partition(&names.output, *p))
            .and_then(|e| e.offset().to_raw())
            .unwrap_or_else(|| part.records.last().map_or(0, |(o, _)| o + 1));
        if !short_of_end(stopped, part.last_stable) {
            continue;
        }
        part.stalled = Some(Stall {
            at: stopped,
            uncommitted_past: uncommitted_after(bootstrap, &names.output, *p, part),
        });
    }
    let mut group_offsets = BTreeMap::new();
    let mut pending_groups = Vec::new();
    let mut unread_groups = BTreeMap::new();
    for w in 0..shape.workers {
        // A worker that began no transaction committed no offset (and its client may be the
        // one that cannot reach the group's coordinator at all).
        if !began.contains(&w) {
            group_offsets.insert(w, None);
            continue;
        }
        // A read_committed client asks for stable offsets (UNSTABLE_OFFSET_COMMIT while a
        // transaction's offsets are pending, asked again until CALL); when they never settle,
        // the offsets committed so far are read as a read_uncommitted client reads them.
        let at = match committed_offset(bootstrap, names, w, "read_committed") {
            Ok(at) => Ok(at),
            Err(stable) => {
                tracing::debug!(worker = w, error = %stable, "chaos: group offsets not stable");
                committed_offset(bootstrap, names, w, "read_uncommitted")
                    .inspect(|_| pending_groups.push(w))
            }
        };
        // A group librdkafka cannot read (its coordinator's answers unreadable to it, while
        // another client's worker ran): its offsets go unchecked, and the report says so.
        match at {
            Ok(at) => {
                group_offsets.insert(w, at);
            }
            Err(e) => {
                unread_groups.insert(w, e);
            }
        }
    }
    Ok(Readback {
        outputs,
        group_offsets,
        pending_groups,
        input_base: (0..shape.workers as i32)
            .map(|p| (p, names.input_base(p)))
            .collect(),
        coordinators: BTreeMap::new(),
        leaders: BTreeMap::new(),
        unread_groups,
    })
}

/// Worker `w`'s group's committed offset of its input partition, as a client of `isolation`
/// reads it (`None`: nothing committed).
fn committed_offset(
    bootstrap: &str,
    names: &Names,
    w: u32,
    isolation: &str,
) -> Result<Option<i64>, String> {
    let c = consumer(bootstrap, names.group(w), isolation)?;
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition(&names.input, w as i32);
    let listed = c
        .committed_offsets(tpl, CALL)
        .map_err(|e| format!("group {}: {e}", names.group(w)))?;
    Ok(listed
        .elements()
        .first()
        .and_then(|e| e.offset().to_raw())
        .filter(|o| *o >= 0))
}

/// What a read_uncommitted reader finds past the last record a read_committed one read
/// (`offset=payload`, space-separated).
fn uncommitted_after(bootstrap: &str, topic: &str, p: i32, part: &PartitionRead) -> String {
    let from = part.records.last().map_or(0, |(o, _)| o + 1);
    let Ok(c) = consumer(bootstrap, "kconform-chaos-diagnosis", "read_uncommitted") else {
        return "no reader".into();
    };
    let mut tpl = TopicPartitionList::new();
    let _ = tpl.add_partition_offset(topic, p, Offset::Offset(from));
    let _ = c.assign(&tpl);
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        match c.poll(Duration::from_millis(100)) {
            Some(Ok(m)) => seen.push(format!(
                "{}={}",
                m.offset(),
                String::from_utf8_lossy(m.payload().unwrap_or_default())
            )),
            Some(Err(KafkaError::PartitionEOF(_))) => break,
            _ => {}
        }
    }
    seen.join(" ")
}

#[cfg(test)]
mod tests {
    /// A reader at the last stable offset is at the end, though no event said so (real kaas:
    /// "stays at offset 13826 below the last stable offset 13826"); one below it is short.
    #[test]
    fn a_reader_at_the_last_stable_offset_is_not_stalled() {
        assert!(!super::short_of_end(13826, 13826));
        assert!(!super::short_of_end(13827, 13826));
        assert!(super::short_of_end(13825, 13826));
    }
}
