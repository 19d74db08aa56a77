//! The read-back of a stopped transactional scenario: every partition its transactions wrote,
//! fetched read_uncommitted from where the scenario began (records with their producer, and
//! the COMMIT and ABORT markers), its leader and each transaction's coordinator asked, and per
//! transaction the verdict ([`judge`]): committed and visible, committed and **lost**, aborted
//! and **visible**, or open. A stop on an LSO that does not come ("LSO 4, expected 6") is then
//! said for what it is: which transaction lost what, where, and which brokers were involved.

pub mod judge;

use std::collections::BTreeMap;
use std::net::SocketAddr;

use bytes::Bytes;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::{
    ApiKey, BrokerId, FetchRequest, RequestKind, ResponseKind, TopicName,
};
use kafka_protocol::records::RecordBatchDecoder;

use super::Run;
use crate::wire::record_batch::control_type;
use judge::{Entry, Place, Placement};

/// The Fetch version the read-back asks: one Apache 3.7 and kaas-ref serve that names topics
/// by name and has the isolation level.
const FETCH_VERSION: i16 = 11;
/// The most a read-back fetches of one partition in one request.
const PARTITION_BYTES: i32 = 1 << 20;
/// The most fetches of one partition: a scenario writes a handful of batches.
const MAX_FETCHES: usize = 64;

/// A key or value as text, as the scenario wrote it.
fn as_text(bytes: &Option<Bytes>) -> Option<String> {
    bytes
        .as_ref()
        .map(|b| String::from_utf8_lossy(b).into_owned())
}

/// The entries of one Fetch answer's record batches: data records and markers.
fn entries(records: Option<Bytes>) -> Result<(Vec<Entry>, Option<i64>), String> {
    let Some(bytes) = records else {
        return Ok((Vec::new(), None));
    };
    // A batch cut short at the end is no batch, as Apache's consumer reads it.
    let whole = crate::wire::record_batch::whole_batches(&bytes)
        .map_err(|e| format!("its records do not decode: {e}"))?;
    let mut bytes = bytes.slice(..whole);
    let sets = RecordBatchDecoder::decode_all(&mut bytes)
        .map_err(|e| format!("its records do not decode: {e}"))?;
    let mut out = Vec::new();
    let mut last = None;
    for set in sets {
        for r in set.records {
            last = Some(r.offset);
            match r.control {
                true => out.push(Entry::Marker {
                    producer_id: r.producer_id,
                    commit: control_type(r.key.as_deref().unwrap_or_default()) == Some(1),
                }),
                false => out.push(Entry::Data {
                    producer_id: r.producer_id,
                    transactional: r.transactional,
                    key: as_text(&r.key),
                    value: as_text(&r.value),
                }),
            }
        }
    }
    Ok((out, last))
}

/// One Fetch's answer. A framing defect the scenario's steps read past (a response header of
/// the other version: real kaas frames Fetch v11 with header v1) is read past here too, so
/// that what the transactions left is still judged: the defect is the steps' finding already.
async fn fetch(
    conn: &mut crate::wire::client::Connection,
    request: &RequestKind,
) -> Result<ResponseKind, String> {
    use crate::wire::client::{Body, ClientError};
    let got = |e: &dyn std::fmt::Display| format!("Fetch v{FETCH_VERSION} got {e}");
    let decoded = match conn
        .exchange(ApiKey::Fetch, FETCH_VERSION, Body::Typed(request))
        .await
    {
        Ok(decoded) => decoded,
        Err(ClientError::Malformed(m)) => {
            match crate::wire::frame::read_past(ApiKey::Fetch, FETCH_VERSION, &m) {
                Some((decoded, _)) => decoded,
                None => return Err(got(&ClientError::Malformed(m))),
            }
        }
        Err(e) => return Err(got(&e)),
    };
    decoded
        .response
        .ok_or_else(|| got(&"an answer it could not decode"))
}

/// Every entry of `topic`-`partition` from `from` to its high watermark, fetched from the broker
/// at `addr`.
async fn fetch_log(
    addr: SocketAddr,
    secured: bool,
    deadline: std::time::Duration,
    (topic, partition): (&str, i32),
    from: i64,
) -> Result<Vec<Entry>, String> {
    let mut conn = crate::targets::brokers::connect(addr, deadline, secured).await?;
    let mut offset = from;
    let mut log = Vec::new();
    for _ in 0..MAX_FETCHES {
        let request = FetchRequest::default()
            .with_replica_id(BrokerId(-1))
            .with_max_wait_ms(0)
            .with_min_bytes(1)
            .with_max_bytes(PARTITION_BYTES)
            .with_isolation_level(0)
            .with_session_epoch(-1)
            .with_topics(vec![FetchTopic::default()
                .with_topic(TopicName(topic.to_owned().into()))
                .with_partitions(vec![FetchPartition::default()
                    .with_partition(partition)
                    .with_fetch_offset(offset)
                    .with_partition_max_bytes(PARTITION_BYTES)])]);
        let answer = fetch(&mut conn, &RequestKind::Fetch(request)).await?;
        let ResponseKind::Fetch(answer) = answer else {
            return Err(format!("Fetch v{FETCH_VERSION} got another API's answer"));
        };
        let Some(p) = answer
            .responses
            .into_iter()
            .next()
            .and_then(|t| t.partitions.into_iter().next())
        else {
            return Err("the Fetch answer has no partition".into());
        };
        if p.error_code != 0 {
            return Err(format!(
                "Fetch answered {}",
                crate::wire::error_codes::label(p.error_code)
            ));
        }
        let (entries, last) = entries(p.records)?;
        log.extend(entries);
        match last {
            Some(last) if last + 1 < p.high_watermark => offset = last + 1,
            _ => return Ok(log),
        }
    }
    Err(format!("more than {MAX_FETCHES} fetches"))
}

impl Run<'_> {
    /// The value a scenario's name stands for (`${topic}` → this run's topic), as a request's
    /// fields substitute it; the text where it stands for nothing.
    fn actual(&self, named: &str) -> String {
        let value = toml::Value::String(named.to_owned());
        match crate::api::request::substitute(&value, &self.vars) {
            Ok(toml::Value::String(s)) => s,
            Ok(other) => other.to_string(),
            Err(_) => named.to_owned(),
        }
    }

    /// Where a stopped scenario's transactions wrote: each read back and judged, into the
    /// transcript, and each that breaks exactly-once or stays open among its failed
    /// expectations. Nothing where no transactional record was written; a partition that
    /// cannot be read is said so.
    pub(super) async fn read_back(&mut self) {
        let txns = judge::transactions(&self.log.records);
        let mut places: Vec<Place> = txns.iter().flat_map(|t| t.writes.keys().cloned()).collect();
        places.sort();
        places.dedup();
        if places.is_empty() {
            return;
        }
        let (deadline, secured) = (self.deadline, self.target.secured);
        let mut placement = Placement::default();
        let mut logs = BTreeMap::new();
        let clustered = self.target.brokers > 1 && self.nodes().await.is_ok();
        // Each topic's leaders, asked once.
        let mut leaders: BTreeMap<String, BTreeMap<i32, i32>> = BTreeMap::new();
        for place in &places {
            let topic = self.actual(&place.0);
            if !leaders.contains_key(&topic) {
                let asked =
                    crate::targets::brokers::leaders(self.target.addr, deadline, secured, &topic)
                        .await
                        .unwrap_or_default();
                leaders.insert(topic.clone(), asked);
            }
            let leader = leaders[&topic].get(&place.1).copied();
            if let Some(l) = leader {
                placement.leaders.insert(place.clone(), l);
            }
            let addr = match (clustered, leader) {
                (true, Some(l)) => self.cluster.addr(l).unwrap_or(self.target.addr),
                _ => self.target.addr,
            };
            let from = self.provisioned.base_of(&topic, place.1);
            match fetch_log(addr, secured, deadline, (&topic, place.1), from).await {
                Ok(log) => {
                    logs.insert(place.clone(), judge::decide(&log));
                }
                Err(e) => {
                    self.log.failed.push(format!(
                        "read back: {}-{} could not be read: {e}",
                        place.0, place.1
                    ));
                    return;
                }
            }
        }
        for t in &txns {
            if placement.coordinators.contains_key(&t.transactional_id) {
                continue;
            }
            let id = self.actual(&t.transactional_id);
            let Ok(addr) = self.target.coordinator_of(&id, true, deadline).await else {
                continue;
            };
            let node = match clustered {
                true => self.cluster.node_at(addr),
                false => None,
            };
            if let Some(node) = node {
                placement
                    .coordinators
                    .insert(t.transactional_id.clone(), node);
            }
        }
        let read = judge::judge(&txns, &logs, &placement);
        for t in read.iter().filter(|t| {
            t.verdict.breaks_exactly_once() || t.verdict == crate::transcript::ReadVerdict::Open
        }) {
            self.log.failed.push(format!("read back: {}", t.words));
        }
        self.log.readback = read;
    }
}
