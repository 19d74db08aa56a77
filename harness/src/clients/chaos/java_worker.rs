//! A chaos worker on the Java kafka-clients (`harness/java/KconformChaos.java`): the same
//! workload as the librdkafka workers ([`super::workload`]), in a JVM of its own, which prints
//! each transaction as it begins and ends, each error and each client call that may block, a
//! line each; this reads them into the worker's history and counts as they come, so a worker
//! given up loses nothing it printed. A second client matters: librdkafka could not read a real
//! kaas build's FindCoordinator v2 answer, and a chaos run on it alone began no transaction.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::history::{Outcome, Txn};
use super::workload::{Assignment, ClientCall, SharedRun, TRANSACTION_TIMEOUT};
use crate::clients::java::{self, JavaError, Runner};
use crate::targets::apache::Release;

/// The worker's source, built into kconform so that it runs from any directory.
const SOURCE: &str = include_str!("../../../java/KconformChaos.java");

/// How long a worker has, once told to stop (its standard input closed), to end its
/// transaction and exit before it is killed.
const EXIT: Duration = Duration::from_secs(45);

/// The chaos worker compiled against the kafka-clients of the release kaas claims.
pub fn compile() -> Result<Runner, JavaError> {
    java::compile_program("KconformChaos", SOURCE, Release::CLAIMED)
}

/// The calls the worker names, as the counts keep them.
fn call_name(call: &str) -> &'static str {
    match call {
        "initTransactions" => "initTransactions",
        "committed" => "committed",
        "beginTransaction" => "beginTransaction",
        "sendOffsetsToTransaction" => "sendOffsetsToTransaction",
        "commitTransaction" => "commitTransaction",
        "abortTransaction" => "abortTransaction",
        _ => "a client call",
    }
}

/// Reads one line the worker printed into its run.
fn take(line: &Value, w: u32, started: Instant, run: &SharedRun, committed: &AtomicU64) {
    let now = started.elapsed().as_millis() as u64;
    let mut run = run.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(call) = line.get("call").and_then(Value::as_str) {
        if line.get("error").is_none() {
            run.calling = Some(ClientCall {
                call: call_name(call),
                since_ms: now,
            });
            return;
        }
    }
    if let Some(seq) = line.get("begin").and_then(Value::as_u64) {
        run.calling = None;
        run.history.push(Txn {
            worker: w,
            seq,
            outcome: Outcome::Unknown,
            input_partition: w as i32,
            input_from: line.get("from").and_then(Value::as_i64).unwrap_or(-1),
            outputs: line
                .get("outputs")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|p| p.as_i64().map(|p| p as i32))
                .collect(),
            ended_ms: 0,
            began_ms: now,
            landed: vec![],
        });
    } else if let Some(seq) = line.get("end").and_then(Value::as_u64) {
        run.calling = None;
        let outcome = match line.get("outcome").and_then(Value::as_str) {
            Some("committed") => Outcome::Committed,
            Some("aborted") => Outcome::Aborted,
            _ => Outcome::Unknown,
        };
        let on_purpose = line.get("on_purpose") == Some(&Value::Bool(true));
        if let Some(t) = run.history.iter_mut().rev().find(|t| t.seq == seq) {
            t.outcome = outcome;
            t.ended_ms = now;
        }
        let stats = &mut run.stats;
        match (outcome, on_purpose) {
            (Outcome::Committed, _) => {
                stats.committed += 1;
                committed.fetch_add(1, Ordering::Relaxed);
            }
            (Outcome::Aborted, true) => stats.aborted_on_purpose += 1,
            (Outcome::Aborted, false) => stats.aborted_after_error += 1,
            (Outcome::Unknown, _) => stats.unknown += 1,
        }
    } else if let Some(class) = line.get("error").and_then(Value::as_str) {
        run.calling = None;
        *run.stats.errors.entry(class.to_owned()).or_default() += 1;
        if run.history.is_empty() && run.stats.before_first.is_none() {
            let call = line.get("call").and_then(Value::as_str).unwrap_or("a call");
            let message = line.get("message").and_then(Value::as_str).unwrap_or("");
            run.stats.before_first = Some(format!("{call}: {class}: {message}"));
        }
    } else if line.get("new_producer").is_some() {
        run.stats.new_producers += 1;
    }
}

/// Runs the worker of `a` on the Java client until it is told to stop, keeping what it does in
/// its run: its JVM started, its lines read as they come; told to stop, it ends its
/// transaction and exits, or is killed 45 s later.
pub fn work(runner: &Runner, a: Assignment) -> Result<(), String> {
    let (w, names) = (a.w, &a.names);
    a.run.lock().unwrap_or_else(|e| e.into_inner()).stats.client = "java";
    let mut command = runner
        .command("KconformChaos")
        .map_err(|e| format!("worker {w}'s JVM: {e}"))?;
    command
        .args([&a.bootstrap, &names.input, &names.output])
        .arg(a.shape.outputs.to_string())
        .arg(w.to_string())
        .args([names.group(w), names.transactional_id(w)])
        .arg(a.seed.to_string())
        .arg(names.input_base(w as i32).to_string())
        .arg(TRANSACTION_TIMEOUT.as_millis().to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = command
        .spawn()
        .map_err(|e| format!("worker {w}'s JVM did not start: {e}"))?;
    let stdin = child.stdin.take();
    let stdout = child.stdout.take().expect("piped");
    let reader = {
        let (run, committed, started) = (a.run.clone(), a.committed.clone(), a.started);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                match serde_json::from_str::<Value>(&line) {
                    Ok(v) => take(&v, w, started, &run, &committed),
                    Err(_) => tracing::debug!(worker = w, %line, "chaos: a Java worker's line"),
                }
            }
        })
    };
    while !a.stop.load(Ordering::Relaxed) {
        if let Ok(Some(status)) = child.try_wait() {
            let _ = reader.join();
            return Err(format!("worker {w}'s JVM ended early ({status})"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(stdin);
    let until = Instant::now() + EXIT;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(100)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
        }
    }
    let _ = reader.join();
    Ok(())
}
