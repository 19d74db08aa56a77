//! One finding per defect: checks N structure-aware inputs (a number), or the given files (a
//! fuzzer's crash files, corpus files), and prints each defect once with where it showed.
//! The checks run in child processes: an input whose decoding aborts the process (an
//! allocation no address space holds) is a finding, and the session goes on from the next.
//! Exit 1 when any input shows one.

use kconform_wire::check::{Case, Session};

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut session = Session::new();
    match args.first().and_then(|a| a.parse::<u64>().ok()) {
        Some(count) => session.run_isolated(20261204, count, tansu_check_apache_fuzz::decode),
        None => {
            let mut cases = Vec::new();
            for path in &args {
                let Ok(bytes) = std::fs::read(path) else {
                    eprintln!("decoders_session: cannot read {path}");
                    return std::process::ExitCode::from(2);
                };
                cases.extend(Case::from_fuzz_input(&bytes));
            }
            session.check_isolated(cases, tansu_check_apache_fuzz::decode);
        }
    }
    let report = session.report();
    print!("{report}");
    match report.findings.is_empty() {
        true => std::process::ExitCode::SUCCESS,
        false => std::process::ExitCode::FAILURE,
    }
}
