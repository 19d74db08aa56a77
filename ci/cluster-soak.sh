#!/usr/bin/env bash
# Runs the cluster scenarios on ref:3 and apache:3 RUNS times in a row (default 20) and counts
# the clean runs: the check that the cluster scenarios' timing (member timeouts, marker polls,
# Apache's leader elections) makes none of them flaky. Each run's report goes to
# target/cluster-soak/run-N.txt; the exit status is 1 if any run was not clean.
#
#   ci/cluster-soak.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-20}"
out=target/cluster-soak
mkdir -p "$out"
cargo build --release --bin kconform
clean=0
for i in $(seq 1 "$runs"); do
  start=$(date +%s)
  if ./target/release/kconform run --brokers 3 --scenarios scenarios --snapshots snapshots >"$out/run-$i.txt" 2>&1; then
    clean=$((clean + 1))
    verdict=clean
  else
    verdict="NOT CLEAN (see $out/run-$i.txt)"
  fi
  echo "run $i/$runs: $verdict in $(( $(date +%s) - start )) s"
done
echo "cluster soak: $clean of $runs runs clean"
[ "$clean" -eq "$runs" ]
