//! A matrix cell: one word for how a broker fared in one column, in the spirit of
//! Autobahn|Testsuite's Pass / Non-Strict / Fail / Info / Unimplemented. The columns are the
//! judges of a certificate, and what users meet, read from the client workloads'
//! differences. Read from the certificate's JSON, so that a run kept in the history is read
//! the same way as today's.

use serde::{Deserialize, Serialize};

/// The word of a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Word {
    /// Answers as Apache does.
    Identical,
    /// Held what a judge without Apache's answers checks (the fuzzer: no crash, every answer
    /// readable).
    Held,
    /// Differs only where its own documentation says it does.
    Documented,
    /// Differs where nothing documents it, or breaks what the judge checks.
    Wrong,
    /// Too little happened to judge: said, never failing.
    Informational,
    /// Does not serve the transaction APIs, and says so cleanly.
    NotServed,
    /// Serves what it does not document: advertises transactions its documentation denies.
    Undocumented,
    /// The judge could not run on it.
    CouldNotRun,
    /// It could not be installed or started.
    CouldNotStart,
    /// The judge does not apply (one broker: no chaos), or was not asked for.
    NotRun,
}

impl Word {
    /// The word as the page shows it.
    pub fn label(self) -> &'static str {
        match self {
            Word::Identical => "identical",
            Word::Held => "held",
            Word::Documented => "documented",
            Word::Wrong => "wrong",
            Word::Informational => "informational",
            Word::NotServed => "not served",
            Word::Undocumented => "advertised, undocumented",
            Word::CouldNotRun => "could not run",
            Word::CouldNotStart => "could not start",
            Word::NotRun => "not run",
        }
    }

    /// Whether it holds the broker to account (a matrix gate fails on it).
    pub fn fails(self) -> bool {
        matches!(
            self,
            Word::Wrong | Word::Undocumented | Word::CouldNotRun | Word::CouldNotStart
        )
    }
}

/// One cell: its word and what it rests on, in a line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cell {
    /// The column.
    pub column: String,
    /// The word.
    pub word: Word,
    /// What it rests on.
    pub why: String,
}

/// The columns of what users meet, each with the client differences it takes.
pub const USERS_MEET: [(&str, &str); 4] = [
    (
        "exactly-once",
        "any difference in a workload that commits offsets or records transactionally (eos, abort-redo, group-offsets, empty-group-offsets, stale-generation-offsets, mid-transaction-consumer, idempotent)",
    ),
    (
        "read_committed",
        "what a read_committed consumer read back, in any workload",
    ),
    (
        "fencing",
        "any difference when a second producer takes over a transactional id (fencing, fenced-send, timeout-past)",
    ),
    (
        "error codes",
        "a client call that ended otherwise (another error, or none where Apache gave one)",
    ),
];

const EXACTLY_ONCE: [&str; 7] = [
    "eos",
    "abort-redo",
    "group-offsets",
    "empty-group-offsets",
    "stale-generation-offsets",
    "mid-transaction-consumer",
    "idempotent",
];
const FENCING: [&str; 3] = ["fencing", "fenced-send", "timeout-past"];
const OBSERVATIONS: [&str; 3] = ["read_committed", "read_uncommitted", "group_offsets"];

/// The cells of one certificate (its JSON): one per judge, in its order, then one per column
/// of what users meet.
pub fn of_certificate(certificate: &serde_json::Value) -> Vec<Cell> {
    let judges: &[serde_json::Value] = certificate["judges"].as_array().map_or(&[], Vec::as_slice);
    let mut cells: Vec<Cell> = judges.iter().map(judge_cell).collect();
    let clients = judges.iter().find(|j| j["judge"] == "clients");
    cells.extend(users_meet(clients));
    cells
}

/// A judge's cell: its verdict, and for one that passed whether anything differed at all.
fn judge_cell(line: &serde_json::Value) -> Cell {
    let column = line["judge"].as_str().unwrap_or("?").to_owned();
    let summary = line["summary"].as_str().unwrap_or_default();
    let why_not = line["ran"]["why"].as_str().unwrap_or(summary).to_owned();
    let (word, why) = match line["verdict"].as_str().unwrap_or_default() {
        "failed" => (Word::Wrong, summary.to_owned()),
        "could-not-run" => (Word::CouldNotRun, why_not),
        "inconclusive" => (Word::Informational, why_not),
        "left-out" => (Word::NotRun, why_not),
        "passed" if column == "fuzz" => (Word::Held, summary.to_owned()),
        "passed" if documented_differences(line) > 0 => (Word::Documented, summary.to_owned()),
        "passed" => (Word::Identical, summary.to_owned()),
        other => (
            Word::CouldNotRun,
            format!("a verdict this kconform does not know: {other:?}"),
        ),
    };
    Cell { column, word, why }
}

/// How many differences a passing judge's report shows, each documented (a pass has no other).
fn documented_differences(line: &serde_json::Value) -> u64 {
    let report = &line["report"];
    report["totals"]["differences"]
        .as_u64()
        .or_else(|| report["differences"].as_array().map(|d| d.len() as u64))
        .unwrap_or(0)
}

/// The columns of what users meet, from the clients judge's differences.
fn users_meet(clients: Option<&serde_json::Value>) -> Vec<Cell> {
    let ran = clients.filter(|c| c["report"].is_object());
    USERS_MEET
        .iter()
        .map(|(column, _)| {
            let Some(line) = ran else {
                let why = clients
                    .map(|c| judge_cell(c).why)
                    .unwrap_or_else(|| "the client workloads did not run".into());
                return Cell {
                    column: (*column).into(),
                    word: Word::NotRun,
                    why,
                };
            };
            let differences: &[serde_json::Value] = line["report"]["differences"]
                .as_array()
                .map_or(&[], Vec::as_slice);
            let taken: Vec<&serde_json::Value> =
                differences.iter().filter(|d| takes(column, d)).collect();
            let lost = without_transcript(&line["report"], column);
            let mut cell = column_cell(column, &taken);
            if !lost.is_empty() {
                let shown = match cell.word {
                    Word::Identical => String::new(),
                    _ => format!("; {}", cell.why),
                };
                cell.word = Word::Wrong;
                cell.why = format!(
                    "{} client run(s) on it gave no transcript ({}): the client could not finish the workload{shown}",
                    lost.len(),
                    lost.join(", ")
                );
            }
            cell
        })
        .collect()
}

/// The runs on the broker (the report's left target) that gave no transcript and whose
/// workload `column` takes, as `client workload`.
fn without_transcript(report: &serde_json::Value, column: &str) -> Vec<String> {
    let broker = &report["left"];
    report["runs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| &r["target"] == broker && !r["error"].is_null())
        .filter(|r| takes_workload(column, r["workload"].as_str().unwrap_or_default()))
        .map(|r| {
            format!(
                "{} {}",
                r["client"].as_str().unwrap_or("?"),
                r["workload"].as_str().unwrap_or("?")
            )
        })
        .collect()
}

/// Whether the column `column` takes a run of `workload` that observed nothing: the columns
/// of a workload set by theirs, the others (what was read, what calls returned) every one.
fn takes_workload(column: &str, workload: &str) -> bool {
    match column {
        "exactly-once" => EXACTLY_ONCE.contains(&workload),
        "fencing" => FENCING.contains(&workload),
        _ => true,
    }
}

/// Whether the column `column` takes the client difference `d`.
fn takes(column: &str, d: &serde_json::Value) -> bool {
    let workload = d["workload"].as_str().unwrap_or_default();
    let field = d["field"].as_str().unwrap_or_default();
    match column {
        "read_committed" => field == "read_committed",
        "error codes" => !OBSERVATIONS.contains(&field),
        _ => takes_workload(column, workload),
    }
}

/// The cell of the differences a column took: none identical, all documented documented,
/// else wrong; naming the clients.
fn column_cell(column: &str, taken: &[&serde_json::Value]) -> Cell {
    let clients = |pick: &dyn Fn(&&serde_json::Value) -> bool| -> String {
        let mut names: Vec<&str> = taken
            .iter()
            .filter(|d| pick(d))
            .filter_map(|d| d["client"].as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        names.join(", ")
    };
    let undocumented = |d: &&serde_json::Value| d["documented_by"].is_null();
    let (word, why) = if taken.is_empty() {
        (
            Word::Identical,
            "every client saw what it sees on Apache".to_owned(),
        )
    } else if taken.iter().any(undocumented) {
        let n = taken.iter().filter(|d| undocumented(d)).count();
        (
            Word::Wrong,
            format!(
                "{n} undocumented difference(s), for {}",
                clients(&undocumented)
            ),
        )
    } else {
        (
            Word::Documented,
            format!(
                "{} documented difference(s), for {}",
                taken.len(),
                clients(&|_| true)
            ),
        )
    };
    Cell {
        column: column.into(),
        word,
        why,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn certificate(verdict: &str, differences: serde_json::Value) -> serde_json::Value {
        json!({"judges": [
            {"judge": "scenarios", "verdict": "passed", "summary": "s", "ran": {"how": "ran"},
             "report": {"totals": {"differences": 3}}},
            {"judge": "chaos", "verdict": "left-out", "summary": "", "ran": {"how": "left-out", "why": "one broker"}},
            {"judge": "fuzz", "verdict": "passed", "summary": "0 crashes", "ran": {"how": "ran"}},
            {"judge": "clients", "verdict": verdict, "summary": "c", "ran": {"how": "ran"},
             "report": {"differences": differences}},
        ]})
    }

    fn words(cells: &[Cell]) -> Vec<(&str, Word)> {
        cells.iter().map(|c| (c.column.as_str(), c.word)).collect()
    }

    /// A judge's verdict and its differences give its word; what users meet is read from the
    /// client differences each column takes.
    #[test]
    fn judges_and_what_users_meet_get_their_words() {
        let cells = of_certificate(&certificate(
            "failed",
            json!([
                {"client": "java", "workload": "fencing", "field": "read_committed", "documented_by": "d"},
                {"client": "sarama", "workload": "eos", "field": "commit", "documented_by": null},
            ]),
        ));
        assert_eq!(
            words(&cells),
            [
                ("scenarios", Word::Documented),
                ("chaos", Word::NotRun),
                ("fuzz", Word::Held),
                ("clients", Word::Wrong),
                ("exactly-once", Word::Wrong),
                ("read_committed", Word::Documented),
                ("fencing", Word::Documented),
                ("error codes", Word::Wrong),
            ]
        );
        assert_eq!(cells[1].why, "one broker");
        assert_eq!(cells[4].why, "1 undocumented difference(s), for sarama");
    }

    /// A client run on the broker that gave no transcript makes the columns of its workload
    /// wrong, naming it; one on Apache does not.
    #[test]
    fn a_run_without_a_transcript_is_what_users_meet() {
        let mut c = certificate(
            "failed",
            json!([{"client": "sarama", "workload": "eos", "field": "commit", "documented_by": null}]),
        );
        c["judges"][3]["report"]["left"] = json!("external");
        c["judges"][3]["report"]["runs"] = json!([
            {"client": "java", "workload": "eos", "target": "external", "error": "exit status: 1"},
            {"client": "java", "workload": "fencing", "target": "apache", "error": "exit status: 1"},
        ]);
        let cells = of_certificate(&c);
        let column = |name: &str| cells.iter().find(|c| c.column == name).unwrap().clone();
        assert_eq!(column("exactly-once").word, Word::Wrong);
        assert!(
            column("exactly-once").why.contains("java eos"),
            "{:?}",
            column("exactly-once")
        );
        assert_eq!(
            column("fencing").word,
            Word::Identical,
            "a run on Apache is not the broker's"
        );
        assert_eq!(column("read_committed").word, Word::Wrong);
    }

    /// Nothing differing is identical everywhere; a judge that did not run leaves its columns
    /// not run, saying why.
    #[test]
    fn no_difference_is_identical_and_no_clients_is_not_run() {
        let cells = of_certificate(&certificate("passed", json!([])));
        assert!(cells[4..].iter().all(|c| c.word == Word::Identical));
        let none = of_certificate(&json!({"judges": [
            {"judge": "clients", "verdict": "could-not-run", "summary": "", "ran": {"how": "could-not-run", "why": "no Apache"}}
        ]}));
        assert_eq!(none[0].word, Word::CouldNotRun);
        assert!(none[1..]
            .iter()
            .all(|c| c.word == Word::NotRun && c.why == "no Apache"));
    }
}
