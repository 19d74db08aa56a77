//! The client workloads through librdkafka (the rdkafka crate, librdkafka vendored): the same
//! names, steps and transcript shape as the Java runner (`harness/java/KconformClient.java`),
//! so each workload says what a librdkafka application would notice on a broker.

use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerGroupMetadata};
use rdkafka::error::{KafkaError, KafkaResult};
use rdkafka::message::Message;
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use rdkafka::{Offset, TopicPartitionList};

use super::placement::WorkloadNames;
use super::transcript::{Call, ClientTranscript};

/// Every wait of a workload's calls.
const WAIT: Duration = Duration::from_secs(30);
/// How long a read_committed reader waits for the last stable offset to reach the high
/// watermark (markers still to come, or a transaction left open) before it reports.
const SETTLE: Duration = Duration::from_secs(3);

type Txp = ThreadedProducer<DefaultProducerContext>;

/// Why a workload gave no transcript.
#[derive(Debug, thiserror::Error)]
pub enum RdkafkaError {
    /// Not one of the workloads.
    #[error("unknown workload '{0}'")]
    Unknown(String),
    /// A client the workload needs could not be made (a configuration librdkafka refused).
    #[error("librdkafka workload {workload}: {reason}")]
    Setup {
        /// The workload.
        workload: String,
        /// Why.
        reason: String,
    },
}

/// librdkafka's name of the code an error carries (`OperationTimedOut`), when it carries one:
/// what transcripts and chaos's counts both show of an error.
pub fn code_name(e: &KafkaError) -> Option<String> {
    match e {
        KafkaError::Transaction(r) => Some(format!("{:?}", r.code())),
        other => other.rdkafka_error_code().map(|code| format!("{code:?}")),
    }
}

/// How an error reads in a transcript: librdkafka's code, and `(fatal)` or `(abortable)` for
/// a transactional error.
fn result_of(e: &KafkaError) -> String {
    let how = match e {
        KafkaError::Transaction(r) if r.is_fatal() => " (fatal)",
        KafkaError::Transaction(r) if r.txn_requires_abort() => " (abortable)",
        KafkaError::Transaction(r) if r.is_retriable() => " (retriable)",
        KafkaError::ClientCreation(_) => return "ClientCreation".into(),
        KafkaError::ClientConfig(..) => return "ClientConfig".into(),
        KafkaError::Subscription(_) => return "Subscription".into(),
        _ => "",
    };
    match code_name(e) {
        Some(code) => format!("{code}{how}"),
        None => "KafkaError".into(),
    }
}

/// What a workload saw so far.
#[derive(Default)]
struct Recorder {
    calls: Vec<Call>,
    observed: std::collections::BTreeMap<String, serde_json::Value>,
}

impl Recorder {
    fn call(&mut self, name: &str, f: impl FnOnce() -> KafkaResult<()>) -> bool {
        let (result, message) = match f() {
            Ok(()) => ("ok".to_owned(), None),
            Err(e) => (result_of(&e), Some(e.to_string())),
        };
        let ok = result == "ok";
        self.calls.push(Call {
            call: name.into(),
            result,
            message,
        });
        ok
    }

    fn observe(&mut self, name: &str, value: serde_json::Value) {
        self.observed.insert(name.into(), value);
    }
}

/// One workload's names and where its topic began.
struct Ctx {
    bootstrap: String,
    run: String,
    /// The transactional id and group kconform gave this run.
    names: WorkloadNames,
    topic: String,
    provisioned: bool,
    base: i64,
}

impl Ctx {
    /// The names of `run_id`, on `topic` when one is provisioned, else on `PREFIX-RUN_ID`.
    fn new(
        prefix: &str,
        bootstrap: &str,
        run_id: &str,
        names: &WorkloadNames,
        topic: Option<&str>,
    ) -> Ctx {
        Ctx {
            bootstrap: bootstrap.into(),
            run: run_id.into(),
            names: names.clone(),
            topic: topic.map_or_else(|| format!("{prefix}-{run_id}"), str::to_owned),
            provisioned: topic.is_some(),
            base: 0,
        }
    }

    fn config(&self) -> ClientConfig {
        let mut c = ClientConfig::new();
        c.set("bootstrap.servers", &self.bootstrap);
        c
    }

    fn producer_with(&self, id: &str, timeout_ms: u32) -> KafkaResult<Txp> {
        self.config()
            .set("transactional.id", id)
            .set("transaction.timeout.ms", timeout_ms.to_string())
            .create()
    }

    fn producer(&self, timeout_ms: u32) -> KafkaResult<Txp> {
        self.producer_with(&self.names.transactional_id, timeout_ms)
    }

    fn consumer(&self, group: &str, isolation: &str) -> KafkaResult<BaseConsumer> {
        self.config()
            .set("group.id", group)
            .set("isolation.level", isolation)
            .set("enable.auto.commit", "false")
            .set("auto.offset.reset", "earliest")
            .create()
    }

    fn send(&self, p: &Txp, prefix: &str, n: usize) -> KafkaResult<()> {
        for i in 0..n {
            self.enqueue(p, &format!("{prefix}{i}"))?;
        }
        p.flush(WAIT)
    }

    fn send_value(&self, p: &Txp, value: &str) -> KafkaResult<()> {
        self.enqueue(p, value)?;
        p.flush(WAIT)
    }

    fn enqueue(&self, p: &Txp, value: &str) -> KafkaResult<()> {
        p.send(
            BaseRecord::<(), _>::to(&self.topic)
                .payload(value)
                .partition(0),
        )
        .map_err(|(e, _)| e)
    }

    /// The high watermark now, as a read_uncommitted client sees it.
    /// Where the workload's partition ends now. A topic created a moment ago (by the workload,
    /// or by `--provisioned-topics` on Apache) can answer NOT_LEADER_OR_FOLLOWER or
    /// UNKNOWN_TOPIC_OR_PARTITION while its leader takes it up (Apache publishes the leader
    /// in Metadata before its log serves): asked again, as an application would, within WAIT.
    fn high_watermark(&self) -> KafkaResult<i64> {
        let c = self.consumer(&format!("rdk-base-{}", self.run), "read_uncommitted")?;
        high_watermark_once_known(&c, &self.topic, 0, WAIT)
    }

    /// A consumer assigned the workload's partition from where the workload began.
    fn reader(&self, isolation: &str) -> KafkaResult<BaseConsumer> {
        let c = self.consumer(&format!("rdk-reader-{}", self.run), isolation)?;
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset(&self.topic, 0, Offset::Offset(self.base))?;
        c.assign(&tpl)?;
        Ok(c)
    }

    /// Polls `c` until it has read up to the high watermark, or, where it cannot (markers
    /// still to come, a transaction left open), for [`SETTLE`] once it stops getting records.
    fn drain(&self, c: &BaseConsumer) -> Vec<String> {
        let mut out = Vec::new();
        let end = self.high_watermark().unwrap_or(i64::MAX);
        let deadline = Instant::now() + WAIT;
        let mut quiet_since = Instant::now();
        let mut next = self.base;
        while Instant::now() < deadline && quiet_since.elapsed() < SETTLE {
            match c.poll(Duration::from_millis(100)) {
                Some(Ok(m)) => {
                    out.push(String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned());
                    next = m.offset() + 1;
                    quiet_since = Instant::now();
                }
                _ => {
                    // Past the last record, only control records (markers) may remain.
                    let position = c
                        .position()
                        .ok()
                        .and_then(|p| {
                            p.find_partition(&self.topic, 0)
                                .and_then(|e| e.offset().to_raw())
                        })
                        .unwrap_or(next);
                    if position.max(next) >= end {
                        break;
                    }
                }
            }
        }
        out
    }

    fn read(&self, isolation: &str) -> serde_json::Value {
        match self.reader(isolation) {
            Ok(c) => serde_json::json!(self.drain(&c)),
            Err(e) => serde_json::json!(format!("no reader: {}", result_of(&e))),
        }
    }

    fn observe_reads(&self, r: &mut Recorder) {
        r.observe("read_committed", self.read("read_committed"));
        r.observe("read_uncommitted", self.read("read_uncommitted"));
    }

    fn observe_group_offsets(&self, r: &mut Recorder, group: &str) {
        let mut offsets = serde_json::Map::new();
        let listed = (|| {
            let c = self.consumer(group, "read_committed")?;
            let mut tpl = TopicPartitionList::new();
            tpl.add_partition(&self.topic, 0);
            c.committed_offsets(tpl, WAIT)
        })();
        let listed = listed.map(|tpl| {
            for e in tpl.elements() {
                let at = match e.offset() {
                    Offset::Offset(o) => o - self.base,
                    _ => -1,
                };
                offsets.insert(format!("partition {}", e.partition()), at.into());
            }
        });
        r.call("listConsumerGroupOffsets", || listed);
        r.observe("group_offsets", serde_json::Value::Object(offsets));
    }

    fn offsets(&self, relative: i64) -> KafkaResult<TopicPartitionList> {
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset(&self.topic, 0, Offset::Offset(self.base + relative))?;
        Ok(tpl)
    }

    fn transaction(&self, p: &Txp, prefix: &str, n: usize) -> KafkaResult<()> {
        p.begin_transaction()?;
        self.send(p, prefix, n)?;
        p.commit_transaction(WAIT)
    }

    /// A consumer's group metadata after it joined `group` and was assigned a partition: its
    /// generation and member id, which leaving the group (when it is dropped) makes stale.
    fn joined_metadata(&self, r: &mut Recorder, group: &str) -> Option<ConsumerGroupMetadata> {
        let mut metadata = None;
        r.call("consumer joins the group", || {
            let c = self.consumer(group, "read_committed")?;
            c.subscribe(&[&self.topic])?;
            let deadline = Instant::now() + WAIT;
            while Instant::now() < deadline && c.assignment()?.count() == 0 {
                let _ = c.poll(Duration::from_millis(100));
            }
            if c.assignment()?.count() == 0 {
                return Err(KafkaError::Subscription("no partition assigned".into()));
            }
            metadata = c.group_metadata();
            Ok(())
        });
        metadata
    }
}

/// Creates the topic (unless provisioned) and notes where its log ends now.
fn set_up(c: &mut Ctx, r: &mut Recorder) -> Result<(), KafkaError> {
    if !c.provisioned {
        let admin: AdminClient<DefaultClientContext> = c.config().create()?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| KafkaError::ClientCreation(e.to_string()))?;
        let created = rt.block_on(admin.create_topics(
            &[NewTopic::new(&c.topic, 1, TopicReplication::Fixed(1))],
            &AdminOptions::new().operation_timeout(Some(WAIT)),
        ));
        r.call("createTopics", || match created {
            Ok(results) => match results.into_iter().find_map(Result::err) {
                Some((_, code)) => Err(KafkaError::AdminOp(code)),
                None => Ok(()),
            },
            Err(e) => Err(e),
        });
    }
    c.base = c.high_watermark()?;
    Ok(())
}

fn eos(c: &Ctx, r: &mut Recorder) -> KafkaResult<()> {
    let group = &c.names.group;
    let p = c.producer(60000)?;
    r.call("initTransactions", || p.init_transactions(WAIT));
    r.call("commit", || c.transaction(&p, "c", 5));
    r.call("abort", || {
        p.begin_transaction()?;
        c.send(&p, "a", 5)?;
        p.abort_transaction(WAIT)
    });
    let input = c.consumer(group, "read_committed")?;
    r.call("sendOffsetsToTransaction", || {
        p.begin_transaction()?;
        c.send(&p, "x", 1)?;
        let metadata = input
            .group_metadata()
            .ok_or_else(|| KafkaError::ClientCreation("no group metadata".into()))?;
        p.send_offsets_to_transaction(&c.offsets(5)?, &metadata, WAIT)?;
        p.commit_transaction(WAIT)
    });
    let second = c.producer(60000)?;
    r.call("initTransactions (second producer)", || {
        second.init_transactions(WAIT)
    });
    r.call("commit (fenced producer)", || c.transaction(&p, "z", 1));
    drop(p);
    drop(second);
    c.observe_reads(r);
    c.observe_group_offsets(r, group);
    Ok(())
}

fn fencing(c: &Ctx, r: &mut Recorder) -> KafkaResult<()> {
    let first = c.producer(60000)?;
    r.call("initTransactions", || first.init_transactions(WAIT));
    r.call("send in an open transaction", || {
        first.begin_transaction()?;
        c.send(&first, "o", 2)
    });
    let second = c.producer(60000)?;
    r.call("initTransactions (second producer)", || {
        second.init_transactions(WAIT)
    });
    r.call("commit (second producer)", || {
        c.transaction(&second, "n", 1)
    });
    r.call("commit (fenced producer)", || {
        first.commit_transaction(WAIT)
    });
    drop(first);
    drop(second);
    c.observe_reads(r);
    Ok(())
}

/// What a librdkafka application does after a transactional call failed (the last call's
/// error): abort when librdkafka says the transaction requires it; after a fatal error the
/// producer is done.
fn end_after_error(r: &mut Recorder, p: &Txp, who: &str) {
    if r.calls
        .last()
        .is_some_and(|c| c.result.ends_with("(abortable)"))
    {
        r.call(&format!("abort ({who})"), || p.abort_transaction(WAIT));
    }
}

fn fenced_send(c: &Ctx, r: &mut Recorder) -> KafkaResult<()> {
    let first = c.producer(60000)?;
    r.call("initTransactions", || first.init_transactions(WAIT));
    r.call("send in an open transaction", || {
        first.begin_transaction()?;
        c.send(&first, "o", 1)
    });
    let second = c.producer(60000)?;
    r.call("initTransactions (second producer)", || {
        second.init_transactions(WAIT)
    });
    let sent = r.call("send (fenced producer)", || c.send_value(&first, "o1"));
    if !sent
        || !r.call("commit (fenced producer)", || {
            first.commit_transaction(WAIT)
        })
    {
        end_after_error(r, &first, "fenced producer");
    }
    if !r.call("commit (second producer)", || {
        c.transaction(&second, "n", 1)
    }) {
        end_after_error(r, &second, "second producer");
    }
    drop(first);
    drop(second);
    c.observe_reads(r);
    Ok(())
}

fn timeout_past(c: &Ctx, r: &mut Recorder) -> KafkaResult<()> {
    let p = c.producer(2000)?;
    r.call("initTransactions", || p.init_transactions(WAIT));
    r.call("send", || {
        p.begin_transaction()?;
        c.send(&p, "t", 2)
    });
    std::thread::sleep(Duration::from_secs(4));
    r.call("commit after the timeout", || p.commit_transaction(WAIT));
    drop(p);
    let next = c.producer(2000)?;
    r.call("initTransactions (new producer)", || {
        next.init_transactions(WAIT)
    });
    r.call("commit (new producer)", || c.transaction(&next, "n", 1));
    drop(next);
    c.observe_reads(r);
    Ok(())
}

fn with_id(c: &Ctx, r: &mut Recorder, id: &str) -> KafkaResult<()> {
    let mut made = None;
    if r.call("new KafkaProducer", || {
        made = Some(c.producer_with(id, 60000)?);
        Ok(())
    }) {
        let p = made.expect("made");
        r.call("initTransactions", || p.init_transactions(WAIT));
        r.call("commit", || c.transaction(&p, "u", 2));
    }
    c.observe_reads(r);
    Ok(())
}

fn unusual_id(c: &Ctx, r: &mut Recorder) -> KafkaResult<()> {
    let mut id = format!("tx ü∆ ../../etc/{} ", c.run);
    while id.chars().count() < 300 {
        id.push('.');
    }
    with_id(c, r, &id)
}

fn timeout_above_max(c: &Ctx, r: &mut Recorder) -> KafkaResult<()> {
    let p = c.producer(900_001)?;
    r.call("initTransactions", || p.init_transactions(WAIT));
    r.call("commit", || c.transaction(&p, "m", 2));
    drop(p);
    c.observe_reads(r);
    Ok(())
}

fn mid_transaction_consumer(c: &Ctx, r: &mut Recorder) -> KafkaResult<()> {
    let p = c.producer(60000)?;
    r.call("initTransactions", || p.init_transactions(WAIT));
    r.call("send in an open transaction", || {
        p.begin_transaction()?;
        c.send(&p, "m", 3)
    });
    let committed = c.reader("read_committed")?;
    let uncommitted = c.reader("read_uncommitted")?;
    r.observe(
        "read_committed before the commit",
        c.drain(&committed).into(),
    );
    r.observe(
        "read_uncommitted before the commit",
        c.drain(&uncommitted).into(),
    );
    r.call("commit", || p.commit_transaction(WAIT));
    r.observe(
        "read_committed after the commit",
        c.drain(&committed).into(),
    );
    Ok(())
}

fn abort_redo(c: &Ctx, r: &mut Recorder) -> KafkaResult<()> {
    let p = c.producer(60000)?;
    r.call("initTransactions", || p.init_transactions(WAIT));
    r.call("abort", || {
        p.begin_transaction()?;
        c.send(&p, "a", 2)?;
        p.abort_transaction(WAIT)
    });
    r.call("redo and commit", || c.transaction(&p, "r", 2));
    drop(p);
    c.observe_reads(r);
    Ok(())
}

fn idempotent(c: &Ctx, r: &mut Recorder) -> KafkaResult<()> {
    let p: ThreadedProducer<DefaultProducerContext> = c
        .config()
        .set("enable.idempotence", "true")
        .set("acks", "all")
        .set("max.in.flight.requests.per.connection", "5")
        .create()?;
    r.call("send 20 records", || {
        for i in 0..20 {
            let v = format!("i{i}");
            p.send(BaseRecord::<(), _>::to(&c.topic).payload(&v).partition(0))
                .map_err(|(e, _)| e)?;
        }
        p.flush(WAIT)
    });
    drop(p);
    c.observe_reads(r);
    Ok(())
}

/// A transaction that sends offsets with `metadata` (none: the client gave none to send).
fn offsets_with(
    c: &Ctx,
    r: &mut Recorder,
    metadata: Option<ConsumerGroupMetadata>,
    group: &str,
) -> KafkaResult<()> {
    let p = c.producer(60000)?;
    r.call("initTransactions", || p.init_transactions(WAIT));
    r.call("send", || {
        p.begin_transaction()?;
        c.send(&p, "g", 1)
    });
    r.call("sendOffsetsToTransaction", || match &metadata {
        Some(m) => p.send_offsets_to_transaction(&c.offsets(1)?, m, WAIT),
        None => Err(KafkaError::Subscription(
            "the consumer gave no group metadata".into(),
        )),
    });
    if !r.call("commitTransaction", || p.commit_transaction(WAIT)) {
        // Clean-up, not compared: abort what the failed commit left open where the client
        // still can, so no transaction holds a provisioned topic's last stable offset.
        let _ = p.abort_transaction(WAIT);
    }
    drop(p);
    c.observe_reads(r);
    if !group.is_empty() {
        c.observe_group_offsets(r, group);
    }
    Ok(())
}

fn empty_group_offsets(c: &Ctx, r: &mut Recorder) -> KafkaResult<()> {
    let mut metadata = None;
    r.call("new consumer of group \"\"", || {
        metadata = c.consumer("", "read_committed")?.group_metadata();
        Ok(())
    });
    offsets_with(c, r, metadata, "")
}

fn group_offsets(c: &Ctx, r: &mut Recorder) -> KafkaResult<()> {
    let metadata = c
        .consumer(&c.names.group, "read_committed")?
        .group_metadata();
    offsets_with(c, r, metadata, &c.names.group)
}

fn stale_generation_offsets(c: &Ctx, r: &mut Recorder) -> KafkaResult<()> {
    let metadata = c.joined_metadata(r, &c.names.group);
    offsets_with(c, r, metadata, &c.names.group)
}

/// Runs `workload` against `bootstrap` with the transactional id and group of `names` (its
/// other names made unique by `run_id`; on `topic` when one is provisioned): what librdkafka
/// saw.
pub fn run(
    workload: &str,
    bootstrap: &str,
    run_id: &str,
    names: &WorkloadNames,
    topic: Option<&str>,
) -> Result<ClientTranscript, RdkafkaError> {
    let mut c = Ctx::new("rdk", bootstrap, run_id, names, topic);
    let mut r = Recorder::default();
    let setup = |reason: KafkaError| RdkafkaError::Setup {
        workload: workload.into(),
        reason: reason.to_string(),
    };
    set_up(&mut c, &mut r).map_err(setup)?;
    let steps: fn(&Ctx, &mut Recorder) -> KafkaResult<()> = match workload {
        "eos" => eos,
        "fencing" => fencing,
        "fenced-send" => fenced_send,
        "abort-redo" => abort_redo,
        "timeout-past" => timeout_past,
        "empty-id" => |c, r| with_id(c, r, ""),
        "unusual-id" => unusual_id,
        "timeout-above-max" => timeout_above_max,
        "mid-transaction-consumer" => mid_transaction_consumer,
        "idempotent" => idempotent,
        "empty-group-offsets" => empty_group_offsets,
        "group-offsets" => group_offsets,
        "stale-generation-offsets" => stale_generation_offsets,
        other => return Err(RdkafkaError::Unknown(other.into())),
    };
    steps(&c, &mut r).map_err(setup)?;
    Ok(ClientTranscript {
        workload: workload.into(),
        client: "librdkafka".into(),
        calls: r.calls,
        observed: r.observed,
    })
}
/// Where `topic`'s `partition` ends, asked until the broker knows the partition or `wait`
/// passes: a topic just created is not in every answer at once. A broker's metadata may lag
/// its CreateTopics answer (NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE,
/// UNKNOWN_TOPIC_OR_PARTITION), and librdkafka's own cache may name the topic before its
/// partitions (its local "Unknown partition" and "Unknown topic"): a loaded Apache 3.7.2 gave
/// the latter for a second, which failed whole client runs before this waited on it too.
pub fn high_watermark_once_known(
    consumer: &BaseConsumer,
    topic: &str,
    partition: i32,
    wait: Duration,
) -> KafkaResult<i64> {
    let end = Instant::now() + wait;
    loop {
        match consumer.fetch_watermarks(topic, partition, wait) {
            Ok((_, high)) => return Ok(high),
            Err(KafkaError::MetadataFetch(code)) if not_yet_known(code) && Instant::now() < end => {
                std::thread::sleep(Duration::from_millis(100))
            }
            Err(e) => return Err(e),
        }
    }
}

/// A code a broker or librdkafka gives for a partition it does not know yet.
fn not_yet_known(code: rdkafka::types::RDKafkaErrorCode) -> bool {
    use rdkafka::types::RDKafkaErrorCode as Code;
    matches!(
        code,
        Code::NotLeaderForPartition
            | Code::LeaderNotAvailable
            | Code::UnknownTopicOrPartition
            | Code::UnknownPartition
            | Code::UnknownTopic
    )
}

/// A workload's topic for a client that only produces (the ecosystem's programs,
/// [`super::programs`]): created through librdkafka unless provisioned, where it ended noted,
/// and read back at both isolation levels once the program is done, so every client's
/// transcript observes the same way.
pub struct Readback {
    ctx: Ctx,
    /// The calls of the set-up (`createTopics`).
    pub calls: Vec<Call>,
}

impl Readback {
    /// Sets up the topic of `run_id` (named `PREFIX-RUN_ID` unless `topic` is provisioned).
    pub fn prepare(
        prefix: &str,
        bootstrap: &str,
        run_id: &str,
        names: &WorkloadNames,
        topic: Option<&str>,
    ) -> Result<Readback, RdkafkaError> {
        let mut ctx = Ctx::new(prefix, bootstrap, run_id, names, topic);
        let mut r = Recorder::default();
        set_up(&mut ctx, &mut r).map_err(|e| RdkafkaError::Setup {
            workload: "(set-up)".into(),
            reason: e.to_string(),
        })?;
        Ok(Readback {
            ctx,
            calls: r.calls,
        })
    }

    /// The topic the program writes to.
    pub fn topic(&self) -> &str {
        &self.ctx.topic
    }

    /// Where the topic ended when it was set up: the workload's records start there.
    pub fn base(&self) -> i64 {
        self.ctx.base
    }

    /// The group's committed offsets, relative to [`Readback::base`], as the admin call that
    /// listed them and the observation.
    pub fn group_offsets(&self, group: &str) -> (Call, serde_json::Value) {
        let mut r = Recorder::default();
        self.ctx.observe_group_offsets(&mut r, group);
        let call = r.calls.pop().unwrap_or_else(|| Call {
            call: "listConsumerGroupOffsets".into(),
            result: "not called".into(),
            message: None,
        });
        let offsets = r.observed.remove("group_offsets").unwrap_or_default();
        (call, offsets)
    }

    /// What read_committed and read_uncommitted readers read of what was written since.
    pub fn observe(&self) -> std::collections::BTreeMap<String, serde_json::Value> {
        let mut r = Recorder::default();
        self.ctx.observe_reads(&mut r);
        r.observed
    }
}
