//! The harness's integration tests, one binary (as ripgrep's `tests/tests.rs`): each file here
//! is a module of it, `util` what they share. One binary links the harness, rdkafka and
//! testcontainers once instead of once per file. `fuzz_wire_planted` stays a binary of its own:
//! it installs a global allocator. Run one file's tests with
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
mod real_clients_cluster;
mod snapshots;
mod spec_lines;
