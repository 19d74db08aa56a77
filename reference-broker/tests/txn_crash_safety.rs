//! kill -9 of `kaas-ref` at random points of a stream of transactions, twenty times, restarting
//! each time: no committed record is lost, no aborted record is visible to read_committed, a
//! transaction whose commit was cut short is all-or-nothing, every slot file parses, and every
//! prepared or orphaned transaction is completed by the reaper and reconcile.

use crate::common;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use reference_broker::txn::slots::{SlotStore, TxnState};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Committed,
    Aborted,
    /// The broker died before the commit or abort was acknowledged.
    Unknown,
}

const ROUNDS: u32 = 20;
const RECORDS_PER_TXN: u32 = 3;

/// Runs transactions until stopped or the broker dies; records each one's outcome.
fn run_transactions(
    addr: String,
    round: u32,
    stop: Arc<AtomicBool>,
    log: Arc<Mutex<Vec<(String, Outcome)>>>,
) {
    let p: ThreadedProducer<DefaultProducerContext> = match ClientConfig::new()
        .set("bootstrap.servers", &addr)
        .set("transactional.id", format!("crash-{round}"))
        .set("transaction.timeout.ms", "1000")
        .set("message.timeout.ms", "1000")
        .set("socket.timeout.ms", "1000")
        .create()
    {
        Ok(p) => p,
        Err(_) => return,
    };
    let t = Duration::from_secs(2);
    if p.init_transactions(t).is_err() {
        return;
    }
    let mut n = 0;
    while !stop.load(Ordering::SeqCst) {
        let label = format!("r{round}-t{n}");
        if p.begin_transaction().is_err() {
            return;
        }
        for i in 0..RECORDS_PER_TXN {
            let v = format!("{label}-{i}");
            if p.send(BaseRecord::<(), _>::to("txn-crash").payload(&v))
                .is_err()
            {
                return;
            }
        }
        let abort = n % 3 == 2;
        // By index: a worker of an earlier round may still be finishing its last call
        // while this round's worker pushes.
        let entry = {
            let mut log = log.lock().unwrap();
            log.push((label.clone(), Outcome::Unknown));
            log.len() - 1
        };
        let done = match abort {
            true => p.flush(t).is_ok() && p.abort_transaction(t).is_ok(),
            false => p.commit_transaction(t).is_ok(),
        };
        if !done {
            return;
        }
        let outcome = if abort {
            Outcome::Aborted
        } else {
            Outcome::Committed
        };
        log.lock().unwrap()[entry].1 = outcome;
        n += 1;
    }
}

#[test]
fn transactions_survive_twenty_kill_9s() {
    let dir = tempfile::tempdir().unwrap();
    let flags = ["--txn-reaper-interval-ms", "200"];
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    println!("kill-point seed: {seed}");
    let mut rng = seed;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let log = Arc::new(Mutex::new(Vec::new()));
    // Each round's worker is joined after the last round, not before the next: after a kill
    // its call in flight waits out its 2 s timeout, which was 42 of the test's 62 s. Each
    // restart is on a port of its own, so that the call cannot reach the next round's broker
    // and the transaction it was in stays cut short (an unknown outcome, all or nothing), as
    // when the worker was joined first.
    let mut workers = Vec::new();
    for round in 0..ROUNDS {
        let broker = common::KaasRef::start(dir.path(), "127.0.0.1:0", &flags);
        let addr = broker.addr.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let worker = {
            let (addr, stop, log) = (addr.clone(), stop.clone(), log.clone());
            std::thread::spawn(move || run_transactions(addr, round, stop, log))
        };
        // The kill lands at a random point after the round's first commit, so every round
        // both commits something and is cut somewhere in a later transaction (or between two).
        let first_commit = Instant::now() + Duration::from_secs(15);
        let committed_in_round = || {
            let prefix = format!("r{round}-");
            log.lock()
                .unwrap()
                .iter()
                .any(|(l, o)| l.starts_with(&prefix) && *o == Outcome::Committed)
        };
        while !committed_in_round() && Instant::now() < first_commit {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(
            committed_in_round(),
            "round {round}: no transaction committed within 15 s of the broker starting"
        );
        std::thread::sleep(Duration::from_millis(next() % 600));
        broker.kill();
        stop.store(true, Ordering::SeqCst);
        workers.push(worker);
    }
    for worker in workers {
        worker.join().unwrap();
    }

    // Restart once more; orphaned transactions time out (1 s) and the reaper finishes them.
    let broker = common::KaasRef::start(dir.path(), "127.0.0.1:0", &flags);
    std::thread::sleep(Duration::from_millis(2500));
    let slots = SlotStore::new(&dir.path().join("__cluster"));
    let entries = slots.all().expect("every slot file parses");
    let unfinished: Vec<_> = entries
        .iter()
        .filter(|(_, e)| {
            !matches!(
                e.state,
                TxnState::CompleteCommit | TxnState::CompleteAbort | TxnState::Empty
            )
        })
        .map(|(id, e)| (id.clone(), e.state))
        .collect();
    assert!(
        unfinished.is_empty(),
        "transactions left unfinished: {unfinished:?}"
    );

    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &broker.addr)
        .set("group.id", "crash-reader")
        .set("isolation.level", "read_committed")
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    consumer.subscribe(&["txn-crash"]).unwrap();
    let mut visible = BTreeSet::new();
    let end = Instant::now() + Duration::from_secs(30);
    let mut quiet = Instant::now();
    while Instant::now() < end && (visible.is_empty() || quiet.elapsed() < Duration::from_secs(3)) {
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(100)) {
            visible.insert(String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned());
            quiet = Instant::now();
        }
    }
    broker.kill();

    let log = log.lock().unwrap().clone();
    let count = |o| log.iter().filter(|(_, x)| *x == o).count();
    println!(
        "{} transactions over {ROUNDS} kills: {} committed, {} aborted, {} cut short; {} records visible",
        log.len(),
        count(Outcome::Committed),
        count(Outcome::Aborted),
        count(Outcome::Unknown),
        visible.len()
    );
    for (label, outcome) in &log {
        let present = (0..RECORDS_PER_TXN)
            .filter(|i| visible.contains(&format!("{label}-{i}")))
            .count() as u32;
        match outcome {
            Outcome::Committed => assert_eq!(
                present, RECORDS_PER_TXN,
                "{label} committed but lost records"
            ),
            Outcome::Aborted => assert_eq!(present, 0, "{label} aborted but visible"),
            Outcome::Unknown => assert!(
                present == 0 || present == RECORDS_PER_TXN,
                "{label} partly visible ({present} of {RECORDS_PER_TXN})"
            ),
        }
    }
}
