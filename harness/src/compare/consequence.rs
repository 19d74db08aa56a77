//! What a documented deviation does to a client, as the ledger's client claims classify it:
//! the words a kaas engineer triages by. A deviation that lets a fenced producer's records
//! commit is documented and still breaks exactly-once; the report ranks documented deviations
//! by these, worst first, and `--fail-on-consequence` lets a team gate on them.

use serde::{Deserialize, Serialize};

/// One client consequence of a deviation, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Consequence {
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
    pub const ALL: [Consequence; 7] = [
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

    /// The consequence a claim that names none has: unchanged where the client sees the same,
    /// else a difference of no stated harm.
    pub fn of_unclassified(kaas: &str, apache: &str) -> Consequence {
        match kaas == apache {
            true => Consequence::Unchanged,
            false => Consequence::Differs,
        }
    }
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
}
