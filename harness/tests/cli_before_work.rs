//! Every input checked before any work, on every command that judges: a file that cannot be
//! written (its folder missing) is refused in one line before a scenario, workload, fault or
//! frame is sent (it was found after the whole run: `run` printed `PASSED: 256 transcripts`,
//! then exit 2).

use crate::cli::kconform_in;

/// The one refusal line of `kconform ARGS` run in `dir`, after asserting it exited 2 with
/// nothing on stdout (no report: no work was done).
fn refusal(dir: &std::path::Path, args: &[&str]) -> String {
    let (code, out, err) = kconform_in(dir, args, &[]);
    assert_eq!(code, 2, "{args:?}: {err}");
    assert!(out.is_empty(), "{args:?} did work before refusing: {out}");
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("kconform: could not run"))
        .collect();
    assert_eq!(lines.len(), 1, "{args:?}: {err}");
    lines[0].to_owned()
}

#[test]
fn a_missing_output_folder_is_refused_before_any_work_on_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let on_ref = ["--target", "ref", "--target", "apache-recorded"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            [&["run"][..], &on_ref, &["--junit", "gone/k.xml"]].concat(),
            "--junit gone/k.xml",
        ),
        (
            [&["run"][..], &on_ref, &["--html", "gone/k.html"]].concat(),
            "--html gone/k.html",
        ),
        (
            [&["run"][..], &on_ref, &["--save-baseline", "gone/b.json"]].concat(),
            "--save-baseline gone/b.json",
        ),
        (
            vec!["coverage", "--target", "ref", "--markdown", "gone/c.md"],
            "--markdown gone/c.md",
        ),
        (
            vec![
                "fuzz",
                "--target",
                "ref",
                "--duration",
                "1s",
                "--json",
                "gone/f.json",
            ],
            "--json gone/f.json",
        ),
        (
            vec![
                "clients",
                "fencing",
                "--target",
                "ref",
                "--markdown",
                "gone/c.md",
            ],
            "--markdown gone/c.md",
        ),
        (
            vec!["chaos", "--target", "ref:3", "--json", "gone/c.json"],
            "--json gone/c.json",
        ),
        (
            vec!["peers", "--target", "ref", "--junit", "gone/p.xml"],
            "--junit gone/p.xml",
        ),
    ];
    for (args, flag) in cases {
        let line = refusal(dir.path(), &args);
        assert!(
            line.contains(&format!("{flag}: the folder gone does not exist")),
            "{args:?}: {line}"
        );
    }
}

/// A broker kconform does not start is asked before any other target starts: a build named
/// first is not even launched when the external target beside it cannot be reached.
#[cfg(unix)]
#[test]
fn an_unreachable_external_target_is_said_before_any_broker_starts() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started");
    let build = dir.path().join("fake-build");
    std::fs::write(
        &build,
        format!("#!/bin/sh\ntouch '{}'\nsleep 30\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(&build, std::fs::Permissions::from_mode(0o755)).unwrap();
    let target = format!("build={}", build.display());
    let line = refusal(
        dir.path(),
        &[
            "run",
            "--target",
            &target,
            "--target",
            "external=127.0.0.1:1",
        ],
    );
    assert!(
        line.contains("external at 127.0.0.1:1 cannot be reached"),
        "{line}"
    );
    assert!(
        !marker.exists(),
        "the build was started before the external target was asked"
    );
}

/// A ledger that does not parse is refused before any scenario runs, with one target too (it
/// was read only to compare two, and so silently unused with one).
#[test]
fn a_bad_ledger_is_refused_with_one_target_before_any_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let scenarios = dir.path().join("scenarios");
    std::fs::create_dir(&scenarios).unwrap();
    let built_in = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios");
    for name in ["end-txn-on-empty.toml", "field-classes.toml"] {
        std::fs::copy(format!("{built_in}/{name}"), scenarios.join(name)).unwrap();
    }
    std::fs::write(scenarios.join("deviations.toml"), "[[deviation]\n").unwrap();
    let dir_arg = scenarios.display().to_string();
    let line = refusal(
        dir.path(),
        &["run", "--target", "ref", "--scenarios", &dir_arg],
    );
    assert!(line.contains("deviations.toml: TOML parse error"), "{line}");
}

/// `--quiet` leaves the report alone on stdout and nothing on stderr; without it, kaas-ref's
/// own log lines (its `WARN ... marker refused`) go to a file of the run, named once, not into
/// the run's output (they were printed inside the progress of a PASSED run).
#[test]
fn quiet_is_quiet_and_the_brokers_logs_go_to_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["run", "--target", "ref", "--target", "apache-recorded"];
    let (code, out, err) = kconform_in(dir.path(), &[&args[..], &["--quiet"]].concat(), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("PASSED: "), "{out}");
    assert!(err.is_empty(), "--quiet printed: {err}");

    let (code, _, err) = kconform_in(dir.path(), &args, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        !err.contains("WARN"),
        "a broker's log line on stderr: {err}"
    );
    let said: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("the logs of the brokers it runs in its own process"))
        .collect();
    assert_eq!(said.len(), 1, "{err}");
    let path = said[0].rsplit(" are in ").next().unwrap();
    let log = std::fs::read_to_string(path).unwrap();
    assert!(
        log.contains("WARN") && log.contains("reference_broker"),
        "{log}"
    );
    std::fs::remove_file(path).unwrap();
}
