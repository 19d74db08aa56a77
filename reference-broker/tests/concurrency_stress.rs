//! Many clients at once against one `kaas-ref` process, for a bounded time: transactional
//! consume-transform-produce with sendOffsetsToTransaction, OffsetFetch with and without
//! require_stable, rejoins while a transaction is open, transactions left to the reaper, and
//! consumer groups joining and leaving. Every request must be answered (any error code is
//! fine: contention answers 51, 90, 47 and so on) and a watchdog connection must get its
//! ApiVersions answer within a second throughout.
//!
//! This is the test that reproduced the lock-order deadlock franz-go's suite found (EndTxn's
//! offset hook against OffsetFetch's require_stable check): on that code the broker stopped
//! answering within the first second. `KAAS_STRESS_SECS` runs it longer (default 8 s).

use crate::common;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use reference_broker::storage::batch;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long one request may wait for its answer before the broker counts as hung.
const ANSWER_DEADLINE: Duration = Duration::from_secs(10);
/// How quickly ApiVersions must be answered throughout.
const WATCHDOG_DEADLINE: Duration = Duration::from_secs(1);
const TOPIC_IN: &str = "stress-in";
const TOPIC_OUT: &str = "stress-out";
const PARTITIONS: i32 = 4;

/// What went wrong, shared by every worker.
#[derive(Default)]
struct Findings {
    failures: Mutex<Vec<String>>,
    answered: AtomicU64,
    commits: AtomicU64,
    aborts: AtomicU64,
    unstable: AtomicU64,
    reaped: AtomicU64,
    rejoins: AtomicU64,
    group_generations: AtomicU64,
}

impl Findings {
    fn fail(&self, what: String) {
        let mut f = self.failures.lock().unwrap();
        if f.len() < 20 {
            f.push(what);
        }
    }
}

/// A connection that sends one request at a time, each with a deadline.
struct Conn {
    stream: TcpStream,
    correlation: i32,
    who: String,
}

impl Conn {
    async fn open(addr: SocketAddr, who: &str) -> Conn {
        let stream = tokio::time::timeout(ANSWER_DEADLINE, TcpStream::connect(addr))
            .await
            .unwrap_or_else(|_| panic!("{who}: connect timed out (listen backlog full?)"))
            .unwrap_or_else(|e| panic!("{who}: connect: {e}"));
        stream.set_nodelay(true).unwrap();
        Conn {
            stream,
            correlation: 0,
            who: who.to_owned(),
        }
    }

    async fn call(
        &mut self,
        api: ApiKey,
        version: i16,
        request: RequestKind,
        deadline: Duration,
    ) -> Result<ResponseKind, String> {
        self.correlation += 1;
        let mut frame = BytesMut::new();
        RequestHeader::default()
            .with_request_api_key(api as i16)
            .with_request_api_version(version)
            .with_correlation_id(self.correlation)
            .with_client_id(Some(StrBytes::from_static_str("stress")))
            .encode(&mut frame, api.request_header_version(version))
            .unwrap();
        request.encode(&mut frame, version).unwrap();
        let exchange = async {
            self.stream
                .write_all(&(frame.len() as i32).to_be_bytes())
                .await?;
            self.stream.write_all(&frame).await?;
            let mut size = [0u8; 4];
            self.stream.read_exact(&mut size).await?;
            let mut body = vec![0u8; i32::from_be_bytes(size).max(0) as usize];
            self.stream.read_exact(&mut body).await?;
            std::io::Result::Ok(body)
        };
        let body = match tokio::time::timeout(deadline, exchange).await {
            Err(_) => {
                return Err(format!(
                    "{}: {api:?} v{version} unanswered after {deadline:?}",
                    self.who
                ))
            }
            Ok(Err(e)) => return Err(format!("{}: {api:?} v{version}: {e}", self.who)),
            Ok(Ok(b)) => b,
        };
        let mut buf = Bytes::from(body);
        let header = ResponseHeader::decode(&mut buf, api.response_header_version(version))
            .map_err(|e| format!("{}: {api:?} header: {e}", self.who))?;
        assert_eq!(
            header.correlation_id, self.correlation,
            "{}: correlation",
            self.who
        );
        ResponseKind::decode(api, &mut buf, version)
            .map_err(|e| format!("{}: {api:?} v{version} body: {e}", self.who))
    }
}

/// Sends one request; a missing answer is a finding and ends the worker (`None`).
macro_rules! call {
    ($conn:expr, $findings:expr, $api:ident, $version:expr, $req:expr) => {
        match $conn
            .call(
                ApiKey::$api,
                $version,
                RequestKind::$api($req),
                ANSWER_DEADLINE,
            )
            .await
        {
            Ok(ResponseKind::$api(r)) => {
                $findings.answered.fetch_add(1, Ordering::Relaxed);
                r
            }
            Ok(other) => panic!("{:?} answered {other:?}", ApiKey::$api),
            Err(e) => {
                $findings.fail(e);
                return;
            }
        }
    };
}

fn txn_id(s: &str) -> TransactionalId {
    TransactionalId(StrBytes::from_string(s.to_owned()))
}

fn topic(s: &str) -> TopicName {
    TopicName(StrBytes::from_string(s.to_owned()))
}

fn group(s: &str) -> GroupId {
    GroupId(StrBytes::from_string(s.to_owned()))
}

fn end_txn(id: &str, pid: i64, epoch: i16, commit: bool) -> EndTxnRequest {
    EndTxnRequest::default()
        .with_transactional_id(txn_id(id))
        .with_producer_id(ProducerId(pid))
        .with_producer_epoch(epoch)
        .with_committed(commit)
}

/// A read_committed Fetch of `stress-in`'s partition `p` from offset 0.
fn fetch_committed(p: i32) -> FetchRequest {
    FetchRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_max_wait_ms(0)
        .with_min_bytes(0)
        .with_max_bytes(1 << 16)
        .with_isolation_level(1)
        .with_session_epoch(-1)
        .with_topics(vec![fetch_request::FetchTopic::default()
            .with_topic(topic(TOPIC_IN))
            .with_partitions(vec![fetch_request::FetchPartition::default()
                .with_partition(p)
                .with_fetch_offset(0)
                .with_partition_max_bytes(1 << 14)])])
}

/// AddPartitionsToTxn v3 of `stress-out`'s partition `p`.
fn add_output(id: &str, pid: i64, epoch: i16, p: i32) -> AddPartitionsToTxnRequest {
    AddPartitionsToTxnRequest::default()
        .with_v3_and_below_transactional_id(txn_id(id))
        .with_v3_and_below_producer_id(ProducerId(pid))
        .with_v3_and_below_producer_epoch(epoch)
        .with_v3_and_below_topics(vec![
            add_partitions_to_txn_request::AddPartitionsToTxnTopic::default()
                .with_name(topic(TOPIC_OUT))
                .with_partitions(vec![p]),
        ])
}

/// A transactional Produce (acks=all) of one record to `stress-out`'s partition `p`.
fn produce_output(id: &str, pid: i64, epoch: i16, sequence: i32, p: i32) -> ProduceRequest {
    ProduceRequest::default()
        .with_transactional_id(Some(txn_id(id)))
        .with_acks(-1)
        .with_timeout_ms(10_000)
        .with_topic_data(vec![produce_request::TopicProduceData::default()
            .with_name(topic(TOPIC_OUT))
            .with_partition_data(vec![
                produce_request::PartitionProduceData::default()
                    .with_index(p)
                    .with_records(Some(txn_batch(pid, epoch, sequence, id))),
            ])])
}

/// TxnOffsetCommit v3 of `consumed` for `stress-in`'s partition `p` in group `grp`.
fn commit_input(
    id: &str,
    grp: &str,
    (pid, epoch): (i64, i16),
    p: i32,
    consumed: i64,
) -> TxnOffsetCommitRequest {
    TxnOffsetCommitRequest::default()
        .with_transactional_id(txn_id(id))
        .with_group_id(group(grp))
        .with_producer_id(ProducerId(pid))
        .with_producer_epoch(epoch)
        .with_generation_id(-1)
        .with_topics(vec![
            txn_offset_commit_request::TxnOffsetCommitRequestTopic::default()
                .with_name(topic(TOPIC_IN))
                .with_partitions(vec![
                    txn_offset_commit_request::TxnOffsetCommitRequestPartition::default()
                        .with_partition_index(p)
                        .with_committed_offset(consumed)
                        .with_committed_leader_epoch(-1),
                ]),
        ])
}

fn txn_batch(pid: i64, epoch: i16, sequence: i32, value: &str) -> Bytes {
    let rec = batch::record(0, 0, None, Some(value.as_bytes()));
    Bytes::from(batch::build(
        batch::ATTR_TRANSACTIONAL,
        0,
        0,
        0,
        pid,
        epoch,
        sequence,
        &[rec],
    ))
}

/// Small deterministic randomness per worker (no extra dependency).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One transactional producer doing consume-transform-produce until `stop`: read from
/// `stress-in`, write to `stress-out`, commit the consumed offset in the transaction. Some
/// rounds abort, some rejoin while the transaction is open, and `reaped` workers leave a
/// transaction past its 300 ms timeout for the reaper.
async fn producer(
    addr: SocketAddr,
    n: usize,
    reaped: bool,
    stop: Arc<AtomicBool>,
    f: Arc<Findings>,
) {
    let id = format!("stress-txn-{n}");
    let grp = format!("stress-group-{}", n % 3);
    let mut conn = Conn::open(addr, &id).await;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (n as u64 + 1));
    let timeout_ms = if reaped { 300 } else { 60_000 };
    let mut ids: Option<(i64, i16)> = None;
    let mut sequence = 0;
    while !stop.load(Ordering::Relaxed) {
        let (pid, epoch) = match ids {
            Some(x) => x,
            None => {
                let r = call!(
                    conn,
                    f,
                    InitProducerId,
                    4,
                    InitProducerIdRequest::default()
                        .with_transactional_id(Some(txn_id(&id)))
                        .with_transaction_timeout_ms(timeout_ms)
                        .with_producer_id(ProducerId(-1))
                        .with_producer_epoch(-1)
                );
                if r.error_code != 0 {
                    continue;
                }
                sequence = 0;
                ids = Some((r.producer_id.0, r.producer_epoch));
                (r.producer_id.0, r.producer_epoch)
            }
        };
        let p = rng.below(PARTITIONS as u64) as i32;
        // Consume.
        let fetched = call!(conn, f, Fetch, 11, fetch_committed(p));
        let consumed = fetched
            .responses
            .first()
            .and_then(|t| t.partitions.first())
            .map_or(0, |d| d.last_stable_offset.max(0));
        // Transform and produce.
        let r = call!(
            conn,
            f,
            AddPartitionsToTxn,
            3,
            add_output(&id, pid, epoch, p)
        );
        let added = r.results_by_topic_v3_and_below.iter().all(|t| {
            t.results_by_partition
                .iter()
                .all(|x| x.partition_error_code == 0)
        });
        if !added {
            ids = None; // fenced or reaped: rejoin
            continue;
        }
        call!(
            conn,
            f,
            Produce,
            9,
            produce_output(&id, pid, epoch, sequence, p)
        );
        sequence += 1;
        // sendOffsetsToTransaction.
        let r = call!(
            conn,
            f,
            AddOffsetsToTxn,
            3,
            AddOffsetsToTxnRequest::default()
                .with_transactional_id(txn_id(&id))
                .with_producer_id(ProducerId(pid))
                .with_producer_epoch(epoch)
                .with_group_id(group(&grp))
        );
        if r.error_code != 0 {
            ids = None;
            continue;
        }
        call!(
            conn,
            f,
            TxnOffsetCommit,
            3,
            commit_input(&id, &grp, (pid, epoch), p, consumed)
        );
        match rng.below(10) {
            // Rejoin while Ongoing (kaas: no abort; the old epoch is fenced).
            0 => {
                f.rejoins.fetch_add(1, Ordering::Relaxed);
                ids = None;
                continue;
            }
            // Leave it to the reaper: past the 300 ms timeout it aborts with an epoch bump,
            // so this producer's EndTxn is fenced.
            1 | 2 if reaped => {
                tokio::time::sleep(Duration::from_millis(700)).await;
                let r = call!(conn, f, EndTxn, 3, end_txn(&id, pid, epoch, true));
                if r.error_code == 90 {
                    f.reaped.fetch_add(1, Ordering::Relaxed);
                } else {
                    f.fail(format!(
                        "{id}: EndTxn after the reaper's abort answered {}",
                        r.error_code
                    ));
                }
                ids = None;
                continue;
            }
            _ => {}
        }
        let commit = rng.below(4) != 0;
        let r = call!(conn, f, EndTxn, 3, end_txn(&id, pid, epoch, commit));
        match (r.error_code, commit) {
            (0, true) => f.commits.fetch_add(1, Ordering::Relaxed),
            (0, false) => f.aborts.fetch_add(1, Ordering::Relaxed),
            _ => {
                ids = None;
                0
            }
        };
    }
}

/// Reads the groups' offsets over and over, with and without require_stable (v7 and v8+).
async fn offset_reader(addr: SocketAddr, n: usize, stop: Arc<AtomicBool>, f: Arc<Findings>) {
    let mut conn = Conn::open(addr, &format!("offset-reader-{n}")).await;
    let mut round = 0u64;
    while !stop.load(Ordering::Relaxed) {
        round += 1;
        let grp = format!("stress-group-{}", round % 3);
        let require_stable = round % 2 == 0;
        let topics = vec![offset_fetch_request::OffsetFetchRequestTopic::default()
            .with_name(topic(TOPIC_IN))
            .with_partition_indexes((0..PARTITIONS).collect())];
        let codes: Vec<i16> = if round % 4 < 2 {
            let r = call!(
                conn,
                f,
                OffsetFetch,
                7,
                OffsetFetchRequest::default()
                    .with_group_id(group(&grp))
                    .with_topics(Some(topics))
                    .with_require_stable(require_stable)
            );
            r.topics
                .iter()
                .flat_map(|t| t.partitions.iter().map(|p| p.error_code))
                .collect()
        } else {
            let r = call!(
                conn,
                f,
                OffsetFetch,
                8,
                OffsetFetchRequest::default()
                    .with_groups(vec![
                        offset_fetch_request::OffsetFetchRequestGroup::default()
                            .with_group_id(group(&grp))
                            .with_topics(Some(vec![
                                offset_fetch_request::OffsetFetchRequestTopics::default()
                                    .with_name(topic(TOPIC_IN))
                                    .with_partition_indexes((0..PARTITIONS).collect())
                            ]))
                    ])
                    .with_require_stable(require_stable)
            );
            r.groups
                .iter()
                .flat_map(|g| {
                    g.topics
                        .iter()
                        .flat_map(|t| t.partitions.iter().map(|p| p.error_code))
                })
                .collect()
        };
        if codes.contains(&88) {
            f.unstable.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Consumers of one group joining, syncing, committing and leaving, so rebalances run
/// alongside the transactions.
async fn group_member(addr: SocketAddr, n: usize, stop: Arc<AtomicBool>, f: Arc<Findings>) {
    let mut conn = Conn::open(addr, &format!("member-{n}")).await;
    let grp = "stress-consumers";
    while !stop.load(Ordering::Relaxed) {
        let join = |member: &str| {
            JoinGroupRequest::default()
                .with_group_id(group(grp))
                .with_session_timeout_ms(6000)
                .with_rebalance_timeout_ms(2000)
                .with_member_id(StrBytes::from_string(member.to_owned()))
                .with_protocol_type(StrBytes::from_static_str("consumer"))
                .with_protocols(vec![join_group_request::JoinGroupRequestProtocol::default(
                )
                .with_name(StrBytes::from_static_str("range"))
                .with_metadata(Bytes::from_static(&[0, 1, 0, 0, 0, 0]))])
        };
        let mut r = call!(conn, f, JoinGroup, 7, join(""));
        if r.error_code == 79 {
            let member = r.member_id.to_string();
            r = call!(conn, f, JoinGroup, 7, join(&member));
        }
        if r.error_code != 0 {
            continue;
        }
        f.group_generations.fetch_add(1, Ordering::Relaxed);
        let member = r.member_id.clone();
        let assignments = match r.leader == member {
            true => r
                .members
                .iter()
                .map(|m| {
                    sync_group_request::SyncGroupRequestAssignment::default()
                        .with_member_id(m.member_id.clone())
                        .with_assignment(Bytes::new())
                })
                .collect(),
            false => Vec::new(),
        };
        call!(
            conn,
            f,
            SyncGroup,
            5,
            SyncGroupRequest::default()
                .with_group_id(group(grp))
                .with_generation_id(r.generation_id)
                .with_member_id(member.clone())
                .with_protocol_type(Some(StrBytes::from_static_str("consumer")))
                .with_protocol_name(Some(StrBytes::from_static_str("range")))
                .with_assignments(assignments)
        );
        call!(
            conn,
            f,
            OffsetCommit,
            8,
            OffsetCommitRequest::default()
                .with_group_id(group(grp))
                .with_generation_id_or_member_epoch(r.generation_id)
                .with_member_id(member.clone())
                .with_topics(vec![
                    offset_commit_request::OffsetCommitRequestTopic::default()
                        .with_name(topic(TOPIC_IN))
                        .with_partitions(vec![
                            offset_commit_request::OffsetCommitRequestPartition::default()
                                .with_partition_index(n as i32 % PARTITIONS)
                                .with_committed_offset(1)
                        ])
                ])
        );
        call!(
            conn,
            f,
            LeaveGroup,
            4,
            LeaveGroupRequest::default()
                .with_group_id(group(grp))
                .with_members(vec![
                    leave_group_request::MemberIdentity::default().with_member_id(member)
                ])
        );
    }
}

/// ApiVersions every 50 ms on its own connection; each must come back within a second.
async fn watchdog(addr: SocketAddr, stop: Arc<AtomicBool>, f: Arc<Findings>) -> Vec<Duration> {
    let mut conn = Conn::open(addr, "watchdog").await;
    let mut latencies = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let started = Instant::now();
        match conn
            .call(
                ApiKey::ApiVersions,
                3,
                RequestKind::ApiVersions(
                    ApiVersionsRequest::default()
                        .with_client_software_name(StrBytes::from_static_str("stress"))
                        .with_client_software_version(StrBytes::from_static_str("1")),
                ),
                WATCHDOG_DEADLINE,
            )
            .await
        {
            Ok(_) => latencies.push(started.elapsed()),
            Err(e) => {
                f.fail(format!(
                    "{e} (the broker must answer ApiVersions within a second throughout)"
                ));
                return latencies;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    latencies
}

async fn setup(addr: SocketAddr) {
    let f = Findings::default();
    let mut conn = Conn::open(addr, "setup").await;
    let r = match conn
        .call(
            ApiKey::CreateTopics,
            4,
            RequestKind::CreateTopics(
                CreateTopicsRequest::default()
                    .with_timeout_ms(10_000)
                    .with_topics(
                        [TOPIC_IN, TOPIC_OUT]
                            .iter()
                            .map(|t| {
                                create_topics_request::CreatableTopic::default()
                                    .with_name(topic(t))
                                    .with_num_partitions(PARTITIONS)
                                    .with_replication_factor(1)
                            })
                            .collect(),
                    ),
            ),
            ANSWER_DEADLINE,
        )
        .await
    {
        Ok(ResponseKind::CreateTopics(r)) => r,
        other => panic!("CreateTopics: {other:?}"),
    };
    assert!(r.topics.iter().all(|t| t.error_code == 0), "{r:?}");
    // Committed input for the consumers to read.
    for p in 0..PARTITIONS {
        let rec = batch::record(0, 0, None, Some(b"input"));
        let records = Bytes::from(batch::build(0, 0, 0, 0, -1, -1, -1, &[rec]));
        let r = conn
            .call(
                ApiKey::Produce,
                9,
                RequestKind::Produce(
                    ProduceRequest::default()
                        .with_acks(-1)
                        .with_timeout_ms(10_000)
                        .with_topic_data(vec![produce_request::TopicProduceData::default()
                            .with_name(topic(TOPIC_IN))
                            .with_partition_data(vec![
                                produce_request::PartitionProduceData::default()
                                    .with_index(p)
                                    .with_records(Some(records)),
                            ])]),
                ),
                ANSWER_DEADLINE,
            )
            .await;
        assert!(r.is_ok(), "{r:?}");
    }
    assert!(f.failures.lock().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_request_is_answered_under_concurrent_transactions_offsets_and_groups() {
    let secs: u64 = std::env::var("KAAS_STRESS_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8);
    let dir = tempfile::tempdir().unwrap();
    let broker = common::KaasRef::start(
        dir.path(),
        "127.0.0.1:0",
        &["--txn-reaper-interval-ms", "100"],
    );
    let addr: SocketAddr = broker.addr.parse().unwrap();
    setup(addr).await;

    let stop = Arc::new(AtomicBool::new(false));
    let f = Arc::new(Findings::default());
    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..12 {
        tasks.spawn(producer(addr, n, n % 4 == 3, stop.clone(), f.clone()));
    }
    for n in 0..6 {
        tasks.spawn(offset_reader(addr, n, stop.clone(), f.clone()));
    }
    for n in 0..3 {
        tasks.spawn(group_member(addr, n, stop.clone(), f.clone()));
    }
    let dog = tokio::spawn(watchdog(addr, stop.clone(), f.clone()));
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(secs) && f.failures.lock().unwrap().is_empty() {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    stop.store(true, Ordering::Relaxed);
    // Every worker ends within one answer deadline: its request in flight is answered or it
    // records the missing answer.
    let drained = tokio::time::timeout(ANSWER_DEADLINE + Duration::from_secs(5), async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    let mut latencies = dog.await.unwrap();
    latencies.sort();
    let elapsed = started.elapsed().as_secs_f64();
    let answered = f.answered.load(Ordering::Relaxed);
    let pct = |q: f64| {
        latencies
            .get(((latencies.len() as f64 - 1.0) * q) as usize)
            .copied()
            .unwrap_or_default()
    };
    println!(
        "stress: {answered} requests answered in {elapsed:.1} s ({:.0}/s); {} commits, {} aborts, \
         {} rejoins while ongoing, {} aborted by the reaper, {} OffsetFetch answers with 88, \
         {} group generations; ApiVersions p50 {:?} p99 {:?} max {:?} over {} probes",
        answered as f64 / elapsed,
        f.commits.load(Ordering::Relaxed),
        f.aborts.load(Ordering::Relaxed),
        f.rejoins.load(Ordering::Relaxed),
        f.reaped.load(Ordering::Relaxed),
        f.unstable.load(Ordering::Relaxed),
        f.group_generations.load(Ordering::Relaxed),
        pct(0.5),
        pct(0.99),
        latencies.last().copied().unwrap_or_default(),
        latencies.len(),
    );
    let failures = f.failures.lock().unwrap().clone();
    assert!(
        failures.is_empty(),
        "the broker stopped answering:\n{}",
        failures.join("\n")
    );
    assert!(
        drained.is_ok(),
        "workers still waiting for answers after the run"
    );
    // The workload must have done what it claims, or the test proves nothing.
    for (count, what) in [
        (&f.commits, "no transaction committed"),
        (&f.aborts, "no transaction aborted"),
        (&f.reaped, "the reaper aborted nothing"),
        (&f.unstable, "require_stable never met a staged offset"),
        (&f.group_generations, "no group generation completed"),
    ] {
        assert!(count.load(Ordering::Relaxed) > 0, "{what}");
    }
    assert!(latencies.len() >= 10, "too few watchdog probes");
    assert!(latencies.last().unwrap() < &WATCHDOG_DEADLINE);
}
