//! The `kconform` binary's contract: exit codes, one-line reasons, help that answers questions.

pub(crate) fn kconform(args: &[&str]) -> (i32, String, String) {
    kconform_with(args, &[])
}

/// `kconform` with extra environment variables.
fn kconform_with(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    kconform_in(std::path::Path::new(root), args, env)
}

/// `kconform` run from `dir`, with extra environment variables.
pub(crate) fn kconform_in(
    dir: &std::path::Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (i32, String, String) {
    let out = crate::util::kconform()
        .current_dir(dir)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("kconform runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn an_unreachable_target_exits_2_with_the_reason_on_one_line() {
    let (code, _, err) = kconform(&[
        "run",
        "end-txn-on-empty",
        "--target",
        "external=127.0.0.1:1",
    ]);
    assert_eq!(code, 2, "{err}");
    let reason: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("kconform: could not run"))
        .collect();
    assert_eq!(reason.len(), 1, "{err}");
    assert!(reason[0].contains("127.0.0.1:1"), "{err}");
}

#[test]
fn unknown_scenarios_and_targets_are_refused_by_name() {
    let (code, _, err) = kconform(&["run", "no-such-scenario", "--target", "ref"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no scenario named 'no-such-scenario'"),
        "{err}"
    );
    let (code, _, err) = kconform(&["run", "--target", "apache-ish"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown target 'apache-ish'"), "{err}");
}

#[test]
fn a_passing_run_on_ref_exits_0_and_writes_its_reports() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let junit = dir.path().join("r.xml");
    let (code, out, err) = kconform(&[
        "run",
        "init-producer-id-rejoin",
        "end-txn-on-empty",
        "--target",
        "ref",
        "--json",
        json.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("PASSED: 2 transcripts"), "{out}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    assert_eq!(report["runs"].as_array().unwrap().len(), 2);
    assert!(std::fs::read_to_string(junit)
        .unwrap()
        .contains("<testsuite"));
}

#[test]
fn list_names_every_scenario_and_help_names_the_commands() {
    let (code, out, _) = kconform(&["list"]);
    assert_eq!(code, 0);
    assert!(out.lines().count() >= 80, "{out}");
    assert!(out.contains("end-txn-on-empty"));
    let (code, out, _) = kconform(&["--help"]);
    assert_eq!(code, 0);
    for command in ["run", "repro", "coverage", "list", "apache"] {
        assert!(
            out.contains(command),
            "{command} missing from --help:\n{out}"
        );
    }
    let (_, out, _) = kconform(&["run", "--help"]);
    for flag in [
        "--target",
        "--apache-backend",
        "--include-slow",
        "--jobs",
        "--markdown",
    ] {
        assert!(out.contains(flag), "{flag} missing from run --help");
    }
}

#[test]
fn peers_without_go_exits_2_and_says_why() {
    let (code, _, err) = kconform_with(
        &[
            "peers",
            "--target",
            "ref",
            "--target",
            "external=127.0.0.1:1",
        ],
        &[("KCONFORM_GO", "/nonexistent/go")],
    );
    assert_eq!(code, 2, "{err}");
    let reason: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("kconform: could not run"))
        .collect();
    assert_eq!(reason.len(), 1, "{err}");
    assert!(reason[0].contains("go not found"), "{err}");
}

/// A broker kconform does not start that does not answer is refused before the suite is
/// built (a minute of Go on a fresh machine): the `go` given is never run.
#[test]
fn peers_refuses_a_target_it_cannot_reach() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let ran = dir.path().join("go-ran");
    let go = dir.path().join("go");
    std::fs::write(
        &go,
        format!("#!/bin/sh\ntouch '{}'\nexit 1\n", ran.display()),
    )
    .unwrap();
    std::fs::set_permissions(&go, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (code, _, err) = kconform_with(
        &[
            "peers",
            "--target",
            "external=127.0.0.1:1",
            "--run",
            "^TestGroupSimple$",
        ],
        &[("KCONFORM_GO", go.to_str().unwrap())],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("could not run") && err.contains("127.0.0.1:1"),
        "{err}"
    );
    assert!(
        !ran.exists(),
        "go was run before the target was refused: {err}"
    );
}

/// A `kconform proxy` process, killed however the test ends.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `kconform proxy --upstream ref` with `args` (its mutation), and the address it listens on.
fn proxy(args: &[&str]) -> (Killed, String) {
    use std::io::BufRead;
    let mut proxy = crate::util::kconform()
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .args(["proxy", "--upstream", "ref"])
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("kconform proxy runs");
    let stdout = proxy.stdout.take().unwrap();
    let killed = Killed(proxy);
    let mut addr = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut addr)
        .unwrap();
    (killed, addr)
}

/// A broker that answers EndTxn v3 with a stray byte (kaas-ref behind `kconform proxy`) gets
/// a full report, exit 1: the step malformed with the byte named, later steps skipped, every
/// report file written, and the other scenarios judged as usual.
#[test]
fn a_broker_with_a_stray_byte_gets_a_full_report_and_exit_1() {
    let (_proxy, addr) = proxy(&[
        "--api",
        "EndTxn",
        "--version",
        "3",
        "--mutation",
        "insert:error_code",
    ]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let target = format!("external={}", addr.trim());
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "end-txn-on-empty",
            "init-producer-id-version-sweep",
            "--target",
            &target,
            "--target",
            "apache-recorded",
        ];
        args.extend(extra);
        kconform(&args)
    };
    let (code, out, err) = run(&["--json", json.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("stopped: step 'end-commit' got a malformed answer: EndTxn v3 (response header v1): a stray byte 2a at byte 9, before error_code"),
        "{out}"
    );
    // The root cause: the diagnosis, what it stands for, and the command that shows it.
    assert!(
        out.contains("UNDOCUMENTED unreadable malformed (malformed | response): a stray byte 2a at byte 9, before error_code: without it the answer is well-formed (v3)"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "repro: kconform repro end-txn-on-empty --target {target} --target apache-recorded"
        )),
        "{out}"
    );
    assert!(out.contains("init-producer-id-version-sweep"), "{out}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["runs"].as_array().unwrap().len(), 4, "{report}");
    assert_eq!(report["verdict"], "failed");
    assert_eq!(report["runs"][0]["status"], "stopped");
    assert_schema(&report);
    let rows: u64 = report["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            c["differences"].as_u64().unwrap()
                + c["folded"].as_u64().unwrap()
                + c["consequences"].as_u64().unwrap()
        })
        .sum();
    assert_eq!(rows, report["totals"]["differences"].as_u64().unwrap());
    // --flat: each difference on its own line, as before causes.
    let (_, out, _) = run(&["--flat"]);
    assert!(
        out.contains("UNDOCUMENTED end-txn-on-empty end-commit outcome: external: malformed | apache-recorded: response"),
        "{out}"
    );
    // A baseline of this run: the same broker passes against it; what it does not hold fails,
    // named; what it holds that is gone is fixed.
    let baseline = dir.path().join("baseline.json");
    // Saving holds the run to what it saved: exit 0, said (it was 1, failing `set -e`).
    let (code, out, err) = run(&["--save-baseline", baseline.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("exit 0: what fails this run is the baseline it saved"),
        "{err}"
    );
    let (code, out, err) = run(&["--baseline", baseline.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(", 0 new, 0 fixed"), "{out}");
    let mut saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&baseline).unwrap()).unwrap();
    let known = saved["known"].as_array_mut().unwrap();
    let dropped = known.remove(0)["key"].as_str().unwrap().to_owned();
    known.push(serde_json::json!({"key": "cause: a cause since fixed", "rows": 1}));
    std::fs::write(&baseline, saved.to_string()).unwrap();
    let (code, out, err) = run(&["--baseline", baseline.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains(&format!("NEW {dropped}\n")), "{out}");
    assert!(out.contains("FIXED cause: a cause since fixed\n"), "{out}");
    assert_eq!(out.matches("NEW ").count(), 1, "{out}");
    // --add-to-baseline: a missing file is no runs yet (everything new); added to, the file
    // holds what that run showed, counts the runs, and keeps what it knew.
    let grown = dir.path().join("grown.json");
    let (code, out, err) = run(&["--add-to-baseline", grown.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("from 1 run(s)"), "{err}");
    let (code, out, err) = run(&["--add-to-baseline", grown.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let text = std::fs::read_to_string(&grown).unwrap();
    let saved: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(saved["runs"], 2, "{text}");
    assert!(
        saved["known"]
            .as_array()
            .unwrap()
            .iter()
            .all(|k| k["seen"] == 2),
        "{text}"
    );
    let (code, _, err) = run(&["--add-to-baseline", "x.json", "--baseline", "y.json"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot be used with"), "{err}");
}

/// The report validates against `harness/report.schema.json`.
fn assert_schema(report: &serde_json::Value) {
    crate::util::assert_follows_schema(include_str!("../report.schema.json"), report);
}

/// A reader that goes away (`kconform list | head -1`) ends kconform quietly, exit 0.
#[test]
fn a_closed_stdout_ends_quietly() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    for args in [
        &["list"][..],
        &["topics"][..],
        &["run", "end-txn-on-empty", "--target", "ref", "--show"][..],
    ] {
        let mut child = crate::util::kconform()
            .current_dir(root)
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// Options that cannot mean anything are refused on one line, and an unknown scenario name
/// gets the nearest known one.
#[test]
fn nonsense_is_refused_with_a_reason() {
    for (args, why) in [
        (&["run", "--jobs", "0"][..], "invalid value '0' for '--jobs"),
        (
            &["run", "end-txn-on-empty", "--target", "ref", "--target", "ref"][..],
            "--target ref is given twice",
        ),
        (
            &["run", "end-txn-on-empy", "--target", "ref"][..],
            "no scenario named 'end-txn-on-empy' in the scenarios built into kconform (did you mean 'end-txn-on-empty'?)",
        ),
        (
            &["coverage", "no-such-scenario", "--target", "ref"][..],
            "no scenario named 'no-such-scenario'",
        ),
        (
            &["apache", "cluster", "--brokers", "0"][..],
            "invalid value '0' for '--brokers",
        ),
        (&["fuzz", "--oracle", "nope"][..], "the oracle is apache (apache@RELEASE for another release) or none, not 'nope'"),
        (&["run", "--target", "external=notahost"][..], "'notahost' is no HOST:PORT"),
        (&["run", "--nope"][..], "unexpected argument '--nope' found"),
        (&["fuzz", "--broker-log", "x.log"][..], "not provided: --restart-cmd <CMD>"),
    ] {
        let (code, _, err) = kconform(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(why), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        // Every refusal alike: one line, kconform's, not every form a target may take.
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("kconform: could not run: "), "{args:?}: {err}");
        assert!(!err.contains("expected ref, apache"), "{args:?}: {err}");
    }
}

/// Each command's help shows the options that apply to it, and `--target` names every kind.
#[test]
fn help_shows_what_applies() {
    let (_, list, _) = kconform(&["list", "--help"]);
    assert!(list.contains("--scenarios"), "{list}");
    for absent in [
        "--target",
        "--deadline-ms",
        "--snapshots",
        "--apache-backend",
    ] {
        assert!(
            !list.contains(absent),
            "list --help shows {absent}:\n{list}"
        );
    }
    let (_, run, _) = kconform(&["run", "--help"]);
    for kind in ["ref", "apache-recorded", "external=HOST:PORT", "--verbose"] {
        assert!(run.contains(kind), "run --help lacks {kind}:\n{run}");
    }
    let (_, apache, _) = kconform(&["apache", "--help"]);
    for what in ["cluster", "--brokers", "Ctrl-C"] {
        assert!(
            apache.contains(what),
            "apache --help lacks {what}:\n{apache}"
        );
    }
}

/// With no --scenarios, kconform uses the scenarios, ledger and recorded answers built into
/// it: an installed binary works from any directory, and coverage takes scenario names.
#[test]
fn kconform_works_from_any_directory() {
    let elsewhere = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| kconform_in(elsewhere.path(), args, &[]);
    let (code, out, err) = run(&["list"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().count() >= 100, "{out}");
    let (code, out, err) = run(&[
        "run",
        "end-txn-on-empty",
        "--target",
        "ref",
        "--target",
        "apache-recorded",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("recorded in the answers built into kconform"),
        "{out}"
    );
    let (code, out, err) = run(&["coverage", "end-txn-on-empty", "--target", "ref"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("| EndTxn | 3 |"), "{out}");
    // A directory given explicitly is used, and named when it is wrong.
    let (code, _, err) = run(&["list", "--scenarios", "nowhere"]);
    assert_eq!(code, 2);
    assert!(err.contains("nowhere"), "{err}");
}

/// A passing comparison: undocumented first, each documented deviation on one line (every
/// difference with --verbose, the values labelled with the targets' names), a JSON report in
/// the documented schema, and `repro` with the spec section and what a Java client raises.
#[test]
fn documented_differences_read_at_a_glance() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let pair = [
        "end-txn-on-empty",
        "--target",
        "ref",
        "--target",
        "apache-recorded",
    ];
    let mut args = vec!["run"];
    args.extend(pair);
    args.extend(["--json", json.to_str().unwrap()]);
    let (code, out, err) = kconform(&args);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("DOCUMENTED invalid-transition-wire-50: 1 difference(s), 1 cause(s), in end-txn-on-empty"),
        "{out}"
    );
    assert!(!out.contains("end-commit error_code"), "{out}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["verdict"], "passed");
    assert_eq!(
        report["differences"][0]["left"],
        "50 INVALID_TRANSACTION_TIMEOUT"
    );
    assert!(
        report["differences"][0]["java_client"].is_string(),
        "{report:#}"
    );
    assert_schema(&report);
    let mut verbose = vec!["run", "--verbose"];
    verbose.extend(pair);
    let (_, out, _) = kconform(&verbose);
    assert!(
        out.contains("DOCUMENTED invalid-transition-wire-50 state EndTxn error_code: 50 INVALID_TRANSACTION_TIMEOUT | 48 INVALID_TXN_STATE (v3): 1 in end-txn-on-empty"),
        "{out}"
    );
    verbose.push("--flat");
    let (_, out, _) = kconform(&verbose);
    assert!(
        out.contains("end-txn-on-empty end-commit error_code: ref: 50 INVALID_TRANSACTION_TIMEOUT | apache-recorded: 48 INVALID_TXN_STATE"),
        "{out}"
    );
    let mut repro = vec!["repro"];
    repro.extend(pair);
    let (code, out, err) = kconform(&repro);
    assert_eq!(code, 0, "{out}{err}");
    for line in [
        "documented by invalid-transition-wire-50",
        "    spec: ",
        "    a Java 3.7 client: ",
    ] {
        assert!(out.contains(line), "{line}:\n{out}");
    }
}

/// `kconform clients` lists its workloads from any directory and refuses, in one line and
/// before starting anything, a workload nobody wrote and targets no client can run on.
#[test]
fn clients_lists_its_workloads_and_refuses_what_it_cannot_run() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, _) = kconform_in(dir.path(), &["clients", "--list"], &[]);
    assert_eq!(code, 0);
    assert_eq!(
        out.lines().count(),
        kconform::clients::WORKLOADS.len() + 1 + kconform::clients::Client::ALL.len(),
        "the workloads, a blank line, the clients: {out}"
    );
    assert!(out.starts_with("eos "), "{out}");
    assert!(
        out.contains("kafka-python               3.0.12 (installed on first use): fencing"),
        "{out}"
    );
    for (args, reason) in [
        (
            &["clients", "nope", "--target", "ref"][..],
            "no workload 'nope' (kconform clients --list shows them)",
        ),
        (
            &["clients", "--target", "apache-recorded"][..],
            "apache-recorded: a client needs a live broker",
        ),
        (
            &["clients", "--target", "ref+sasl"][..],
            "ref+sasl: the client workloads use a plain listener",
        ),
    ] {
        let (code, _, err) = kconform(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(reason), "{args:?}: {err}");
    }
}

/// `kconform chaos` runs real clients: recorded answers are refused, in one line, exit 2.
#[test]
fn chaos_refuses_recorded_answers_in_one_line() {
    let (code, out, err) =
        kconform(&["chaos", "--target", "apache-recorded:3", "--duration", "1s"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("chaos needs a live broker"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// A log line of the kaas-ref kconform runs in process (here its warning that the disk a
/// scenario filled refused a write) goes to the run's log of its brokers, as plain text with
/// no colour codes, and stderr (a pipe here) carries none either.
#[test]
fn logs_written_to_a_pipe_carry_no_colour_codes() {
    let (code, _, err) = kconform(&[
        "run",
        "--target",
        "ref:3",
        "cluster-disk-full-end-txn-retried",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains('\u{1b}'), "colour codes in a pipe: {err:?}");
    let path = err
        .lines()
        .find_map(|l| l.split_once("(kaas-ref, the stand-in Kubernetes API) are in "))
        .map(|(_, p)| p.trim().to_owned())
        .unwrap_or_else(|| panic!("no log named: {err}"));
    let log = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(log.contains("No space left on device (injected)"), "{log}");
    assert!(!log.contains('\u{1b}'), "colour codes in the log: {log:?}");
}

/// A scenario no target of the run can do is refused with the reason that applies to the run's
/// targets only: Apache's disk (recorded or live), an external cluster's missing command.
#[test]
fn a_fault_no_target_can_do_is_refused_with_the_reason_of_the_targets_named() {
    let (code, _, err) = kconform(&[
        "run",
        "cluster-disk-full-end-txn-retried",
        "--target",
        "ref:3",
        "--target",
        "apache-recorded:3",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("(Apache: its disk cannot be filled here): cluster-disk-full-end-txn-retried (fill_disk, free_disk)")
            && !err.contains("external cluster: no --fault-cmd given"),
        "{err}"
    );
    assert!(err.contains("no scenario left to run"), "{err}");
    let (code, _, err) = kconform(&[
        "run",
        "cluster-disk-full-end-txn-retried",
        "--target",
        "external:3=127.0.0.1:1",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("(an external cluster: no --fault-cmd given for the act):")
            && !err.contains("Apache: its disk"),
        "{err}"
    );
}

/// A broker whose every answer is framed with the wrong response header version (kaas-ref
/// behind `kconform proxy --api all --mutation header-version`): one cause, the APIs it shows on
/// listed; every scenario read past it and judged to its end, the documented deviations in
/// them still shown (none stale, none not reached). With --stop-at-malformed the scenarios stop
/// at the first answer as before.
#[test]
fn a_header_version_defect_is_one_cause_and_hides_no_step() {
    let (_proxy, addr) = proxy(&["--api", "all", "--mutation", "header-version"]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let target = format!("external={}", addr.trim());
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "end-txn-wrong-epoch",
            "add-offsets-empty-group",
            "init-producer-id-timeout-zero",
            "--target",
            &target,
            "--target",
            "apache-recorded",
            "--json",
            json.to_str().unwrap(),
        ];
        args.extend(extra);
        let (code, out, err) = kconform(&args);
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        (code, out, err, report)
    };
    let (code, out, err, report) = run(&[]);
    assert_eq!(code, 1, "{out}{err}");
    assert_schema(&report);
    let undocumented: Vec<&serde_json::Value> = report["causes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["documented_by"].is_null())
        .collect();
    assert_eq!(undocumented.len(), 1, "{out}");
    let header = undocumented[0];
    assert!(
        header["signature"]
            .as_str()
            .unwrap()
            .contains("the response header is vN, but <API> answers with header vN"),
        "{header}"
    );
    // What a reader is shown keeps the versions of its first difference; the signature that a
    // baseline keys does not.
    let title = header["title"].as_str().unwrap();
    assert!(
        title.contains("the response header is v0, but FindCoordinator v3 answers with header v1"),
        "{header}"
    );
    assert!(out.contains(title), "{out}");
    let versions = header["versions"].as_str().unwrap();
    assert!(
        versions.contains("EndTxn v") && versions.contains("InitProducerId v"),
        "{versions}"
    );
    assert_eq!(header["folded"], 0, "nothing skipped: {out}");
    for r in report["runs"].as_array().unwrap() {
        assert!(r["stopped"].is_null(), "{r}");
    }
    let judged = report["totals"]["judged_past_framing"].as_u64().unwrap();
    assert!(judged > 10, "{judged}: {out}");
    assert_eq!(report["totals"]["stale"], 0, "{out}");
    assert_eq!(report["totals"]["not_reached"], 0, "{out}");
    assert!(
        out.contains(&format!("{judged} steps judged past a framing defect")),
        "{out}"
    );
    // Stopping at it instead: every scenario stops at its first answer, its entries not reached.
    let (code, out, _, report) = run(&["--stop-at-malformed"]);
    assert_eq!(code, 1);
    assert_eq!(report["totals"]["judged_past_framing"], 0, "{out}");
    let not_reached = report["totals"]["not_reached"].as_u64().unwrap();
    assert!(not_reached > 0, "{out}");
    // The framing cause names the entries it kept from being reached.
    let header = report["causes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["documented_by"].is_null())
        .unwrap();
    let kept = header["kept_from_reach"].as_array().unwrap();
    let entries: std::collections::BTreeSet<&str> = report["not_reached"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["entry"].as_str().unwrap())
        .collect();
    assert_eq!(kept.len(), entries.len(), "{header}");
    assert!(
        out.contains(&format!("kept {} ledger entr", kept.len())),
        "{out}"
    );
    let stopped = report["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| !r["stopped"].is_null())
        .count();
    assert_eq!(stopped, 3, "{out}");
}

/// `--lanes 3`: the scenarios that kill brokers share three copies of kaas-ref's cluster out,
/// and their verdicts are the ones a single cluster gives (each matches Apache's recorded
/// answers); the report says how they ran.
#[test]
fn disrupting_scenarios_share_lanes_out_and_judge_alike() {
    let (code, out, err) = kconform(&[
        "run",
        "cluster-coordinator-killed-after-commit",
        "cluster-leader-killed-before-abort",
        "cluster-broker-restarted-rejoins",
        "--target",
        "ref:3",
        "--target",
        "apache-recorded:3",
        "--lanes",
        "3",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("PASSED: 6 transcripts"), "{out}");
    assert!(
        out.contains("ref:3: the scenarios that disrupt its brokers ran on 3 copies of the cluster side by side"),
        "{out}"
    );
    let (code, _, err) = kconform(&["run", "--lanes", "0"]);
    assert_eq!(code, 2, "{err}");
}
