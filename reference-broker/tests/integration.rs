//! kaas-ref's integration tests, one binary (as ripgrep's `tests/tests.rs`): each file here is
//! a module of it, `common` what they share. `hostile_input` stays a binary of its own: it
//! counts allocations with a global allocator. Run one file's tests with
//! `cargo test -p reference-broker --test integration limits::`.

mod common;

mod authorizer;
mod cluster_peers;
mod cluster_routing;
mod concurrency_stress;
mod corpus_replay;
mod crash_safety;
mod fixtures;
mod headers;
mod hostile_frames;
mod limits;
mod provisioned_topics;
mod rdkafka_clients;
mod rdkafka_transactions;
mod roundtrip;
mod served_apis;
mod spec_verified_by;
mod topic_atomicity;
mod txn_crash_safety;
