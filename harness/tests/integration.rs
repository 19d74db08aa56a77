//! The harness's integration tests, one binary (as ripgrep's `tests/tests.rs`): each file here
//! is a module of it, `util` what they share. One binary links the harness, rdkafka and
//! testcontainers once instead of once per file. One stays a binary of its own:
//! `real_clients_cluster` kills brokers under real clients and must not be starved of the
//! cores (run as one test among these, librdkafka's send_offsets_to_transaction stalled past
//! 75 s and the copy came out with records twice and missing; see that file): CI runs it once
//! these are done, beside the lighter binaries after them. Run one file's tests with
//! `cargo test -p harness --test integration all_scenarios::`.

mod util;

/// kaas-ref's allocator, as its binary has: the planted brokers the fuzz tests start are this
/// binary (`util::planted::broker_process`), and on the system allocator a hostile count in
/// some other API's decoding (ListOffsets v2, Produce v3) aborted them first, a finding in
/// place of the one planted (seen in CI); kaas-ref's binary reserves such a request instead.
#[global_allocator]
static ALLOCATOR: reference_broker::alloc::ReservingAllocator =
    reference_broker::alloc::ReservingAllocator;

// libtest starts tests in the order of their names, two at a time here: the longest (every
// scenario on both brokers, two minutes) is named to start first, so that the lighter ones
// run beside it rather than leave it running alone at the end.
mod all_scenarios;
mod apache_cluster;
mod apache_parser;
mod apache_releases;
mod book;
mod broker_faults;
mod causes_by_flow;
mod certify;
mod chaos;
mod cli;
mod cli_before_work;
mod cli_fuzz;
mod cli_names;
mod clients;
mod consequences;
mod exactly_once;
mod external_sasl;
mod fuzz_planted;
mod fuzz_wire_planted;
mod hostile_brokers;
mod html_report;
mod kaas_build;
mod kfake_judge;
mod matrix;
mod module_cycles;
mod mutation_score;
mod peers;
mod provisioned_topics;
mod real_clients;
mod settings;
mod spec_lines;
mod streams_eos;
