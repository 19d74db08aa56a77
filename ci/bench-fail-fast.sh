#!/usr/bin/env bash
# How fast a full run gives its verdict on a broker that answers badly: the whole suite (slow
# scenarios aside) against kaas-ref behind `kconform proxy`, with the default deadline (10 s),
# compared with Apache's recorded answers:
#   healthy   the proxy relays unchanged (the reference figure);
#   errors    every answer but ApiVersions carries error code 99 (`--api all --mutation error-code:*`);
#   retriable every answer but ApiVersions carries 15 COORDINATOR_NOT_AVAILABLE, which `until`
#             retries for its whole budget (`error-code:*=15`);
#   silent    every request but ApiVersions is never answered (`--api all --mutation stall`).
# Each must end with a full report (exit 0 healthy, 1 otherwise); the targets are 60 s for
# errors (retriable or not) and 180 s for silent. Prints one line per case and exits 1 if a case misses its
# target or exits otherwise. Not a CI test: run it by hand (`ci/bench-fail-fast.sh`).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet -p harness --bin kconform
kconform=target/debug/kconform
work=$(mktemp -d)
proxy_pid=
cleanup() { [ -n "$proxy_pid" ] && kill "$proxy_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

failed=0
run_case() { # name, expected exit, target seconds, proxy args...
  local name=$1 expected=$2 limit=$3; shift 3
  "$kconform" proxy --upstream ref "$@" >"$work/addr" 2>/dev/null &
  proxy_pid=$!
  for _ in $(seq 50); do [ -s "$work/addr" ] && break; sleep 0.1; done
  local addr; addr=$(head -1 "$work/addr")
  local start end code=0
  start=$(date +%s.%N)
  "$kconform" run --target "external=$addr" --target apache-recorded \
    --json "$work/$name.json" >"$work/$name.out" 2>&1 || code=$?
  end=$(date +%s.%N)
  kill "$proxy_pid" 2>/dev/null; wait "$proxy_pid" 2>/dev/null || true; proxy_pid=
  local secs; secs=$(python3 -c "print(f'{$end - $start:.1f}')")
  local transcripts; transcripts=$(python3 -c "import json;print(len(json.load(open('$work/$name.json'))['runs']))" 2>/dev/null || echo 0)
  local verdict=ok
  if [ "$code" != "$expected" ]; then verdict="exit $code, expected $expected"; failed=1; fi
  if python3 -c "import sys; sys.exit(0 if $secs <= $limit else 1)"; then :; else verdict="over ${limit} s"; failed=1; fi
  printf '%-9s %7s s  (target %3s s)  exit %s  %s transcripts  %s\n' "$name" "$secs" "$limit" "$code" "$transcripts" "$verdict"
}

echo "bench-fail-fast: the whole suite against kaas-ref behind kconform proxy, default deadline"
run_case healthy 0 600
run_case errors 1 60 --api all --mutation 'error-code:*'
run_case retriable 1 60 --api all --mutation 'error-code:*=15'
run_case silent 1 180 --api all --mutation stall
exit "$failed"
