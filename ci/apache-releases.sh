#!/usr/bin/env bash
# Each Apache release kconform runs, measured on this machine: how long the broker takes to
# start (jars cached; `kconform apache up`), how long the whole single-broker suite takes on it
# alone (`kconform run --target apache@R`), its peak memory over that run (VmHWM of the JVM),
# and how the suite's scenarios went on it (a scenario whose expectation is 3.7's stops on a
# release that answers otherwise). One table row per release; a first resolution of a
# release's jars (Maven Central) is done, and timed, apart.
#
#   ci/apache-releases.sh [RELEASE...]     (default: 3.7 3.8 3.9 4.0 4.1 4.2 4.3 4.4 4.4+tv2)
#
# KCONFORM=path/to/kconform skips the release build.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${KCONFORM:-}" ]; then
  cargo build --release --bin kconform
  KCONFORM=./target/release/kconform
fi
releases=("$@")
[ ${#releases[@]} -gt 0 ] || releases=(3.7 3.8 3.9 4.0 4.1 4.2 4.3 4.4 4.4+tv2)
out=target/apache-releases
mkdir -p "$out"
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
"$KCONFORM" apache down >/dev/null
printf '%-10s %9s %9s %10s  %s\n' release start_s suite_s peak_MiB "suite on it alone"
for r in "${releases[@]}"; do
  label=${r//+/-}
  # The first start of a release resolves its jars: done (and timed) before measuring.
  t0=$(date +%s.%N)
  "$KCONFORM" apache up --release "$r" >"$out/$label-resolve.txt" 2>&1
  resolve=$(since "$t0")
  "$KCONFORM" apache down >/dev/null
  t0=$(date +%s.%N)
  "$KCONFORM" apache up --release "$r" >"$out/$label-up.txt" 2>&1
  start=$(since "$t0")
  pid=$("$KCONFORM" apache status | sed -n 's/.*(pid \([0-9]*\),.*/\1/p')
  t0=$(date +%s.%N)
  "$KCONFORM" run --target "apache@$r" >"$out/$label-suite.txt" 2>&1 || true
  suite=$(since "$t0")
  peak_kb=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$pid/status" 2>/dev/null || echo 0)
  "$KCONFORM" apache down >/dev/null
  verdict=$(grep -E '^(PASSED|FAILED)' "$out/$label-suite.txt" | tail -1 || true)
  stopped=$(grep -cE ' STOPPED' "$out/$label-suite.txt" || true)
  printf '%-10s %9.1f %9.1f %10d  %s (%s stopped; first start with resolution %.1f s)\n' \
    "$r" "$start" "$suite" "$((peak_kb / 1024))" "${verdict:-no verdict, see $out/$label-suite.txt}" \
    "$stopped" "$resolve"
done
