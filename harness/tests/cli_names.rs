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
