#!/usr/bin/env bash
# The long stateful fuzz, as a habit (not in CI): kaas-ref against a live Apache 3.7 for MINUTES
# in all (default 60), over SEEDS seeds (default 3) of SHARDS shards each (default 2; `--shard
# K/N`, so the shards of a seed draw disjoint sequences), one shard after another on one Apache
# kept up between them; then each seed's shards merged into one directory (`kconform fuzz
# merge` folds the shards of one seed) and one line per signature printed over all seeds: how
# many shards found it and the scenario file that replays it. Run it
# after each change to kaas-ref's coordinator or to the ledger: every undocumented finding is
# fixed in kaas-ref or documented in scenarios/deviations.toml, its sequence kept as a scenario.
#
#   ci/fuzz-long.sh [MINUTES] [SEEDS] [SHARDS]
#   KCONFORM_FUZZ_FIRST_SEED=N      the first seed (default 1; the others follow it)
#   KCONFORM_FUZZ_OUT=DIR           where the shards and the merge go (default target/fuzz-long)
#   KCONFORM_FUZZ_REPORT_ONLY=1     run nothing: merge and list what the shards in DIR found
#
# Exit 0: no finding; 1: findings (each listed); 2: a shard could not run.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes="${1:-60}"
seeds="${2:-3}"
shards="${3:-2}"
first="${KCONFORM_FUZZ_FIRST_SEED:-1}"
out="${KCONFORM_FUZZ_OUT:-target/fuzz-long}"
for n in "$minutes" "$seeds" "$shards" "$first"; do
  [[ $n =~ ^[0-9]+$ && $n -gt 0 ]] || { echo "fuzz-long: '$n' is not a whole number above 0 (usage: ci/fuzz-long.sh [MINUTES] [SEEDS] [SHARDS])" >&2; exit 2; }
done
runs=$((seeds * shards))
each=$((minutes * 60 / runs))
[[ $each -ge 30 ]] || { echo "fuzz-long: $minutes min over $runs shards is under 30 s each; give more minutes or fewer shards" >&2; exit 2; }

cargo build --release --bin kconform
kconform=./target/release/kconform
report_only=${KCONFORM_FUZZ_REPORT_ONLY:-}
if [[ -z $report_only ]]; then
  rm -rf "$out"
  mkdir -p "$out"
  # One Apache for every shard (each would otherwise start its own JVM); taken down at the
  # end, unless it was up before.
  was_up=false
  if "$kconform" apache status >/dev/null 2>&1; then was_up=true; else "$kconform" apache up; fi
  finish() { $was_up || "$kconform" apache down >/dev/null 2>&1 || true; }
  trap finish EXIT
  echo "fuzz-long: $runs shard(s) of ${each} s (seeds $first..$((first + seeds - 1)), $shards shard(s) each), kaas-ref against Apache"
fi
failed=0
dirs=()
started=$(date +%s)
for s in $(seq "$first" $((first + seeds - 1))); do
  for k in $(seq 1 "$shards"); do
    dir="$out/seed-$s-shard-$k"
    dirs+=("$dir")
    [[ -z $report_only ]] || continue
    t0=$(date +%s)
    set +e
    "$kconform" fuzz --mode sequences --target ref --oracle apache --seed "$s" --shard "$k/$shards" \
      --duration "${each}s" --findings "$dir" >"$dir.log" 2>&1
    code=$?
    set -e
    drawn=$(grep -o "[0-9]* sequences in [0-9]* s" "$dir.log" | head -1)
    verdict=$(tail -1 "$dir.log")
    echo "  seed $s shard $k/$shards: exit $code in $(( $(date +%s) - t0 )) s: ${drawn:-no count}; ${verdict:-see $dir.log}"
    [[ $code -le 1 ]] || failed=1
  done
done

# `kconform fuzz merge` folds the shards of one seed: one merged directory a seed.
merged=()
for s in $(seq "$first" $((first + seeds - 1))); do
  into="$out/merged-seed-$s"
  "$kconform" fuzz merge --into "$into" "$out"/seed-"$s"-shard-*/ >"$out/merge-seed-$s.log" 2>&1 ||
    { echo "fuzz-long: merging seed $s failed (see $out/merge-seed-$s.log)" >&2; exit 2; }
  merged+=("$into")
done
total=$(cat "$out"/seed-*.log 2>/dev/null | grep -o "[0-9]* sequences in" | awk '{ n += $1 } END { print n + 0 }')
echo "fuzz-long: $(( $(date +%s) - started )) s, $total sequences; findings by signature (shards that found it, the file that replays it):"
found=0
listed=()
for f in $(for m in "${merged[@]}"; do ls "$m"/finding-*.toml 2>/dev/null || true; done); do
  signature=$(sed -n 's/^# signature: //p' "$f" | head -1)
  case " ${listed[*]-} " in *" $signature "*) continue ;; esac
  listed+=("$signature")
  found=$((found + 1))
  name=$(basename "$f" .toml)
  shards_with=0
  for d in "${dirs[@]}"; do
    if grep -q -s -F -- "# signature: $signature" "$d"/finding-*.toml; then shards_with=$((shards_with + 1)); fi
  done
  echo "  $signature  (shards: $shards_with; kconform run --scenarios $(dirname "$f") $name --target ref --target apache)"
done
[[ $found -gt 0 ]] || echo "  none"
[[ $failed -eq 0 ]] || exit 2
[[ $found -eq 0 ]] || exit 1
