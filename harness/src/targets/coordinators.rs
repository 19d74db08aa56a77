//! An Apache broker the harness has just launched names coordinators before it can act as one.
//! FindCoordinator answers as soon as the broker's metadata lists a leader for the partition of
//! `__transaction_state` (or `__consumer_offsets`) that a key hashes to; the leader then answers
//! NOT_COORDINATOR until it has taken the partition on, and COORDINATOR_LOAD_IN_PROGRESS until
//! it has loaded it. A scenario that meets that moment records the broker's start, not its
//! behaviour (CI once saw AddOffsetsToTxn of an unknown id answered 16, not 49, on every
//! version). So before its first scenario, a launched Apache creates both state topics and
//! every partition's coordinator answers a probe that changes nothing.
//!
//! kaas-ref keeps its coordinators in slot files and has no such moment; a broker the harness
//! did not launch is not probed (it has run before, and a broken one must not stall the start).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use kafka_protocol::messages::ApiKey;

use super::{Running, TargetError};
use crate::wire::client::{Body, Connection};
use crate::wire::error_codes;

/// How long a launched Apache may take to load both kinds of coordinator (a JVM on a busy CI
/// machine loads fifty empty partitions in a second or two).
pub const LOAD_DEADLINE: Duration = Duration::from_secs(60);

/// The pause between two probes of a coordinator that is not ready.
const PAUSE: Duration = Duration::from_millis(100);

/// The codes that say a coordinator is not ready yet: COORDINATOR_LOAD_IN_PROGRESS,
/// COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR. Any other answer is the coordinator's own.
fn not_ready(code: i16) -> bool {
    matches!(code, 14..=16)
}

/// One kind of coordinator: the FindCoordinator key type that names it, the topic whose
/// partitions it owns, and the request that asks it something without changing anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The transaction coordinator: asked AddOffsetsToTxn of a transactional id never
    /// initialised (INVALID_PRODUCER_ID_MAPPING once loaded; no state is added).
    Transaction,
    /// The group coordinator: asked OffsetFetch of a group that never committed.
    Group,
}

impl Kind {
    fn key_type(self) -> i8 {
        match self {
            Kind::Transaction => 1,
            Kind::Group => 0,
        }
    }

    fn topic(self) -> &'static str {
        match self {
            Kind::Transaction => "__transaction_state",
            Kind::Group => "__consumer_offsets",
        }
    }

    /// The probe of key `key`: its API, the versions it may go as, and its fields.
    fn probe(self, key: &str) -> (ApiKey, i16, i16, String) {
        match self {
            Kind::Transaction => (
                ApiKey::AddOffsetsToTxn,
                0,
                3,
                format!("transactional_id = {key:?}\nproducer_id = 0\nproducer_epoch = 0\ngroup_id = {key:?}"),
            ),
            Kind::Group => (
                ApiKey::OffsetFetch,
                2,
                7,
                format!("group_id = {key:?}\ntopics = [{{ name = {key:?}, partition_indexes = [0] }}]"),
            ),
        }
    }
}

/// `String.hashCode()` as Java computes it (UTF-16 code units, wrapping): Apache places a
/// transactional id or group on partition `abs(hashCode) % partitions`.
fn java_hash(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(i32::from(unit))
    })
}

/// The partition of `partitions` that Apache gives `key` (Kafka's `Utils.abs` maps
/// `i32::MIN` to 0).
fn partition_of(key: &str, partitions: i32) -> i32 {
    let hash = java_hash(key);
    let abs = if hash == i32::MIN { 0 } else { hash.abs() };
    abs % partitions.max(1)
}

/// A key that lands on `partition` of `partitions`: the first `kconform-probe-N` that does.
fn key_for(partition: i32, partitions: i32) -> String {
    (0u32..)
        .map(|n| format!("kconform-probe-{n}"))
        .find(|key| partition_of(key, partitions) == partition)
        .expect("some key lands on every partition")
}

/// Connections to the brokers probed, one per address, logged in where the target wants it.
struct Brokers {
    secured: bool,
    open: HashMap<SocketAddr, Connection>,
}

impl Brokers {
    async fn at(&mut self, addr: SocketAddr) -> Result<&mut Connection, String> {
        if !self.open.contains_key(&addr) {
            let conn = super::brokers::connect(addr, PAUSE * 50, self.secured).await?;
            self.open.insert(addr, conn);
        }
        Ok(self.open.get_mut(&addr).expect("inserted above"))
    }

    /// Sends `fields` as `api` v`version` to `addr` and reads the answer as JSON; a failed
    /// exchange drops the connection, to be opened again on the next call.
    async fn ask(
        &mut self,
        addr: SocketAddr,
        api: ApiKey,
        version: i16,
        fields: &str,
    ) -> Result<serde_json::Value, String> {
        let table: toml::Table = toml::from_str(fields).map_err(|e| e.to_string())?;
        let request =
            crate::api::request::build(api, version, &table).map_err(|e| e.to_string())?;
        let conn = self.at(addr).await?;
        match conn.exchange(api, version, Body::Typed(&request)).await {
            Ok(answer) => Ok(crate::api::response::tree(&answer, api, version)),
            Err(e) => {
                self.open.remove(&addr);
                Err(format!(
                    "{} v{version} got {e}",
                    error_codes::api_name(api as i16)
                ))
            }
        }
    }
}

fn code_at(value: &serde_json::Value, path: &str) -> i16 {
    crate::api::response::at(value, path)
        .and_then(serde_json::Value::as_i64)
        .unwrap_or(0) as i16
}

impl Running {
    /// Waits (within `deadline`) until every partition's transaction and group coordinator of
    /// this freshly launched Apache answers as a coordinator: see the module's documentation.
    pub(crate) async fn await_coordinators(&self, deadline: Duration) -> Result<(), TargetError> {
        let started = Instant::now();
        let (conn, served) = self.versions(deadline).await?;
        let mut brokers = Brokers {
            secured: self.secured,
            open: HashMap::from([(self.addr, conn)]),
        };
        let failed = |reason: String| TargetError::Start {
            target: self.name.clone(),
            reason,
        };
        for kind in [Kind::Transaction, Kind::Group] {
            let loaded = self
                .await_kind(kind, &served, &mut brokers, started + deadline)
                .await
                .map_err(|why| {
                    failed(format!(
                        "it serves, but its {} coordinators are not ready after {deadline:?}: {why}",
                        kind.topic()
                    ))
                })?;
            tracing::debug!(target = %self.name, topic = kind.topic(), partitions = loaded, waited = ?started.elapsed(), "coordinators ready");
        }
        Ok(())
    }

    /// The address of the broker that coordinates `key`, a transactional id (`transaction`) or
    /// a group, as FindCoordinator names it within `deadline`: so a workload can place its
    /// names with their coordinators on one broker or on two.
    pub async fn coordinator_of(
        &self,
        key: &str,
        transaction: bool,
        deadline: Duration,
    ) -> Result<SocketAddr, TargetError> {
        let until = Instant::now() + deadline;
        let (conn, served) = self.versions(deadline).await?;
        let mut brokers = Brokers {
            secured: self.secured,
            open: HashMap::from([(self.addr, conn)]),
        };
        let unreachable = |reason: String| TargetError::Unreachable {
            target: self.name.clone(),
            addr: self.addr,
            reason,
        };
        let version = Running::version_to_send(&served, ApiKey::FindCoordinator, 1, 3)
            .map_err(unreachable)?;
        let kind = match transaction {
            true => Kind::Transaction,
            false => Kind::Group,
        };
        self.find(kind, key, version, &mut brokers, until)
            .await
            .map_err(|e| TargetError::Unreachable {
                target: self.name.clone(),
                addr: self.addr,
                reason: format!("no coordinator named for {key}: {e}"),
            })
    }

    /// Creates `kind`'s topic (a FindCoordinator does) and probes each of its partitions'
    /// coordinators until it answers; the partitions probed.
    async fn await_kind(
        &self,
        kind: Kind,
        served: &[(i16, i16, i16)],
        brokers: &mut Brokers,
        until: Instant,
    ) -> Result<usize, String> {
        let find_version = Running::version_to_send(served, ApiKey::FindCoordinator, 1, 3)?;
        let (api, lowest, highest, _) = kind.probe("");
        let probe_version = Running::version_to_send(served, api, lowest, highest)?;
        // The first FindCoordinator has the topic created; it answers once its leaders are set.
        self.find(kind, "kconform-probe", find_version, brokers, until)
            .await?;
        let partitions = super::brokers::partition_count(
            self.addr,
            until.saturating_duration_since(Instant::now()),
            self.secured,
            kind.topic(),
        )
        .await?;
        for partition in 0..partitions {
            let key = key_for(partition, partitions);
            let (api, _, _, fields) = kind.probe(&key);
            let mut last;
            loop {
                let coordinator = self.find(kind, &key, find_version, brokers, until).await?;
                last = match brokers.ask(coordinator, api, probe_version, &fields).await {
                    Ok(answer) => match code_at(&answer, "error_code") {
                        code if not_ready(code) => {
                            tracing::debug!(target = %self.name, topic = kind.topic(), partition, "not ready: {}", error_codes::label(code));
                            error_codes::label(code)
                        }
                        _ => break,
                    },
                    Err(e) => e,
                };
                if Instant::now() >= until {
                    return Err(format!("partition {partition} answers {last}"));
                }
                tokio::time::sleep(PAUSE).await;
            }
        }
        Ok(partitions as usize)
    }

    /// The address of `key`'s coordinator, asked until FindCoordinator names one.
    async fn find(
        &self,
        kind: Kind,
        key: &str,
        version: i16,
        brokers: &mut Brokers,
        until: Instant,
    ) -> Result<SocketAddr, String> {
        let fields = format!("key = {key:?}\nkey_type = {}", kind.key_type());
        loop {
            let last = match brokers
                .ask(self.addr, ApiKey::FindCoordinator, version, &fields)
                .await
            {
                Ok(answer) => match code_at(&answer, "error_code") {
                    0 => {
                        let host = crate::api::response::at(&answer, "host")
                            .and_then(serde_json::Value::as_str)
                            .unwrap_or_default();
                        let port = code_at(&answer, "port") as u16;
                        return super::brokers::resolve(host, port, PAUSE * 50)
                            .await
                            .map_err(|e| format!("the coordinator at {e}"));
                    }
                    code => format!("FindCoordinator answered {}", error_codes::label(code)),
                },
                Err(e) => e,
            };
            if Instant::now() >= until {
                return Err(last);
            }
            tokio::time::sleep(PAUSE).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_hash_as_java_hashes_them() {
        // Values Java's String.hashCode() gives.
        assert_eq!(java_hash(""), 0);
        assert_eq!(java_hash("a"), 97);
        assert_eq!(java_hash("hello"), 99_162_322);
        assert_eq!(java_hash("Aa"), java_hash("BB"));
        // Wraps past i32::MAX as Java does: "polygenelubricants".hashCode() == i32::MIN.
        assert_eq!(java_hash("polygenelubricants"), i32::MIN);
        assert_eq!(partition_of("polygenelubricants", 50), 0);
        assert_eq!(partition_of("hello", 50), 99_162_322 % 50);
    }

    #[test]
    fn a_key_is_found_for_every_partition() {
        for partitions in [1, 3, 50] {
            for p in 0..partitions {
                assert_eq!(partition_of(&key_for(p, partitions), partitions), p);
            }
        }
    }

    #[test]
    fn only_the_coordinator_moments_of_a_start_are_waited_out() {
        assert!([14, 15, 16].into_iter().all(not_ready));
        // INVALID_PRODUCER_ID_MAPPING, NONE, an authorization failure: the coordinator's answer.
        assert!([49, 0, 53, 30].into_iter().all(|c| !not_ready(c)));
    }

    #[test]
    fn each_probe_builds_at_every_version_it_may_go_as() {
        for kind in [Kind::Transaction, Kind::Group] {
            let (api, lowest, highest, fields) = kind.probe("kconform-probe-1");
            let table: toml::Table = toml::from_str(&fields).unwrap();
            for version in lowest..=highest {
                crate::api::request::build(api, version, &table)
                    .unwrap_or_else(|e| panic!("{kind:?} v{version}: {e}"));
            }
        }
    }
}
