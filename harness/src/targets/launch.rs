//! Starting each kind of target: kaas-ref in process (one broker or a cluster on one data
//! directory), Apache by its backend (the broker `kconform apache up` keeps, a JVM, a
//! container) or as a cluster of JVMs, and naming a running broker. Each says how the target
//! was found or started, for the report.

use std::net::SocketAddr;

use reference_broker::local_cluster::LocalCluster;
use reference_broker::{Broker, BrokerConfig};

use super::apache::{
    self, cluster::ApacheCluster, container::ApacheContainer, ApacheJvm, Backend, Release,
};
use super::{ref_config, Held, TargetSpec, REF_MEMBER_TIMEOUT};

/// A target started (or found): where it listens, every broker's address (empty: only
/// `addr`), how it came to be, and what the harness holds of it.
pub(super) struct Started {
    pub(super) addr: SocketAddr,
    pub(super) bootstrap: Vec<SocketAddr>,
    pub(super) origin: String,
    pub(super) held: Held,
}

/// What a report says of a target's security after its origin: nothing for a plain one.
fn security_note(spec: &TargetSpec) -> &'static str {
    match spec.secured {
        true => ", with SASL_PLAINTEXT (PLAIN, SCRAM-SHA-512) and ACLs",
        false => "",
    }
}

/// kaas-ref, one broker in process, configured as Apache is.
pub(super) async fn kaas_ref(spec: &TargetSpec) -> Result<Started, String> {
    let broker = Broker::start(BrokerConfig {
        security: spec.secured.then(crate::security::ref_security),
        planted: spec.planted,
        ..ref_config(1)
    })
    .await
    .map_err(|e| e.to_string())?;
    Ok(Started {
        addr: broker.addr(),
        bootstrap: Vec::new(),
        origin: format!("kaas-ref, in process{}", security_note(spec)),
        held: Held::Ref(broker),
    })
}

/// A kaas-ref cluster of `n` brokers on one data directory, in process.
pub(super) async fn kaas_ref_cluster(spec: &TargetSpec, n: usize) -> Result<Started, String> {
    let cluster = LocalCluster::start(
        n,
        BrokerConfig {
            member_timeout: REF_MEMBER_TIMEOUT,
            security: spec.secured.then(crate::security::ref_security),
            planted: spec.planted,
            ..ref_config(n)
        },
    )
    .await
    .map_err(|e| e.to_string())?;
    Ok(Started {
        addr: cluster.addrs()[0],
        bootstrap: cluster.addrs(),
        origin: format!(
            "a kaas-ref cluster of {n} brokers on one data directory, in process (a peer counts as down {} s after its last stamp){}",
            REF_MEMBER_TIMEOUT.as_secs_f64(),
            security_note(spec)
        ),
        held: Held::RefCluster(cluster),
    })
}

/// A kaas build (`bin`) as a cluster of `n` processes with the Kubernetes API it needs
/// served beside them, told of `topics` (a run's; else kconform's own `KAAS_TOPICS`). A
/// kaas-ref binary is given the settings kconform runs its kaas-ref with ([`kaas_ref_flags`]).
pub(super) async fn kaas_build(
    spec: &TargetSpec,
    bin: &std::path::Path,
    n: usize,
    topics: Option<&str>,
) -> Result<Started, String> {
    if spec.secured {
        return Err("a build cluster runs without SASL here (+sasl is not taken)".into());
    }
    let cluster = super::kaas_build::BuildCluster::start(bin, n, topics, kaas_ref_flags(n))
        .await
        .map_err(|e| e.to_string())?;
    let mut hosts: String = cluster
        .names_note()
        .map(|note| format!("; {note}"))
        .unwrap_or_default();
    if let Some(note) = super::kaas_build::kubeconfig_note() {
        hosts.push_str(&format!("; {note}"));
    }
    Ok(Started {
        addr: cluster.addrs()[0],
        bootstrap: cluster.addrs(),
        origin: format!(
            "{} as a cluster of {n} processes on loopback addresses of their own, made one by kconform's stand-in Kubernetes API at {} (logs and kubeconfig in {}){hosts}",
            bin.display(),
            cluster.api().url(),
            cluster.dir().display()
        ),
        held: Held::Build(Box::new(cluster)),
    })
}

/// The flags that give a kaas-ref process the settings kconform's in-process kaas-ref has
/// ([`ref_config`]): Apache's, as the scenarios assume them.
pub fn kaas_ref_flags(n: usize) -> Vec<String> {
    let config = ref_config(n);
    vec![
        format!(
            "--txn-reaper-interval-ms={}",
            config.txn_reaper_interval.as_millis()
        ),
        format!(
            "--offsets-topic-partitions={}",
            config.offsets_topic_partitions
        ),
        format!(
            "--default-replication-factor={}",
            config.default_replication_factor
        ),
        format!(
            "--group-initial-rebalance-delay-ms={}",
            config.group_initial_rebalance_delay.as_millis()
        ),
    ]
}

/// One Apache of `release`: the broker `kconform apache up` keeps when it runs that release
/// (a plain target only: it has no SASL), else one launched by `backend`.
pub(super) async fn apache(
    spec: &TargetSpec,
    backend: Backend,
    release: Release,
) -> Result<Started, String> {
    let secured = spec.secured;
    if let Some(d) = apache::daemon::running(&release).filter(|_| !secured) {
        return Ok(Started {
            addr: d.addr,
            bootstrap: vec![d.addr],
            origin: format!(
                "Apache Kafka {} kept up by `kconform apache up` (pid {})",
                d.version, d.pid
            ),
            held: Held::Nothing,
        });
    }
    if backend.resolve().map_err(|e| e.to_string())? == Backend::Container {
        let c = match secured {
            true => ApacheContainer::start_secured(&release).await,
            false => ApacheContainer::start(&release).await,
        }
        .map_err(|e| e.to_string())?;
        return Ok(Started {
            addr: c.addr,
            bootstrap: Vec::new(),
            origin: format!(
                "{release} in the apache/kafka container{}",
                security_note(spec)
            ),
            held: Held::Container(Box::new(c)),
        });
    }
    let jvm = tokio::task::spawn_blocking(move || ApacheJvm::start_with(secured, &release))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    Ok(Started {
        addr: jvm.addr,
        bootstrap: Vec::new(),
        origin: format!(
            "{release} launched as a JVM{}, started in {:.1} s",
            security_note(spec),
            jvm.start_time.as_secs_f64()
        ),
        held: Held::Jvm(jvm),
    })
}

/// An Apache cluster of `n` brokers and a KRaft controller, each a JVM.
pub(super) async fn apache_cluster(
    spec: &TargetSpec,
    backend: Backend,
    release: Release,
    n: usize,
) -> Result<Started, String> {
    if backend == Backend::Container {
        return Err("a cluster runs as JVMs only".into());
    }
    let secured = spec.secured;
    let cluster =
        tokio::task::spawn_blocking(move || ApacheCluster::start_with(n, secured, &release))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
    Ok(Started {
        addr: cluster.addrs()[0],
        bootstrap: cluster.addrs().to_vec(),
        origin: format!(
            "a cluster of {release}, {n} brokers and a KRaft controller, each a JVM{}: ready in {:.1} s, {} MiB resident",
            security_note(spec),
            cluster.start_time.as_secs_f64(),
            cluster.resident_bytes() / (1024 * 1024)
        ),
        held: Held::ApacheCluster(cluster),
    })
}

/// A broker that is already running: named, not started.
pub(super) fn external(spec: &TargetSpec, addr: SocketAddr) -> Started {
    Started {
        addr,
        bootstrap: Vec::new(),
        origin: match spec.secured {
            false => format!("an external broker at {addr}"),
            true => {
                format!("an external broker at {addr}, logged in over SASL as kconform's users")
            }
        },
        held: Held::Nothing,
    }
}
