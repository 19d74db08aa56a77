//! What a documented deviation does to clients: the run report says it first and can gate on
//! it; the ecosystem's clients find what only they can reach (a planted EndTxn v0 defect only
//! aiokafka sends into); a client that cannot be installed is said so while the others run.

use std::sync::Arc;
use std::time::Duration;

use kconform::clients::programs::Program;
use kconform::clients::{self, Client, ClientsOptions};
use kconform::compare::ledger::Ledger;
use kconform::report::progress::Quiet;
use kconform::targets::TargetSpec;
use reference_broker::planted::{Bug, Planted};
use reference_broker::{Broker, BrokerConfig};

/// `kconform run end-txn-wrong-epoch` against the recorded 3.7.2 answers, with `extra`
/// arguments: exit code and standard output.
fn run_end_txn_wrong_epoch(extra: &[&str]) -> (i32, String) {
    let out = crate::util::kconform()
        .args(["run", "end-txn-wrong-epoch", "--target", "ref"])
        .args(["--target", "apache-recorded"])
        .args(extra)
        .output()
        .expect("kconform runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn a_run_of_documented_differences_says_what_they_do_to_clients_and_can_gate_on_it() {
    let (code, text) = run_end_txn_wrong_epoch(&[]);
    assert_eq!(code, 0, "documented: passes\n{text}");
    let section = text
        .split("What documented deviations do to clients")
        .nth(1)
        .unwrap_or_else(|| panic!("no section:\n{text}"));
    assert!(
        section.contains("HARMS producer-fenced-at-every-version-end-txn: unknown-error")
            && section.contains("for kafkajs, aiokafka"),
        "{section}"
    );
    assert!(section.contains("client-stops"), "{section}");
    assert!(
        text.find("What documented deviations").unwrap() < text.find("DOCUMENTED ").unwrap(),
        "the consequences come before the documented causes"
    );
    assert!(
        text.contains("in end-txn-wrong-epoch; to clients: client-stops for aiokafka"),
        "the entry's line says the worst it does to clients:\n{text}"
    );
    // Seen failing: gated on consequences, the same run fails.
    let (code, text) = run_end_txn_wrong_epoch(&["--fail-on-consequence"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("--fail-on-consequence: these fail the run"));
}

fn options(clients: Vec<Client>) -> ClientsOptions {
    ClientsOptions {
        workloads: vec!["fencing".into()],
        clients,
        clients_named: true,
        provisioned_topics: false,
        deadline: Duration::from_secs(90),
        coordinators: Vec::new(),
        java_release: kconform::targets::apache::Release::CLAIMED,
    }
}

/// A planted kaas-ref whose EndTxn v0 answers a commit that went through with 48, against a
/// clean one: of the six clients only aiokafka, which sends EndTxn v0, sees it.
#[test]
fn a_defect_only_an_old_endtxn_version_shows_is_found_by_the_client_that_sends_it() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let broker = runtime
        .block_on(Broker::start(BrokerConfig {
            planted: Planted::default().with(Bug::EndTxnV0CommitAnswersInvalidState),
            ..BrokerConfig::for_tests()
        }))
        .expect("kaas-ref starts");
    let report = runtime
        .block_on(clients::run(
            &[TargetSpec::external(broker.addr()), TargetSpec::REF],
            &options(Client::ALL.to_vec()),
            &Ledger::default(),
            Arc::new(Quiet),
        ))
        .expect("clients run");
    println!("{}", report.terminal());
    assert!(
        report.runs.iter().all(|r| r.error.is_none()),
        "every client ran"
    );
    assert_eq!(report.runs.len(), 12, "six clients, two targets");
    let found: Vec<(&str, &str)> = report
        .differences
        .iter()
        .map(|d| (d.diff.client.as_str(), d.diff.field.as_str()))
        .collect();
    assert!(!found.is_empty(), "the planted defect is found");
    assert!(
        found.iter().all(|(client, _)| *client == "aiokafka"),
        "only aiokafka sees it: {found:?}"
    );
    assert!(
        found.contains(&("aiokafka", "commit (second producer)")),
        "{found:?}"
    );
    assert!(report
        .terminal()
        .contains("UNDOCUMENTED: aiokafka fencing 'commit (second producer)'"));
}

/// A client whose tool is missing is named with the reason, and the others run.
#[test]
fn a_client_that_cannot_be_installed_is_said_so_and_the_others_run() {
    let cache = tempfile::tempdir().unwrap();
    let out = crate::util::kconform()
        .args(["clients", "fencing", "--target", "ref"])
        .args(["--client", "librdkafka", "--client", "sarama"])
        .env("XDG_CACHE_HOME", cache.path())
        .env("KCONFORM_GO", cache.path().join("no-go"))
        .output()
        .expect("kconform runs");
    let text = crate::util::printed(&out);
    assert!(
        text.contains("sarama did not run: sarama needs go, which is not on this machine"),
        "{text}"
    );
    assert!(text.contains("librdkafka"), "{text}");
    assert!(text.contains("fencing"), "{text}");
    assert_eq!(
        out.status.code(),
        Some(1),
        "a client named and not run fails: {text}"
    );
    let _ = Program::Sarama;
}

/// What every kaas deviation of the ledger says of the ecosystem's clients that goes wrong:
/// no statement, or "Not reached" where a claim of one of them says it is.
fn unstated(ledger: &Ledger) -> Vec<String> {
    let ecosystem: Vec<&str> = Program::ALL.iter().map(|p| p.name()).collect();
    ledger
        .deviations
        .iter()
        .filter_map(|d| {
            let text = d.ecosystem_clients.as_deref().unwrap_or_default();
            let claimed = d
                .client
                .iter()
                .any(|c| ecosystem.contains(&c.client.as_str()));
            match (text.is_empty(), text.starts_with("Not reached"), claimed) {
                (true, ..) => Some(format!("{}: no ecosystem_clients", d.id)),
                (false, true, true) => Some(format!("{}: 'Not reached' beside a claim", d.id)),
                _ => None,
            }
        })
        .collect()
}

/// Every deviation says what KafkaJS, sarama, aiokafka and kafka-python applications see, or
/// why their workloads do not reach it, as `java_client` and `librdkafka_client` do.
#[test]
fn every_deviation_states_what_the_ecosystems_clients_see() {
    let path = crate::util::root().join("scenarios/deviations.toml");
    let ledger = Ledger::load(&path).expect("the ledger loads");
    assert_eq!(unstated(&ledger), Vec::<String>::new());
    // Seen failing: an entry whose statement is gone, and one that says "Not reached" while a
    // claim of kafkajs says otherwise, are each named.
    let mut broken = ledger.clone();
    broken.deviations[0].ecosystem_clients = None;
    let claimed = broken
        .deviations
        .iter()
        .position(|d| d.client.iter().any(|c| c.client == "kafkajs"))
        .expect("an entry with a kafkajs claim");
    broken.deviations[claimed].ecosystem_clients = Some("Not reached: planted".into());
    assert_eq!(unstated(&broken).len(), 2, "{:?}", unstated(&broken));
}

/// Real kaas's cluster defect planted on a kaas-ref cluster (a peer's queued marker written
/// over by the same producer's next one), against the clean cluster: the Java client's
/// (its partition led apart from its transaction coordinator, as every workload without a group
/// is on a cluster)
/// abort-redo aborts a transaction and commits its redo at once, so the redo's COMMIT replaces
/// the abort's ABORT on the partition a peer leads, and read_committed reads the aborted
/// records. The row says so as the worst thing a client can meet, with no ledger entry asked.
#[test]
fn a_marker_overwritten_on_a_planted_cluster_reads_as_breaking_exactly_once() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let planted = TargetSpec {
        planted: Planted::default().with(Bug::PeerMarkerOverwritten),
        ..TargetSpec::REF.cluster(3)
    };
    let report = runtime
        .block_on(clients::run(
            &[planted, TargetSpec::REF.cluster(3)],
            &ClientsOptions {
                workloads: vec!["abort-redo".into()],
                ..options(vec![Client::Java])
            },
            &Ledger::default(),
            Arc::new(Quiet),
        ))
        .expect("clients run");
    let text = report.terminal();
    println!("{text}");
    assert!(report.runs.iter().all(|r| r.error.is_none()), "{text}");
    assert!(!report.passed());
    // The redo's COMMIT over the abort's ABORT shows the aborted records; where the peer took
    // the ABORT between and a later overwrite went the other way, the redo's are lost.
    let breaks = |kind: &str| {
        text.contains(&format!(
            "UNDOCUMENTED, BREAKS EXACTLY-ONCE ({kind}): java abort-redo (apart) 'read_committed'"
        ))
    };
    assert!(breaks("aborted-read") || breaks("committed-lost"), "{text}");
}
