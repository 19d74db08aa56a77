//! kaas-ref produce throughput with a real client, and its idle memory.
//!
//! Starts the `kaas-ref` binary, reads its resident set size once it is idle, then produces
//! 1 KiB records with an rdkafka idempotent producer (acks=all, so every batch is fsync'd)
//! and prints records/s and MB/s. Run: `cargo bench -p reference-broker --bench produce`.
//! RECORDS overrides the record count (default 50000).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::producer::{FutureProducer, FutureRecord};

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

#[tokio::main]
async fn main() {
    let records: usize = std::env::var("RECORDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50_000);
    let dir = tempfile::tempdir().expect("temp dir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_kaas-ref"))
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kaas-ref starts");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let addr = lines
        .next()
        .and_then(|l| l.ok())
        .and_then(|l| l.strip_prefix("kaas-ref listening on ").map(str::to_owned))
        .expect("kaas-ref printed its address");
    std::thread::spawn(move || lines.for_each(drop));
    tokio::time::sleep(Duration::from_secs(1)).await;
    let idle = rss_kib(child.id());

    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", &addr)
        .set("enable.idempotence", "true")
        .set("acks", "all")
        .set("linger.ms", "5")
        .set("queue.buffering.max.messages", "1000000")
        .create()
        .expect("producer");
    let payload = vec![b'x'; 1024];
    // Warm-up: creates the topic and the producer id.
    producer
        .send(
            FutureRecord::<(), _>::to("bench").payload(&payload),
            Duration::from_secs(10),
        )
        .await
        .expect("warm-up record");
    let start = Instant::now();
    let mut deliveries = Vec::with_capacity(records);
    for _ in 0..records {
        loop {
            match producer.send_result(FutureRecord::<(), _>::to("bench").payload(&payload)) {
                Ok(d) => {
                    deliveries.push(d);
                    break;
                }
                Err(_) => {
                    producer.poll(Duration::from_millis(1));
                }
            }
        }
    }
    let mut failed = 0;
    for d in deliveries {
        if !matches!(d.await, Ok(Ok(_))) {
            failed += 1;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let busy = rss_kib(child.id());
    let _ = child.kill();
    let _ = child.wait();
    println!("kaas-ref produce benchmark: {records} records of 1 KiB, idempotent, acks=all");
    println!("  records/s: {:.0}", records as f64 / secs);
    println!("  MB/s:      {:.1}", records as f64 * 1024.0 / secs / 1e6);
    println!("  failed:    {failed}");
    match (idle, busy) {
        (Some(i), Some(b)) => println!(
            "  RSS idle:  {:.1} MB (after the run: {:.1} MB)",
            i as f64 / 1024.0,
            b as f64 / 1024.0
        ),
        _ => println!("  RSS: not measured (no /proc on this system)"),
    }
    assert_eq!(failed, 0, "every record delivered");
}
