//! librdkafka's exactly-once workload on two three-broker clusters, kaas-ref's and a live
//! Apache 3.7's: a transactional producer copies an input topic to an output topic, sending the
//! read_committed consumer's offsets with each transaction (consume-process-produce,
//! sendOffsetsToTransaction), and mid-run a broker is killed — the transaction coordinator in one
//! run, the leader of an output partition in the other. The application does what the clients'
//! documentation asks (retry a retriable commit, abort and rewind to the committed offsets on an
//! abortable error). What must hold, on both clusters alike: a read_committed consumer reads
//! every input record from the output exactly once, and nothing of an aborted transaction —
//! except what kaas documents: it commits a transaction's offsets on the transaction
//! coordinator's broker, so where the group's coordinator is another broker (before the kill or
//! after it; the ids are random, so in about two runs of three) the offsets are never committed
//! (ledger entry `txn-offsets-lost-across-coordinators`). The copy goes on unharmed until the
//! application rewinds to the committed offsets; then it copies records again. Duplicates,
//! never loss: with the coordinators apart, records copied twice pass as that deviation, and
//! a record lost or foreign still fails.
//!
//! That is what the failures seen here were (CI, 2026-12-02, twice): librdkafka's
//! send_offsets_to_transaction stalled past 75 s (its timeout then), a new producer took over and rewound, and the
//! output held one partition's records twice. The application stopped once it had committed as
//! many records as the input holds, so the batch copied twice made another partition's last 20
//! records look lost; it now stops when every input partition is copied to its end.
//!
//! It runs as a binary of its own: beside lighter tests on two cores, librdkafka's stall came
//! more often (before a stuck producer was replaced after 20 s). CI (`ci/test.sh`) runs it
//! once the harness's integration tests are done, beside the lighter binaries cargo runs after
//! them. It waits on clients and failovers for most of its time, so the two clusters run at
//! once (the victims one after the other): 97 s alone with the clusters in turn, 72 s alone at
//! once, 47-50 s at once beside kaas-ref's and kconform-wire's tests in three runs (each run's
//! time is mostly librdkafka's stalls, 20 s each, and how many there were).
//! `ci/cluster-clients.sh` runs this test many times in a row.

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use rdkafka::{Offset, TopicPartitionList};

use kafka_protocol::messages::ApiKey::{FindCoordinator, Metadata};
use kconform::targets::{Running, TargetSpec};

/// Records in the input topic.
const RECORDS: usize = 240;
/// Records per transaction.
const BATCH: usize = 20;
/// Transactions committed before the broker is killed.
const KILL_AFTER: usize = 3;
/// Partitions of each topic.
const PARTITIONS: i32 = 3;
/// The bound on every client wait.
const T: Duration = Duration::from_secs(60);

/// The ledger entry that documents what kaas-ref does with a transaction's offsets when the
/// group's coordinator is not the transaction's.
const LOST_ACROSS_COORDINATORS: &str = "txn-offsets-lost-across-coordinators";

/// Which broker the run kills.
#[derive(Debug, Clone, Copy)]
enum Victim {
    /// The transaction coordinator of the producer's transactional id.
    Coordinator,
    /// The leader of partition 0 of the output topic.
    OutputLeader,
}

/// What the application and a consumer saw.
#[derive(Debug, Default, PartialEq, Eq)]
struct Outcome {
    /// Input values missing from the read_committed output.
    missing: Vec<String>,
    /// Input values read more than once from it.
    duplicated: Vec<String>,
    /// Values in it that are no input value.
    foreign: Vec<String>,
}

fn config(bootstrap: &str) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", bootstrap)
        // A killed broker is found out quickly.
        .set("socket.connection.setup.timeout.ms", "3000")
        .set("reconnect.backoff.max.ms", "1000");
    c
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

fn create_topics(bootstrap: &str, names: &[&str]) {
    let admin: AdminClient<DefaultClientContext> = config(bootstrap).create().expect("admin");
    let topics: Vec<NewTopic> = names
        .iter()
        .map(|n| NewTopic::new(n, PARTITIONS, TopicReplication::Fixed(3)))
        .collect();
    let results =
        block_on(admin.create_topics(&topics, &AdminOptions::new().operation_timeout(Some(T))))
            .expect("create topics");
    for r in results {
        r.expect("topic created");
    }
}

fn fill(bootstrap: &str, topic: &str) -> Vec<String> {
    let p: ThreadedProducer<DefaultProducerContext> = config(bootstrap)
        .set("enable.idempotence", "true")
        .create()
        .expect("producer");
    let values: Vec<String> = (0..RECORDS).map(|i| format!("r{i}")).collect();
    for (i, v) in values.iter().enumerate() {
        p.send(
            BaseRecord::<(), _>::to(topic)
                .payload(v)
                .partition(i as i32 % PARTITIONS),
        )
        .map_err(|(e, _)| e)
        .expect("send");
    }
    p.flush(T).expect("flush");
    values
}

fn transactional(bootstrap: &str, id: &str) -> ThreadedProducer<DefaultProducerContext> {
    let p: ThreadedProducer<DefaultProducerContext> = config(bootstrap)
        .set("transactional.id", id)
        .set("transaction.timeout.ms", "60000")
        .create()
        .expect("transactional producer");
    p.init_transactions(T).expect("init_transactions");
    p
}

/// Where the consumer resumes after an abort: the group's committed offsets, else the start.
fn rewind(consumer: &BaseConsumer, topic: &str) {
    let mut tpl = TopicPartitionList::new();
    for p in 0..PARTITIONS {
        tpl.add_partition(topic, p);
    }
    // A group coordinator still loading, or moving after a kill, is waited out as librdkafka's
    // own consumers wait it out.
    let end = Instant::now() + T;
    let committed = loop {
        match consumer.committed_offsets(tpl.clone(), Duration::from_secs(10)) {
            Ok(committed) => break committed,
            Err(e) if Instant::now() < end => {
                eprintln!("committed offsets: {e}; asking again");
                std::thread::sleep(Duration::from_millis(500));
            }
            Err(e) => panic!("committed offsets: {e}"),
        }
    };
    let mut assignment = TopicPartitionList::new();
    for p in 0..PARTITIONS {
        let offset = match committed.find_partition(topic, p).map(|e| e.offset()) {
            Some(Offset::Offset(o)) => Offset::Offset(o),
            _ => Offset::Beginning,
        };
        assignment.add_partition_offset(topic, p, offset).unwrap();
    }
    consumer.assign(&assignment).expect("assign");
}

/// Commits, retrying a retriable failure; whether it committed (false: aborted, rewind).
fn commit(p: &ThreadedProducer<DefaultProducerContext>) -> bool {
    let end = Instant::now() + T * 2;
    loop {
        match p.commit_transaction(T) {
            Ok(()) => return true,
            Err(KafkaError::Transaction(e)) if e.is_retriable() && Instant::now() < end => continue,
            Err(KafkaError::Transaction(e)) if e.txn_requires_abort() => {
                p.abort_transaction(T)
                    .expect("abort after an abortable commit error");
                return false;
            }
            Err(e) => panic!("commit failed fatally: {e}"),
        }
    }
}

/// The timeout `send_offsets_to_transaction` is given. After a kill both clusters move a
/// coordinator within about 3 s (Apache's broker session timeout and kaas-ref's member timeout
/// are both 3 s here), so a call still waiting after 15 s waits for nothing that will come.
const OFFSETS_T: Duration = Duration::from_secs(15);

/// How long past its own timeout a client call may take before it counts as stuck.
const STUCK_GRACE: Duration = Duration::from_secs(5);

/// `send_offsets_to_transaction` on a thread of its own: librdkafka 2.12 can wait forever in
/// it, past its timeout, when the group coordinator it cached is gone (librdkafka#5456: the
/// coordinator request's timeout is never checked; #5511: a decommissioned coordinator is
/// never looked up again), as it did here once in a few runs after a kill. Ok(false), with
/// `stuck` set, when the call did not return within its timeout and [`STUCK_GRACE`].
fn offsets_sent(
    producer: &std::sync::Arc<ThreadedProducer<DefaultProducerContext>>,
    offsets: TopicPartitionList,
    metadata: rdkafka::consumer::ConsumerGroupMetadata,
    stuck: &std::sync::atomic::AtomicBool,
) -> Result<bool, KafkaError> {
    let (tx, rx) = mpsc::channel();
    let p = producer.clone();
    std::thread::spawn(move || {
        let _ = tx.send(p.send_offsets_to_transaction(&offsets, &metadata, OFFSETS_T));
    });
    match rx.recv_timeout(OFFSETS_T + STUCK_GRACE) {
        Ok(result) => result.map(|()| true),
        Err(_) => {
            stuck.store(true, std::sync::atomic::Ordering::SeqCst);
            Ok(false)
        }
    }
}

/// What the application tells the test as it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    /// This many transactions committed so far.
    Committed(usize),
    /// Every input record is committed to the output; the clients are being closed.
    Copied,
    /// The producer and the consumer are closed (dropped): the application is done.
    Closed,
}

/// The consume-process-produce application, until every input record is committed to the
/// output, then closes its clients; tells `progress` each step of the way, so that a client
/// call that never returns is named by the last event seen.
fn copy(
    bootstrap: &str,
    input: &str,
    output: &str,
    txn: &str,
    group: &str,
    progress: mpsc::Sender<Event>,
) {
    let consumer: BaseConsumer = config(bootstrap)
        .set("group.id", group)
        .set("isolation.level", "read_committed")
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .create()
        .expect("consumer");
    rewind(&consumer, input);
    // The copy is done when every input partition is committed to the output up to its end.
    // Not when as many records as the input holds are committed: a batch copied twice (after a
    // rewind to offsets that were never committed) would count twice, and the copy would stop
    // short of other partitions' last records.
    let ends: BTreeMap<i32, i64> = (0..PARTITIONS)
        .map(|p| {
            let (_, high) = consumer
                .fetch_watermarks(input, p, T)
                .expect("the input's end offsets");
            (p, high)
        })
        .collect();
    let mut copied: BTreeMap<i32, i64> = BTreeMap::new();
    let mut producer = std::sync::Arc::new(transactional(bootstrap, txn));
    let mut replaced = 0usize;
    let stuck = std::sync::atomic::AtomicBool::new(false);
    let mut commits = 0usize;
    let deadline = Instant::now() + Duration::from_secs(240);
    while ends
        .iter()
        .any(|(p, end)| copied.get(p).copied().unwrap_or(0) < *end)
    {
        assert!(
            Instant::now() < deadline,
            "the copy did not finish: copied up to {copied:?} of {ends:?}"
        );
        let mut batch = Vec::new();
        let quiet = Instant::now() + Duration::from_secs(2);
        while batch.len() < BATCH && Instant::now() < quiet {
            if let Some(Ok(m)) = consumer.poll(Duration::from_millis(100)) {
                batch.push((
                    m.partition(),
                    m.offset(),
                    m.payload().unwrap_or_default().to_vec(),
                ));
            }
        }
        if batch.is_empty() {
            continue;
        }
        // Each partition's next offset once this batch is copied.
        let next: BTreeMap<i32, i64> = batch.iter().map(|(p, o, _)| (*p, o + 1)).collect();
        let attempt = (|| -> Result<bool, KafkaError> {
            producer.begin_transaction()?;
            for (partition, _, payload) in &batch {
                producer
                    .send(
                        BaseRecord::<(), _>::to(output)
                            .payload(payload)
                            .partition(*partition),
                    )
                    .map_err(|(e, _)| e)?;
            }
            let mut offsets = TopicPartitionList::new();
            for (partition, offset) in &next {
                offsets.add_partition_offset(input, *partition, Offset::Offset(*offset))?;
            }
            let metadata = consumer.group_metadata().expect("group metadata");
            if !offsets_sent(&producer, offsets, metadata, &stuck)? {
                return Ok(false);
            }
            Ok(commit(&producer))
        })();
        if matches!(attempt, Ok(false)) && stuck.load(std::sync::atomic::Ordering::SeqCst) {
            // The stuck producer is left to its call; a new one with the same transactional id
            // fences it and aborts its transaction, as an application restarted would.
            stuck.store(false, std::sync::atomic::Ordering::SeqCst);
            replaced += 1;
            eprintln!("send_offsets_to_transaction did not return within {:?} (librdkafka#5456, #5511): a new producer takes over ({replaced} so far)", OFFSETS_T + STUCK_GRACE);
            producer = std::sync::Arc::new(transactional(bootstrap, txn));
            rewind(&consumer, input);
            continue;
        }
        match attempt {
            Ok(true) => {
                for (p, o) in &next {
                    let c = copied.entry(*p).or_default();
                    *c = (*c).max(*o);
                }
                commits += 1;
                let _ = progress.send(Event::Committed(commits));
            }
            Ok(false) => rewind(&consumer, input),
            Err(KafkaError::Transaction(e)) if e.txn_requires_abort() => {
                producer.abort_transaction(T).expect("abort");
                rewind(&consumer, input);
            }
            Err(e) => {
                // A send or offsets call that failed before the transaction could be ended
                // (a broker gone mid-call): abort what there is, go back to what is committed.
                eprintln!("transaction failed, aborting it: {e}");
                let _ = producer.abort_transaction(T);
                rewind(&consumer, input);
            }
        }
    }
    if replaced > 0 {
        println!("the application replaced a stuck producer {replaced} time(s)");
    }
    let _ = progress.send(Event::Copied);
    // Closing is a client call like any other (a consumer of a group closes with its
    // coordinator), so it is watched too.
    drop(producer);
    drop(consumer);
    let _ = progress.send(Event::Closed);
}

/// Runs `f` (client calls, and the clients' closing) on a thread of its own and waits for it
/// at most `within`: past that, the test fails with every thread's stack, where the
/// runtime's blocking pool would have held the test's end until the stuck call returned.
async fn off_runtime<R: Send + 'static>(
    what: &'static str,
    within: Duration,
    f: impl FnOnce() -> R + Send + 'static,
) -> R {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match tokio::task::spawn_blocking(move || rx.recv_timeout(within))
        .await
        .expect("the waiter")
    {
        Ok(r) => r,
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what} panicked"),
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what} did not finish within {within:?}\n{}", thread_dump())
        }
    }
}

/// Every thread's stack, as gdb prints it (or why it cannot): what a stuck client is waiting
/// for.
fn thread_dump() -> String {
    let pid = std::process::id().to_string();
    // Into a file, not a pipe: gdb stops every thread of this process, the pipe's reader too,
    // and a dump larger than the pipe would then wait for it forever.
    let Ok(file) = tempfile::NamedTempFile::new() else {
        return "(no thread dump: no temporary file)".into();
    };
    let out = file.reopen().map(std::process::Stdio::from);
    let ran = out.and_then(|out| {
        std::process::Command::new("gdb")
            .args(["-p", &pid, "-batch", "-ex", "thread apply all bt 12"])
            .stdout(out)
            .stderr(std::process::Stdio::null())
            .status()
    });
    match ran.and_then(|_| std::fs::read_to_string(file.path())) {
        Ok(text) => text
            .lines()
            .filter(|l| l.starts_with("Thread ") || l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n"),
        Err(e) => format!("(no thread dump: gdb: {e})"),
    }
}

/// Every value a fresh read_committed consumer reads from every partition, until quiet.
fn read_committed(bootstrap: &str, topic: &str) -> Vec<String> {
    let c: BaseConsumer = config(bootstrap)
        .set("group.id", format!("reader-{}", uuid::Uuid::new_v4()))
        .set("isolation.level", "read_committed")
        .set("enable.auto.commit", "false")
        .create()
        .expect("consumer");
    let mut tpl = TopicPartitionList::new();
    for p in 0..PARTITIONS {
        tpl.add_partition_offset(topic, p, Offset::Beginning)
            .unwrap();
    }
    c.assign(&tpl).unwrap();
    let (mut out, mut quiet_since) = (Vec::new(), Instant::now());
    let end = Instant::now() + T;
    while Instant::now() < end && quiet_since.elapsed() < Duration::from_secs(4) {
        if let Some(Ok(m)) = c.poll(Duration::from_millis(100)) {
            out.push(String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned());
            quiet_since = Instant::now();
        }
    }
    out
}

/// The node the victim is, asked of the cluster itself.
async fn victim_node(target: &Running, victim: Victim, txn: &str, output: &str) -> i32 {
    match victim {
        Victim::Coordinator => coordinator(target.addr, txn, 1).await,
        Victim::OutputLeader => {
            let fields = format!("topics = [{{ name = \"{output}\" }}]");
            node_at(
                target.addr,
                Metadata,
                9,
                &fields,
                "topics.0.partitions.0.leader_id",
            )
            .await
        }
    }
}

/// The coordinator of `key` (`key_type` 0: a group, 1: a transactional id), asked of the
/// broker at `addr`.
async fn coordinator(addr: std::net::SocketAddr, key: &str, key_type: i8) -> i32 {
    let fields = format!("key = \"{key}\"\nkey_type = {key_type}");
    node_at(addr, FindCoordinator, 3, &fields, "node_id").await
}

/// The node id at `path` of the answer to `api` with `fields`, asked of the broker at `addr`
/// until it names one without an error (within [`T`]).
async fn node_at(
    addr: std::net::SocketAddr,
    api: kafka_protocol::messages::ApiKey,
    version: i16,
    fields: &str,
    path: &str,
) -> i32 {
    let fields: toml::Table = toml::from_str(fields).unwrap();
    let request = kconform::api::request::build(api, version, &fields).unwrap();
    let deadline = Instant::now() + T;
    loop {
        let mut conn = kconform::wire::client::Connection::connect(addr, Duration::from_secs(10))
            .await
            .expect("connect");
        let answer = conn.send(api, version, &request).await.expect("an answer");
        let tree = kconform::api::response::to_value(&answer, version);
        let node = kconform::api::response::at(&tree, path).and_then(serde_json::Value::as_i64);
        let error =
            kconform::api::response::at(&tree, "error_code").and_then(serde_json::Value::as_i64);
        if let (Some(node), None | Some(0)) = (node, error) {
            if node >= 0 {
                return node as i32;
            }
        }
        assert!(
            Instant::now() < deadline,
            "no node at {path} of {api:?}: {tree}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Where the transaction's and the group's coordinators were: apart (on different brokers)
/// before the kill, or after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Apart {
    before: bool,
    after: bool,
}

/// The workload on one cluster, `victim` killed after KILL_AFTER commits, and where the
/// transaction's and the group's coordinators were; the cluster is stopped after.
async fn run_on(spec: TargetSpec, victim: Victim) -> (Outcome, Apart) {
    let target = Running::start(&spec).await.expect("cluster starts");
    let bootstrap = target.bootstrap_servers();
    let run = uuid::Uuid::new_v4().simple().to_string();
    let (input, output, txn, group) = (
        format!("in-{run}"),
        format!("out-{run}"),
        format!("tx-{run}"),
        format!("g-{run}"),
    );
    let values = {
        let (b, i, o) = (bootstrap.clone(), input.clone(), output.clone());
        off_runtime("the set-up", T * 3, move || {
            create_topics(&b, &[&i, &o]);
            fill(&b, &i)
        })
        .await
    };
    let (tx, rx) = mpsc::channel();
    {
        // A thread of its own, not the runtime's blocking pool: a client call that never
        // returns then fails this test instead of holding the runtime's shutdown forever.
        let (b, i, o, t, g) = (
            bootstrap.clone(),
            input.clone(),
            output.clone(),
            txn.clone(),
            group.clone(),
        );
        std::thread::spawn(move || copy(&b, &i, &o, &t, &g, tx));
    }
    let events = std::sync::Arc::new(std::sync::Mutex::new(rx));
    // The next event within `within`, read off the async workers.
    let next = |within: Duration| {
        let events = events.clone();
        async move {
            tokio::task::spawn_blocking(move || {
                events
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .recv_timeout(within)
            })
            .await
            .expect("the event reader")
        }
    };
    // Kill the victim once the application has committed KILL_AFTER transactions.
    let mut last = None;
    while !matches!(last, Some(Event::Committed(n)) if n >= KILL_AFTER) {
        match next(T).await {
            Ok(event) => last = Some(event),
            Err(_) => panic!(
                "{}: the application committed fewer than {KILL_AFTER} transactions in a minute (last: {last:?})\n{}",
                target.name,
                thread_dump()
            ),
        }
    }
    let node = victim_node(&target, victim, &txn, &output).await;
    let before =
        coordinator(target.addr, &txn, 1).await != coordinator(target.addr, &group, 0).await;
    target.kill(node).await.expect("kill");
    println!(
        "{}: killed broker {node} ({victim:?}) after {KILL_AFTER} commits",
        target.name
    );
    let started = Instant::now();
    // The application bounds its own waits; this bounds the whole, so that a client stuck for
    // good fails the test, with every thread's stack, instead of hanging it.
    let bound = Duration::from_secs(300);
    while last != Some(Event::Closed) {
        let left = bound.saturating_sub(started.elapsed());
        match next(left).await {
            Ok(Event::Copied) => {
                println!(
                    "{}: the copy finished {:.1} s after the kill",
                    target.name,
                    started.elapsed().as_secs_f64()
                );
                last = Some(Event::Copied);
            }
            Ok(event) => last = Some(event),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                panic!("{}: the application panicked (last: {last:?})", target.name)
            }
            Err(mpsc::RecvTimeoutError::Timeout) => panic!(
                "{}: the application did not finish within {bound:?} of killing broker {node} ({victim:?}); last event: {last:?}\n{}",
                target.name,
                thread_dump()
            ),
        }
    }
    let out = {
        let (b, o) = (bootstrap.clone(), output.clone());
        off_runtime("reading the output", T * 2, move || read_committed(&b, &o)).await
    };
    // Asked of a broker that is up: the victim may be the bootstrap broker.
    let up = usize::try_from(node)
        .ok()
        .and_then(|n| target.bootstrap.iter().enumerate().find(|(i, _)| *i != n))
        .map_or(target.addr, |(_, a)| *a);
    let after = coordinator(up, &txn, 1).await != coordinator(up, &group, 0).await;
    target.stop().await;
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for v in &out {
        *counts.entry(v.as_str()).or_default() += 1;
    }
    let outcome = Outcome {
        missing: values
            .iter()
            .filter(|v| !counts.contains_key(v.as_str()))
            .cloned()
            .collect(),
        duplicated: counts
            .iter()
            .filter(|(_, n)| **n > 1)
            .map(|(v, _)| v.to_string())
            .collect(),
        foreign: counts
            .keys()
            .filter(|v| !values.iter().any(|x| x == *v))
            .map(|v| v.to_string())
            .collect(),
    };
    (outcome, Apart { before, after })
}

/// The workload on kaas-ref's cluster and on Apache's at once, each judged: both wait on
/// clients and failovers for most of their time (one run alone kept one core at most 15% busy),
/// so the two together took about as long as the longer one.
async fn both_clusters(victim: Victim) {
    let apache = async {
        match kconform::targets::apache::available() {
            Ok(()) => Some(
                run_on(
                    TargetSpec::apache(kconform::targets::apache::Backend::Jvm).cluster(3),
                    victim,
                )
                .await
                .0,
            ),
            Err(why) => {
                println!("SKIPPED the Apache cluster: {why}");
                None
            }
        }
    };
    let ((kaas, apart), apache) = tokio::join!(run_on(TargetSpec::REF.cluster(3), victim), apache);
    judge_kaas(victim, kaas, apart);
    if let Some(apache) = apache {
        assert_eq!(
            apache,
            Outcome::default(),
            "apache:3, {victim:?} killed: not exactly once"
        );
        println!("both clusters: every record exactly once with the {victim:?} killed mid-run");
    }
}

/// kaas-ref's outcome: exactly once, or, where the transaction's and the group's coordinators
/// were apart, duplicates that the ledger documents and never a record lost or foreign.
fn judge_kaas(victim: Victim, kaas: Outcome, apart: Apart) {
    if apart.before || apart.after {
        // kaas commits a transaction's offsets on the transaction coordinator's broker: with
        // the group's coordinator elsewhere they are never committed (the ledger's
        // txn-offsets-lost-across-coordinators), so a rewind reads older offsets and copies
        // records again. Duplicates, never loss.
        let ledger = kconform::compare::ledger::Ledger::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/deviations.toml"),
        )
        .expect("the ledger loads");
        assert!(
            ledger.entry(LOST_ACROSS_COORDINATORS).is_some(),
            "the ledger no longer documents {LOST_ACROSS_COORDINATORS}: exactly once must hold"
        );
        let Outcome {
            missing,
            duplicated,
            foreign,
        } = kaas;
        assert!(
            missing.is_empty() && foreign.is_empty(),
            "ref:3, {victim:?} killed ({apart:?}): lost {missing:?}, foreign {foreign:?}"
        );
        match duplicated.len() {
            0 => println!("ref:3, {victim:?} killed: every record exactly once ({apart:?}: no rewind showed the gap)"),
            n => println!("ref:3, {victim:?} killed: {n} records twice, DOCUMENTED {LOST_ACROSS_COORDINATORS}: the coordinators were apart ({apart:?}) and a rewind read offsets never committed"),
        }
    } else {
        assert_eq!(
            kaas,
            Outcome::default(),
            "ref:3, {victim:?} killed: not exactly once"
        );
    }
}

/// One test, the two victims one after the other, each on both clusters at once.
/// Every client call runs off the runtime and is bounded; a stuck one fails the test with
/// every thread's stack (which is how librdkafka's own hang in send_offsets_to_transaction
/// was found, now met by replacing the producer).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exactly_once_survives_the_coordinator_or_a_leader_killed() {
    both_clusters(Victim::Coordinator).await;
    both_clusters(Victim::OutputLeader).await;
}
