//! Builds the scenarios, fragments, ledger, peers allowlist and Apache's recorded answers into
//! kconform, so an installed binary works from any directory: `OUT_DIR/builtin.rs` lists each
//! file with `include_str!`. Cargo reruns this when anything under those directories changes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The files under `dir` (recursively) whose names `keep` accepts, as (path relative to `dir`,
/// absolute path), sorted.
fn files(dir: &Path, keep: &dyn Fn(&str) -> bool) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                pending.push(p);
                continue;
            }
            let rel = p
                .strip_prefix(dir)
                .expect("below dir")
                .to_string_lossy()
                .replace('\\', "/");
            if keep(&rel) {
                out.push((rel, p.canonicalize().expect("a readable file")));
            }
        }
    }
    out.sort();
    out
}

fn table(name: &str, files: &[(String, PathBuf)]) -> String {
    let mut s = format!(
        "/// Built-in files: (relative path, text).\npub static {name}: &[(&str, &str)] = &[\n"
    );
    for (rel, abs) in files {
        let _ = writeln!(
            s,
            "    ({rel:?}, include_str!({:?})),",
            abs.display().to_string()
        );
    }
    s.push_str("];\n");
    s
}

fn main() {
    let root =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it")).join("..");
    let (scenarios, snapshots) = (root.join("scenarios"), root.join("snapshots"));
    println!("cargo:rerun-if-changed={}", scenarios.display());
    println!("cargo:rerun-if-changed={}", snapshots.display());
    let scenario_files = files(&scenarios, &|rel| rel.ends_with(".toml"));
    // Apache's side of every shape and recorded release (`__apache.snap`, `__apache-3.snap`,
    // `__apache@4.4.0-tv2.snap`); kaas-ref's are the tests' alone.
    let snapshot_files = files(&snapshots, &|rel| {
        rel.ends_with(".snap") && rel.contains("__apache")
    });
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it")).join("builtin.rs");
    let text = table("SCENARIO_FILES", &scenario_files) + &table("SNAPSHOT_FILES", &snapshot_files);
    std::fs::write(out, text).expect("OUT_DIR is writable");
    println!("cargo:rustc-env=KCONFORM_COMMIT={}", commit(&root));
}

/// The commit kconform is built from (its first 12 hex digits; empty outside a git checkout,
/// as from crates.io): `kconform matrix` keeps it with each run and compares only runs of one
/// build of kconform's judges. Rerun when the checked-out commit moves.
fn commit(root: &Path) -> String {
    let git = root.join(".git");
    let Ok(head) = std::fs::read_to_string(git.join("HEAD")) else {
        return String::new();
    };
    println!("cargo:rerun-if-changed={}", git.join("HEAD").display());
    println!(
        "cargo:rerun-if-changed={}",
        git.join("packed-refs").display()
    );
    if let Some(reference) = head.trim().strip_prefix("ref: ") {
        println!("cargo:rerun-if-changed={}", git.join(reference).display());
    }
    std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(root)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}
