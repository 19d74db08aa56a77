//! `kconform certify` through the binary: every input refused before the first broker
//! starts, and one baseline that holds a clean run and fails a new defect alone, in the judge
//! that found it (kaas-ref against Apache's recorded answers, the scenarios alone: seconds).

use std::path::Path;

use crate::cli::kconform;

/// `kconform certify` from `dir`.
fn certify_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let all: Vec<&str> = std::iter::once("certify")
        .chain(args.iter().copied())
        .collect();
    crate::cli::kconform_in(dir, &all, &[])
}

/// The one line of a refusal, and that no judge began.
fn refused(code: i32, err: &str) -> String {
    assert_eq!(code, 2, "{err}");
    assert!(
        !err.contains("certify: scenarios on"),
        "a judge began: {err}"
    );
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("kconform: could not run"))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    lines[0].to_owned()
}

/// A missing output folder, a baseline that is not one, a target that is not a broker and an
/// Apache that is not one are each refused in one line before anything runs (the output
/// folder was checked after the run before `certify`: minutes lost).
#[test]
fn certify_refuses_every_bad_input_before_any_judge() {
    let dir = tempfile::tempdir().unwrap();
    let base = ["--target", "ref", "--against", "apache-recorded"];
    let with = |extra: &[&str]| {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        certify_in(dir.path(), &args)
    };
    let (code, _, err) = with(&["--json", "no-such-folder/c.json"]);
    let line = refused(code, &err);
    assert!(
        line.contains("--json no-such-folder/c.json: the folder no-such-folder does not exist"),
        "{line}"
    );

    std::fs::write(dir.path().join("b.json"), "[]").unwrap();
    let (code, _, err) = with(&["--baseline", "b.json"]);
    assert!(
        refused(code, &err).contains("not a kconform baseline"),
        "{err}"
    );

    let (code, _, err) = certify_in(dir.path(), &["--target", "apache-recorded"]);
    assert!(refused(code, &err).contains("not a broker"), "{err}");
    let (code, _, err) = certify_in(dir.path(), &["--target", "ref", "--against", "ref"]);
    assert!(
        refused(code, &err).contains("certify judges against Apache"),
        "{err}"
    );
    let (code, _, err) = with(&["--judge", "chaos"]);
    assert!(refused(code, &err).contains("chaos: one broker"), "{err}");

    let (code, _, err) = kconform(&["certify", "--target", "ref", "--judge", "scenario"]);
    assert_eq!(code, 2);
    assert!(err.contains("'scenario' is no judge"), "{err}");
}

/// Copies the built-in scenarios to `to`, the ledger entry `drop` taken out of
/// deviations.toml: the difference it documented becomes a new, undocumented defect.
fn scenarios_without(to: &Path, drop: &str) {
    let from = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios"));
    copy_tree(from, to);
    let ledger = std::fs::read_to_string(to.join("deviations.toml")).unwrap();
    let start = ledger
        .find(&format!("id = \"{drop}\""))
        .and_then(|at| ledger[..at].rfind("[[deviation]]"))
        .expect("the entry is in the ledger");
    let end = ledger[start + 1..]
        .find("\n[[deviation]]")
        .map_or(ledger.len(), |e| start + 1 + e + 1);
    let cut = format!("{}{}", &ledger[..start], &ledger[end..]);
    std::fs::write(to.join("deviations.toml"), cut).unwrap();
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        match entry.file_type().unwrap().is_dir() {
            true => copy_tree(&entry.path(), &target),
            false => {
                std::fs::copy(entry.path(), target).unwrap();
            }
        }
    }
}

/// Saved on the clean broker, the baseline passes the same broker again; a defect that was
/// not there (a documented difference no longer documented) fails the certificate, named
/// alone as new in the scenarios' judge, in every form; saved with the defect, the next run
/// holds it and says so.
#[test]
fn one_baseline_holds_a_clean_run_and_names_a_new_defect_alone() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let base = [
        "--target",
        "ref",
        "--against",
        "apache-recorded",
        "--judge",
        "scenarios",
    ];
    let run = |extra: &[&str]| {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        certify_in(d, &args)
    };
    let (code, out, err) = run(&["--save-baseline", "clean.json"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("CERTIFIED: ref against apache-recorded, 1 judges passed"),
        "{out}"
    );
    assert!(out.contains("fuzz               left out"), "{out}");

    scenarios_without(&d.join("broken"), "invalid-transition-wire-50");
    let (code, out, err) = run(&[
        "--scenarios",
        "broken",
        "--baseline",
        "clean.json",
        "--json",
        "c.json",
        "--junit",
        "c.xml",
        "--markdown",
        "c.md",
        "--save-baseline",
        "broken.json",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("scenarios          FAILED"), "{out}");
    assert!(
        out.contains("NEW") || out.contains("New findings, worst first (1)"),
        "{out}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("c.json")).unwrap()).unwrap();
    crate::util::assert_follows_schema(include_str!("../certificate.schema.json"), &json);
    let new: Vec<&str> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["new"] == true)
        .map(|f| f["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        new,
        ["cause: EndTxn error_code: 50 INVALID_TRANSACTION_TIMEOUT | 48 INVALID_TXN_STATE"],
        "{out}"
    );
    assert_eq!(json["verdict"], "failed");
    let xml = std::fs::read_to_string(d.join("c.xml")).unwrap();
    assert!(
        xml.contains("<testsuite name=\"scenarios\" tests=\"1\" failures=\"1\">"),
        "{xml}"
    );
    let md = std::fs::read_to_string(d.join("c.md")).unwrap();
    assert!(md.starts_with("## kconform certify: NOT CERTIFIED"), "{md}");

    let (code, out, err) = run(&["--scenarios", "broken", "--baseline", "broken.json"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("baseline: 1 known, 0 new, 0 fixed"), "{out}");
    // The same baseline read by `run` alone holds the same defect.
    let (code, out, err) = crate::cli::kconform(&[
        "run",
        "--target",
        "ref",
        "--target",
        "apache-recorded",
        "--scenarios",
        d.join("broken").to_str().unwrap(),
        "--baseline",
        d.join("broken.json").to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
}
