//! The fuzz target a user starts from: a cargo-fuzz crate (`fuzz-apache/` in their crate) whose
//! one target checks their decoders against Apache's verdict, with a seed corpus of a valid
//! message of every API, direction and version. `kconform fuzz init-decoders` writes it; the
//! user fills in one function, the adapter.

use crate::check::{every_version, Case};
use crate::Rng;

/// The folder written in the user's crate.
pub const FOLDER: &str = "fuzz-apache";

/// The target's name.
pub const TARGET: &str = "decoders_against_apache";

/// One file to write: its path under the user's crate, and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    /// `fuzz-apache/Cargo.toml`.
    pub path: String,
    /// The contents.
    pub bytes: Vec<u8>,
}

/// The files of the skeleton. `crate_name` is the user's package (a path dependency on it is
/// written; a workspace root has none, and the line is left for the user); `wire` is how the
/// manifest names this crate (`path = "..."` or `git = "..."`).
pub fn files(crate_name: Option<&str>, wire: &str) -> Vec<File> {
    let theirs = match crate_name {
        Some(name) => format!("{name} = {{ path = \"..\" }}"),
        None => "# your-decoder-crate = { path = \"../your-decoder-crate\" }".to_owned(),
    };
    let package = format!("{}-apache-fuzz", crate_name.unwrap_or("decoders"));
    let fill = |text: &str| {
        text.replace("{package}", &package)
            .replace("{lib}", &package.replace('-', "_"))
            .replace("{wire}", wire)
            .replace("{theirs}", &theirs)
            .replace("{target}", TARGET)
            .replace("{use}", &crate_name.map(use_line).unwrap_or_default())
            .into_bytes()
    };
    let mut out = vec![
        File {
            path: format!("{FOLDER}/Cargo.toml"),
            bytes: fill(MANIFEST),
        },
        File {
            path: format!("{FOLDER}/src/lib.rs"),
            bytes: fill(LIB_SOURCE),
        },
        File {
            path: format!("{FOLDER}/fuzz_targets/{TARGET}.rs"),
            bytes: fill(TARGET_SOURCE),
        },
        File {
            path: format!("{FOLDER}/src/bin/decoders_session.rs"),
            bytes: fill(SESSION_SOURCE),
        },
        File {
            path: format!("{FOLDER}/.gitignore"),
            bytes: b"target/\nartifacts/\ncoverage/\n".to_vec(),
        },
    ];
    out.extend(corpus().into_iter().map(|case| File {
        path: format!("{FOLDER}/corpus/{TARGET}/{}", case.file_stem()),
        bytes: case.to_fuzz_input().unwrap_or_default(),
    }));
    out
}

fn use_line(name: &str) -> String {
    format!("// use {}::...;\n", name.replace('-', "_"))
}

/// A valid message of every API, direction and version, two of each (drawn from a fixed
/// seed): where libFuzzer starts.
pub fn corpus() -> Vec<Case> {
    let mut rng = Rng::new(20261204);
    every_version()
        .into_iter()
        .flat_map(|(d, api, v)| {
            [
                Case::valid(d, api, v, &mut rng),
                Case::valid(d, api, v, &mut rng),
            ]
        })
        .flatten()
        .collect()
}

const MANIFEST: &str = r#"# Your decoders against Apache Kafka's verdict (kconform-wire). Fill in `decode` in
# src/lib.rs, then, from the folder above this one:
#   cargo fuzz run --fuzz-dir fuzz-apache decoders_against_apache     (coverage-guided)
#   cargo run --release --manifest-path fuzz-apache/Cargo.toml --bin decoders_session -- 100000
#   cargo run --release --manifest-path fuzz-apache/Cargo.toml --bin decoders_session -- fuzz-apache/artifacts/decoders_against_apache/*
[package]
name = "{package}"
version = "0.0.0"
publish = false
edition = "2021"

[package.metadata]
cargo-fuzz = true

[dependencies]
libfuzzer-sys = "0.4"
kconform-wire = { {wire} }
{theirs}

# Its own workspace: cargo-fuzz builds it with sanitizer flags.
[workspace]
members = ["."]

[[bin]]
name = "{target}"
path = "fuzz_targets/{target}.rs"
test = false
doc = false
bench = false
"#;

const LIB_SOURCE: &str = r#"//! Your decoders of the six Kafka transaction APIs, as kconform-wire's check reads them: the one
//! function to fill in. The fuzz target and `decoders_session` both call it.

use kconform_wire::alloc::Watch;
use kconform_wire::check::{Case, Decoded, Direction};
{use}
/// Sees every allocation (and serves huge ones as reservations, so that the check can name
/// them), in every binary of this crate.
#[global_allocator]
static ALLOC: Watch = Watch::system();

/// Decode `case.body` (a request or response body, after its header) of `case.api` at
/// `case.version`, and say what you read:
/// - `Decoded::Reencoded(bytes)`: your message written again at the same version (Apache's
///   reader reads the values back and all are compared);
/// - `Decoded::Values(json)`: the values by Apache's snake_case field names (only the fields
///   you give are compared);
/// - `Decoded::Refused(reason)`: your decoder refused the body;
/// - `Decoded::NotServed`: you do not decode this API, direction or version.
///
/// `case.api` is a `kconform_wire::ApiKey` (`kconform_wire::ApiKey::EndTxn`), and
/// `kconform_wire::serde_json::json!` builds the values: this crate needs neither
/// kafka-protocol nor serde_json of its own.
pub fn decode(case: &Case) -> Decoded {
    match case.direction {
        Direction::Request => Decoded::NotServed,
        Direction::Response => Decoded::NotServed,
    }
}
"#;

const TARGET_SOURCE: &str = r#"//! Your decoders held to Apache's verdict on every input (`decode` in src/lib.rs): a panic, one
//! allocation past 64 KiB + 256 bytes per input byte, accepting what Apache's parser refuses or
//! refusing what it reads, and values that differ are each a crash, named by its signature.
#![no_main]

use kconform_wire::check::{self, Case};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    check::quiet_panics();
    let Some(case) = Case::from_fuzz_input(data) else {
        return;
    };
    if let Err(finding) = check::check(&case, {lib}::decode) {
        panic!("{}\n{finding}", finding.signature());
    }
});
"#;

const SESSION_SOURCE: &str = r#"//! One finding per defect: checks N structure-aware inputs (a number), or the given files (a
//! fuzzer's crash files, corpus files), and prints each defect once with where it showed.
//! The checks run in child processes: an input whose decoding aborts the process (an
//! allocation no address space holds) is a finding, and the session goes on from the next.
//! Exit 1 when any input shows one.

use kconform_wire::check::{Case, Session};

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut session = Session::new();
    match args.first().and_then(|a| a.parse::<u64>().ok()) {
        Some(count) => session.run_isolated(20261204, count, {lib}::decode),
        None => {
            let mut cases = Vec::new();
            for path in &args {
                let Ok(bytes) = std::fs::read(path) else {
                    eprintln!("decoders_session: cannot read {path}");
                    return std::process::ExitCode::from(2);
                };
                cases.extend(Case::from_fuzz_input(&bytes));
            }
            session.check_isolated(cases, {lib}::decode);
        }
    }
    let report = session.report();
    print!("{report}");
    match report.findings.is_empty() {
        true => std::process::ExitCode::SUCCESS,
        false => std::process::ExitCode::FAILURE,
    }
}
"#;
