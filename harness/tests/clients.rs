//! `kconform clients`: every workload with the Java kafka-clients 3.7 and with librdkafka on
//! kaas-ref and a live Apache 3.7, each difference judged by the ledger's client claims; a
//! wrong claim in a scratch copy of the ledger reported STALE and a missing one UNDOCUMENTED;
//! and the workloads on a broker that refuses CreateTopics, on provisioned topics, run after
//! run.

use std::path::{Path, PathBuf};
use std::time::Duration;

use reference_broker::{Broker, BrokerConfig};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `kconform clients ARGS --json FILE`: exit code, terminal output, the JSON report.
fn clients(args: &[&str]) -> (i32, String, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let out = crate::util::kconform()
        .arg("clients")
        .args(args)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("kconform runs");
    let text = crate::util::printed(&out);
    let report = std::fs::read_to_string(&json)
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or(serde_json::Value::Null);
    (out.status.code().unwrap_or(-1), text, report)
}

/// The report validates against `harness/clients-report.schema.json`.
fn assert_schema(report: &serde_json::Value) {
    crate::util::assert_follows_schema(include_str!("../clients-report.schema.json"), report);
}

fn transcript<'a>(
    report: &'a serde_json::Value,
    client: &str,
    workload: &str,
    target: &str,
) -> &'a serde_json::Value {
    report["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["client"] == client && r["workload"] == workload && r["target"] == target)
        .map(|r| &r["transcript"])
        .unwrap_or_else(|| panic!("no run of {client} {workload} on {target}"))
}

fn apache_here() -> bool {
    match kconform::targets::apache::available() {
        Ok(()) => true,
        Err(why) => {
            println!("SKIPPED: no live Apache here ({why})");
            false
        }
    }
}

#[test]
fn every_client_sees_kaas_ref_and_apache_alike_but_where_the_ledger_says() {
    if !apache_here() {
        return;
    }
    let pages = tempfile::tempdir().unwrap();
    let page = pages.path().join("clients.html");
    let (code, text, report) = clients(&[
        "--target",
        "ref",
        "--target",
        "apache",
        "--apache-backend",
        "jvm",
        "--html",
        page.to_str().unwrap(),
    ]);
    println!("{text}");
    assert_schema(&report);
    // Why a run gave no transcript, first and alone: a CI log keeps a failure's head.
    let no_transcript: Vec<String> = report["runs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| !r["error"].is_null())
        .map(|r| {
            format!(
                "{} {} on {}: {}",
                r["client"], r["workload"], r["target"], r["error"]
            )
        })
        .collect();
    assert!(no_transcript.is_empty(), "{no_transcript:#?}");
    assert_eq!(code, 0, "{text}");
    assert_eq!(report["left"], "ref");
    assert_eq!(report["right"], "apache");
    let per_target: usize = kconform::clients::Client::ALL
        .iter()
        .map(|c| {
            kconform::clients::WORKLOADS
                .iter()
                .filter(|w| c.runs(w.name))
                .count()
        })
        .sum();
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(
        runs.len(),
        per_target * 2,
        "every workload each client runs, on each target"
    );
    // What exactly-once promises, seen by each client on kaas-ref.
    for client in ["java", "librdkafka"] {
        let eos = transcript(&report, client, "eos", "ref");
        assert_eq!(
            eos["observed"]["read_committed"],
            serde_json::json!(["c0", "c1", "c2", "c3", "c4", "x0"]),
            "{client}: {eos}"
        );
        assert_eq!(eos["observed"]["group_offsets"]["partition 0"], 5, "{eos}");
    }
    // Every claim of the ledger was checked by this run, and every difference documented.
    let ledger =
        kconform::compare::ledger::Ledger::load(&root().join("scenarios/deviations.toml")).unwrap();
    let claims: usize = ledger.deviations.iter().map(|d| d.client.len()).sum();
    assert!(claims >= 20, "{claims} claims");
    assert!(report["stale"].as_array().unwrap().is_empty());
    let differences = report["differences"].as_array().unwrap();
    assert!(differences.iter().all(|d| d["documented_by"].is_string()));
    // The client-visible consequence the rejoin deviation has: a producer that takes over an
    // id commits its fenced predecessor's records with its own on kaas.
    assert!(
        differences.iter().any(|d| d["workload"] == "fencing"
            && d["field"] == "read_committed"
            && d["left"] == "[\"o0\",\"o1\",\"n0\"]"
            && d["documented_by"] == "init-rejoin-while-ongoing-does-not-abort"),
        "{text}"
    );
    // What the documented differences do to the clients, as the run saw it: a fenced
    // producer's records committed for all six, the live producer fenced by kafka-python's
    // zombie, an error code KafkaJS and aiokafka do not know, aiokafka stopped.
    let harm = |entry: &str, consequence: &str| -> Vec<String> {
        report["consequences"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["deviation"] == entry && h["consequence"] == consequence)
            .map(|h| {
                h["clients"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c.as_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut all: Vec<String> = harm(
        "init-rejoin-while-ongoing-does-not-abort",
        "zombie-committed",
    );
    all.sort();
    assert_eq!(
        all,
        [
            "aiokafka",
            "java",
            "kafka-python",
            "kafkajs",
            "librdkafka",
            "sarama"
        ],
        "{text}"
    );
    assert_eq!(
        harm("init-v3-epoch-not-validated", "live-producer-fenced"),
        ["kafka-python"]
    );
    assert_eq!(
        harm("producer-fenced-at-every-version-end-txn", "unknown-error"),
        ["kafkajs", "aiokafka"]
    );
    assert_eq!(
        harm("producer-fenced-at-every-version-end-txn", "client-stops"),
        ["aiokafka"]
    );
    // The page: the matrix, the fencing line's difference with its entry, and the two
    // transcripts side by side with the differing observation marked.
    let html = std::fs::read_to_string(&page).unwrap();
    for want in [
        "<h2>Workload × client</h2>",
        "<td><code>read_committed</code></td><td><mark>[&quot;o0&quot;,&quot;o1&quot;,&quot;n0&quot;]</mark>",
        "documented by <code>init-rejoin-while-ongoing-does-not-abort</code>",
        "<mark>read_committed = [&quot;o0&quot;,&quot;o1&quot;,&quot;n0&quot;]</mark>",
        "kconform clients fencing --client librdkafka",
    ] {
        assert!(html.contains(want), "{want} not in the page");
    }
    if let Some(dom) = crate::html_report::renders(&page) {
        assert!(dom.contains("<details class=\"cause documented\" id=\"line-"));
        assert!(dom.contains(" open=\"\""), "the lines open");
        crate::html_report::screenshot(&page, "kconform-clients");
    }
}

/// A scratch copy of the scenarios with `edit` applied to its ledger.
fn scratch_scenarios(edit: impl Fn(String) -> String) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let from = root().join("scenarios");
    for entry in walk(&from) {
        let to = dir.path().join(entry.strip_prefix(&from).unwrap());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&entry, &to).unwrap();
    }
    let ledger = dir.path().join("deviations.toml");
    let text = std::fs::read_to_string(&ledger).unwrap();
    let edited = edit(text.clone());
    assert_ne!(text, edited, "the edit changed the ledger");
    std::fs::write(&ledger, edited).unwrap();
    dir
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        match e.path().is_dir() {
            true => out.extend(walk(&e.path())),
            false => out.push(e.path()),
        }
    }
    out
}

#[test]
fn a_wrong_claim_is_stale_and_a_missing_one_is_undocumented() {
    if !apache_here() {
        return;
    }
    let claim = |field: &str, apache: &str| {
        format!(
            "[[deviation.client]]\nclient = \"librdkafka\"\nworkload = \"timeout-above-max\"\nfield = \"{field}\"\nkaas = {kaas}\napache = {apache}\n",
            kaas = if field.starts_with("read") { "\"[\\\"m0\\\",\\\"m1\\\"]\"" } else { "\"ok\"" },
        )
    };
    let wrong = claim("initTransactions", "\"InvalidTransactionTimeout (fatal)\"");
    let missing = claim("read_uncommitted", "\"[]\"");
    let scratch = scratch_scenarios(|t| {
        assert!(
            t.contains(&wrong) && t.contains(&missing),
            "the claims are in the ledger"
        );
        t.replace(
            &wrong,
            &claim("initTransactions", "\"InvalidProducerEpoch (fatal)\""),
        )
        .replace(&missing, "")
    });
    let (code, text, report) = clients(&[
        "timeout-above-max",
        "--client",
        "librdkafka",
        "--target",
        "ref",
        "--target",
        "apache",
        "--apache-backend",
        "jvm",
        "--scenarios",
        scratch.path().to_str().unwrap(),
    ]);
    println!("{text}");
    assert_schema(&report);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("STALE claim of init-timeout-not-validated: librdkafka timeout-above-max 'initTransactions'"),
        "{text}"
    );
    assert!(
        text.contains("UNDOCUMENTED: librdkafka timeout-above-max 'read_uncommitted'"),
        "{text}"
    );
    assert_eq!(report["stale"].as_array().unwrap().len(), 1);
    assert_eq!(report["verdict"], "failed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_workloads_run_on_provisioned_topics_of_a_broker_that_refuses_create_topics() {
    let topics = crate::util::topic_specs(kconform::clients::provisioned_topics());
    let broker = Broker::start(BrokerConfig {
        topics,
        refuse_create_topics: true,
        txn_reaper_interval: Duration::from_millis(500),
        ..BrokerConfig::for_tests()
    })
    .await
    .expect("kaas-ref starts with its topics");
    let target = format!("external={}", broker.addr());
    let mut clients_wanted = vec!["--client", "librdkafka"];
    if kconform::targets::apache::available().is_ok() {
        clients_wanted.extend(["--client", "java"]);
    } else {
        println!("SKIPPED the Java client: no Java and jars here");
    }
    let mut seen = Vec::new();
    for run in 1..=2 {
        let mut args: Vec<String> = vec![
            "eos".into(),
            "fencing".into(),
            "stale-generation-offsets".into(),
            "--target".into(),
            target.clone(),
            "--provisioned-topics".into(),
        ];
        args.extend(clients_wanted.iter().map(|s| s.to_string()));
        let (code, text, report) = tokio::task::spawn_blocking(move || {
            clients(&args.iter().map(String::as_str).collect::<Vec<_>>())
        })
        .await
        .unwrap();
        println!("run {run}:\n{text}");
        assert_eq!(code, 0, "run {run}: {text}");
        let runs = report["runs"].as_array().unwrap().clone();
        assert_eq!(runs.len(), 3 * clients_wanted.len() / 2);
        let mut transcripts = Vec::new();
        for r in runs {
            let mut t = r["transcript"].clone();
            let calls = t["calls"].as_array_mut().expect("a transcript");
            assert!(
                calls.iter().all(|c| c["call"] != "createTopics"),
                "no topic is created: {t}"
            );
            for c in calls {
                c.as_object_mut().unwrap().remove("message");
            }
            transcripts.push(t);
        }
        seen.push(transcripts);
    }
    assert_eq!(
        seen[0], seen[1],
        "the second run, on topics the first wrote to, sees what the first saw"
    );
    let eos = seen[0]
        .iter()
        .find(|t| t["workload"] == "eos")
        .expect("eos ran");
    assert_eq!(
        eos["observed"]["read_committed"],
        serde_json::json!(["c0", "c1", "c2", "c3", "c4", "x0"])
    );
    broker.shutdown().await;
}

/// On clusters, `eos` runs with its coordinators together and apart (librdkafka, to keep it to
/// a minute): apart, kaas-ref loses the transaction's offsets as its ledger entry says (the
/// group lists none, `committed()` times out), together it shows nothing; with the ledger's
/// apart claims said of the together runs instead, the apart differences are UNDOCUMENTED and
/// the claims STALE. Two minutes: `cargo test -p harness --test integration clients:: --
/// --include-ignored` runs it.
#[test]
#[ignore = "two minutes of clusters: run with --include-ignored"]
fn on_clusters_each_placement_of_the_coordinators_shows_what_the_ledger_says() {
    if !apache_here() {
        return;
    }
    let args = |scenarios: Option<&Path>| {
        let mut a = vec![
            "eos",
            "--client",
            "librdkafka",
            "--target",
            "ref:3",
            "--target",
            "apache:3",
            "--apache-backend",
            "jvm",
        ];
        if let Some(dir) = scenarios {
            a.extend(["--scenarios", dir.to_str().unwrap()]);
        }
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let run = |a: Vec<String>| clients(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let (code, text, report) = run(args(None));
    println!("{text}");
    assert_schema(&report);
    assert_eq!(code, 0, "{text}");
    let differences = report["differences"].as_array().unwrap();
    let placed = |p: &str| -> Vec<&serde_json::Value> {
        differences
            .iter()
            .filter(|d| d["coordinators"] == p)
            .collect()
    };
    assert!(placed("together").is_empty(), "{text}");
    let apart = placed("apart");
    assert!(
        apart
            .iter()
            .any(|d| d["field"] == "listConsumerGroupOffsets"
                && d["left"] == "OperationTimedOut"
                && d["documented_by"] == "txn-offsets-lost-across-coordinators"),
        "{text}"
    );
    let scratch = scratch_scenarios(|t| {
        t.replace(
            "workload = \"eos\"\ncoordinators = \"apart\"",
            "workload = \"eos\"\ncoordinators = \"together\"",
        )
    });
    let (code, text, report) = run(args(Some(scratch.path())));
    println!("{text}");
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("UNDOCUMENTED: librdkafka eos (apart) 'listConsumerGroupOffsets'"),
        "{text}"
    );
    assert!(
        text.contains(
            "STALE claim of txn-offsets-lost-across-coordinators: librdkafka eos (together)"
        ),
        "{text}"
    );
    assert_eq!(report["verdict"], "failed");
}
