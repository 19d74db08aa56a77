#!/usr/bin/env bash
# The long stateful fuzz, as a habit (not in CI): kaas-ref against a live Apache 3.7 for MINUTES
# in all (default 60), over SEEDS seeds (default 3) of SHARDS shards each (default 2; `--shard
# K/N`, so the shards of a seed draw disjoint sequences), one shard after another on one Apache
# kept up between them; then every shard's findings merged into one directory and one line per
# signature printed: how many shards found it and the scenario file that replays it. Run it
# after each change to kaas-ref's coordinator or to the ledger: every undocumented finding is
# fixed in kaas-ref or documented in scenarios/deviations.toml, its sequence kept as a scenario.
#
#   ci/fuzz-long.sh [MINUTES] [SEEDS] [SHARDS]
#   KCONFORM_FUZZ_FIRST_SEED=N      the first seed (default 1; the others follow it)
#   KCONFORM_FUZZ_OUT=DIR           where the shards and the merge go (default target/fuzz-long)
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
rm -rf "$out"
mkdir -p "$out"
# One Apache for every shard (each would otherwise start its own JVM); taken down at the end,
# unless it was up before.
was_up=false
if "$kconform" apache status >/dev/null 2>&1; then was_up=true; else "$kconform" apache up; fi
finish() { $was_up || "$kconform" apache down >/dev/null 2>&1 || true; }
trap finish EXIT

echo "fuzz-long: $runs shard(s) of ${each} s (seeds $first..$((first + seeds - 1)), $shards shard(s) each), kaas-ref against Apache"
failed=0
dirs=()
started=$(date +%s)
for s in $(seq "$first" $((first + seeds - 1))); do
  for k in $(seq 1 "$shards"); do
    dir="$out/seed-$s-shard-$k"
    dirs+=("$dir")
    t0=$(date +%s)
    set +e
    "$kconform" fuzz --mode sequences --target ref --oracle apache --seed "$s" --shard "$k/$shards" \
      --duration "${each}s" --findings "$dir" >"$dir.log" 2>&1
    code=$?
    set -e
    summary=$(grep -E "sequences|finding" "$dir.log" | tail -1)
    echo "  seed $s shard $k/$shards: exit $code in $(( $(date +%s) - t0 )) s: ${summary:-see $dir.log}"
    [[ $code -le 1 ]] || failed=1
  done
done

merged="$out/merged"
"$kconform" fuzz merge --into "$merged" "${dirs[@]}" >"$out/merge.log" 2>&1 || { echo "fuzz-long: merge failed (see $out/merge.log)" >&2; exit 2; }
echo "fuzz-long: $(( $(date +%s) - started )) s; findings by signature (shards that found it, the file that replays it):"
found=0
for f in "$merged"/finding-*.toml; do
  [[ -e $f ]] || continue
  found=$((found + 1))
  signature=$(sed -n 's/^# signature: //p' "$f" | head -1)
  name=$(basename "$f" .toml)
  shards_with=0
  for d in "${dirs[@]}"; do
    if grep -q -s -F -- "# signature: $signature" "$d"/finding-*.toml; then shards_with=$((shards_with + 1)); fi
  done
  echo "  $signature  (shards: $shards_with; $f: kconform run --scenarios $merged $name --target ref --target apache)"
done
[[ $found -gt 0 ]] || echo "  none"
[[ $failed -eq 0 ]] || exit 2
[[ $found -eq 0 ]] || exit 1
