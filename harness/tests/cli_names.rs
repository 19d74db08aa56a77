//! One name for one idea across the subcommands: every flag's value is named alike wherever the
//! flag appears, a file written is a `<FILE>` on every command, and the retired names
//! (`--timeout-secs`, `--deadline-secs`, `--parallel`, `--java-release`) are taken but shown
//! nowhere.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Each flag of `kconform COMMAND --help` with the name of its value (empty for a switch).
fn flags(command: &str) -> Vec<(String, String)> {
    let mut args: Vec<&str> = command.split_whitespace().collect();
    args.push("--help");
    let out = Command::new(env!("CARGO_BIN_EXE_kconform"))
        .args(&args)
        .output()
        .expect("kconform runs");
    assert!(out.status.success(), "kconform {command} --help");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let line = line.trim_start();
            let line = line.strip_prefix("-h, ").unwrap_or(line);
            let rest = line.strip_prefix("--")?;
            let (name, value) = rest.split_once(' ').unwrap_or((rest, ""));
            let value = value.trim();
            // `<FILE>`, or `[<FILE>]` for a value that may be left out.
            let value = value.trim_start_matches('[');
            let value = match value.starts_with('<') {
                true => value[1..value.find('>')?].to_owned(),
                false => String::new(),
            };
            Some((name.to_owned(), value))
        })
        .collect()
}

#[test]
fn every_flag_names_its_value_alike_and_no_retired_name_shows() {
    let mut values: BTreeMap<String, BTreeSet<(String, String)>> = BTreeMap::new();
    for command in crate::book::COMMANDS {
        for (flag, value) in flags(command) {
            for retired in ["timeout-secs", "deadline-secs", "parallel", "java-release"] {
                assert_ne!(flag, retired, "kconform {command} shows --{retired}");
            }
            values
                .entry(flag)
                .or_default()
                .insert((value, command.to_owned()));
        }
    }
    let mut mixed = Vec::new();
    for (flag, seen) in &values {
        let names: BTreeSet<&str> = seen.iter().map(|(v, _)| v.as_str()).collect();
        if names.len() > 1 {
            mixed.push(format!("--{flag}: {seen:?}"));
        }
    }
    assert!(
        mixed.is_empty(),
        "one flag, several value names:\n{}",
        mixed.join("\n")
    );
    for written in [
        "json",
        "junit",
        "markdown",
        "html",
        "save-baseline",
        "baseline",
    ] {
        let seen = &values[written];
        assert!(
            seen.iter().all(|(v, _)| v == "FILE"),
            "--{written}: {seen:?}"
        );
    }
}

/// One ranking in every form of a report: the causes of the JSON, in order, are the rows of
/// the Markdown and the sections of the HTML page in the same order (the page sorted them by
/// size, and opened with another cause than the Markdown and the JSON).
#[test]
fn every_form_of_a_report_ranks_the_causes_alike() {
    let dir = tempfile::tempdir().unwrap();
    let (j, m, h) = (
        dir.path().join("r.json"),
        dir.path().join("r.md"),
        dir.path().join("r.html"),
    );
    let (code, _, err) = crate::cli::kconform(&[
        "run",
        "-q",
        "--target",
        "ref",
        "--target",
        "apache-recorded",
        "--json",
        j.to_str().unwrap(),
        "--markdown",
        m.to_str().unwrap(),
        "--html",
        h.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    let titles: Vec<String> = json["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["title"].as_str().unwrap().to_owned())
        .collect();
    assert!(titles.len() > 5, "{titles:?}");
    // Each cause found after the one before it: the same order (titles may repeat, under
    // different ledger entries).
    let in_order = |form: &str, text: &str, escape: &dyn Fn(&str) -> String| {
        let mut at = 0;
        for t in &titles {
            match text[at..].find(&escape(t)) {
                Some(i) => at += i + 1,
                None => panic!("{form}: '{t}' is not after the cause before it"),
            }
        }
    };
    let markdown = std::fs::read_to_string(&m).unwrap();
    in_order("Markdown", &markdown, &|t| {
        format!("`{}`", t.replace('|', "\\|"))
    });
    let html = std::fs::read_to_string(&h).unwrap();
    let escape = |t: &str| {
        t.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    };
    in_order("HTML", &html, &escape);
}
