//! A kaas build as a cluster (`--target build:N=PATH`), on kaas-ref's binary, which joins it
//! through the Kubernetes API kconform serves as a kaas pod does (`--membership kube`, the
//! `kube` crate): one cluster from three processes, coordinators spread over all three, the
//! controller Lease moving off a killed broker and the broker rejoining, and the cluster
//! scenarios reading the same on it as on kaas-ref in process.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use kconform::targets::faults::BrokerAct;
use kconform::targets::{brokers, Running, TargetSpec};

/// kaas-ref's binary, beside the test binary (`cargo test --workspace` builds it); `None`
/// with the reason printed when it is not there (`cargo test -p harness` alone).
pub fn kaas_ref_bin() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let bin = exe.parent()?.parent()?.join("kaas-ref");
    match bin.is_file() {
        true => Some(bin),
        false => {
            eprintln!(
                "skipped: no kaas-ref binary at {} (build it: cargo build -p reference-broker, or test with --workspace)",
                bin.display()
            );
            None
        }
    }
}

const DEADLINE: Duration = Duration::from_secs(10);

async fn listed(addr: std::net::SocketAddr) -> Vec<i32> {
    brokers::of(addr, DEADLINE, false)
        .await
        .map(|b| b.into_keys().collect())
        .unwrap_or_default()
}

/// Waits up to 30 s for `done`, saying what was last seen when it does not come.
async fn until<T: std::fmt::Debug>(
    what: &str,
    mut probe: impl AsyncFnMut() -> T,
    done: impl Fn(&T) -> bool,
) -> T {
    let started = Instant::now();
    loop {
        let seen = probe().await;
        if done(&seen) {
            return seen;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{what}: last seen {seen:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_processes_are_one_cluster_through_kconforms_kubernetes_api() {
    let Some(bin) = kaas_ref_bin() else {
        return;
    };
    let spec = TargetSpec::parse(&format!("build:3={}", bin.display())).unwrap();
    let target = Running::start(&spec).await.unwrap();
    assert_eq!(
        target.arg(),
        format!("build:3={}", std::fs::canonicalize(&bin).unwrap().display())
    );
    for addr in target.bootstrap.clone() {
        assert_eq!(listed(addr).await, [0, 1, 2], "Metadata from {addr}");
    }
    let mut coordinators = BTreeSet::new();
    for i in 0..30 {
        let at = target
            .coordinator_of(&format!("tx-{i}"), true, DEADLINE)
            .await
            .unwrap();
        coordinators.insert(target.node_at(at).expect("a broker of the cluster"));
    }
    assert_eq!(
        coordinators.into_iter().collect::<Vec<_>>(),
        [0, 1, 2],
        "FindCoordinator spreads ids"
    );
    let first = until(
        "a controller",
        async || target.controller().await,
        Option::is_some,
    )
    .await
    .unwrap();
    assert_eq!(first.transitions, 1, "{first:?}");
    let holder: i32 = first.holder.trim_start_matches("kaas-").parse().unwrap();
    target.act(BrokerAct::Kill, holder).await.unwrap();
    let peer = target.bootstrap[((holder + 1) % 3) as usize];
    let alive: Vec<i32> = (0..3).filter(|n| *n != holder).collect();
    until(
        "its endpoint not ready, its peers list two",
        async || listed(peer).await,
        |l| *l == alive,
    )
    .await;
    let moved = until(
        "the Lease moved",
        async || target.controller().await,
        |c| c.as_ref().is_some_and(|c| c.holder != first.holder),
    )
    .await
    .unwrap();
    assert_eq!(
        moved.transitions, 2,
        "a new holder is the next epoch: {moved:?}"
    );
    target.act(BrokerAct::Restart, holder).await.unwrap();
    for addr in target.bootstrap.clone() {
        until(
            "the killed broker rejoined",
            async || listed(addr).await,
            |l| *l == [0, 1, 2],
        )
        .await;
    }
    assert_eq!(
        target.notes(),
        Vec::<String>::new(),
        "kaas-ref asks only what is served"
    );
    target.stop().await;
}

/// The rows and causes of a run of `scenarios` on `target` beside Apache's recorded answers,
/// the target's name taken out.
fn rows(target: &str, scenarios: &[&str]) -> Vec<String> {
    let out = crate::util::kconform()
        .arg("run")
        .args(scenarios)
        .args(["--target", target, "--target", "apache-recorded:3"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{target}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines()
        .filter(|l| {
            l.starts_with("cluster") || l.starts_with("DOCUMENTED") || l.starts_with("PASSED")
        })
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// Kills, restarts, pauses, resumes and held markers on the processes, routing and read-back
/// through the stand-in's EndpointSlices: the verdict, rows and causes of kaas-ref in process.
#[test]
fn cluster_scenarios_read_the_same_on_a_build_as_on_kaas_ref_in_process() {
    let Some(bin) = kaas_ref_bin() else {
        return;
    };
    let scenarios = [
        "cluster-find-coordinator-agrees",
        "cluster-coordinator-killed-after-commit",
        "cluster-coordinator-paused-holds-end-txn",
        "cluster-markers-held-rejoin",
        "cluster-broker-restarted-rejoins",
        "cluster-quick-transactions",
        "cluster-txn-offset-commit-coordinators-apart",
    ];
    let build = rows(&format!("build:3={}", bin.display()), &scenarios);
    let in_process = rows("ref:3", &scenarios);
    let scenario_rows = build.iter().filter(|r| r.starts_with("cluster")).count();
    assert_eq!(scenario_rows, scenarios.len(), "{build:#?}");
    assert!(build.last().unwrap().starts_with("PASSED"), "{build:#?}");
    assert_eq!(build, in_process);
}
