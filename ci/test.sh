#!/usr/bin/env bash
# The test command: formatting, lints, every test, and a short fuzz of every codec.
# On a fresh machine this is all the set-up there is: it installs what it needs (mdbook and
# Chromium beside the build, cargo-fuzz beside the tests; the tests install the clients and
# fetch Apache's jars).
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in cargo rustfmt cargo-clippy clippy-driver; do
  command -v "$tool" >/dev/null || { echo "test: $tool not found (install Rust with rustup, components rustfmt and clippy)" >&2; exit 1; }
done
echo "test: $(cargo --version), $(rustc --version)"

# Seconds per step, printed at the end: where a run's time went (a cold cache, a slow install).
started=$(date +%s)
step_began=$started
step_times=()
step_done() {
  local now
  now=$(date +%s)
  step_times+=("$1 $((now - step_began)) s")
  last_step=$1
  step_began=$now
}

# Scratch space on tmpfs where there is one with room (KCONFORM_CI_TMPDIR=keep leaves $TMPDIR
# alone). Every broker the tests start keeps its data under $TMPDIR (kaas-ref's data
# directories, Apache's KRaft storage), and kaas-ref makes each acknowledged write durable
# with fsync, which this machine's disk takes about a millisecond for: the epoch-overflow
# scenario's 32,765 InitProducerIds took 42 s on kaas-ref on disk and 13 s on tmpfs. The
# writes, reads and crash recoveries the tests check are the same on both (a killed process
# leaves the page cache whole either way); only a power cut would tell them apart.
scratch=
cleanup() {
  # Where a failed run's time went, too (a passing run prints it at the end).
  if [[ -z ${steps_printed:-} ]]; then
    step_done "the step after ${last_step:-the start}, to where it stopped"
    summary=$(printf '%s; ' "${step_times[@]}")
    echo "test: seconds per step, to the failure: ${summary%; } (total $(( $(date +%s) - started )) s)" >&2
  fi
  # A fuzz build still running when the tests failed goes with the script (its own process
  # group: cargo and rustc too).
  if [[ -n ${fuzz_build:-} ]]; then kill -- "-$fuzz_build" 2>/dev/null || true; fi
  if [[ -n ${tools:-} ]]; then kill -- "-$tools" 2>/dev/null || true; fi
  if [[ -n ${cluster:-} ]]; then kill -- "-$cluster" 2>/dev/null || true; fi
  rm -rf "${log:-}" "${snapshot_refs:-}" "${fuzz_build_log:-}" "${tools_log:-}" "${build_log:-}" "${cluster_log:-}" "${tests_done:-}" "${fuzz_hurry:-}" ${scratch:+"$scratch"}
}
trap cleanup EXIT
if [[ ${KCONFORM_CI_TMPDIR:-} != keep && -d /dev/shm && -w /dev/shm ]]; then
  free_kib=$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')
  if [[ ${free_kib:-0} -ge $((4 * 1024 * 1024)) ]]; then
    scratch=$(mktemp -d /dev/shm/kconform-ci.XXXXXX)
    export TMPDIR=$scratch
    echo "test: scratch space (TMPDIR) on tmpfs: $scratch"
  fi
fi

echo "test: cargo fmt --check"
cargo fmt --all -- --check
cargo fmt --manifest-path fuzz/Cargo.toml -- --check
step_done "fmt"

# The tools the tests need, installed once a machine (mdbook for the book that the HTML
# report's test reads, Debian's Chromium for that test), in the background while the
# workspace builds: on a fresh machine they are a minute of downloads and compiling that the
# build's own waits (downloads, links, its serial last crates) leave room for. Waited for after
# the build; their log is shown if one fails. mdbook is built unoptimised (--debug) and without
# its `serve` and `watch` (a web server and a file watcher, for writing a book, not building
# one): the book still builds in a second. cargo-insta is not needed: the tests run under
# `cargo test` with insta's own settings, as cargo-insta runs them (below), and its 37 s of CPU
# shared the fresh machine's build. cargo-fuzz is installed by the fuzz lane, in the tests'
# idle time.
install_tools() {
  set -euo pipefail
  if ! mdbook --version >/dev/null 2>&1; then
    echo "test: installing mdbook (once per machine)"
    cargo install mdbook --locked --debug --no-default-features --features search --quiet
  fi
  if ! command -v chromium >/dev/null 2>&1; then
    echo "test: installing chromium (Debian's package, once per machine)"
    local sudo_=""
    [[ $(id -u) -eq 0 ]] || sudo_=sudo
    $sudo_ apt-get install -y --no-install-recommends chromium >/dev/null ||
      { $sudo_ apt-get update -qq && $sudo_ apt-get install -y --no-install-recommends chromium >/dev/null; } ||
      { echo "test: could not install chromium (apt-get install chromium)" >&2; return 1; }
  fi
}
tools_log=$(mktemp)
echo "test: installing what is missing of mdbook and chromium beside the build (log shown if it fails)"
# Its own process group, so that a failed run takes its cargo and apt-get along.
setsid bash -c "$(declare -f install_tools); install_tools" >"$tools_log" 2>&1 &
tools=$!

# Clippy runs inside the test build rather than as a build of its own: clippy-driver is the
# compiler of the workspace's crates (RUSTC_WORKSPACE_WRAPPER, what `cargo clippy` sets), so
# its lints, denied with every other warning, are checked while the test binaries are built,
# and the dependencies are compiled once instead of once for clippy and again for the tests.
# The flags change every fingerprint, so these builds keep a target directory of their own
# and leave a developer's target/ alone: a cache outside the clone, kept between runs
# (${XDG_CACHE_HOME:-~/.cache}/kconform/ci-build, or KCONFORM_CI_CACHE=DIR; =off for
# target/ci inside the clone). A clean clone then compiles its own crates, not the ~400
# dependencies again (librdkafka's C among them): they are most of a cold build's 5 minutes.
# Cargo's fingerprints decide what is stale, as in any target directory, and its lock lets
# one run build at a time; the fuzz targets' build is cached beside it the same way.
case ${KCONFORM_CI_CACHE:-} in
  off) ci_target=target/ci ;;
  '') ci_target=${XDG_CACHE_HOME:-$HOME/.cache}/kconform/ci-build/test ;;
  *) ci_target=$KCONFORM_CI_CACHE/test ;;
esac
if [[ ${KCONFORM_CI_CACHE:-} != off ]]; then
  export FUZZ_TARGET_DIR=${ci_target%/test}/fuzz
  echo "test: build cache (KCONFORM_CI_CACHE=off for none): ${ci_target%/test}"
fi
lint_build=(env "RUSTC_WORKSPACE_WRAPPER=$(command -v clippy-driver)" "RUSTFLAGS=-D warnings"
  "CARGO_TARGET_DIR=$ci_target")
echo "test: clippy -D warnings on every target, while building the tests"
build_log=$(mktemp)
"${lint_build[@]}" cargo test --workspace --all-targets --locked --no-run 2>&1 | tee "$build_log"
# The cluster test's binary, which runs in a lane of its own below (cargo names each test
# binary it built: "Executable tests/real_clients_cluster.rs (PATH)").
cluster_test=$(sed -n 's/^ *Executable tests\/real_clients_cluster\.rs (\(.*\))$/\1/p' "$build_log")
[[ -n $cluster_test ]] || { echo "test: cargo built no tests/real_clients_cluster.rs" >&2; exit 1; }
cluster_test=$(realpath "$cluster_test")
step_done "build with clippy"

if ! wait "$tools"; then
  tools=
  cat "$tools_log"
  echo "test: installing the tools failed" >&2
  exit 1
fi
tools=
sed 's/^/  /' "$tools_log"
step_done "tools (installed beside the build; the wait after it)"

# The book (docs/): built as its readers get it. Its generated chapters (the ledger, the
# scenarios, the command line) and its links are checked by the harness's `book` tests below.
echo "test: mdbook build docs ($(mdbook --version))"
if ! mdbook build docs 2>&1 | sed 's/^/  /'; then
  echo "test: mdbook build docs failed" >&2
  exit 1
fi
echo "test: the book has $(grep -c '\](' docs/src/SUMMARY.md) chapters: $(grep -o '\[[^]]*\]' docs/src/SUMMARY.md | tr -d '[]' | paste -sd ';' | sed 's/;/; /g')"
step_done "book"

# The fuzz lane, beside the tests: cargo-fuzz installed (once a machine), the fuzz targets
# built, and each fuzzed for 20 s, two at a time. Its log is shown if it fails, its summary if
# it passes. Most of a test's time is spent waiting on brokers, and the lane is meant to take
# that idle time only: on a fresh machine its build is 214 s of CPU (1 min 57 s alone on two
# cores), and the fuzzing, two processes that never wait, would take all it is given.
# It runs in a session of its own (setsid, so that a failed run can stop its whole process
# group), and where the kernel schedules sessions as groups (autogroups, on in most
# distributions' kernels), a process's nice value ranks it only inside its own session: at
# plain nice 19 the lane took half of the two cores from the tests (two busy loops beside two
# at nice 19 in a session of their own: the same counts; with the session's own nice set to
# 19: 1-2% of theirs). So the lane sets its session's nice (/proc/self/autogroup) too, once
# what takes cargo's download lock (cargo-fuzz's install, the fuzz crates' fetch) is done: a
# starved download would hold the lock against any cargo the tests start. 20 s a target and
# not 10: each is fuzzed on what the tests leave. But a target that begins once the tests are
# done runs 5 s (FUZZ_HURRY): four tests at a time leave less idle time, and a fresh machine's
# run once waited 73 s after its tests for a lane still fuzzing 20 s a target.
fuzz_lane() {
  set -euo pipefail
  ci/fuzz.sh --install
  if [[ -w /proc/self/autogroup ]]; then echo 19 >/proc/self/autogroup || true; fi
  nice -n 19 ci/fuzz.sh --build
  FUZZ_HURRY=$fuzz_hurry:5 FUZZ_JOBS=2 nice -n 10 ci/fuzz.sh 20
}
fuzz_build_log=$(mktemp)
fuzz_hurry=$(mktemp -u)
echo "test: installing cargo-fuzz if missing, then building and fuzzing the fuzz targets in the tests' idle time (20 s a target; log shown if it fails)"
# Its own process group, so that a failed run takes its cargo and fuzzers along.
setsid env fuzz_hurry="$fuzz_hurry" bash -c "$(declare -f fuzz_lane); fuzz_lane" >"$fuzz_build_log" 2>&1 &
fuzz_build=$!

# cargo test with insta's settings as `cargo insta test --check --unreferenced=reject` sets them:
# a snapshot that differs or is missing fails its test (INSTA_UPDATE=no: nothing is written),
# every test binary runs (--no-fail-fast), and insta lists each snapshot file a test read
# (INSTA_SNAPSHOT_REFERENCES_FILE); a snapshot file anywhere in the tree but snapshots/ that no
# test read fails the run below. The files in snapshots/ are held to the scenarios by the unit test
# every_snapshot_is_of_a_scenario_and_a_target_that_runs_it (some are other releases' recorded
# answers, read without insta).
# Four tests at a time on two cores: most of a test's time is spent waiting on brokers and
# clients (two cores 38% idle under three at a time), so a fourth runs in that idle time. The
# harness's integration tests took 387 s two at a time and 253-281 s three at a time on an
# earlier machine; on a slower one, in the same hour, 395 s three at a time, 307 s four and
# 330 s five (five slowed every test down: 1,560 test-seconds against 1,163). The scenario
# suite alone, about 220 s, is the floor.
figures=$ci_target/tmp
rm -f "$figures"/{mutation-score,equivalent-score,apache-parser-agreement,request-agreement,request-agreement-4.4,kfake-judge}.txt
log=$(mktemp)
# The cluster test (librdkafka's exactly-once copy on two three-broker clusters, a broker
# killed mid-run) spent its 76-97 s waiting on clients and failovers, one core at most 15%
# busy, while cargo ran nothing else; with its two clusters now run at once, 47-72 s. It runs
# in a lane of its own once cargo has come to it, that is once the harness's integration tests
# are done, beside the lighter binaries cargo runs after it (kconform-wire's and kaas-ref's,
# about a minute and a half). Not from the start: beside the harness's integration tests,
# which keep both cores busy for minutes, three of their timing-bound tests failed in two runs
# (a planted bug that shows only inside a peer's marker poll, a fuzz run told to stop after one
# finding that made two, a kafka-python workload); none had failed in seven runs before. Run as
# cargo would (from its package's directory) and skipped by name in cargo's run, where it
# would have been; the script checks that it passed.
cluster_name=exactly_once_survives_the_coordinator_or_a_leader_killed
cluster_log=$(mktemp)
tests_done=$(mktemp -u)
echo "test: tests/real_clients_cluster.rs beside the binaries after it (log shown at the end)"
# Its own process group, so that a failed run takes it and its brokers along.
setsid bash -c 'until grep -q "Running tests/real_clients_cluster.rs" "$2" || [[ -e $3 ]]; do sleep 1; done
  cd harness && echo "     Running tests/real_clients_cluster.rs ($0)" && exec "$0" --exact "$1"' \
  "$cluster_test" "$cluster_name" "$log" "$tests_done" >"$cluster_log" 2>&1 &
cluster=$!
snapshot_refs=$(mktemp)
echo "test: cargo test --workspace --no-fail-fast, snapshots checked (INSTA_UPDATE=no; four tests at a time)"
tests_failed=0
RUST_TEST_THREADS=4 INSTA_UPDATE=no INSTA_FORCE_PASS=0 INSTA_SNAPSHOT_REFERENCES_FILE=$snapshot_refs \
  "${lint_build[@]}" cargo test --workspace --locked --no-fail-fast -- --exact --skip "$cluster_name" 2>&1 | tee "$log" || tests_failed=1
touch "$tests_done"
if [[ $tests_failed -ne 0 ]]; then
  # No waiting for the cluster test: the run has failed (the exit trap stops it).
  cat "$cluster_log"
  echo "test: cargo test failed" >&2
  exit 1
fi
unreferenced=$(find . -name '*.snap' -not -path './snapshots/*' -not -path '*/target/*' -not -path './.git/*' -print0 |
  xargs -0 -r realpath | sort | comm -23 - <(xargs -r -d '\n' realpath -m <"$snapshot_refs" | sort -u))
if [[ -n $unreferenced ]]; then
  echo "test: snapshot files no test read (delete them, or the test that should read them is gone):" >&2
  sed 's/^/  /' <<<"$unreferenced" >&2
  exit 1
fi
echo "test: every snapshot file outside snapshots/ was read by a test ($(sort -u "$snapshot_refs" | wc -l) snapshot files read)"
cluster_failed=0
wait "$cluster" || cluster_failed=1
cluster=
rm -f "$tests_done"
cat "$cluster_log" | tee -a "$log"
if [[ $cluster_failed -ne 0 ]]; then
  echo "test: tests/real_clients_cluster.rs failed" >&2
  exit 1
fi
grep -q "^test $cluster_name \.\.\. ok$" "$cluster_log" ||
  { echo "test: tests/real_clients_cluster.rs ran no $cluster_name" >&2; exit 1; }
step_done "tests"

# Where the fuzz lane is, and what is left of it shortened (above).
touch "$fuzz_hurry"
echo "test: the tests are done; the fuzz lane's last line: $(tail -n 1 "$fuzz_build_log")"
if ! wait "$fuzz_build"; then
  fuzz_build=
  cat "$fuzz_build_log"
  echo "test: fuzzing failed" >&2
  exit 1
fi
fuzz_build=
sed -n '/^fuzz summary/,$p' "$fuzz_build_log"
step_done "fuzz (installed, built and run beside the tests; the wait after them)"

# One closing line for the whole run: cargo test's counts (the fuzz run above passed, or we
# would have stopped).
for figure in mutation-score equivalent-score apache-parser-agreement request-agreement request-agreement-4.4 kfake-judge; do
  if [ -f "$figures/$figure.txt" ]; then echo "test: $(cat "$figures/$figure.txt")"; fi
done
slow=$(grep -o "^test [^ ]* has been running for over 60 seconds" "$log" | awk '{ print $2 }' | sort -u | paste -sd ' ')
echo "test: tests that ran over 60 s: ${slow:-none}"
# Each test binary's time (cargo test's 'finished in'), the longest first: where the tests
# step's minutes go.
binaries=$(awk '/^ *Running / { name = $NF; gsub(/[()]/, "", name); sub(/.*\//, "", name); sub(/-[0-9a-f]+$/, "", name); name = name " (" $2 ")" }
  /^ *Doc-tests / { name = "doc-tests " $2 }
  /^test result:/ { sub(/s$/, "", $NF); printf "%.0f\t%s\n", $NF, name }' "$log" |
  sort -rn | head -5 | awk -F'\t' '{ printf "%s%s %s s", (NR > 1 ? "; " : ""), $2, $1 }')
echo "test: longest test binaries: ${binaries:-none}"
summary=$(printf '%s; ' "${step_times[@]}")
echo "test: seconds per step: ${summary%; } (total $(( $(date +%s) - started )) s)"
steps_printed=1
awk '/^test result:/ { p += $4; f += $6; s += $8 } END { printf "tests: %d passed, %d failed, %d skipped\n", p, f, s }' "$log"
