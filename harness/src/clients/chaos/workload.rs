//! The chaos workload, through librdkafka (and the same on the Java client:
//! [`super::java_worker`]): input records loaded into one partition per worker,
//! then each worker consumes its partition (read_committed), writes one record per input record
//! to the output partitions a seed picks, and sends its offsets in the same transaction, as a
//! Kafka Streams task does. Some transactions are aborted on purpose (each worker's second, then
//! a tenth drawn from the seed); every error is handled as librdkafka's documentation says an
//! application should (abort what needs aborting, make a new producer after a fatal error).
//! After an abort or an unknown outcome a worker resumes from its group's committed offset,
//! read as a read_committed client reads it. Each transaction is logged before it ends, so the
//! history holds every transaction whose records may show.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError, KafkaResult};
use rdkafka::message::Message;
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use rdkafka::{Offset, TopicPartitionList};
use serde::Serialize;

use super::history::{OutValue, Outcome, Read, Txn};
use super::landed::Landed;

/// A worker's transactional producer, its delivery reports kept.
type Txp = ThreadedProducer<Landed>;
/// The producer that loads the input.
type Loader = ThreadedProducer<DefaultProducerContext>;

/// The transaction timeout the workers' producers ask for: a transaction a fault leaves open is
/// aborted by its coordinator this long after it began.
pub const TRANSACTION_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest a worker waits on one call (a commit, an abort, the group's offsets).
const CALL: Duration = Duration::from_secs(10);
/// How many input records each worker's partition gets per second of the run: more than a
/// worker gets through on this machine, so no worker runs dry.
const INPUT_PER_SECOND: u64 = 250;
/// The share of transactions aborted on purpose, drawn from the seed.
const ABORT_SHARE: f64 = 0.1;
/// The transaction (counted from 0) each worker aborts on purpose whatever the draw: a run
/// short or slow enough that no draw came up would check no abort at all, and the anomalies
/// only an abort can show (an aborted read, offsets without records) could not appear. Seen:
/// a 10 s run of three workers, 18 transactions, none aborted, on a loaded machine.
const ALWAYS_ABORTED: u64 = 1;

/// The names of one chaos run on one cluster: unique per run, so runs never meet.
#[derive(Debug, Clone, Serialize)]
pub struct Names {
    /// The input topic (one partition per worker).
    pub input: String,
    /// The output topic.
    pub output: String,
    /// The prefix of every name.
    pub prefix: String,
    /// Each worker's group.
    pub groups: Vec<String>,
    /// Each worker's transactional id (placed beside or apart from its group's coordinator:
    /// [`super::placement`]).
    pub transactional_ids: Vec<String>,
    /// Where each input partition ended before the run loaded it (all 0 on topics of its own;
    /// on provisioned topics, what earlier runs left): a worker whose group committed nothing
    /// starts there, and the checker counts from there.
    pub input_base: Vec<i64>,
    /// Where each output partition ended before the run wrote to it: the read-back starts
    /// there.
    pub output_base: Vec<i64>,
}

/// The provisioned input topic of `kconform chaos --provisioned-topics`.
pub const PROVISIONED_INPUT: &str = "chaos-in-kconform";
/// The provisioned output topic.
pub const PROVISIONED_OUTPUT: &str = "chaos-out-kconform";
/// The partitions the provisioned topics are made with: the most `--workers` and
/// `--outputs` take.
pub const PROVISIONED_PARTITIONS: (i32, i32) = (16, 64);

impl Names {
    /// The names of run `run` with `workers` workers.
    pub fn new(run: &str, workers: u32) -> Names {
        let prefix = format!("kconform-chaos-{run}");
        Names {
            input: format!("{prefix}-in"),
            output: format!("{prefix}-out"),
            groups: (0..workers).map(|w| format!("{prefix}-g{w}")).collect(),
            transactional_ids: (0..workers).map(|w| format!("{prefix}-w{w}-0")).collect(),
            prefix,
            input_base: Vec::new(),
            output_base: Vec::new(),
        }
    }

    /// The names of run `run` on the provisioned topics (its groups and transactional ids
    /// still its own).
    pub fn provisioned(run: &str, workers: u32) -> Names {
        Names {
            input: PROVISIONED_INPUT.into(),
            output: PROVISIONED_OUTPUT.into(),
            ..Names::new(run, workers)
        }
    }

    /// Where input partition `p` began for this run.
    pub fn input_base(&self, p: i32) -> i64 {
        self.input_base.get(p as usize).copied().unwrap_or(0)
    }

    /// Where output partition `p` began for this run.
    pub fn output_base(&self, p: i32) -> i64 {
        self.output_base.get(p as usize).copied().unwrap_or(0)
    }

    /// Worker `w`'s group.
    pub fn group(&self, w: u32) -> &str {
        &self.groups[w as usize]
    }

    /// Worker `w`'s transactional id.
    pub fn transactional_id(&self, w: u32) -> &str {
        &self.transactional_ids[w as usize]
    }
}

/// The shape of the workload.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Shape {
    /// Workers (and input partitions).
    pub workers: u32,
    /// Output partitions.
    pub outputs: i32,
    /// Replication factor of both topics.
    pub replication: i32,
}

/// A client configuration on `bootstrap`.
pub fn config(bootstrap: &str) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", bootstrap);
    c
}

/// Creates the input and output topics (`min.insync.replicas` 2 where there are three
/// replicas: a write acknowledged by all is on two brokers at least).
pub async fn create_topics(bootstrap: &str, names: &Names, shape: Shape) -> Result<(), String> {
    let admin: AdminClient<DefaultClientContext> = config(bootstrap)
        .create()
        .map_err(|e| format!("admin client: {e}"))?;
    let min_isr = match shape.replication >= 3 {
        true => "2",
        false => "1",
    };
    let topics = [
        NewTopic::new(
            &names.input,
            shape.workers as i32,
            TopicReplication::Fixed(shape.replication),
        )
        .set("min.insync.replicas", min_isr),
        NewTopic::new(
            &names.output,
            shape.outputs,
            TopicReplication::Fixed(shape.replication),
        )
        .set("min.insync.replicas", min_isr),
    ];
    let results = admin
        .create_topics(
            &topics,
            &AdminOptions::new().operation_timeout(Some(Duration::from_secs(30))),
        )
        .await
        .map_err(|e| format!("creating the chaos topics: {e}"))?;
    for result in results {
        if let Err((topic, code)) = result {
            return Err(format!("creating topic {topic}: {code:?}"));
        }
    }
    Ok(())
}

/// Checks that the provisioned topics are there with the partitions this run needs, and notes
/// where each partition ends before the run (its bases).
pub fn provisioned_bases(bootstrap: &str, names: &mut Names, shape: Shape) -> Result<(), String> {
    let consumer: BaseConsumer = config(bootstrap)
        .create()
        .map_err(|e| format!("a client: {e}"))?;
    let metadata = consumer
        .fetch_metadata(None, CALL)
        .map_err(|e| format!("metadata: {e}"))?;
    for (topic, need, flag) in [
        (&names.input, shape.workers as i32, "--workers"),
        (&names.output, shape.outputs, "--outputs"),
    ] {
        let have = metadata
            .topics()
            .iter()
            .find(|t| t.name() == topic.as_str())
            .map_or(0, |t| t.partitions().len() as i32);
        if have < need {
            return Err(format!(
                "the provisioned topic {topic} has {have} partition(s), this run needs {need} ({flag}): `kconform topics --chaos` lists the topics to create"
            ));
        }
    }
    let ends = |topic: &str, partitions: i32| -> Result<Vec<i64>, String> {
        (0..partitions)
            .map(|p| {
                crate::clients::librdkafka::high_watermark_once_known(&consumer, topic, p, CALL)
                    .map_err(|e| format!("{topic}-{p}: {e}"))
            })
            .collect()
    };
    names.input_base = ends(&names.input, shape.workers as i32)?;
    names.output_base = ends(&names.output, shape.outputs)?;
    Ok(())
}

/// Loads each input partition with `per_partition` records (`in:<partition>:<n>`), idempotent
/// and acknowledged by all in-sync replicas, before any fault; returns how many each got.
pub fn load_input(
    bootstrap: &str,
    names: &Names,
    workers: u32,
    duration: Duration,
) -> Result<u64, String> {
    let per_partition = (duration.as_secs() + 10) * INPUT_PER_SECOND;
    let producer: Loader = config(bootstrap)
        .set("enable.idempotence", "true")
        .set("acks", "all")
        .set("linger.ms", "5")
        .set("message.timeout.ms", "60000")
        .create()
        .map_err(|e| format!("input producer: {e}"))?;
    for p in 0..workers as i32 {
        for n in 0..per_partition {
            let payload = format!("in:{p}:{n}");
            let key = n.to_string();
            let mut record = BaseRecord::to(&names.input)
                .partition(p)
                .key(&key)
                .payload(&payload);
            // A full queue waits for deliveries to make room.
            loop {
                match producer.send(record) {
                    Ok(()) => break,
                    Err((KafkaError::MessageProduction(_), r)) => {
                        record = r;
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err((e, _)) => return Err(format!("loading input: {e}")),
                }
            }
        }
    }
    producer
        .flush(Duration::from_secs(60))
        .map_err(|e| format!("loading input: {e}"))?;
    Ok(per_partition)
}

/// What one worker did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct WorkerStats {
    /// The client it runs on: `librdkafka` or `java`.
    pub client: &'static str,
    /// Transactions committed.
    pub committed: u64,
    /// Transactions aborted on purpose.
    pub aborted_on_purpose: u64,
    /// Transactions aborted after an error.
    pub aborted_after_error: u64,
    /// Transactions whose outcome the client could not tell.
    pub unknown: u64,
    /// Producers made after the first (after a fatal error or an unknown outcome).
    pub new_producers: u64,
    /// Each error librdkafka raised, by code, and how often.
    pub errors: BTreeMap<String, u64>,
    /// While the worker had begun no transaction: the first error that kept it from one, with
    /// the client call that raised it and librdkafka's words (`init_transactions: ...`), so
    /// that a worker that never began says what stopped it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before_first: Option<String>,
    /// The client call the worker was still in when it was given up, long after the workload
    /// ended (librdkafka's `send_offsets_to_transaction` can wait for ever when the group
    /// coordinator goes down: confluentinc/librdkafka#5456), and since when.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hung: Option<ClientCall>,
}

impl WorkerStats {
    /// The transactions this worker ended, however (committed or aborted; not those whose
    /// outcome it could not tell).
    pub fn ended(&self) -> u64 {
        self.committed + self.aborted_on_purpose + self.aborted_after_error
    }
}

/// A client call and when it was made: the one in progress, and, once the worker is given up,
/// the one that never returned.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct ClientCall {
    /// The librdkafka call.
    pub call: &'static str,
    /// When it was made, in milliseconds from the start of the workload.
    pub since_ms: u64,
}

/// A worker's result: its history and its counts. The worker keeps it where the run can read
/// it, so a worker stuck in a client call loses nothing it did before.
#[derive(Debug, Default, Clone)]
pub struct WorkerRun {
    /// Every transaction it began.
    pub history: Vec<Txn>,
    /// What its consumer did (librdkafka's worker; none from the Java one).
    pub reads: Vec<Read>,
    /// Its counts.
    pub stats: WorkerStats,
    /// The client call in progress.
    pub calling: Option<ClientCall>,
}

/// A worker's run, shared with the run that waits for it.
pub type SharedRun = Arc<Mutex<WorkerRun>>;

/// How an error reads in the counts.
fn code_of(e: &KafkaError) -> String {
    crate::clients::librdkafka::code_name(e).unwrap_or_else(|| e.to_string())
}

/// One worker's state.
struct Worker<'a> {
    w: u32,
    bootstrap: &'a str,
    names: &'a Names,
    shape: Shape,
    rng: ChaCha8Rng,
    started: Instant,
    consumer: BaseConsumer,
    producer: Option<Txp>,
    /// The next input offset to process; `None`: ask the group.
    position: Option<i64>,
    run: SharedRun,
    /// Transactions committed by every worker so far (for progress).
    committed: &'a AtomicU64,
    /// Where its records landed.
    landed: Landed,
}

impl Worker<'_> {
    fn run(&self) -> std::sync::MutexGuard<'_, WorkerRun> {
        self.run.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Milliseconds since the workload began.
    fn ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    fn error(&mut self, e: &KafkaError) {
        self.error_in("a client call", e);
    }

    /// Counts `e`, raised by `call`; the first one before any transaction began is kept whole.
    fn error_in(&mut self, call: &str, e: &KafkaError) {
        let mut run = self.run();
        *run.stats.errors.entry(code_of(e)).or_default() += 1;
        if run.history.is_empty() && run.stats.before_first.is_none() {
            run.stats.before_first = Some(format!("{call}: {e}"));
        }
    }

    /// Makes a client call that may block, noting it while it is in progress.
    fn calling<T>(&self, call: &'static str, f: impl FnOnce() -> T) -> T {
        let since_ms = self.ms();
        self.run().calling = Some(ClientCall { call, since_ms });
        let out = f();
        self.run().calling = None;
        out
    }

    /// The producer, made (and its transactions initialised) if there is none.
    fn producer(&mut self) -> Option<&Txp> {
        if self.producer.is_none() {
            let made: KafkaResult<Txp> = config(self.bootstrap)
                .set("transactional.id", self.names.transactional_id(self.w))
                .set(
                    "transaction.timeout.ms",
                    TRANSACTION_TIMEOUT.as_millis().to_string(),
                )
                .set(
                    "message.timeout.ms",
                    TRANSACTION_TIMEOUT.as_millis().to_string(),
                )
                .set("linger.ms", "1")
                .create_with_context(self.landed.clone());
            // Bounded like every other call (the Java worker's max.block.ms is the same): a
            // worker that cannot begin tries again with a new producer, and the run ends no
            // more than CALL after the workload does, where a 30 s wait held it 25 s past a
            // 5 s run that no worker could begin.
            let ready = made.and_then(|p| {
                self.calling("init_transactions", || p.init_transactions(CALL))
                    .map(|()| p)
            });
            match ready {
                Ok(p) => {
                    let mut run = self.run();
                    if !run.history.is_empty() || run.stats.new_producers > 0 {
                        run.stats.new_producers += 1;
                    }
                    drop(run);
                    self.producer = Some(p);
                }
                Err(e) => {
                    self.error_in("init_transactions", &e);
                    std::thread::sleep(Duration::from_millis(500));
                    return None;
                }
            }
        }
        self.producer.as_ref()
    }

    /// Assigns the input partition at `offset`.
    fn seek(&mut self, offset: i64) -> KafkaResult<()> {
        let at_ms = self.ms();
        self.run().reads.push(Read::Seek { at_ms, offset });
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset(&self.names.input, self.w as i32, Offset::Offset(offset))?;
        self.consumer.assign(&tpl)
    }

    /// Where to go on from: the group's committed offset (where the run's input began, when
    /// none).
    fn resume_from_group(&mut self) -> Option<i64> {
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition(&self.names.input, self.w as i32);
        match self.calling("committed", || self.consumer.committed_offsets(tpl, CALL)) {
            Ok(tpl) => {
                let at = tpl
                    .elements()
                    .first()
                    .and_then(|e| e.offset().to_raw())
                    .filter(|o| *o >= 0)
                    .unwrap_or_else(|| self.names.input_base(self.w as i32));
                match self.seek(at) {
                    Ok(()) => Some(at),
                    Err(e) => {
                        self.error(&e);
                        None
                    }
                }
            }
            Err(e) => {
                self.error(&e);
                std::thread::sleep(Duration::from_millis(500));
                None
            }
        }
    }

    /// Up to `want` input records from `from` on, read within half a second.
    fn batch(&mut self, from: i64, want: usize) -> Vec<(i64, Option<Vec<u8>>)> {
        let mut got = Vec::new();
        let deadline = Instant::now() + Duration::from_millis(500);
        let mut next = from;
        let (mut polled, mut since) = (Vec::new(), self.ms());
        while got.len() < want && Instant::now() < deadline {
            let m = self.consumer.poll(Duration::from_millis(50));
            if let Some(Ok(m)) = &m {
                let payload = String::from_utf8_lossy(m.payload().unwrap_or_default());
                polled.push((m.offset(), payload.into_owned()));
            }
            match m {
                Some(Ok(m)) if m.offset() == next => {
                    got.push((m.offset(), m.key().map(<[u8]>::to_vec)));
                    next += 1;
                }
                // A record before the position (a fetch from before the last seek) is
                // skipped; one past it would leave a gap: read again from the position.
                Some(Ok(m)) if m.offset() < next => {}
                Some(Ok(_)) => {
                    self.polled(std::mem::take(&mut polled), since);
                    let _ = self.seek(next);
                    since = self.ms();
                }
                Some(Err(e)) => self.error(&e),
                None => {}
            }
        }
        self.polled(polled, since);
        got
    }

    /// Keeps what a stretch of polls since `since` returned.
    fn polled(&mut self, records: Vec<(i64, String)>, since: u64) {
        if !records.is_empty() {
            let to_ms = self.ms();
            self.run().reads.push(Read::Polled {
                from_ms: since,
                to_ms,
                records,
            });
        }
    }

    /// One transaction over `records`; returns how it ended.
    fn transaction(&mut self, records: &[(i64, Option<Vec<u8>>)]) -> Outcome {
        let seq = self.run().history.len() as u64;
        let outputs: Vec<i32> = records
            .iter()
            .map(|_| self.rng.random_range(0..self.shape.outputs))
            .collect();
        // Drawn every time, so that the seed's later draws do not depend on the rule.
        let abort_on_purpose = self.rng.random_bool(ABORT_SHARE) || seq == ALWAYS_ABORTED;
        let from = records[0].0;
        let count = records.len() as u32;
        self.run().history.push(Txn {
            worker: self.w,
            seq,
            outcome: Outcome::Unknown,
            input_partition: self.w as i32,
            input_from: from,
            outputs: outputs.clone(),
            ended_ms: 0,
            began_ms: self.ms(),
            landed: vec![],
        });
        let Some(producer) = self.producer.as_ref() else {
            return Outcome::Unknown;
        };
        let sent: KafkaResult<()> = (|| {
            producer.begin_transaction()?;
            for (i, ((offset, key), out)) in records.iter().zip(&outputs).enumerate() {
                let payload = OutValue {
                    worker: self.w,
                    seq,
                    index: i as u32,
                    count,
                    input_partition: self.w as i32,
                    input_offset: *offset,
                }
                .encode();
                let mut record = BaseRecord::<Vec<u8>, _, _>::with_opaque_to(
                    &self.names.output,
                    Box::new((seq, i as u32)),
                )
                .partition(*out)
                .payload(&payload);
                if let Some(k) = key {
                    record = record.key(k);
                }
                producer.send(record).map_err(|(e, _)| e)?;
            }
            let mut offsets = TopicPartitionList::new();
            offsets.add_partition_offset(
                &self.names.input,
                self.w as i32,
                Offset::Offset(from + records.len() as i64),
            )?;
            let group = self
                .consumer
                .group_metadata()
                .ok_or_else(|| KafkaError::ClientCreation("no group metadata".into()))?;
            self.calling("send_offsets_to_transaction", || {
                producer.send_offsets_to_transaction(&offsets, &group, CALL)
            })
        })();
        let mut errors = Vec::new();
        let outcome = match (sent, abort_on_purpose) {
            (Ok(()), false) => {
                let commit =
                    || self.calling("commit_transaction", || producer.commit_transaction(CALL));
                let mut result = commit();
                // A retriable error (a timeout): the commit is asked again, as documented.
                let mut tries = 1;
                while let Err(KafkaError::Transaction(r)) = &result {
                    if !r.is_retriable() || tries >= 3 {
                        break;
                    }
                    errors.push(result.clone().unwrap_err());
                    tries += 1;
                    result = commit();
                }
                match result {
                    Ok(()) => Outcome::Committed,
                    Err(e) => {
                        let abortable =
                            matches!(&e, KafkaError::Transaction(r) if r.txn_requires_abort());
                        errors.push(e);
                        match abortable {
                            true => self.abort(producer, &mut errors),
                            false => Outcome::Unknown,
                        }
                    }
                }
            }
            (Ok(()), true) => self.abort(producer, &mut errors),
            (Err(e), _) => {
                errors.push(e);
                self.abort(producer, &mut errors)
            }
        };
        for e in &errors {
            self.error(e);
        }
        let ended_ms = self.ms();
        tracing::debug!(worker = self.w, seq, ?outcome, records = records.len(), ended_ms, errors = ?errors, "chaos transaction");
        let landed = self.landed.take(seq, records.len());
        let mut run = self.run();
        if let Some(t) = run.history.last_mut() {
            t.outcome = outcome;
            t.ended_ms = ended_ms;
            t.landed = landed;
        }
        let stats = &mut run.stats;
        match (outcome, abort_on_purpose && errors.is_empty()) {
            (Outcome::Committed, _) => {
                stats.committed += 1;
                self.committed.fetch_add(1, Ordering::Relaxed);
            }
            (Outcome::Aborted, true) => stats.aborted_on_purpose += 1,
            (Outcome::Aborted, false) => stats.aborted_after_error += 1,
            (Outcome::Unknown, _) => stats.unknown += 1,
        }
        outcome
    }

    /// Aborts the transaction: aborted if the abort went through, else unknown.
    fn abort(&self, producer: &Txp, errors: &mut Vec<KafkaError>) -> Outcome {
        match self.calling("abort_transaction", || producer.abort_transaction(CALL)) {
            Ok(()) => Outcome::Aborted,
            Err(e) => {
                errors.push(e);
                Outcome::Unknown
            }
        }
    }

    /// Transactions until `stop`.
    fn work_until(mut self, stop: &AtomicBool) {
        while !stop.load(Ordering::Relaxed) {
            if self.producer().is_none() {
                continue;
            }
            let from = match self.position {
                Some(at) => at,
                None => match self.resume_from_group() {
                    Some(at) => at,
                    None => continue,
                },
            };
            self.position = Some(from);
            let want = self.rng.random_range(1..=10);
            let records = self.batch(from, want);
            if records.is_empty() {
                continue;
            }
            match self.transaction(&records) {
                Outcome::Committed => self.position = Some(from + records.len() as i64),
                // An aborted transaction's input is done again from where the group says it
                // stands (as an application restarted after the abort would): so the group's
                // stored offsets, not the worker's memory, decide what comes next.
                Outcome::Aborted => self.position = None,
                // Whether it committed is the group's to say, once a new producer (fencing
                // the old one) has ended the transaction either way.
                Outcome::Unknown => {
                    self.producer = None;
                    self.position = None;
                }
            }
        }
    }
}

/// What one worker is given, whatever its client: its number, the cluster, the run's names
/// and shape, the seed, when the workload began, when to stop, the run-wide count of commits
/// (for progress) and where it keeps what it did.
#[derive(Clone)]
pub struct Assignment {
    /// The worker's number (its input partition).
    pub w: u32,
    /// The cluster's bootstrap servers.
    pub bootstrap: String,
    /// The run's names.
    pub names: Names,
    /// The run's shape.
    pub shape: Shape,
    /// The seed of its choices.
    pub seed: u64,
    /// When the workload began.
    pub started: Instant,
    /// Set when the workload ends.
    pub stop: Arc<AtomicBool>,
    /// Transactions committed by every worker so far.
    pub committed: Arc<AtomicU64>,
    /// Where it keeps its history and counts.
    pub run: SharedRun,
}

/// Runs the worker of `a` on librdkafka until it is told to stop, keeping what it does in its
/// run.
pub fn work(a: Assignment) -> Result<(), String> {
    let Assignment {
        w,
        bootstrap,
        names,
        shape,
        seed,
        started,
        stop,
        committed,
        run,
    } = a;
    let (bootstrap, names) = (bootstrap.as_str(), &names);
    let consumer: BaseConsumer = config(bootstrap)
        .set("group.id", names.group(w))
        .set("isolation.level", "read_committed")
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .create()
        .map_err(|e| format!("worker {w}'s consumer: {e}"))?;
    run.lock().unwrap_or_else(|e| e.into_inner()).stats.client = "librdkafka";
    let worker = Worker {
        w,
        bootstrap,
        names,
        shape,
        rng: ChaCha8Rng::seed_from_u64(seed.wrapping_add(u64::from(w) + 1)),
        started,
        consumer,
        producer: None,
        position: None,
        run,
        committed: &committed,
        landed: Landed::default(),
    };
    worker.work_until(&stop);
    Ok(())
}
