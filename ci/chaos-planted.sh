#!/usr/bin/env bash
# The proofs of `kconform chaos` that take minutes (harness/tests/chaos.rs): each bug planted in
# a kaas-ref cluster must be found from its fixed seed within the two minutes of its run, named
# as the anomaly it causes (a peer marker applied twice: aborted reads), and the clean broker
# under 14 kills must show none. CI runs the cheap ones (a group commit before its markers,
# found in seconds; the clean cluster under pauses); this runs the rest, each printing its
# report and the time it took. A marker dropped on a broker's restart is no reliable proof yet
# (found in one run of two; see harness/tests/chaos.rs), so it runs only when asked:
#   cargo test -p harness --test integration chaos::a_marker_dropped -- --ignored --nocapture
#
#   ci/chaos-planted.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test -p harness --test integration chaos:: -- --include-ignored --nocapture --test-threads 1 \
  --skip a_marker_dropped_on_restart
