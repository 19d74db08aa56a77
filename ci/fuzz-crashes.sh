#!/usr/bin/env bash
# The live-wire fuzzer against a kaas-ref process that crashes, hangs and panics on purpose
# (kaas-ref --plant, a planted-bugs build kept in target/planted): each run owns the broker
# (kconform fuzz --broker-cmd), survives its crashes and must write exactly one finding per
# planted bug, which then replays from its files on a freshly started planted broker and not
# on a clean one. Too long for CI (a run is minutes): the proof of it is
# harness/tests/fuzz_wire_planted.rs's, in 30 s.
#
#   ci/fuzz-crashes.sh bugs DURATION BUG...   # one run with these bugs planted (default jobs)
#   ci/fuzz-crashes.sh each DURATION          # each of the four, then all four at once
#   ci/fuzz-crashes.sh attribution RUNS       # RUNS runs of 16 jobs against the allocation
#                                             # crash, each to its first finding: the frame
#                                             # saved must kill a fresh broker every time
#   ci/fuzz-crashes.sh clean DURATION         # a clean kaas-ref: no finding, no crash
#
# BUG: MarkerCountAllocates, AbortAfterArmedTimeout, PanicOnMinLeaderEpoch, HangOnEmptyGroupId,
# TopicCountAllocates, AnswersUnlistedVersions, ArrayCountAllocates (a huge count in any array
# of the six APIs, at any version, aborts: as the real kaas build dies). START_DELAY_MS=3000 makes each broker start
# take 3 s, as a real kaas build's (1.5 to 3.6 s) and a JVM broker's do.
# BROKERS=4 runs four planted brokers beside each other (kconform fuzz --instances 4, the
# command listening on {port}), the connections spread over them.
# Findings go to $OUT (default: a temporary directory, printed); each run prints kconform's
# summary and one line of figures.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"

build() {
  [[ -n ${KCONFORM:-} ]] || cargo build --release -q --bin kconform
  CARGO_TARGET_DIR=target/planted cargo build --release -q -p reference-broker --features planted-bugs --bin kaas-ref
}
# KCONFORM=PATH runs another kconform (an earlier build, to compare) instead of this one's.
kconform="${KCONFORM:-$root/target/release/kconform}"
kaas_ref="$root/target/planted/release/kaas-ref"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# broker_cmd PORT BUG...: the command that starts a planted kaas-ref on PORT.
broker_cmd() {
  local port="$1" plants="" bug
  shift
  for bug in "$@"; do plants="$plants --plant $bug"; done
  echo "exec '$kaas_ref' --listen 127.0.0.1:$port$plants${START_DELAY_MS:+ --start-delay-ms $START_DELAY_MS}"
}

expected() { # BUG: the start of its finding's signature
  case "$1" in
    MarkerCountAllocates) echo "stopped answering: memory allocation of N bytes failed in markers_with_scratch" ;;
    AbortAfterArmedTimeout) echo "stopped answering: planted: an abort after" ;;
    PanicOnMinLeaderEpoch) echo "closed on a well-formed request: panicked at " ;;
    HangOnEmptyGroupId) echo "silent: AddOffsetsToTxn: group_id" ;;
    TopicCountAllocates) echo "stopped answering: memory allocation of N bytes failed in topics_with_scratch" ;;
    ArrayCountAllocates) echo "stopped answering: memory allocation of N bytes failed in scratch_per_element" ;;
    AnswersUnlistedVersions) echo "answered an unknown version" ;;
    *) echo "unknown bug $1" >&2; exit 2 ;;
  esac
}

# replays DIR PORT BUG...: every finding of DIR replayed from its files on a freshly started
# planted broker (a finding shown: exit 1) and on a clean one (none: exit 0).
replays() {
  local dir="$1" port="$2" files pid status
  shift 2
  python3 - "$dir/report.json" >"$dir/replays" <<'EOF'
import json, sys
for f in json.load(open(sys.argv[1]))["frames"]["findings"]:
    print(" ".join(f["needs"] + [f["file"]]))
EOF
  while read -r files; do
    for plants in planted clean; do
      if [[ $plants == planted ]]; then sh -c "$(broker_cmd "$port" "$@")" >/dev/null 2>&1 &
      else sh -c "$(broker_cmd "$port")" >/dev/null 2>&1 & fi
      pid=$!
      for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
      status=0
      (cd "$dir" && "$kconform" replay-frame $files --target "external=127.0.0.1:$port" --deadline-ms 3000) >"$dir/replay.out" 2>&1 || status=$?
      kill "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
      case "$plants:$status" in
        planted:1 | clean:0) echo "  replay $files on a $plants broker: $( [[ $status == 1 ]] && echo shown || echo not shown)" ;;
        *) echo "  replay $files on a $plants broker: exit $status, expected $( [[ $plants == planted ]] && echo 1 || echo 0)" >&2
           cat "$dir/replay.out" >&2; return 1 ;;
      esac
    done
  done <"$dir/replays"
}

# run NAME DURATION JOBS STOP_AFTER BUG...: one fuzzing run; checks one finding per bug.
run() {
  local name="$1" duration="$2" jobs="$3" stop_after="$4" port dir status=0
  shift 4
  port=$(free_port)
  dir="$out/$name"
  rm -rf "$dir"
  mkdir -p "$dir"
  local extra=()
  [[ $stop_after == 0 ]] || extra=(--stop-after-findings "$stop_after")
  local brokers="${BROKERS:-1}" cmd
  case "$brokers" in
    1) cmd="$(broker_cmd "$port" "$@")" ;;
    *) cmd="$(broker_cmd '{port}' "$@")" ;;
  esac
  "$kconform" fuzz --mode frames --oracle none --target "external=127.0.0.1:$port" \
    --broker-cmd "$cmd" --instances "$brokers" --duration "$duration" --jobs "$jobs" \
    --deadline-ms 3000 --findings "$dir" --json "$dir/report.json" "${extra[@]}" \
    >"$dir/summary.txt" 2>"$dir/stderr.txt" || status=$?
  cat "$dir/summary.txt"
  python3 - "$dir/report.json" "$@" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
f = r["frames"]
rates = ""
if f["first_crash"]:
    at, before = f["first_crash"]
    after = (f["frames"] - before) / max(r["secs"] - at, 0.001)
    rates = f", {before / max(at, 0.001):.0f} frames/s before the first crash, {after:.0f}/s after"
print(f"figures: {f['frames']} frames in {r['secs']:.0f} s ({f['frames_per_sec']:.0f}/s), "
      f"{f['crashes']} crashes, {f['restarts']} restarts ({f['restart_secs']:.1f} s), "
      f"{f['down_secs']:.1f} s down, {f['not_reproduced']} not reproduced at first "
      f"({f['pinned_on_retry']} pinned when tried again), "
      f"{len(f['findings'])} findings{rates}")
for x in f["findings"]:
    print(f"  {x['signature']}: {x['reproduces']}, {x['found_bytes']} -> {x['bytes']} bytes, "
          f"matters {x['matters']}, seen {x['seen']} on {x['seen_on']}")
EOF
  local bug want
  for bug in "$@"; do
    want="$(expected "$bug")"
    local n
    n=$(python3 -c 'import json,sys; print(sum(1 for x in json.load(open(sys.argv[1]))["frames"]["findings"] if x["signature"].startswith(sys.argv[2])))' "$dir/report.json" "$want")
    [[ $n == 1 ]] || { echo "$name: $n findings for $bug ('$want'), expected 1" >&2; return 1; }
  done
  local total
  total=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["frames"]["findings"]))' "$dir/report.json")
  [[ $total == "$#" ]] || { echo "$name: $total findings for $# planted bugs" >&2; return 1; }
  [[ $# == 0 || $status == 1 ]] || { echo "$name: kconform exited $status" >&2; return 1; }
  replays "$dir" "$(free_port)" "$@"
  echo "$name: PASSED"
}

all=(MarkerCountAllocates AbortAfterArmedTimeout PanicOnMinLeaderEpoch HangOnEmptyGroupId)
case "${1:-}" in
  bugs) build; shift; duration="$1"; shift; run "bugs" "$duration" 16 0 "$@" ;;
  each)
    build
    failed=()
    for bug in "${all[@]}"; do run "$bug" "$2" 16 0 "$bug" || failed+=("$bug"); done
    run "all-four" "$2" 16 0 "${all[@]}" || failed+=(all-four)
    [[ ${#failed[@]} == 0 ]] || { echo "FAILED: ${failed[*]}" >&2; exit 1; }
    ;;
  attribution)
    build
    failed=0
    for i in $(seq 1 "$2"); do run "attribution-$i" 120s 16 1 MarkerCountAllocates || failed=$((failed + 1)); done
    [[ $failed == 0 ]] || { echo "FAILED: $failed of $2 runs" >&2; exit 1; }
    ;;
  clean) build; run "clean" "$2" 16 0 ;;
  *) sed -n '2,20p' "$0" >&2; exit 2 ;;
esac
echo "findings in $out"
