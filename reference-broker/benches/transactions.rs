//! One-record transactions against an in-process kaas-ref with an rdkafka transactional
//! producer: transactions/s, p50/p99 commit latency, and fsyncs per transaction (where the
//! time goes: every slot-file write and every acks=all append is one fsync).
//! Run: `cargo bench -p reference-broker --bench transactions`; TXNS overrides the count (500).

use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use reference_broker::errors::ErrorCode;
use reference_broker::storage::fsync_count;
use reference_broker::{Broker, BrokerConfig};

#[tokio::main]
async fn main() {
    let txns: usize = std::env::var("TXNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .init();
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let broker = Broker::start(BrokerConfig {
        data_dir: Some(dir.path().to_owned()),
        ..BrokerConfig::for_tests()
    })
    .await
    .expect("broker");
    let addr = broker.addr().to_string();
    let (latencies, elapsed, fsyncs) = tokio::task::spawn_blocking(move || {
        let p: BaseProducer = ClientConfig::new()
            .set("bootstrap.servers", &addr)
            .set("transactional.id", "bench-txn")
            .set("linger.ms", "0")
            .create()
            .expect("producer");
        let t = Duration::from_secs(30);
        p.init_transactions(t).expect("init");
        // Warm-up: topic creation and the first AddPartitions.
        p.begin_transaction().unwrap();
        p.send(BaseRecord::<(), _>::to("bench-txn").payload("w"))
            .map_err(|(e, _)| e)
            .unwrap();
        p.commit_transaction(t).unwrap();
        let before = fsync_count();
        let start = Instant::now();
        let mut latencies = Vec::with_capacity(txns);
        for i in 0..txns {
            p.begin_transaction().unwrap();
            let v = i.to_string();
            p.send(BaseRecord::<(), _>::to("bench-txn").payload(&v))
                .map_err(|(e, _)| e)
                .unwrap();
            let c = Instant::now();
            p.commit_transaction(t).unwrap();
            latencies.push(c.elapsed());
        }
        (latencies, start.elapsed(), fsync_count() - before)
    })
    .await
    .unwrap();
    // The coordinator alone, in process: AddPartitions then EndTxn(commit), no client.
    let state = broker.state().clone();
    let (end_latencies, coordinator_fsyncs) = tokio::task::spawn_blocking(move || {
        let (pid, epoch) = state
            .txn
            .init_producer_id(&*state, "bench-direct", 60_000)
            .expect("init");
        let before = fsync_count();
        let mut end = Vec::with_capacity(txns);
        for _ in 0..txns {
            let parts = [("bench-txn".to_string(), 0)];
            assert_eq!(
                state.txn.add_partitions("bench-direct", pid, epoch, &parts),
                ErrorCode::NONE
            );
            let c = Instant::now();
            assert_eq!(
                state.txn.end_txn(&*state, "bench-direct", pid, epoch, true),
                ErrorCode::NONE
            );
            end.push(c.elapsed());
        }
        (end, fsync_count() - before)
    })
    .await
    .unwrap();
    broker.shutdown().await;
    let (mut commit, mut end) = (latencies, end_latencies);
    commit.sort();
    end.sort();
    println!("kaas-ref one-record transactions: {txns}, rdkafka transactional producer");
    println!(
        "  transactions/s:    {:.0}",
        txns as f64 / elapsed.as_secs_f64()
    );
    println!("  commit p50:        {:.2} ms", ms(&commit, 0.50));
    println!("  commit p99:        {:.2} ms", ms(&commit, 0.99));
    println!("  fsyncs/txn:        {:.2} (AddPartitions slot write, the record, prepare, marker, complete)", fsyncs as f64 / txns as f64);
    println!("broker side only (AddPartitionsToTxn + EndTxn through the coordinator, no client):");
    println!("  EndTxn p50:        {:.2} ms", ms(&end, 0.50));
    println!("  EndTxn p99:        {:.2} ms", ms(&end, 0.99));
    println!(
        "  fsyncs/txn:        {:.2}",
        coordinator_fsyncs as f64 / txns as f64
    );
}

/// The `q` quantile of sorted latencies, in milliseconds.
fn ms(sorted: &[Duration], q: f64) -> f64 {
    let i = ((sorted.len() as f64 * q) as usize).min(sorted.len() - 1);
    sorted[i].as_secs_f64() * 1e3
}
