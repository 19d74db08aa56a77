//! No module imports one that imports it back, in either crate: the harness and the broker
//! each read as one stack. Run it with `cargo test -p harness --test integration module_cycles -- --nocapture`
//! to see each module's imports.
//!
//! A module here is a top-level module of a crate or a module of a top-level folder (`x::y`, see
//! [`imports`]): the second level is where the pipeline's stages keep their parts.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module → the crate modules its code names.
///
/// A module is a top-level module of a crate (`src/x.rs`, `src/x/mod.rs`) or one of a top-level
/// folder's (`src/x/y.rs` or `src/x/y/` is `x::y`): the pipeline's stages and what each holds.
/// It imports another when its code outside `#[cfg(test)]` names it from the crate's root
/// (`crate::x::y`, comments aside); `super::` within one module is free.
fn imports(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut raw: BTreeMap<String, BTreeSet<(String, String)>> = BTreeMap::new();
    let mut pending = vec![src.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap();
            let parts: Vec<String> = rel
                .components()
                .map(|c| {
                    c.as_os_str()
                        .to_string_lossy()
                        .trim_end_matches(".rs")
                        .to_owned()
                })
                .collect();
            let node = match parts.as_slice() {
                [top] => top.clone(),
                [top, sub, ..] if sub != "mod" => format!("{top}::{sub}"),
                [top, ..] => top.clone(),
                [] => continue,
            };
            // The binary (`src/bin/`) is a crate of its own: its `crate::` is not the library's.
            if node == "lib" || node == "main" || parts[0] == "bin" {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap();
            let named = raw.entry(node).or_default();
            for line in code.lines() {
                let line = line.split("//").next().unwrap();
                for (i, _) in line.match_indices("crate::") {
                    let mut names = line[i + 7..].split("::").map(|n| {
                        n.chars()
                            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                            .collect::<String>()
                    });
                    let top = names.next().unwrap_or_default();
                    let sub = names.next().unwrap_or_default();
                    named.insert((top, sub));
                }
            }
        }
    }
    // A name is the deepest module it reaches: `crate::x::y` is `x::y` where that is a module,
    // else `x` (an item of `x`).
    let modules: BTreeSet<String> = raw.keys().cloned().collect();
    raw.into_iter()
        .map(|(node, named)| {
            let deps = named
                .into_iter()
                .map(|(top, sub)| {
                    let deeper = format!("{top}::{sub}");
                    if modules.contains(&deeper) {
                        deeper
                    } else {
                        top
                    }
                })
                .filter(|d| modules.contains(d) && *d != node)
                .collect();
            (node, deps)
        })
        .collect()
}

/// The cycles of a graph: its strongly connected components of more than one module.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Which modules each module reaches, by repeated widening (the graphs are small).
    let mut reach: BTreeMap<&String, BTreeSet<&String>> =
        graph.iter().map(|(m, d)| (m, d.iter().collect())).collect();
    loop {
        let mut grew = false;
        let snapshot = reach.clone();
        for set in reach.values_mut() {
            let more: Vec<&String> = set
                .iter()
                .flat_map(|d| snapshot.get(d).into_iter().flatten().copied())
                .collect();
            for m in more {
                grew |= set.insert(m);
            }
        }
        if !grew {
            break;
        }
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for m in graph.keys() {
        if seen.contains(m) || !reach[m].contains(m) {
            continue;
        }
        let component: Vec<String> = graph
            .keys()
            .filter(|o| reach[m].contains(o) && reach[*o].contains(m))
            .cloned()
            .collect();
        seen.extend(component.iter().cloned());
        out.push(component);
    }
    out
}

#[test]
fn neither_crate_has_an_import_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    for krate in ["harness", "reference-broker"] {
        let graph = imports(&root.join(krate).join("src"));
        println!("{krate}:");
        for (m, deps) in &graph {
            println!(
                "  {m} -> {}",
                deps.iter().cloned().collect::<Vec<_>>().join(", ")
            );
        }
        for c in cycles(&graph) {
            found.push(format!("{krate}: {}", c.join(" <-> ")));
        }
        // And a folder as one room (`api` for `api::coverage`): each stage imports only the
        // stages below it (`api::coverage` once named `targets`, which names `api`).
        for c in cycles(&folders(&graph)) {
            found.push(format!("{krate}, by folder: {}", c.join(" <-> ")));
        }
    }
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

/// The graph with each module folded into its top-level module: `x::y -> z::w` is `x -> z`.
fn folders(graph: &BTreeMap<String, BTreeSet<String>>) -> BTreeMap<String, BTreeSet<String>> {
    let top = |m: &String| m.split("::").next().unwrap_or(m).to_owned();
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, deps) in graph {
        let entry = out.entry(top(m)).or_default();
        entry.extend(deps.iter().map(top).filter(|d| *d != top(m)));
    }
    out
}

/// The harness library draws nothing and parses no command line: clap, indicatif and console
/// belong to the binary (`src/bin/kconform/`), which renders the library's events and tones.
#[test]
fn the_library_leaves_the_terminal_to_the_binary() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut pending = vec![src.clone()];
    let mut found = Vec::new();
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel.starts_with("bin") {
                continue;
            }
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for krate in ["clap::", "indicatif::", "console::"] {
                if text
                    .lines()
                    .any(|l| l.split("//").next().unwrap().contains(krate))
                {
                    found.push(format!("{rel} uses {krate}"));
                }
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn a_planted_cycle_is_found() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(m, d)| (m.to_owned(), d.into_iter().map(str::to_owned).collect()))
    .collect();
    assert_eq!(cycles(&graph), [vec!["a", "b", "c"]]);
    // Modules in no cycle whose folders are in one: found by folder.
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("api::coverage", vec!["targets::spec"]),
        ("targets::spec", vec!["api::request"]),
        ("api::request", vec![]),
    ]
    .into_iter()
    .map(|(m, d)| (m.to_owned(), d.into_iter().map(str::to_owned).collect()))
    .collect();
    assert!(cycles(&graph).is_empty());
    assert_eq!(cycles(&folders(&graph)), [vec!["api", "targets"]]);
}

/// The binaries' command-line crates are optional dependencies behind feature `cli`, so a crate
/// that uses either library without it builds none of them.
#[test]
fn command_line_crates_are_the_binaries_alone() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for (package, crates) in [
        (
            "harness",
            &[
                "clap",
                "indicatif",
                "console",
                "anyhow",
                "tracing-subscriber",
            ][..],
        ),
        (
            "reference-broker",
            &["clap", "anyhow", "tracing-subscriber"][..],
        ),
    ] {
        let text = std::fs::read_to_string(root.join(package).join("Cargo.toml")).unwrap();
        let manifest: toml::Table = toml::from_str(&text).unwrap();
        let cli: Vec<&str> = manifest["features"]["cli"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f.as_str())
            .collect();
        for krate in crates {
            let dep = &manifest["dependencies"][*krate];
            assert_eq!(
                dep.get("optional").and_then(|o| o.as_bool()),
                Some(true),
                "{package}: {krate} must be optional"
            );
            assert!(
                cli.contains(&format!("dep:{krate}").as_str()),
                "{package}: cli lacks {krate}"
            );
        }
    }
}

/// The functions of `text` longer than `limit` lines (signature to closing brace), as
/// `name (N lines)`. A function ends at the first line that closes a brace at its own indent.
fn longer_than(text: &str, limit: usize) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let signature = ["", "pub ", "pub(crate) ", "pub(super) "]
            .iter()
            .find_map(|vis| {
                let rest = trimmed.strip_prefix(vis)?;
                ["fn ", "async fn ", "const fn ", "unsafe fn "]
                    .iter()
                    .find_map(|f| rest.strip_prefix(f))
            });
        let Some(rest) = signature else { continue };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let close = format!("{}}}", " ".repeat(indent));
        if let Some(end) = lines[i..].iter().position(|l| l.starts_with(&close)) {
            if end + 1 > limit {
                found.push(format!("{name} ({} lines)", end + 1));
            }
        }
    }
    found
}

/// The binary stays thin: it sets up and dispatches, one module per command, and no function
/// of it is over 60 lines; policy belongs to the library, where tests reach it.
#[test]
fn no_function_of_the_binary_is_over_60_lines() {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/bin");
    let mut found = Vec::new();
    for path in rust_files(&bin) {
        let text = std::fs::read_to_string(&path).unwrap();
        for f in longer_than(&text, 60) {
            found.push(format!("{}: {f}", path.display()));
        }
    }
    assert!(found.is_empty(), "{found:#?}");
    // Seen failing: a planted 61-line function is found, a 60-line one is not.
    let body = |n: usize| format!("fn planted() {{\n{}}}\n", "    x();\n".repeat(n - 2));
    assert_eq!(longer_than(&body(61), 60), ["planted (61 lines)"]);
    assert!(longer_than(&body(60), 60).is_empty());
}

/// The parts of the harness that are kconform's own (the wire, per-API knowledge, built-in
/// files, Apache's releases, shared users, answer mutations): each stays out of the documented
/// surface, which is the pipeline's stages and the types lib.rs re-exports.
const HIDDEN_PARTS: [&str; 6] = ["api", "data", "mutation", "release", "security", "wire"];

/// `lib.rs`'s public modules that the documentation shows, and those it hides.
fn surface(lib: &str) -> (Vec<String>, Vec<String>) {
    let (mut shown, mut hidden) = (Vec::new(), Vec::new());
    let mut hiding = false;
    for line in lib.lines().map(str::trim) {
        if line == "#[doc(hidden)]" {
            hiding = true;
            continue;
        }
        if let Some(name) = line
            .strip_prefix("pub mod ")
            .and_then(|r| r.strip_suffix(';'))
        {
            match hiding {
                true => hidden.push(name.to_owned()),
                false => shown.push(name.to_owned()),
            }
        }
        hiding = false;
    }
    (shown, hidden)
}

#[test]
fn the_documented_surface_is_the_pipeline_and_the_parts_are_hidden() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    let (shown, hidden) = surface(&lib);
    assert_eq!(hidden, HIDDEN_PARTS, "hidden modules of lib.rs");
    for part in HIDDEN_PARTS {
        assert!(!shown.contains(&part.to_owned()), "{part} is documented");
    }
    // The pipeline's stages (scenario, run, transcript, compare, report), the targets, the
    // judges beside the scenarios (clients, fuzz, peers) and certify, which runs them together.
    assert!(
        shown.len() <= 10,
        "{} documented modules: {shown:?}",
        shown.len()
    );
    // The check sees a module made public without #[doc(hidden)].
    let (shown, hidden) = surface(&lib.replace("#[doc(hidden)]\npub mod wire;", "pub mod wire;"));
    assert!(shown.contains(&"wire".to_owned()) && !hidden.contains(&"wire".to_owned()));
}

/// The Rust files under `root`, sorted: everything but build output (`target*`) and hidden
/// folders.
fn rust_files(root: &Path) -> Vec<std::path::PathBuf> {
    let mut pending = vec![root.to_path_buf()];
    let mut found = Vec::new();
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !name.starts_with('.') && !name.starts_with("target") && name != "node_modules" {
                    pending.push(path);
                }
            } else if name.ends_with(".rs") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The house rule, everywhere (tests too): a function past 150 lines or a file past 800 is
/// split in the change that makes it so, along its own seams.
#[test]
fn no_function_is_over_150_lines_and_no_file_over_800() {
    // The crates' sources, tests, benches and examples, the fuzz targets, the examples.
    let sources = rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join(".."));
    assert!(sources.len() > 300, "{} files found", sources.len());
    let mut found = Vec::new();
    for path in &sources {
        let text = std::fs::read_to_string(path).unwrap();
        let lines = text.lines().count();
        if lines > 800 {
            found.push(format!("{}: {lines} lines", path.display()));
        }
        for f in longer_than(&text, 150) {
            found.push(format!("{}: {f}", path.display()));
        }
    }
    assert!(found.is_empty(), "split these: {found:#?}");
    // Seen failing: a planted 151-line private async function is found.
    let body = format!(
        "    pub(super) async fn planted() {{\n{}    }}\n",
        "        x();\n".repeat(149)
    );
    assert_eq!(longer_than(&body, 150), ["planted (151 lines)"]);
}

/// The files of one folder that the folder's other files name (`super::x`, `super::{x, y}`,
/// or the whole path from the crate's root), file → files: the folder's `mod.rs`, which
/// declares them, aside.
fn sibling_imports(dir: &Path, module_path: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut names = BTreeSet::new();
    let mut texts = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        if ["mod", "lib", "main"].contains(&stem.as_str()) {
            continue;
        }
        if path.is_dir() {
            names.insert(stem.clone());
            let inside = path.join("mod.rs");
            if let Ok(text) = std::fs::read_to_string(inside) {
                texts.push((stem, text));
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            names.insert(stem.clone());
            texts.push((stem, std::fs::read_to_string(&path).unwrap()));
        }
    }
    let absolute = format!("crate::{module_path}::");
    texts
        .into_iter()
        .map(|(file, text)| {
            let code: String = text
                .split("#[cfg(test)]")
                .next()
                .unwrap()
                .lines()
                .map(|l| l.split("//").next().unwrap())
                .collect::<Vec<_>>()
                .join("\n");
            let mut named = BTreeSet::new();
            for prefix in ["super::", absolute.as_str()] {
                for (i, _) in code.match_indices(prefix) {
                    let rest = &code[i + prefix.len()..];
                    // `super::{x, y::Z}` names each item of the group; `super::x` the one.
                    let items: Vec<&str> = match rest.strip_prefix('{') {
                        Some(group) => group
                            .split('}')
                            .next()
                            .unwrap_or_default()
                            .split(',')
                            .collect(),
                        None => vec![rest],
                    };
                    for item in items {
                        let first: String = item
                            .trim_start()
                            .chars()
                            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                            .collect();
                        if names.contains(&first) && first != file {
                            named.insert(first);
                        }
                    }
                }
            }
            (file, named)
        })
        .collect()
}

/// No two files of one folder import each other, however far round: a folder's files stand
/// in layers, as the crates' modules do (`fuzz/wire/`'s crash handling, kept crashes and the
/// run's state once did).
#[test]
fn no_folder_has_files_that_import_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    for krate in ["harness", "reference-broker", "kconform-wire"] {
        let src = root.join(krate).join("src");
        let mut pending = vec![src.clone()];
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                if entry.path().is_dir() {
                    pending.push(entry.path());
                }
            }
            let rel = dir
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let module_path = rel.replace('/', "::");
            let graph = sibling_imports(&dir, &module_path);
            for c in cycles(&graph) {
                found.push(format!("{krate}/src/{rel}: {}", c.join(" <-> ")));
            }
        }
    }
    assert!(
        found.is_empty(),
        "files that import each other:\n{}",
        found.join("\n")
    );
    // Seen failing: two planted files that name each other through `super::`.
    let planted = tempfile::tempdir().unwrap();
    std::fs::write(planted.path().join("a.rs"), "use super::{b, c::C};\n").unwrap();
    std::fs::write(planted.path().join("b.rs"), "use super::a::A;\n").unwrap();
    std::fs::write(planted.path().join("c.rs"), "// super::a\n").unwrap();
    let graph = sibling_imports(planted.path(), "x");
    assert_eq!(cycles(&graph), [vec!["a", "b"]]);
    assert_eq!(graph["a"], BTreeSet::from(["b".to_owned(), "c".to_owned()]));
}
