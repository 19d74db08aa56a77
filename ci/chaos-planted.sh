#!/usr/bin/env bash
# The planted-bug proof of `kconform chaos` that takes minutes (harness/tests/chaos.rs): a peer
# marker applied twice, planted in a kaas-ref cluster, must be found from its fixed seed within
# the two minutes of its run, as aborted reads. CI runs the cheap proof (a group commit before
# its markers, found in seconds) and the clean run; this runs all three, each printing its
# report and the time it took. The ignored tests left out here reproduce an open finding (see
# that file), and fail today:
#   cargo test -p harness --test integration chaos::a_clean_ref_cluster_under -- --ignored
#
#   ci/chaos-planted.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test -p harness --test integration chaos:: -- --include-ignored --nocapture --test-threads 1 \
  --skip a_clean_ref_cluster_under_the_planted_runs_kills --skip a_marker_dropped_on_restart
