//! The harness's integration tests, one binary (as ripgrep's `tests/tests.rs`): each file here
//! is a module of it, `util` what they share. One binary links the harness, rdkafka and
//! testcontainers once instead of once per file. Two stay binaries of their own:
//! `fuzz_wire_planted` installs a global allocator, and `real_clients_cluster` kills brokers
//! under real clients and must have both cores to itself (run beside lighter tests, librdkafka's
//! send_offsets_to_transaction stalled past 75 s and the copy came out with records twice and
//! missing, not yet explained; see that file). Run one file's tests with
//! `cargo test -p harness --test integration snapshots::`.

mod util;

mod apache_cluster;
mod apache_parser;
mod cli;
mod clients;
mod external_sasl;
mod fuzz_planted;
mod hostile_brokers;
mod module_cycles;
mod mutation_score;
mod peers;
mod provisioned_topics;
mod real_clients;
mod snapshots;
mod spec_lines;
