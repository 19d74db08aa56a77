//! franz-go's kgo suite as an outside judge, in CI: its transaction, group and produce tests on
//! kaas-ref and a live Apache 3.7 through `kconform peers`. Every test that passes on Apache
//! must pass on kaas-ref within twice its time, or stand in the allowlist with a reason. The
//! full suite (about a minute per target) runs from `kconform peers` itself.

use crate::util;

/// The tests CI runs: transactions (consume-transform-produce under rebalances, static
/// members), groups, produce (large messages against max.message.bytes), and the regex
/// consumer that needs __consumer_offsets to be internal.
const CI_TESTS: &str = "^(TestTxnEtl|TestGroupETL|TestGroupSimple|TestClient_Produce|TestClient_ProduceLargeMessages|TestConsumeRegex)$";

fn peers(args: &[&str]) -> (i32, String, String) {
    // Two suites at once on two cores would time each other, not the brokers.
    let _turn = util::heavy_turn_blocking();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let out = crate::util::kconform()
        .current_dir(root)
        .arg("peers")
        .args([
            "--target",
            "ref",
            "--target",
            "apache",
            "--apache-backend",
            "jvm",
        ])
        .args(args)
        .output()
        .expect("kconform runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Why this machine cannot run the suite on both targets, if it cannot.
fn cannot_run() -> Option<String> {
    if let Err(why) = kconform::peers::suite::available() {
        return Some(why.to_string());
    }
    kconform::targets::apache::available()
        .err()
        .map(|why| format!("no live Apache: {why}"))
}

#[test]
fn the_transaction_group_and_produce_tests_pass_on_kaas_ref_as_on_apache() {
    if let Some(why) = cannot_run() {
        println!("SKIPPED: {why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("peers.json");
    // Outcomes only: a test is no place for a timed assertion. TestGroupETL's time has two
    // modes on both brokers (the slow one waits out a rebalance): 6.5-21 s on kaas-ref and
    // 6-19.3 s on Apache across runs here, so a one-sample "slower" verdict failed CI runs
    // at random (kaas-ref 21 s against Apache 7 s, past the 12 s floor this test once had).
    // The time comparison is `kconform peers`'s own finding (its 1 s floor), read from its
    // runs, not asserted here: an hour's floor keeps it out of this verdict.
    let (code, out, err) = peers(&[
        "--run",
        CI_TESTS,
        "--floor-secs",
        "3600",
        "--json",
        json.to_str().unwrap(),
    ]);
    println!("{out}");
    assert_eq!(code, 0, "kconform peers failed:\n{out}\n{err}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["verdict"], "passed");
    let tests = report["tests"].as_object().unwrap();
    assert_eq!(tests.len(), 6, "{tests:?}");
    for (name, results) in tests {
        for target in ["ref", "apache"] {
            assert_eq!(results[target]["outcome"], "pass", "{name} on {target}");
        }
    }
}

#[test]
fn an_allowlist_entry_that_does_not_show_is_stale() {
    if let Some(why) = cannot_run() {
        println!("SKIPPED: {why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let allowlist = dir.path().join("allow.toml");
    std::fs::write(
        &allowlist,
        "[[allow]]\ntest = \"TestGroupSimple\"\nkind = \"fails\"\nreason = \"a claim the run refutes\"\n",
    )
    .unwrap();
    let (code, out, err) = peers(&[
        "--run",
        "^TestGroupSimple$",
        "--allowlist",
        allowlist.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        out.contains("STALE allowlist entry TestGroupSimple (Fails) did not show on ref"),
        "{out}"
    );
}
