//! How a reference broker is configured; the `kaas-ref` flags map onto this one to one.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// Everything a broker needs to start.
#[derive(Debug, Clone)]
pub struct BrokerConfig {
    /// Bugs planted on purpose (none; only a `planted-bugs` build can plant one).
    pub planted: crate::planted::Planted,
    /// Address to listen on; port 0 picks a free port.
    pub listen: SocketAddr,
    /// The address Metadata and FindCoordinator name for this broker, when clients reach it
    /// through something in front of it (a relay that changes its answers); `None`: the
    /// address it listens on.
    pub advertise: Option<SocketAddr>,
    /// Data directory; `None` makes a fresh one under the OS temp dir, removed when the
    /// broker's state goes (a directory given here is kept).
    pub data_dir: Option<PathBuf>,
    /// Broker id (node id in Metadata).
    pub broker_id: i32,
    /// Largest request frame accepted; a larger one closes its connection.
    pub max_frame_bytes: usize,
    /// Create unknown topics on Metadata requests that allow it (Apache's default: on).
    pub auto_create_topics: bool,
    /// Partitions of an auto-created topic, and of CreateTopics with -1 (`num.partitions`).
    pub default_partitions: i32,
    /// Replicas of a CreateTopics with -1 (`default.replication.factor`; Apache's default
    /// 1). On a shared volume every broker serves every partition, so a factor is only checked
    /// against the brokers alive, as Apache checks it against those registered.
    pub default_replication_factor: i16,
    /// Wait before completing the first rebalance of an empty group
    /// (`group.initial.rebalance.delay.ms`; Apache's default 3 s, tests use 0).
    pub group_initial_rebalance_delay: Duration,
    /// How often the transaction reaper runs.
    pub txn_reaper_interval: Duration,
    /// Partitions Metadata shows for the internal `__consumer_offsets` topic
    /// (`offsets.topic.num.partitions`, Apache's default 50). kaas keeps offsets in files;
    /// the topic is shown, as Apache shows it, once a group coordinator has been looked up.
    pub offsets_topic_partitions: i32,
    /// Topics that exist from the start (created if missing): a cluster whose topics an
    /// operator provisions, as `kconform topics --json` lists them.
    pub topics: Vec<TopicSpec>,
    /// Refuse CreateTopics (TOPIC_AUTHORIZATION_FAILED, as Apache answers a client without the
    /// Create permission): an operator-managed cluster.
    pub refuse_create_topics: bool,
    /// Bounds on what one request can make the broker allocate, create or keep.
    pub limits: crate::limits::Limits,
    /// The brokers of the cluster this one belongs to, itself included, all sharing the data
    /// directory (`crate::cluster`); empty: a cluster of one, which coordinates every key.
    /// They route the coordinators (FindCoordinator, NOT_COORDINATOR, the reaper's
    /// ownership), share the partitions' leadership, and pass markers and fences through the
    /// volume.
    pub peers: Vec<crate::cluster::Peer>,
    /// Membership as something outside watches it (`--membership kube`: a Kubernetes API's
    /// EndpointSlices, as kaas pods have it): when set, `peers` is not read and who is up is
    /// what the watch last said.
    pub watched: Option<std::sync::Arc<crate::cluster::Watched>>,
    /// How long a peer may go without stamping the shared volume before it counts as down.
    pub member_timeout: Duration,
    /// How often a cluster broker's MarkerWatcher and FenceWatcher poll the shared volume
    /// (kaas: 2 s). The marker poll bounds how long read_committed visibility on a peer-led
    /// partition trails a commit: the spec's documented deviation.
    pub peer_poll: Duration,
    /// SASL and ACLs: when set, every connection must authenticate (SASL_PLAINTEXT, PLAIN or
    /// SCRAM-SHA-512) and every gate of the spec asks the ACLs; unset, every request is
    /// `User:ANONYMOUS` and allowed, as on Apache's PLAINTEXT listener without an authorizer.
    pub security: Option<Security>,
}

/// The users a secured broker authenticates, and the principals that pass every ACL check.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Security {
    /// Users, each with PLAIN and SCRAM-SHA-512 credentials.
    pub users: Vec<crate::sasl::User>,
    /// Super users' principals (`User:admin`).
    pub super_users: Vec<String>,
}

/// A topic that exists from the start: `{"name": "t", "partitions": 2}`, with topic configs
/// when it needs them (`"configs": {"cleanup.policy": "compact"}`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopicSpec {
    /// Topic name.
    pub name: String,
    /// Partition count.
    pub partitions: i32,
    /// Topic configs (name → value).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub configs: std::collections::BTreeMap<String, String>,
}

impl Default for BrokerConfig {
    fn default() -> Self {
        BrokerConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 9092)),
            advertise: None,
            data_dir: None,
            broker_id: 0,
            max_frame_bytes: 100 * 1024 * 1024,
            auto_create_topics: true,
            default_partitions: 1,
            default_replication_factor: 1,
            group_initial_rebalance_delay: Duration::from_millis(3000),
            txn_reaper_interval: Duration::from_secs(10),
            offsets_topic_partitions: 50,
            topics: Vec::new(),
            refuse_create_topics: false,
            limits: crate::limits::Limits::default(),
            peers: Vec::new(),
            watched: None,
            member_timeout: Duration::from_secs(6),
            peer_poll: Duration::from_secs(2),
            security: None,
            planted: crate::planted::Planted::default(),
        }
    }
}

impl BrokerConfig {
    /// A configuration for tests: a free loopback port, a fresh data dir, no rebalance delay.
    pub fn for_tests() -> Self {
        BrokerConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            group_initial_rebalance_delay: Duration::ZERO,
            ..Default::default()
        }
    }
}
