//! What a deviation does to a client, as the ledger's client claims classify it, or, for a
//! difference no entry documents, as what the client read back shows ([`Consequence::observed`]): the words
//! a kaas engineer triages by. A deviation that lets a fenced producer's records commit is
//! documented and still breaks exactly-once; the report ranks deviations by these, worst
//! first, and `--fail-on-consequence` lets a team gate on them.

use serde::{Deserialize, Serialize};

/// One client consequence of a deviation, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Consequence {
    /// Records whose transaction committed on Apache are not there for a read_committed
    /// consumer on kaas: data lost.
    CommittedLost,
    /// A read_committed consumer on kaas reads records that it does not read on Apache (their
    /// transaction aborted, or never committed there).
    AbortedRead,
    /// A zombie's work commits: a fenced producer's records, or a stale group member's
    /// offsets, are committed where Apache aborts or refuses them.
    ZombieCommitted,
    /// A zombie fences the live producer: the application that should go on fails.
    LiveProducerFenced,
    /// Records or offsets committed on Apache are lost on kaas, so a consumer reprocesses:
    /// duplicates downstream.
    Duplicates,
    /// The client stops working (a background task dies, an assertion fails, a call never
    /// returns).
    ClientStops,
    /// The client gets an error it does not know (an error code outside its table).
    UnknownError,
    /// The client raises a different error, or succeeds where it fails on Apache, with no
    /// effect on the data.
    Differs,
    /// The client sees the same on both.
    Unchanged,
}

impl Consequence {
    /// Every consequence, worst first.
    pub const ALL: [Consequence; 9] = [
        Consequence::CommittedLost,
        Consequence::AbortedRead,
        Consequence::ZombieCommitted,
        Consequence::LiveProducerFenced,
        Consequence::Duplicates,
        Consequence::ClientStops,
        Consequence::UnknownError,
        Consequence::Differs,
        Consequence::Unchanged,
    ];

    /// Its name in the ledger and the reports.
    pub fn name(self) -> &'static str {
        match self {
            Consequence::CommittedLost => "committed-lost",
            Consequence::AbortedRead => "aborted-read",
            Consequence::ZombieCommitted => "zombie-committed",
            Consequence::LiveProducerFenced => "live-producer-fenced",
            Consequence::Duplicates => "duplicates",
            Consequence::ClientStops => "client-stops",
            Consequence::UnknownError => "unknown-error",
            Consequence::Differs => "differs",
            Consequence::Unchanged => "unchanged",
        }
    }

    /// What it means, for a reader.
    pub fn about(self) -> &'static str {
        match self {
            Consequence::CommittedLost => {
                "committed records lost: a read_committed consumer misses what Apache's reads"
            }
            Consequence::AbortedRead => {
                "aborted records read: a read_committed consumer reads what Apache's does not"
            }
            Consequence::ZombieCommitted => {
                "a fenced producer's records, or a stale member's offsets, committed"
            }
            Consequence::LiveProducerFenced => "a zombie fences the live producer",
            Consequence::Duplicates => "committed offsets or records lost: duplicates downstream",
            Consequence::ClientStops => "the client stops working",
            Consequence::UnknownError => "an error the client does not know",
            Consequence::Differs => "a different outcome, no effect on the data",
            Consequence::Unchanged => "the client sees the same",
        }
    }

    /// Whether it breaks exactly-once for the application.
    pub fn breaks_exactly_once(self) -> bool {
        self <= Consequence::Duplicates
    }

    /// Whether a team gating on consequences fails a run on it: anything that breaks
    /// exactly-once, stops the client, or hands it an error it does not know.
    pub fn harms(self) -> bool {
        self <= Consequence::UnknownError
    }

    /// What a difference no ledger entry documents does to the application, read from what
    /// the client observed (`field`, kaas's value, Apache's): a read_committed view missing
    /// records Apache's has is committed-lost, one holding records Apache's has not is
    /// aborted-read; a group's committed offset missing or behind Apache's is duplicates
    /// (the group reprocesses). `None` where the values say nothing of the data (a call's
    /// result: a different outcome, no stated harm).
    pub fn observed(field: &str, kaas: &str, apache: &str) -> Option<Consequence> {
        match field {
            "read_committed" => {
                let (kaas, apache) = (strings(kaas)?, strings(apache)?);
                let missing = apache.iter().any(|r| !kaas.contains(r));
                let extra = kaas.iter().any(|r| !apache.contains(r));
                match (missing, extra) {
                    (true, _) => Some(Consequence::CommittedLost),
                    (false, true) => Some(Consequence::AbortedRead),
                    (false, false) => None,
                }
            }
            "group_offsets" => {
                let (kaas, apache) = (offsets(kaas)?, offsets(apache)?);
                let behind = apache
                    .iter()
                    .any(|(p, o)| kaas.get(p).is_none_or(|k| k < o));
                behind.then_some(Consequence::Duplicates)
            }
            _ => None,
        }
    }

    /// The consequence a claim that names none has: unchanged where the client sees the same,
    /// else a difference of no stated harm.
    pub fn of_unclassified(kaas: &str, apache: &str) -> Consequence {
        match kaas == apache {
            true => Consequence::Unchanged,
            false => Consequence::Differs,
        }
    }
}

/// A JSON array of record values (`["a0","r0"]`), as the clients' transcripts write a view.
fn strings(json: &str) -> Option<Vec<String>> {
    serde_json::from_str(json).ok()
}

/// A JSON object of partition → committed offset (`{"partition 0":1}`).
fn offsets(json: &str) -> Option<std::collections::BTreeMap<String, i64>> {
    serde_json::from_str(json).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::ledger::Ledger;

    /// An entry with one claim for KafkaJS whose last line is `consequence`.
    fn ledger_with(consequence: &str, kaas: &str) -> Result<Ledger, String> {
        let text = format!(
            "[[deviation]]\nid = \"x\"\napi = \"EndTxn\"\nspec = \"s\"\njava_client = \"Not reached: j\"\nlibrdkafka_client = \"Not reached: l\"\nscenarios = [\"a\"]\nfield = \"error_code\"\nkaas = \"90\"\napache = \"47\"\n[[deviation.client]]\nclient = \"kafkajs\"\nworkload = \"fencing\"\nfield = \"f\"\nkaas = \"{kaas}\"\napache = \"E\"\n{consequence}"
        );
        Ledger::parse(&text, "test").map_err(|e| e.to_string())
    }

    #[test]
    fn a_claim_states_its_consequence_or_has_the_one_its_values_imply() {
        let stated = ledger_with("consequence = \"unknown-error\"\n", "U").unwrap();
        assert_eq!(
            stated.deviations[0].client[0].consequence(),
            Consequence::UnknownError
        );
        let differs = ledger_with("", "U").unwrap();
        assert_eq!(
            differs.deviations[0].client[0].consequence(),
            Consequence::Differs
        );
        let same = ledger_with("", "E").unwrap();
        assert_eq!(
            same.deviations[0].client[0].consequence(),
            Consequence::Unchanged
        );
        // Seen failing: a consequence nobody defined is refused, naming the field.
        let e = ledger_with("consequence = \"harmless\"\n", "U").unwrap_err();
        assert!(e.contains("harmless") || e.contains("consequence"), "{e}");
    }

    #[test]
    fn the_order_is_worst_first_and_the_names_read_back() {
        let mut sorted = Consequence::ALL;
        sorted.sort();
        assert_eq!(sorted, Consequence::ALL);
        for c in Consequence::ALL {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.name()));
        }
        assert!(Consequence::LiveProducerFenced.breaks_exactly_once());
        assert!(!Consequence::ClientStops.breaks_exactly_once());
        assert!(Consequence::UnknownError.harms());
        assert!(!Consequence::Differs.harms());
    }

    /// What the client read back names the harm of an undocumented difference: aborted
    /// records visible (the loss real kaas showed with coordinator and leader apart), committed
    /// ones missing, a group behind; a call's different result names none.
    #[test]
    fn what_a_client_read_back_names_an_undocumented_differences_harm() {
        let read = |kaas: &str, apache: &str| Consequence::observed("read_committed", kaas, apache);
        assert_eq!(
            read(r#"["a0","a1","r0","r1"]"#, r#"["r0","r1"]"#),
            Some(Consequence::AbortedRead)
        );
        assert_eq!(
            read(r#"["r1"]"#, r#"["r0","r1"]"#),
            Some(Consequence::CommittedLost)
        );
        assert_eq!(
            read(r#"["r1","x"]"#, r#"["r0","r1"]"#),
            Some(Consequence::CommittedLost)
        );
        assert_eq!(
            read(r#"["r1","r0"]"#, r#"["r0","r1"]"#),
            None,
            "the same records"
        );
        assert_eq!(read("(absent)", r#"["r0"]"#), None, "no view: nothing said");
        assert_eq!(
            Consequence::observed("group_offsets", "{}", r#"{"partition 0":1}"#),
            Some(Consequence::Duplicates)
        );
        assert_eq!(
            Consequence::observed(
                "group_offsets",
                r#"{"partition 0":2}"#,
                r#"{"partition 0":1}"#
            ),
            None
        );
        assert_eq!(Consequence::observed("commitTransaction", "ok", "E"), None);
        assert!(Consequence::CommittedLost.breaks_exactly_once());
        assert!(Consequence::AbortedRead.breaks_exactly_once());
    }
}
