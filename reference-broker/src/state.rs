//! The state every request handler shares, opened from a data directory: topics and their
//! logs, offsets, producer ids, the group and transaction coordinators, the authorizer. It is
//! the one place that knows all of them; the coordinators see only the narrow interfaces they
//! need (`txn::Host`).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::Notify;

use crate::auth::{AllowAll, Authorizer};
use crate::config::BrokerConfig;
use crate::errors;
use crate::groups::GroupCoordinator;
use crate::lock_order::{Level, OrderedMutex, OrderedRwLock};
use crate::storage::atomic::read_if_present;
use crate::storage::offsets::OffsetStore;
use crate::storage::pid::PidAllocator;
use crate::storage::topics::TopicRegistry;
use crate::storage::{cluster_dir, partition::PartitionLog};

/// Why a broker could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The data directory could not be created or read.
    #[error("data directory {path}: {source}")]
    Storage {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A topic of `--topics` could not be created.
    #[error("topic {name}: {reason}")]
    Topic {
        /// The topic.
        name: String,
        /// Why.
        reason: String,
    },
}

/// Everything the request handlers share.
#[derive(Debug)]
pub struct State {
    /// The configuration, with the data directory resolved.
    pub config: BrokerConfig,
    /// The data directory.
    pub data_dir: PathBuf,
    /// The bound address, advertised in Metadata and FindCoordinator.
    pub advertised: SocketAddr,
    /// The cluster id (persisted, so it survives restarts).
    pub cluster_id: String,
    /// Topics and partition logs.
    pub topics: OrderedRwLock<TopicRegistry>,
    /// Committed and staged offsets.
    pub offsets: OrderedMutex<OffsetStore>,
    /// Idempotent producer ids.
    pub pids: OrderedMutex<PidAllocator>,
    /// Consumer groups.
    pub groups: GroupCoordinator,
    /// The transaction coordinator.
    pub txn: crate::txn::TxnCoordinator,
    /// The cluster's brokers, and which of them coordinates a key.
    pub membership: crate::cluster::Membership,
    /// Authorization hook.
    pub authorizer: Arc<dyn Authorizer>,
    /// The ACLs, when security is on (the authorizer then asks them).
    pub acls: Option<Arc<crate::acl::AclStore>>,
    /// The users connections authenticate as, when security is on.
    pub users: Option<Arc<crate::sasl::Users>>,
    /// Signalled after every append, for Fetch long polls.
    pub appended: Notify,
    /// Whether Metadata shows the internal `__consumer_offsets` topic: Apache creates it on
    /// the first group coordinator lookup, and so it appears here then (or at start when
    /// groups have committed offsets before).
    pub offsets_topic: std::sync::atomic::AtomicBool,
    /// In a cluster: the partitions this broker serves as leader, with the membership
    /// generation it last read each log at ([`State::led_partition`]).
    pub led: std::sync::Mutex<std::collections::HashMap<(String, i32), u64>>,
    /// Paused as a process is by SIGSTOP (`crate::freeze`): no request read, no loop run.
    pub freeze: crate::freeze::Freeze,
    /// Whether this broker's MarkerWatcher is held (`BrokerHandle::hold_markers`): the
    /// markers its peers queue for it wait in its inbox, as when its poll is slow, while it
    /// goes on serving everything else.
    pub markers_held: std::sync::atomic::AtomicBool,
    /// Whether the data directory is one this broker made for itself (none was configured):
    /// it goes with the broker, as a temporary directory does, instead of piling up under
    /// the OS temp dir run after run.
    temporary: bool,
}

impl Drop for State {
    fn drop(&mut self) {
        if self.temporary {
            if let Err(e) = std::fs::remove_dir_all(&self.data_dir) {
                tracing::debug!(data_dir = %self.data_dir.display(), error = %e, "temporary data directory not removed");
            }
        }
    }
}

impl crate::txn::Host for State {
    fn allocate_pid(&self) -> std::io::Result<i64> {
        self.pids.lock().allocate()
    }

    fn partition_logs(&self) -> Vec<Arc<OrderedMutex<PartitionLog>>> {
        let led: Vec<(String, i32)> = {
            let topics = self.topics.read();
            topics
                .iter()
                .flat_map(|(name, t)| {
                    (0..t.partitions.len() as i32).map(move |p| (name.to_owned(), p))
                })
                .filter(|(name, p)| self.membership.leads(name, *p))
                .collect()
        };
        led.iter()
            .filter_map(|(name, p)| self.led_partition(name, *p).ok())
            .collect()
    }

    fn marker_target(&self, topic: &str, partition: i32) -> crate::txn::MarkerTarget {
        use crate::txn::MarkerTarget;
        match self.led_partition(topic, partition) {
            Ok(log) => MarkerTarget::Local(log),
            Err(errors::NOT_LEADER_OR_FOLLOWER) => match self.membership.leader(topic, partition) {
                Some(peer) => MarkerTarget::Peer(peer.id),
                None => MarkerTarget::NoLeader,
            },
            Err(errors::UNKNOWN_TOPIC_OR_PARTITION) => MarkerTarget::Gone,
            Err(_) => MarkerTarget::NoLeader,
        }
    }

    fn enqueue(&self, to: i32, marker: &crate::peer_files::QueuedMarker) -> std::io::Result<()> {
        crate::peer_files::enqueue(&cluster_dir(&self.data_dir), to, marker)
    }

    fn appended(&self) {
        self.appended.notify_waiters();
    }

    fn offsets(&self) -> &OrderedMutex<OffsetStore> {
        &self.offsets
    }

    fn coordinates(&self, transactional_id: &str) -> bool {
        self.membership.owns(transactional_id)
    }
}

impl State {
    /// Catches up with the topics peers created or deleted on the shared data directory
    /// (nothing to do for a broker alone): called before each request, so that a topic a
    /// client created through one broker is known to the next it asks.
    pub fn sync_topics(&self) {
        if self.membership.alone() {
            return;
        }
        let stale = self.topics.read().stale();
        let synced = match stale {
            Ok(false) => Ok(()),
            Ok(true) => self.topics.write().sync(),
            Err(e) => Err(e),
        };
        if let Err(e) = synced {
            tracing::warn!(error = %e, "could not read the topics peers share");
        }
    }

    /// The log of a partition this broker leads, to read or append: UNKNOWN_TOPIC_OR_PARTITION
    /// when there is no such partition, NOT_LEADER_OR_FOLLOWER when a peer leads it. A broker
    /// that has seen the cluster change since it last served the partition reads the log
    /// again from the shared volume first (a peer may have led it meanwhile), with every
    /// producer fence of the cluster applied; one that has not seen a change still reads
    /// what a peer appended (it may have been paused while the peer led).
    pub fn led_partition(
        &self,
        topic: &str,
        partition: i32,
    ) -> Result<Arc<OrderedMutex<PartitionLog>>, i16> {
        let log = self
            .partition(topic, partition)
            .ok_or(errors::UNKNOWN_TOPIC_OR_PARTITION)?;
        if self.membership.alone() {
            return Ok(log);
        }
        let key = (topic.to_owned(), partition);
        if !self.membership.leads(topic, partition) {
            self.led
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&key);
            return Err(errors::NOT_LEADER_OR_FOLLOWER);
        }
        let generation = self.membership.generation();
        // The map is only read and written here, never held while a log is locked.
        let taken_over =
            self.led.lock().unwrap_or_else(|e| e.into_inner()).get(&key) != Some(&generation);
        // A broker that has seen no change may still have been paused past the member timeout
        // while a peer led and wrote: it reads the log as it is now all the same.
        let fences = match taken_over {
            true => crate::peer_files::all_fences(&cluster_dir(&self.data_dir)).map(Some),
            false => Ok(None),
        };
        let caught_up = fences.and_then(|fences| {
            let mut guard = log.lock();
            guard.refresh()?;
            for (pid, epoch) in fences.into_iter().flatten() {
                guard.fence_producer(pid, epoch);
            }
            Ok(())
        });
        if let Err(e) = caught_up {
            tracing::warn!(topic, partition, error = %e, "could not read what peers wrote to a partition log");
            return Err(errors::NOT_LEADER_OR_FOLLOWER);
        }
        if taken_over {
            self.led
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(key, generation);
        }
        Ok(log)
    }

    /// A partition to read as a consumer may read it from a follower (Fetch v11+, KIP-392):
    /// the leader's log when this broker leads it, else the log as the leader has written it
    /// on the shared volume so far, read afresh.
    pub fn readable_partition(
        &self,
        topic: &str,
        partition: i32,
    ) -> Result<Arc<OrderedMutex<PartitionLog>>, i16> {
        match self.led_partition(topic, partition) {
            Err(errors::NOT_LEADER_OR_FOLLOWER) => {
                let log = self
                    .partition(topic, partition)
                    .ok_or(errors::UNKNOWN_TOPIC_OR_PARTITION)?;
                let dir = log.lock().dir().to_owned();
                PartitionLog::view(&dir)
                    .map(|view| Arc::new(OrderedMutex::new(Level::Partition, view)))
                    .map_err(|_| errors::NOT_LEADER_OR_FOLLOWER)
            }
            other => other,
        }
    }

    /// One partition's log, if the topic and partition exist.
    pub fn partition(
        &self,
        topic: &str,
        partition: i32,
    ) -> Option<Arc<OrderedMutex<PartitionLog>>> {
        let topics = self.topics.read();
        let t = topics.get(topic)?;
        usize::try_from(partition)
            .ok()
            .and_then(|p| t.partitions.get(p))
            .cloned()
    }
}

/// Opens the state of a broker on a data directory, without listening (the frame fuzzer and
/// handler tests use this directly).
pub fn open_state(
    config: BrokerConfig,
    advertised: SocketAddr,
    authorizer: Arc<dyn Authorizer>,
) -> Result<State, StartError> {
    let (data_dir, temporary) = match &config.data_dir {
        Some(d) => (d.clone(), false),
        None => (
            std::env::temp_dir().join(format!("kaas-ref-{}", uuid::Uuid::new_v4())),
            true,
        ),
    };
    let opened = open_in(config, data_dir.clone(), temporary, advertised, authorizer);
    // A broker that could not start leaves no temporary directory behind either.
    if opened.is_err() && temporary {
        let _ = std::fs::remove_dir_all(&data_dir);
    }
    opened
}

/// [`open_state`] on `data_dir`, resolved.
fn open_in(
    config: BrokerConfig,
    data_dir: std::path::PathBuf,
    temporary: bool,
    advertised: SocketAddr,
    authorizer: Arc<dyn Authorizer>,
) -> Result<State, StartError> {
    let storage = |source| StartError::Storage {
        path: data_dir.clone(),
        source,
    };
    std::fs::create_dir_all(&data_dir).map_err(storage)?;
    let cluster = cluster_dir(&data_dir);
    let cluster_id = load_cluster_id(&cluster).map_err(storage)?;
    let acls = match &config.security {
        Some(s) => {
            let store =
                crate::acl::AclStore::open(s.super_users.clone(), cluster.join("acls.json"))
                    .map_err(|e| StartError::Storage {
                        path: e.path.clone(),
                        source: std::io::Error::other(e.reason),
                    })?;
            Some(Arc::new(store))
        }
        None => None,
    };
    let users = config
        .security
        .as_ref()
        .map(|s| Arc::new(crate::sasl::Users::new(&s.users)));
    let authorizer: Arc<dyn Authorizer> = match &acls {
        Some(store) => store.clone(),
        None => authorizer,
    };
    let authorizer: Arc<dyn Authorizer> = match config.refuse_create_topics {
        true => Arc::new(crate::auth::DenyCreate(authorizer)),
        false => authorizer,
    };
    // Brokers sharing the data directory leave its debris alone: it may be a peer's creation
    // in progress. A broker whose peers a Kubernetes API names shares it too, whoever is
    // listed yet (it removed the partitions its peers were creating at start: seen when three
    // started at once with the same topics).
    let shared = config.peers.len() > 1 || config.watched.is_some();
    let mut topics = match shared {
        true => TopicRegistry::open_shared(&data_dir),
        false => TopicRegistry::open(&data_dir),
    }
    .map_err(storage)?;
    for spec in &config.topics {
        if topics.get(&spec.name).is_some() {
            continue;
        }
        let configs: Vec<(String, Option<String>)> = spec
            .configs
            .iter()
            .map(|(k, v)| (k.clone(), Some(v.clone())))
            .collect();
        let failed = |reason: String| StartError::Topic {
            name: spec.name.clone(),
            reason,
        };
        config
            .limits
            .check_topic(spec.partitions, &configs)
            .map_err(|r| failed(r.message))?;
        let config = crate::storage::topic_config::TopicConfig::from_request(&configs)
            .map_err(|e| failed(e.to_string()))?;
        match topics.create_with(&spec.name, spec.partitions, config) {
            // A peer sharing the volume created it first: it is this broker's too.
            Ok(_) | Err(crate::storage::topics::CreateError::Exists(_)) => {}
            Err(e) => return Err(failed(e.to_string())),
        }
    }
    let offsets = OffsetStore::open(&cluster).map_err(storage)?;
    let offsets_topic = offsets.has_any_group().map_err(storage)?;
    let pids = PidAllocator::open(&cluster, config.broker_id).map_err(storage)?;
    let me = crate::cluster::Peer {
        id: config.broker_id,
        addr: advertised,
    };
    let membership = match &config.watched {
        Some(watched) => crate::cluster::Membership::watched(me, watched.clone()),
        None => crate::cluster::Membership::new(me, &config.peers, &cluster, config.member_timeout),
    };
    let mut txn =
        crate::txn::TxnCoordinator::new(&cluster, config.broker_id, config.limits.clone());
    txn.planted = config.planted;
    Ok(State {
        groups: GroupCoordinator::new(
            config.group_initial_rebalance_delay,
            config.limits.max_group_members,
        ),
        config: BrokerConfig {
            data_dir: Some(data_dir.clone()),
            ..config
        },
        data_dir,
        advertised,
        cluster_id,
        topics: OrderedRwLock::new(Level::Topics, topics),
        offsets: OrderedMutex::new(Level::Offsets, offsets),
        pids: OrderedMutex::new(Level::ProducerIds, pids),
        txn,
        membership,
        authorizer,
        acls,
        users,
        appended: Notify::new(),
        offsets_topic: offsets_topic.into(),
        led: Default::default(),
        freeze: Default::default(),
        markers_held: Default::default(),
        temporary,
    })
}

/// The state of a test broker on `data_dir` (test configuration, no authorizer), for
/// in-process drivers that never listen: handler tests, corpus replay, the frame fuzzer.
pub fn open_in_dir(data_dir: &Path) -> Result<State, StartError> {
    let config = BrokerConfig {
        data_dir: Some(data_dir.to_owned()),
        ..BrokerConfig::for_tests()
    };
    open_state(
        config,
        SocketAddr::from(([127, 0, 0, 1], 9092)),
        Arc::new(AllowAll),
    )
}

fn load_cluster_id(cluster: &Path) -> std::io::Result<String> {
    let path = cluster.join("cluster_id");
    if let Some(id) = read_if_present(&path)? {
        return Ok(String::from_utf8_lossy(&id).trim().to_owned());
    }
    // Kafka's format: 22 characters of URL-safe base64 of 16 random bytes.
    let id = base64_url(uuid::Uuid::new_v4().as_bytes());
    // Brokers of a cluster starting together each propose one; the first written is the
    // cluster's.
    match crate::storage::atomic::write_new(&path, id.as_bytes())? {
        true => Ok(id),
        false => Ok(String::from_utf8_lossy(&std::fs::read(&path)?)
            .trim()
            .to_owned()),
    }
}

fn base64_url(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        let chars = chunk.len() + 1;
        for i in 0..chars {
            out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}
