#!/usr/bin/env bash
# Runs every cargo-fuzz target for SECONDS each and fails on any crash, leak, OOM or timeout.
#
#   ci/fuzz.sh SECONDS [TARGET...]
#   FUZZ_JOBS=6 ci/fuzz.sh 3600          # six targets at once, each for the hour
#   ci/fuzz.sh --long 28800              # overnight: every target at once, corpus kept
#   ci/fuzz.sh --minimize [TARGET...]    # fold the kept corpus into fuzz/corpus/, minimised
#   ci/fuzz.sh --build                   # build the targets as a run of SECONDS would, no more
#   ci/fuzz.sh --install                 # cargo-fuzz where missing, the fuzz crate's sources
#
# FUZZ_JOBS (default 1) targets run at the same time; on two cores, FUZZ_JOBS=6 shares them
# between the six codec targets, each still fuzzed for SECONDS of wall time.
# --long runs every target at once (sharing all cores) and keeps what libFuzzer finds in
# FUZZ_CORPUS (default: $XDG_CACHE_HOME/kconform/fuzz-corpus, or ~/.cache/...), one directory
# per target, so each night starts where the last stopped; nothing there is removed. Its
# summary adds the runs each target would do in 8 h at the rate measured, and their total.
# --long builds without AddressSanitizer (FUZZ_SANITIZER=address to keep it): the codecs are
# safe Rust, where ASan finds nothing the language's own checks miss, and it halves the
# executions a night runs; debug assertions (overflow checks) stay on, and the RSS limit holds
# (the single-allocation limit needs a sanitizer's malloc hooks). Other modes keep ASan.
# --minimize merges the kept corpus into the committed one (libFuzzer -merge=1: only inputs
# that add coverage are copied); review and commit fuzz/corpus/ after it.
# Reproducers land in fuzz/artifacts/<target>/; replay one with
#   RUSTC_BOOTSTRAP=1 cargo fuzz run <target> fuzz/artifacts/<target>/<file>
# and, once fixed, copy it into fuzz/regressions/<target>/ so `cargo test` replays it forever.
# FUZZ_HURRY=FILE:SECONDS shortens what is left once FILE exists: a target that starts after
# that runs for SECONDS (if fewer) instead. ci/test.sh fuzzes in the tests' idle time and
# creates FILE when the tests are done, so that a run whose fuzzing fell behind them is not
# held up long after them waiting on it; the summary says how long each target ran.
# --build lets a caller build ahead of the run (ci/test.sh builds while the tests run, which
# leave most of a core idle), so that the run itself starts at once. --install does only what
# takes cargo's download lock (cargo-fuzz's install, the fuzz crate's fetch), so that a caller
# can do it at full priority and the rest at a low one (ci/test.sh: a starved download would
# hold the lock against any cargo the tests start); every other mode installs cargo-fuzz too
# where it is missing.
# Without --long, the committed corpus is read, never written: new inputs go to a scratch
# directory.
# cargo-fuzz needs nightly features; RUSTC_BOOTSTRAP=1 enables them on a stable toolchain.
set -euo pipefail

usage() {
  echo "usage: [FUZZ_JOBS=N] ci/fuzz.sh SECONDS [TARGET...] | ci/fuzz.sh --long SECONDS [TARGET...] | ci/fuzz.sh --minimize [TARGET...] | ci/fuzz.sh --build | ci/fuzz.sh --install" >&2
  exit 2
}
mode=run
case ${1:-} in
  --long) mode=long; shift ;;
  --minimize) mode=minimize; shift ;;
  --build) mode=build; shift; [[ $# -eq 0 ]] || usage ;;
  --install) mode=install; shift; [[ $# -eq 0 ]] || usage ;;
esac
if [[ $mode == run || $mode == long ]]; then
  [[ $# -ge 1 && $1 =~ ^[0-9]+$ && $1 -gt 0 ]] || usage
  seconds=$1; shift
fi
jobs=${FUZZ_JOBS:-1}
hurry_file= hurry_seconds=
if [[ -n ${FUZZ_HURRY:-} ]]; then
  hurry_file=${FUZZ_HURRY%:*} hurry_seconds=${FUZZ_HURRY##*:}
  [[ $FUZZ_HURRY == *:* && -n $hurry_file && $hurry_seconds =~ ^[0-9]+$ && $hurry_seconds -gt 0 ]] ||
    { echo "fuzz: FUZZ_HURRY must be FILE:SECONDS (SECONDS a positive number), got '$FUZZ_HURRY'" >&2; exit 2; }
fi
[[ $jobs =~ ^[0-9]+$ && $jobs -gt 0 ]] || { echo "fuzz: FUZZ_JOBS must be a positive number, got '$jobs'" >&2; exit 2; }
cd "$(dirname "$0")/.."
export RUSTC_BOOTSTRAP=1
kept=${FUZZ_CORPUS:-${XDG_CACHE_HOME:-$HOME/.cache}/kconform/fuzz-corpus}

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz: installing cargo-fuzz (once per machine)"
  cargo install cargo-fuzz --locked --debug --quiet
fi
if [[ $mode == install ]]; then
  cargo fetch --locked --manifest-path fuzz/Cargo.toml --quiet
  exit 0
fi

targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  mapfile -t targets < <(cd fuzz && cargo fuzz list)
fi
[[ ${#targets[@]} -gt 0 ]] || { echo "fuzz: no targets found" >&2; exit 1; }
sanitizer=${FUZZ_SANITIZER:-address}
if [[ $mode == long ]]; then
  jobs=${#targets[@]}
  sanitizer=${FUZZ_SANITIZER:-none}
fi
case $sanitizer in
  address|none|memory|thread|leak) ;;
  *) echo "fuzz: FUZZ_SANITIZER must be address, none, memory, thread or leak, got '$sanitizer'" >&2; exit 2 ;;
esac

# FUZZ_TARGET_DIR: where the targets build (default fuzz/target); ci/test.sh keeps it in its
# build cache, outside the clone.
target_dir=()
[[ -n ${FUZZ_TARGET_DIR:-} ]] && target_dir=(--target-dir "$FUZZ_TARGET_DIR")
echo "fuzz: building ${#targets[@]} targets (sanitizer: $sanitizer)"
(cd fuzz && cargo fuzz build --debug-assertions --sanitizer "$sanitizer" "${target_dir[@]}")
[[ $mode == build ]] && exit 0
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

if [[ $mode == minimize ]]; then
  for t in "${targets[@]}"; do
    if [[ ! -d $kept/$t ]] || [[ -z $(ls -A "$kept/$t") ]]; then
      echo "fuzz: $t: nothing kept in $kept/$t"
      continue
    fi
    before=$(ls "fuzz/corpus/$t" | wc -l)
    (cd fuzz && cargo fuzz run --debug-assertions --sanitizer "$sanitizer" "${target_dir[@]}" "$t" "corpus/$t" "$kept/$t" -- -merge=1) \
      >"$scratch/$t.log" 2>&1 || { tail -n 30 "$scratch/$t.log"; echo "fuzz: merging $t failed" >&2; exit 1; }
    after=$(ls "fuzz/corpus/$t" | wc -l)
    echo "fuzz: $t: $((after - before)) inputs from $(ls "$kept/$t" | wc -l) kept added to fuzz/corpus/$t"
  done
  exit 0
fi

# One target for $2 seconds; its status goes to $scratch/<target>.status.
run_one() {
  local t=$1 for_seconds=$2 log="$scratch/$1.log" grown="$scratch/$1"
  [[ $mode == long ]] && grown="$kept/$t"
  mkdir -p "$grown" "fuzz/artifacts/$t" "fuzz/regressions/$t"
  # Corpus dirs: the writable one first (libFuzzer writes new inputs there: scratch, or the
  # kept corpus in --long), then the committed seeds and regressions (read only).
  if (cd fuzz && cargo fuzz run --debug-assertions --sanitizer "$sanitizer" "${target_dir[@]}" "$t" "$grown" "corpus/$t" "regressions/$t" -- \
        -max_total_time="$for_seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
        -print_final_stats=1) >"$log" 2>&1; then
    echo ok >"$scratch/$t.status"
  else
    echo FAILED >"$scratch/$t.status"
  fi
}

running=0
declare -A ran_for
for t in "${targets[@]}"; do
  if [[ $running -ge $jobs ]]; then
    wait -n || true
    running=$((running - 1))
  fi
  for_seconds=$seconds
  if [[ -n $hurry_file && -e $hurry_file && $hurry_seconds -lt $seconds ]]; then
    for_seconds=$hurry_seconds
  fi
  ran_for[$t]=$for_seconds
  echo "fuzz: $t for ${for_seconds}s"
  run_one "$t" "$for_seconds" &
  running=$((running + 1))
done
wait

failed=()
summary=()
for t in "${targets[@]}"; do
  log="$scratch/$t.log"
  status=$(cat "$scratch/$t.status" 2>/dev/null || echo FAILED)
  if [[ $status != ok ]]; then
    failed+=("$t")
    echo "--- $t (last 60 lines) ---"
    tail -n 60 "$log"
  fi
  execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log" | tail -n 1)
  rate=$(awk '/stat::average_exec_per_sec/ {print $2}' "$log" | tail -n 1)
  line=$(printf '%-24s %-7s %4ss %12s runs %9s exec/s' "$t" "$status" "${ran_for[$t]}" "${execs:-?}" "${rate:-?}")
  if [[ $mode == long && ${rate:-} =~ ^[0-9]+$ ]]; then
    night=$((rate * 28800))
    total_night=$((${total_night:-0} + night))
    line+=$(printf ' %16s runs in 8 h, %6s inputs kept' "$night" "$(ls "$kept/$t" | wc -l)")
  fi
  summary+=("$line")
done
echo
echo "fuzz summary (${seconds}s per target${hurry_file:+, ${hurry_seconds}s for those begun in a hurry (FUZZ_HURRY)}, ${jobs} at a time, sanitizer: $sanitizer):"
printf '  %s\n' "${summary[@]}"
if [[ $mode == long ]]; then
  echo "  at these rates, 8 h would run ${total_night:-0} inputs across ${#targets[@]} targets (all at once on $(nproc) cores); corpus kept in $kept"
fi
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz: FAILED: ${failed[*]}; reproducers in fuzz/artifacts/" >&2
  exit 1
fi
