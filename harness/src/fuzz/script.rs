//! A drawn sequence written as a scenario file: the set-up fragments, one step per action
//! (after each EndTxn the same EndTxn again, which waits out the markers, and the group's
//! offsets), the read-back of what the brokers kept, and the unjudged clean-up that readies the
//! topic for the next sequence ([`super::pool`]). The file is what the fuzzer runs and what a
//! finding replays from.

use std::fmt::Write;

use super::model::{Action, Epoch, Id, Pid, SHAPES, TOPIC_SHAPES};

/// The `unique` line of a sequence whose ids are shaped by `names` (the first
/// [`Action::Names`]; none: plain names).
fn unique_line(actions: &[Action]) -> String {
    let (txn, group, topic) = actions
        .iter()
        .find_map(|a| match a {
            Action::Names { txn, group, topic } => Some((*txn, *group, *topic)),
            _ => None,
        })
        .unwrap_or((0, 0, 0));
    let entry = |var: &str, shapes: &[&str], i: u8| match shapes.get(usize::from(i)) {
        Some(shape) if !shape.is_empty() => format!("{{ name = \"{var}\", {shape} }}"),
        _ => format!("\"{var}\""),
    };
    format!(
        "unique = [{}, {}, {}]",
        entry("txn", SHAPES, txn),
        entry("topic", TOPIC_SHAPES, topic),
        entry("group", SHAPES, group)
    )
}

fn pid_text(pid: Pid) -> &'static str {
    match pid {
        Pid::Current => "\"${pid}\"",
        Pid::Unknown => "987654321",
    }
}

fn epoch_text(epoch: Epoch) -> &'static str {
    match epoch {
        Epoch::Current => "\"${epoch}\"",
        Epoch::First => "\"${epoch0}\"",
        Epoch::Future => "30000",
    }
}

/// The set-up every sequence begins with (fragments of the scenarios, copied beside each
/// finding): the coordinators found, the topic created with two partitions and served.
pub const PREAMBLE: &[&str] = &["coordinator", "group-coordinator", "topic"];

/// The scenario file of a sequence, `header` (comment lines) first.
pub fn scenario(actions: &[Action], header: &str) -> String {
    let mut out = String::new();
    for line in header.lines() {
        let _ = writeln!(out, "# {line}");
    }
    let _ = writeln!(
        out,
        "description = \"A sequence kconform fuzz drew ({} actions)\"\n{}\n",
        actions.len(),
        unique_line(actions)
    );
    for fragment in PREAMBLE {
        let _ = writeln!(out, "[[step]]\ninclude = \"{fragment}\"\n");
    }
    let mut first_init = true;
    for (i, a) in actions.iter().enumerate() {
        // The group's offsets as the transaction's end left them (its markers landed, below).
        if i > 0 && matches!(actions[i - 1], Action::EndTxn { .. }) {
            read_offsets(&mut out, &format!("a{i}-stored"), false);
        }
        let (name, api, version, request, capture) = match step_of(a, i, &mut first_init) {
            None => continue,
            Some(Step::Sleep(ms)) => {
                let _ = writeln!(out, "[[step]]\nname = \"a{i}-sleep\"\nsleep_ms = {ms}\n");
                continue;
            }
            Some(Step::Request(name, api, version, request, capture)) => {
                (name, api, version, request, capture)
            }
        };
        let _ = writeln!(out, "[[step]]\nname = \"a{i}-{name}\"\napi = \"{api}\"");
        if let Some(v) = version {
            let _ = writeln!(out, "version = {v}");
        }
        let _ = write!(
            out,
            "request = {request}\n{capture}retry_retriable = true\nwithin_ms = 5000\n\n"
        );
        // Apache answers EndTxn before its markers are written (they land within
        // milliseconds), so what follows waits for them: what is compared is the state, not
        // the race (a Produce that arrives first joins the ending transaction). The same
        // EndTxn again answers CONCURRENT_TRANSACTIONS until the markers are in every log (the
        // coordinator completes the transaction only then), and then what an EndTxn retried
        // after its transaction ended gets: a comparison of its own, where a fixed pause
        // would only have hoped.
        if matches!(a, Action::EndTxn { .. }) {
            let _ = write!(
                out,
                "[[step]]\nname = \"a{i}-settled\"\napi = \"{api}\"\nversion = {}\nrequest = {request}\nretry_retriable = true\nwithin_ms = 5000\n\n",
                version.unwrap_or_default()
            );
        }
    }
    read_back(&mut out);
    out
}

/// What one action is in the scenario file.
enum Step {
    /// A request: (name, API, version sent (none: the highest), request, capture line).
    Request(&'static str, &'static str, Option<i16>, String, String),
    /// A pause of so many milliseconds.
    Sleep(u64),
}

/// Action `a` (the `i`-th) as a step, or none (the names, written in `unique`); the first
/// transactional InitProducerId also keeps its epoch as `epoch0` (`first_init` says whether it
/// is still to come).
fn step_of(a: &Action, i: usize, first_init: &mut bool) -> Option<Step> {
    let (name, api, version, request, capture) = match a {
        Action::Init {
            version,
            id,
            timeout_ms,
        } => init_step(*version, id, *timeout_ms, first_init),
        Action::AddPartitions {
            version,
            pid,
            epoch,
            partitions,
        } => (
            "add-partitions",
            "AddPartitionsToTxn",
            Some(*version),
            format!(
                "{{ transactional_id = \"${{txn}}\", producer_id = {}, producer_epoch = {}, topics = [{{ name = \"${{topic}}\", partitions = {partitions:?} }}] }}",
                pid_text(*pid),
                epoch_text(*epoch)
            ),
            String::new(),
        ),
        Action::AddOffsets {
            version,
            pid,
            epoch,
            empty_group,
        } => (
            "add-offsets",
            "AddOffsetsToTxn",
            Some(*version),
            format!(
                "{{ transactional_id = \"${{txn}}\", producer_id = {}, producer_epoch = {}, group_id = \"{}\" }}",
                pid_text(*pid),
                epoch_text(*epoch),
                if *empty_group { "" } else { "${group}" }
            ),
            String::new(),
        ),
        Action::TxnOffsetCommit {
            version,
            pid,
            epoch,
            offset,
        } => (
            "txn-offset-commit",
            "TxnOffsetCommit",
            Some(*version),
            format!(
                "{{ transactional_id = \"${{txn}}\", group_id = \"${{group}}\", producer_id = {}, producer_epoch = {}, topics = [{{ name = \"${{topic}}\", partitions = [{{ partition_index = 0, committed_offset = {offset} }}] }}] }}",
                pid_text(*pid),
                epoch_text(*epoch)
            ),
            String::new(),
        ),
        Action::EndTxn {
            version,
            pid,
            epoch,
            commit,
        } => (
            "end-txn",
            "EndTxn",
            Some(*version),
            format!(
                "{{ transactional_id = \"${{txn}}\", producer_id = {}, producer_epoch = {}, committed = {commit} }}",
                pid_text(*pid),
                epoch_text(*epoch)
            ),
            String::new(),
        ),
        Action::Produce {
            partition,
            pid,
            epoch,
            sequence,
            records,
        } => {
            let records: Vec<String> = (0..*records)
                .map(|r| format!("{{ key = \"k{i}-{r}\", value = \"v{i}-{r}\" }}"))
                .collect();
            (
                "produce",
                "Produce",
                None,
                format!(
                    "{{ transactional_id = \"${{txn}}\", topic = \"${{topic}}\", partition = {partition}, producer_id = {}, producer_epoch = {}, base_sequence = {sequence}, transactional = true, records = [{}] }}",
                    pid_text(*pid),
                    epoch_text(*epoch),
                    records.join(", ")
                ),
                String::new(),
            )
        }
        Action::Fetch {
            partition,
            committed,
        } => (
            "fetch",
            "Fetch",
            None,
            format!(
                "{{ topic = \"${{topic}}\", partition = {partition}, fetch_offset = 0, max_wait_ms = 0, isolation_level = \"{}\" }}",
                if *committed { "read_committed" } else { "read_uncommitted" }
            ),
            String::new(),
        ),
        Action::ListOffsets {
            partition,
            committed,
        } => (
            "list-offsets",
            "ListOffsets",
            None,
            format!(
                "{{ topic = \"${{topic}}\", partition = {partition}, timestamp = -1, isolation_level = {} }}",
                u8::from(*committed)
            ),
            String::new(),
        ),
        Action::OffsetFetch => (
            "offset-fetch",
            "OffsetFetch",
            None,
            "{ group_id = \"${group}\", require_stable = false, topics = [{ name = \"${topic}\", partition_indexes = [0] }] }".into(),
            String::new(),
        ),
        Action::Sleep { ms } => return Some(Step::Sleep(*ms)),
        Action::Names { .. } => return None,
    };
    Some(Step::Request(name, api, version, request, capture))
}

/// An InitProducerId as a step's parts (see [`step_of`]): the first transactional one also
/// keeps its epoch as `epoch0`.
fn init_step(
    version: i16,
    id: &Id,
    timeout_ms: i32,
    first_init: &mut bool,
) -> (&'static str, &'static str, Option<i16>, String, String) {
    let id_text = match id {
        Id::Txn => "\"${txn}\"",
        Id::Empty => "\"\"",
    };
    let capture = match (id, *first_init) {
        (Id::Empty, _) => String::new(),
        (Id::Txn, true) => {
            *first_init = false;
            "capture = { pid = \"producer_id\", epoch = \"producer_epoch\", epoch0 = \"producer_epoch\" }\n".into()
        }
        (Id::Txn, false) => {
            "capture = { pid = \"producer_id\", epoch = \"producer_epoch\" }\n".into()
        }
    };
    (
        "init",
        "InitProducerId",
        Some(version),
        format!("{{ transactional_id = {id_text}, transaction_timeout_ms = {timeout_ms} }}"),
        capture,
    )
}

/// The read-back every sequence ends with: what a client can see of what it left behind, so
/// that a broker whose every answer matched but which stored something else is found. The
/// group's offsets (require_stable off and on), each partition's high watermark and last
/// stable offset, its records read committed and uncommitted, and a rejoin of the
/// transactional id (which aborts a transaction left open, once the answers before it have
/// shown that it was); then the unjudged clean-up ([`clean_up`]).
fn read_back(out: &mut String) {
    read_offsets(out, "readback-offsets", false);
    read_offsets(out, "readback-offsets-stable", true);
    for partition in 0..2 {
        partition_ends(out, "readback-", partition);
        for isolation in ["read_committed", "read_uncommitted"] {
            let _ = writeln!(
                out,
                "[[step]]\nname = \"readback-{isolation}-{partition}\"\napi = \"Fetch\"\nrequest = {{ topic = \"${{topic}}\", partition = {partition}, fetch_offset = 0, max_wait_ms = 0, isolation_level = \"{isolation}\" }}\n"
            );
        }
    }
    let _ = writeln!(
        out,
        "[[step]]\nname = \"readback-rejoin\"\napi = \"InitProducerId\"\nrequest = {{ transactional_id = \"${{txn}}\", transaction_timeout_ms = 60000 }}\ncapture = {{ rejoined_pid = \"producer_id\", rejoined_epoch = \"producer_epoch\" }}\nretry_retriable = true\nwithin_ms = 5000\n"
    );
    clean_up(out);
}

/// The prefix of the steps that clear the topic for the next sequence: sent to both brokers
/// and recorded, but not judged (`judge`).
pub const CLEANUP: &str = "cleanup-";

/// After the read-back, the topic made fit for the next sequence ([`super::pool`]): the
/// rejoined producer aborts whatever is still open (Apache's rejoin has aborted it already;
/// a broker that leaves it open for its reaper, as kaas documents, would write its markers
/// during a later sequence), and each partition's ends are read: whether anything still
/// holds its last stable offset back (a transaction whose marker a broker refused). Not
/// judged: what the abort gets depends on what the rejoin did, which the read-back judged.
fn clean_up(out: &mut String) {
    let _ = writeln!(
        out,
        "[[step]]\nname = \"{CLEANUP}abort\"\napi = \"EndTxn\"\nrequest = {{ transactional_id = \"${{txn}}\", producer_id = \"${{rejoined_pid}}\", producer_epoch = \"${{rejoined_epoch}}\", committed = false }}\nretry_retriable = true\nwithin_ms = 5000\n"
    );
    for partition in 0..2 {
        partition_ends(out, CLEANUP, partition);
    }
}

/// Where `partition` ends, read uncommitted (its high watermark) and committed (its last
/// stable offset), as steps `<prefix>high-watermark-<partition>` and
/// `<prefix>last-stable-offset-<partition>`.
fn partition_ends(out: &mut String, prefix: &str, partition: i32) {
    for (level, name) in [(0, "high-watermark"), (1, "last-stable-offset")] {
        list_offsets(
            out,
            &format!("{prefix}{name}-{partition}"),
            partition,
            level,
        );
    }
}

/// A ListOffsets (latest) of `partition` as step `name`, read uncommitted (`level` 0) or
/// committed (1).
fn list_offsets(out: &mut String, name: &str, partition: i32, level: u8) {
    let _ = writeln!(
        out,
        "[[step]]\nname = \"{name}\"\napi = \"ListOffsets\"\nrequest = {{ topic = \"${{topic}}\", partition = {partition}, timestamp = -1, isolation_level = {level} }}\n"
    );
}

/// An OffsetFetch of the group's partitions as step `name`; `stable`: require_stable, whose
/// UNSTABLE_OFFSET_COMMIT (a transaction still holding offsets) is an answer to compare, not
/// one to wait out.
fn read_offsets(out: &mut String, name: &str, stable: bool) {
    let _ = writeln!(
        out,
        "[[step]]\nname = \"{name}\"\napi = \"OffsetFetch\"\nrequest = {{ group_id = \"${{group}}\", require_stable = {stable}, topics = [{{ name = \"${{topic}}\", partition_indexes = [0, 1] }}] }}\n"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::model::{sequence, Rng};

    #[test]
    fn every_drawn_sequence_is_a_scenario_that_loads() {
        let dir = tempfile::tempdir().unwrap();
        let fragments =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/fragments");
        std::fs::create_dir_all(dir.path().join("fragments")).unwrap();
        for f in std::fs::read_dir(&fragments).unwrap().flatten() {
            std::fs::copy(f.path(), dir.path().join("fragments").join(f.file_name())).unwrap();
        }
        let mut rng = Rng::new(1);
        let mut kinds = std::collections::BTreeSet::new();
        let mut shaped = 0;
        for n in 0..200 {
            let actions = sequence(&mut rng, 1 + n % 10);
            for a in &actions {
                kinds.insert(
                    format!("{a:?}")
                        .split([' ', '{'])
                        .next()
                        .unwrap()
                        .to_owned(),
                );
            }
            let file = format!("s{n}.toml");
            let text = scenario(&actions, "seed 1");
            shaped += usize::from(
                text.lines()
                    .any(|l| l.starts_with("unique = ") && l.contains('{')),
            );
            std::fs::write(dir.path().join(&file), text).unwrap();
            let source = crate::data::Source::Dir(dir.path().to_owned());
            crate::scenario::Scenario::read(&source, &file)
                .unwrap_or_else(|e| panic!("{e}\n{}", scenario(&actions, "")));
        }
        assert_eq!(kinds.len(), 11, "every kind of action is drawn: {kinds:?}");
        assert!(
            (50..150).contains(&shaped),
            "{shaped} of 200 sequences shape their ids"
        );
    }
}
