//! The Java kafka-clients 3.7 exactly-once workload (`harness/java/KconformClient.java`) on
//! kaas-ref and on a live Apache 3.7: what the Java client saw — each call's outcome (the
//! exception class where one was raised), the records read at each isolation level, the
//! group's offsets as the Admin client lists them — must be the same on both.

use std::time::Duration;

use kconform::target::{Running, TargetSpec};

const DEADLINE: Duration = Duration::from_secs(180);

/// What the workload saw, without the exceptions' messages (kept in the transcript for people;
/// a message may carry a broker's own words).
fn seen(transcript: &serde_json::Value) -> serde_json::Value {
    let mut t = transcript.clone();
    if let Some(calls) = t["calls"].as_array_mut() {
        for c in calls {
            if let Some(c) = c.as_object_mut() {
                c.remove("message");
            }
        }
    }
    t
}

async fn run_on(spec: TargetSpec, classes: std::path::PathBuf) -> serde_json::Value {
    let target = Running::start(&spec).await.expect("target starts");
    let bootstrap = target.bootstrap_servers();
    let run_id = uuid::Uuid::new_v4().simple().to_string();
    let transcript = tokio::task::spawn_blocking(move || {
        kconform::java_client::run(&classes, "eos", &bootstrap, &run_id, DEADLINE)
    })
    .await
    .expect("the workload thread")
    .unwrap_or_else(|e| panic!("{e}"));
    target.stop().await;
    transcript
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_java_client_sees_the_same_transactions_on_both_brokers() {
    let classes = match tokio::task::spawn_blocking(kconform::java_client::compile)
        .await
        .unwrap()
    {
        Ok(classes) => classes,
        Err(kconform::java_client::JavaError::Setup(why)) => {
            println!("SKIPPED: no Java client here ({why})");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let kaas = run_on(TargetSpec::Ref, classes.clone()).await;
    assert_eq!(
        kaas["read_committed"],
        serde_json::json!(["c0", "c1", "c2", "c3", "c4", "x0"]),
        "{kaas}"
    );
    assert_eq!(kaas["read_uncommitted"], 11, "{kaas}");
    assert_eq!(kaas["group_offsets"]["partition 0"], 5, "{kaas}");
    let fenced = &kaas["calls"][6];
    assert_eq!(
        fenced["result"], "org.apache.kafka.common.errors.ProducerFencedException",
        "{kaas}"
    );
    let apache = run_on(TargetSpec::Apache(kconform::apache::Backend::Jvm), classes).await;
    assert_eq!(
        seen(&kaas),
        seen(&apache),
        "the Java client saw kaas-ref (left) and Apache (right) differently"
    );
    println!("the Java client saw the same on both: {kaas}");
}
