#!/usr/bin/env bash
# The proofs of `kconform streams-eos` that start five JVMs each (harness/tests/streams_eos.rs):
# Apache's own Streams exactly-once test passes on a clean kaas-ref and fails at its verifier on
# one with a planted abort that keeps its staged offsets. Then the command itself, Apache first
# (it must pass, or kconform is wrong), against kaas-ref, each program's output kept in
# target/streams-eos. A few minutes on two cores; CI runs only the cheap test.
#
#   ci/streams-eos.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test -p harness --test integration streams_eos:: -- --include-ignored --nocapture --test-threads 1
cargo run -q -p harness --bin kconform -- streams-eos --out target/streams-eos --json target/streams-eos.json
