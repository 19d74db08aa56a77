//! The brokers of a kaas cluster sharing one data directory, and which of them coordinates a
//! key, as kaas decides it (kaas-internals §3): `fnv1a32(key) % N` into the broker names
//! (`kaas-<id>`) sorted lexicographically, and, when that broker is down, the same slot modulo
//! the alive ones in the same order. Who is alive is read from the shared volume: each broker
//! stamps `__cluster/members/kaas-<id>.json` every second, and one whose stamp is older than the
//! member timeout counts as down.
//!
//! A broker started without peers is a cluster of one (kaas's dev mode): it coordinates every
//! key.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::hash::fnv1a32;
use crate::storage::atomic::{read_if_present, write_atomic};
use crate::storage::now_ms;

/// One broker of the cluster: its id and the address clients reach it at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    /// Broker id (node id in Metadata and FindCoordinator).
    pub id: i32,
    /// Its advertised address.
    pub addr: SocketAddr,
}

impl std::str::FromStr for Peer {
    type Err = String;

    /// `ID=HOST:PORT`, as `kaas-ref --peers` takes each broker.
    fn from_str(s: &str) -> Result<Peer, String> {
        use std::net::ToSocketAddrs;
        let (id, addr) = s
            .split_once('=')
            .ok_or_else(|| format!("'{s}': expected ID=HOST:PORT"))?;
        let id: i32 = id
            .trim()
            .parse()
            .ok()
            .filter(|id| *id >= 0)
            .ok_or_else(|| format!("'{s}': the broker id must be a number from 0"))?;
        let addr = addr
            .trim()
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| format!("'{s}': '{addr}' is no HOST:PORT"))?;
        Ok(Peer { id, addr })
    }
}

/// The brokers of a cluster, each once: why not, when two share an id or an address, or
/// `me` is not among them.
pub fn check_peers(me: i32, peers: &[Peer]) -> Result<(), String> {
    for (i, p) in peers.iter().enumerate() {
        if let Some(q) = peers[..i].iter().find(|q| q.id == p.id || q.addr == p.addr) {
            return Err(format!(
                "brokers {}={} and {}={} share {}",
                q.id,
                q.addr,
                p.id,
                p.addr,
                if q.id == p.id { "an id" } else { "an address" }
            ));
        }
    }
    if !peers.is_empty() && !peers.iter().any(|p| p.id == me) {
        return Err(format!("broker {me} is not among the peers"));
    }
    Ok(())
}

/// kaas's name of a broker: `kaas-<id>`, the name its routing sorts by.
pub fn broker_name(id: i32) -> String {
    format!("kaas-{id}")
}

/// The broker that coordinates `key`: `all` is the full broker set, `alive` those up. `None`
/// when none is alive (FindCoordinator answers COORDINATOR_NOT_AVAILABLE).
pub fn pick_coordinator(key: &str, all: &[i32], alive: &[i32]) -> Option<i32> {
    pick_by_slot(fnv1a32(key.as_bytes()) as usize, all, alive)
}

/// kaas's placement by a slot number: `sorted[slot % N]` over the broker names sorted as
/// text, and, when that broker is down, `alive[slot % len]` over the alive in the same order.
/// Coordinators (slot: the key's hash) and partition leaders (the topic's hash plus the
/// partition) are placed alike.
fn pick_by_slot(slot: usize, all: &[i32], alive: &[i32]) -> Option<i32> {
    if all.is_empty() {
        return None;
    }
    let mut sorted: Vec<i32> = all.to_vec();
    sorted.sort_by_key(|id| broker_name(*id));
    let preferred = sorted[slot % sorted.len()];
    if alive.contains(&preferred) {
        return Some(preferred);
    }
    let up: Vec<i32> = sorted.into_iter().filter(|id| alive.contains(id)).collect();
    (!up.is_empty()).then(|| up[slot % up.len()])
}

/// How long a reading of the peers' stamps serves before the files are read again: routing
/// asks on every coordinator request, and reading N files each time would put file I/O on
/// that path; a stamp is written once a second, so a quarter second adds little staleness.
pub const ALIVE_REFRESH: Duration = Duration::from_millis(250);

/// Who is in the cluster and who is ready, as something outside the broker watches it: kaas
/// reads both from its headless Service's EndpointSlices (`--membership kube`, the
/// `kube_membership` module). Shared between that watch, which sets it, and the routing,
/// which reads it on every coordinator request.
#[derive(Debug, Default)]
pub struct Watched {
    /// The brokers listed (ready or not) and those ready, by id.
    view: std::sync::RwLock<(Vec<Peer>, Vec<i32>)>,
    /// Whether the first full listing has arrived: before it, routing knows only this broker.
    listed: std::sync::atomic::AtomicBool,
}

impl Watched {
    /// Replaces the view: every broker listed, and the ids of those ready. Whether it changed.
    pub fn set(&self, mut peers: Vec<Peer>, mut ready: Vec<i32>) -> bool {
        peers.sort_by_key(|p| p.id);
        peers.dedup_by_key(|p| p.id);
        ready.sort_unstable();
        ready.dedup();
        self.listed
            .store(true, std::sync::atomic::Ordering::Release);
        let mut view = self.view.write().unwrap_or_else(|e| e.into_inner());
        let changed = view.0 != peers || view.1 != ready;
        *view = (peers, ready);
        changed
    }

    /// The brokers listed and the ids of those ready.
    pub fn get(&self) -> (Vec<Peer>, Vec<i32>) {
        self.view.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Whether a full listing has arrived.
    pub fn listed(&self) -> bool {
        self.listed.load(std::sync::atomic::Ordering::Acquire)
    }
}

/// Where a broker learns who its peers are and which of them are up.
#[derive(Debug)]
enum Source {
    /// A fixed set (`--peers`), each alive while its stamp under `members/` is fresh.
    Stamps {
        peers: Vec<Peer>,
        members_dir: PathBuf,
        timeout: Duration,
    },
    /// Set from outside ([`Watched`]): a Kubernetes API's EndpointSlices.
    Watched(std::sync::Arc<Watched>),
}

/// This broker's view of its cluster.
#[derive(Debug)]
pub struct Membership {
    me: i32,
    /// Its own address, which a watched view may not list yet.
    me_addr: SocketAddr,
    /// Where the peers and who is up come from.
    source: Source,
    /// The last reading of who is alive, and when it was taken.
    seen: std::sync::Mutex<Option<(Instant, Vec<i32>)>>,
    /// Counts the changes of who is alive this broker has seen: leadership may have moved
    /// meanwhile, so a log it leads is read again from the volume before it is served.
    generation: std::sync::atomic::AtomicU64,
}

#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stamp {
    last_seen_ms: i64,
}

impl Membership {
    /// Broker `me` of `peers` (which includes it), its members' stamps under `cluster_dir`;
    /// a peer not stamped within `timeout` is down. No peers: a cluster of one.
    pub fn new(me: Peer, peers: &[Peer], cluster_dir: &Path, timeout: Duration) -> Membership {
        let mut peers = peers.to_vec();
        if !peers.iter().any(|p| p.id == me.id) {
            peers.push(me);
        }
        peers.sort_by_key(|p| p.id);
        Membership {
            me: me.id,
            me_addr: me.addr,
            source: Source::Stamps {
                peers,
                members_dir: cluster_dir.join("members"),
                timeout,
            },
            seen: std::sync::Mutex::new(None),
            generation: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Broker `me` of a cluster whose brokers `watched` lists as they come and go (a
    /// Kubernetes API's EndpointSlices): never a cluster of one, whoever is listed; this
    /// broker counts itself alive while it serves.
    pub fn watched(me: Peer, watched: std::sync::Arc<Watched>) -> Membership {
        Membership {
            me: me.id,
            me_addr: me.addr,
            source: Source::Watched(watched),
            seen: std::sync::Mutex::new(None),
            generation: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Whether the cluster is this broker alone.
    pub fn alone(&self) -> bool {
        match &self.source {
            Source::Stamps { peers, .. } => peers.len() == 1,
            Source::Watched(_) => false,
        }
    }

    /// This broker's id.
    pub fn me(&self) -> i32 {
        self.me
    }

    /// Every broker of the cluster, by id (watched: those listed now, and this one).
    pub fn peers(&self) -> Vec<Peer> {
        match &self.source {
            Source::Stamps { peers, .. } => peers.clone(),
            Source::Watched(watched) => {
                let (mut peers, _) = watched.get();
                if !peers.iter().any(|p| p.id == self.me) {
                    peers.push(Peer {
                        id: self.me,
                        addr: self.me_addr,
                    });
                    peers.sort_by_key(|p| p.id);
                }
                peers
            }
        }
    }

    /// The broker of that id.
    pub fn peer(&self, id: i32) -> Option<Peer> {
        self.peers().into_iter().find(|p| p.id == id)
    }

    /// Records that this broker is alive now (watched: nothing to record; the API's
    /// readiness says it).
    pub fn stamp(&self) -> std::io::Result<()> {
        let Source::Stamps { members_dir, .. } = &self.source else {
            return Ok(());
        };
        let stamp = Stamp {
            last_seen_ms: now_ms(),
        };
        let path = members_dir.join(format!("{}.json", broker_name(self.me)));
        write_atomic(
            &path,
            &serde_json::to_vec(&stamp).map_err(std::io::Error::other)?,
        )
    }

    /// The brokers alive now: this one, and every peer stamped within the timeout (read at
    /// most every [`ALIVE_REFRESH`]).
    pub fn alive(&self) -> Vec<i32> {
        if self.alone() {
            return vec![self.me];
        }
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((at, alive)) = seen.as_ref() {
            if at.elapsed() < ALIVE_REFRESH {
                return alive.clone();
            }
        }
        let alive = self.read_alive();
        if seen.as_ref().is_none_or(|(_, before)| *before != alive) {
            self.generation
                .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        }
        *seen = Some((Instant::now(), alive.clone()));
        alive
    }

    /// How many changes of who is alive this broker has seen (see [`Membership::alive`]).
    pub fn generation(&self) -> u64 {
        self.alive();
        self.generation.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Reads every peer's stamp.
    fn read_alive(&self) -> Vec<i32> {
        let (peers, members_dir, timeout) = match &self.source {
            Source::Stamps {
                peers,
                members_dir,
                timeout,
            } => (peers, members_dir, timeout),
            Source::Watched(watched) => {
                let (_, mut ready) = watched.get();
                if !ready.contains(&self.me) {
                    ready.push(self.me);
                    ready.sort_unstable();
                }
                return ready;
            }
        };
        let now = now_ms();
        let timeout = timeout.as_millis() as i64;
        peers
            .iter()
            .map(|p| p.id)
            .filter(|id| {
                *id == self.me
                    || read_if_present(&members_dir.join(format!("{}.json", broker_name(*id))))
                        .ok()
                        .flatten()
                        .and_then(|bytes| serde_json::from_slice::<Stamp>(&bytes).ok())
                        .is_some_and(|s| now - s.last_seen_ms <= timeout)
            })
            .collect()
    }

    /// The broker coordinating `key` now.
    pub fn coordinator(&self, key: &str) -> Option<Peer> {
        if self.alone() {
            return self.peer(self.me);
        }
        let peers = self.peers();
        let all: Vec<i32> = peers.iter().map(|p| p.id).collect();
        pick_coordinator(key, &all, &self.alive())
            .and_then(|id| peers.into_iter().find(|p| p.id == id))
    }

    /// The broker that leads `partition` of `topic` now: the partitions of a topic go round
    /// the brokers (sorted as kaas sorts them) from a start its name hashes to, as Apache
    /// spreads a new topic's leaders round-robin from a random broker; a partition whose
    /// broker is down goes, the same way, round the alive. kaas reads leaders from its
    /// controller's `assignment.json`; kaas-ref has no controller, so every broker computes
    /// the same assignment.
    pub fn leader(&self, topic: &str, partition: i32) -> Option<Peer> {
        if self.alone() {
            return self.peer(self.me);
        }
        let peers = self.peers();
        let all: Vec<i32> = peers.iter().map(|p| p.id).collect();
        let slot = (fnv1a32(topic.as_bytes()) as usize).wrapping_add(partition.max(0) as usize);
        pick_by_slot(slot, &all, &self.alive())
            .and_then(|id| peers.into_iter().find(|p| p.id == id))
    }

    /// Whether this broker leads `partition` of `topic` now.
    pub fn leads(&self, topic: &str, partition: i32) -> bool {
        self.alone()
            || self
                .leader(topic, partition)
                .is_some_and(|p| p.id == self.me)
    }

    /// Whether this broker coordinates `key` now.
    pub fn owns(&self, key: &str) -> bool {
        self.alone() || self.coordinator(key).is_some_and(|p| p.id == self.me)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routing_sorts_names_as_text_and_falls_back_into_the_alive() {
        // fnv1a32("a") = 0xe40c292c = 3826002220: slot 1 of 3, 0 of 2, 7 of 11.
        assert_eq!(fnv1a32(b"a"), 0xe40c_292c);
        let three = [0, 1, 2];
        assert_eq!(pick_coordinator("a", &three, &three), Some(1));
        // kaas-1 down: the same hash modulo the two alive, [kaas-0, kaas-2][0], is kaas-0.
        assert_eq!(pick_coordinator("a", &three, &[0, 2]), Some(0));
        assert_eq!(pick_coordinator("a", &three, &[]), None);
        // Eleven brokers sort kaas-0, kaas-1, kaas-10, kaas-2, ...: slot 7 is kaas-6 (by
        // number it would be kaas-7), slot 2 is kaas-10.
        let eleven: Vec<i32> = (0..11).collect();
        assert_eq!(pick_coordinator("a", &eleven, &eleven), Some(6));
        let slot2 = (0..1000)
            .map(|i| format!("k{i}"))
            .find(|k| fnv1a32(k.as_bytes()) % 11 == 2)
            .unwrap();
        assert_eq!(pick_coordinator(&slot2, &eleven, &eleven), Some(10));
    }

    #[test]
    fn peers_parse_and_a_cluster_names_each_broker_once() {
        let p = |s: &str| s.parse::<Peer>();
        let zero = p("0=127.0.0.1:9092").unwrap();
        assert_eq!(zero.id, 0);
        assert_eq!(zero.addr.port(), 9092);
        assert!(p("127.0.0.1:9092").unwrap_err().contains("ID=HOST:PORT"));
        assert!(p("-1=127.0.0.1:9092")
            .unwrap_err()
            .contains("a number from 0"));
        assert!(p("1=nowhere").unwrap_err().contains("no HOST:PORT"));
        let one = p("1=127.0.0.1:9093").unwrap();
        assert_eq!(check_peers(0, &[zero, one]), Ok(()));
        assert_eq!(check_peers(0, &[]), Ok(()));
        assert!(check_peers(2, &[zero, one])
            .unwrap_err()
            .contains("broker 2 is not among"));
        let twin = p("1=127.0.0.1:9092").unwrap();
        assert!(check_peers(0, &[zero, twin])
            .unwrap_err()
            .contains("share an address"));
        assert!(check_peers(1, &[one, p("1=127.0.0.1:9094").unwrap()])
            .unwrap_err()
            .contains("share an id"));
    }

    #[test]
    fn a_peer_is_alive_while_its_stamp_is_fresh() {
        let dir = tempfile::tempdir().unwrap();
        let addr = |port| SocketAddr::from(([127, 0, 0, 1], port));
        let peers = [
            Peer {
                id: 0,
                addr: addr(1),
            },
            Peer {
                id: 1,
                addr: addr(2),
            },
        ];
        // Long beside ALIVE_REFRESH, so a loaded machine (CI runs tests side by side) does
        // not see a fresh stamp go stale between two lines.
        let timeout = Duration::from_millis(1_000);
        let zero = Membership::new(peers[0], &peers, dir.path(), timeout);
        let one = Membership::new(peers[1], &peers, dir.path(), timeout);
        assert_eq!(zero.alive(), [0], "1 never stamped");
        one.stamp().unwrap();
        assert_eq!(zero.alive(), [0], "read again only after ALIVE_REFRESH");
        std::thread::sleep(ALIVE_REFRESH);
        assert_eq!(zero.alive(), [0, 1]);
        std::thread::sleep(Duration::from_millis(1_100));
        assert_eq!(zero.alive(), [0], "1's stamp went stale");
        // Every key has exactly one owner among the two while both are up.
        one.stamp().unwrap();
        zero.stamp().unwrap();
        std::thread::sleep(ALIVE_REFRESH);
        for key in ["a", "b", "tx-1", "group"] {
            assert!(zero.owns(key) ^ one.owns(key), "{key}");
        }
        let alone = Membership::new(peers[0], &[], dir.path(), timeout);
        assert!(alone.alone() && alone.owns("anything"));
    }
}
