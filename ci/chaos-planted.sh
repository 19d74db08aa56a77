#!/usr/bin/env bash
# The planted-bug proofs of `kconform chaos` that take minutes (harness/tests/chaos.rs, the
# `#[ignore]`d ones): each bug planted in a kaas-ref cluster on purpose must be found from its
# fixed seed within the two minutes of its run, named as the anomaly it causes. CI runs the
# cheap proof (a group commit before its markers, found in seconds) and the clean run; this
# runs the rest, each printing its report and the time it took.
#
#   ci/chaos-planted.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test -p harness --test integration chaos:: -- --include-ignored --nocapture --test-threads 1
