//! A real three-broker Apache Kafka 3.7 cluster from the cached jars: it forms, a broker killed
//! with SIGKILL leaves the others serving, and the broker restarted on its data rejoins. Prints
//! the start time and the cluster's memory. Skipped, saying why, where the jvm backend cannot
//! run.

use std::time::{Duration, Instant};

use kconform::targets::apache::cluster::ApacheCluster;

#[test]
fn three_brokers_form_lose_one_and_take_it_back() {
    if let Err(why) = kconform::targets::apache::available() {
        println!("SKIPPED: the jvm backend cannot run here: {why}");
        return;
    }
    let mut cluster = ApacheCluster::start(3).expect("the cluster starts");
    println!(
        "apache cluster: 3 brokers and a controller ready in {:.1} s, {} MiB resident",
        cluster.start_time.as_secs_f64(),
        cluster.resident_bytes() / (1024 * 1024)
    );
    assert_eq!(cluster.live_addrs().len(), 3);
    for addr in cluster.addrs() {
        kconform::targets::apache::answers_api_versions(*addr).expect("every broker answers");
    }
    let killed = cluster.addrs()[1];
    cluster.kill(1);
    assert_eq!(cluster.live_addrs().len(), 2);
    assert!(
        kconform::targets::apache::answers_api_versions(killed).is_err(),
        "a killed broker answers nothing"
    );
    for addr in cluster.live_addrs() {
        kconform::targets::apache::answers_api_versions(addr).expect("the others keep serving");
    }
    let restarted = Instant::now();
    cluster.restart(1).expect("the broker restarts on its data");
    println!(
        "apache cluster: broker 1 back in {:.1} s",
        restarted.elapsed().as_secs_f64()
    );
    assert_eq!(cluster.live_addrs().len(), 3);
    kconform::targets::apache::answers_api_versions(killed).expect("the restarted broker answers");
    assert!(cluster.start_time < Duration::from_secs(600));
}
