#!/usr/bin/env bash
# librdkafka's exactly-once workload on ref:3 and apache:3, with the coordinator and then a
# partition leader killed mid-run (harness/tests/real_clients_cluster.rs), RUNS times in a row
# (default 1): the check that the workload is stable, which CI runs once.
#
#   ci/cluster-clients.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-1}"
passed=0
for i in $(seq 1 "$runs"); do
  if cargo test -p harness --test real_clients_cluster -- --nocapture; then
    passed=$((passed + 1))
  fi
  echo "cluster clients: run $i/$runs, $passed passed so far"
done
[ "$passed" -eq "$runs" ]
