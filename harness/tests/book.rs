//! The book (`docs/`) says what the code does: its generated chapters (the ledger, the
//! scenarios, the command line) are what kconform writes from the files it judges by and its
//! command definitions, every link leads to a chapter and a heading that exist, and the summary
//! lists every chapter. `KCONFORM_BLESS=1` writes the generated chapters again.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use kconform::compare::ledger::Ledger;
use kconform::report::book;
use kconform::scenario::Scenario;

use crate::util::root;

/// The commands the CLI chapter shows, each with `--help`.
pub(crate) const COMMANDS: [&str; 18] = [
    "",
    "run",
    "certify",
    "repro",
    "coverage",
    "settings",
    "peers",
    "clients",
    "chaos",
    "fuzz",
    "fuzz merge",
    "fuzz init-decoders",
    "replay-frame",
    "proxy",
    "topics",
    "list",
    "apache",
    "ledger",
];

/// One name for one idea across the subcommands, and the old names still taken (hidden).
const NAMES: &str = "## One name for one idea\n\n\
| idea | the flag, on every command that has it | old names, still taken |\n\
|---|---|---|\n\
| how long one request, workload or suite may take | `--deadline-ms <MS>` (run, repro, fuzz, replay-frame, clients, peers) | `--deadline-secs` (clients), `--timeout-secs` (peers) |\n\
| how much runs at once | `--jobs <N>` (run, coverage, fuzz, peers) | `--parallel` (peers) |\n\
| the Apache release | `--release <RELEASE>` (apache, clients), `apache@RELEASE` in a target | `--java-release` (clients) |\n\
| a cluster's size | `--brokers <N>` (run, coverage, chaos, apache cluster) | |\n\
| copies of one broker side by side | `--instances <N>` (fuzz) | `--brokers` (fuzz) |\n\
| a broker | `--target <TARGET>`, repeated for several | |\n\
| a file written | `--json`, `--junit`, `--markdown`, `--html`, `--save-baseline <FILE>` | |\n\
| the baseline | `--baseline`, `--save-baseline`, `--add-to-baseline <FILE>` (run, certify, clients, chaos, peers, fuzz) | |\n\n";

fn cli_chapter() -> String {
    let mut out = format!(
        "{}\n\n# The command line\n\nEvery command's `--help`, as the binary prints it. Exit \
         codes: 0 when the run holds, 1 when it found what it looks for (an undocumented \
         difference, a stale entry, a new finding), 2 when it could not run (a target that does \
         not start, a file that does not load, a refusal).\n\n{NAMES}",
        book::GENERATED
    );
    for command in COMMANDS {
        let mut args: Vec<&str> = command.split_whitespace().collect();
        args.push("--help");
        let help = Command::new(env!("CARGO_BIN_EXE_kconform"))
            .args(&args)
            .env("COLUMNS", "100")
            .output()
            .expect("kconform runs");
        assert!(help.status.success(), "kconform {command} --help");
        let title = match command {
            "" => "kconform".to_owned(),
            c => format!("kconform {c}"),
        };
        let text = String::from_utf8_lossy(&help.stdout);
        out.push_str(&format!(
            "## {title}\n\n```text\n{}\n```\n\n",
            text.trim_end()
        ));
    }
    out
}

/// Each report's JSON schema, by file name.
fn schemas(root: &Path) -> Vec<(&'static str, serde_json::Value)> {
    [
        "report.schema.json",
        "certificate.schema.json",
        "clients-report.schema.json",
        "chaos-report.schema.json",
        "fuzz-report.schema.json",
        "matrix.schema.json",
    ]
    .into_iter()
    .map(|f| {
        let text = std::fs::read_to_string(root.join("harness").join(f)).expect("schema");
        (f, serde_json::from_str(&text).expect("schema is JSON"))
    })
    .collect()
}

/// Each generated chapter and what it should hold.
fn generated() -> Vec<(&'static str, String)> {
    let root = root();
    let ledger = Ledger::load(&root.join("scenarios/deviations.toml")).expect("ledger loads");
    let scenarios = Scenario::load_dir(&root.join("scenarios")).expect("scenarios load");
    vec![
        ("ledger.md", book::ledger_chapter(&ledger)),
        ("scenarios.md", book::scenarios_chapter(&scenarios, &ledger)),
        ("cli.md", cli_chapter()),
        ("schemas.md", book::schemas_chapter(&schemas(&root))),
    ]
}

#[test]
fn the_generated_chapters_are_current() {
    let src = root().join("docs/src");
    let bless = std::env::var_os("KCONFORM_BLESS").is_some();
    let mut stale = Vec::new();
    for (name, want) in generated() {
        let path = src.join(name);
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        if have == want {
            continue;
        }
        match bless {
            true => std::fs::write(&path, want).expect("writes the chapter"),
            false => stale.push(name),
        }
    }
    assert!(
        stale.is_empty(),
        "docs/src/{stale:?} stale: `KCONFORM_BLESS=1 cargo test -p harness --test integration book` writes them again"
    );
}

/// The ids of a chapter's headings (outside code fences).
fn ids(text: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.insert(book::anchor(line.trim_start_matches('#')));
        }
    }
    out
}

/// The relative links of a text (`[x](file.md#anchor)`), outside code fences and code spans.
fn links(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            let target = &after[..end];
            let code = rest[..at].matches('`').count() % 2 == 1;
            if !code && !target.contains("://") && !target.starts_with("mailto:") {
                out.push(target.to_owned());
            }
            rest = &after[end..];
        }
    }
    out
}

/// Every link of `text` (a file in `dir`) that leads nowhere: no such file, or no such heading.
fn broken(dir: &Path, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for link in links(text) {
        let (file, anchor) = link.split_once('#').unwrap_or((&link, ""));
        let target = match file.is_empty() {
            true => text.to_owned(),
            false => match std::fs::read_to_string(dir.join(file)) {
                Ok(t) => t,
                Err(_) => {
                    out.push(format!("{link}: no file {file}"));
                    continue;
                }
            },
        };
        if !anchor.is_empty() && !ids(&target).contains(anchor) {
            out.push(format!("{link}: no heading #{anchor}"));
        }
    }
    out
}

#[test]
fn every_link_of_the_book_and_the_readme_leads_somewhere() {
    let root = root();
    let src = root.join("docs/src");
    let mut bad = Vec::new();
    let mut chapters = 0;
    for entry in std::fs::read_dir(&src).expect("docs/src").flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "md") {
            chapters += 1;
            let text = std::fs::read_to_string(&path).unwrap();
            for b in broken(&src, &text) {
                bad.push(format!("{}: {b}", path.display()));
            }
        }
    }
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    bad.extend(
        broken(&root, &readme)
            .into_iter()
            .map(|b| format!("README.md: {b}")),
    );
    assert!(chapters > 20, "{chapters} chapters");
    assert!(bad.is_empty(), "{bad:#?}");
    // Seen failing: a link to no file, and one to no heading, are each found.
    let planted = "[a](judging.md#no-such-heading) [b](nowhere.md) [c](judging.md) `[d](x.md)`";
    assert_eq!(
        broken(&src, planted).len(),
        2,
        "{:?}",
        broken(&src, planted)
    );
}

#[test]
fn the_summary_lists_every_chapter_once() {
    let src = root().join("docs/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    let listed: Vec<String> = links(&summary);
    let unique: BTreeSet<&String> = listed.iter().collect();
    assert_eq!(unique.len(), listed.len(), "a chapter listed twice");
    let files: BTreeSet<String> = std::fs::read_dir(&src)
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".md") && n != "SUMMARY.md")
        .collect();
    let listed: BTreeSet<String> = listed.into_iter().collect();
    assert_eq!(files, listed, "docs/src files and SUMMARY.md differ");
}
