#!/usr/bin/env bash
# The test command: formatting, lints, every test, and a short fuzz of every codec.
# On a fresh machine this is all the set-up there is: it installs what it needs (cargo-fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in cargo rustfmt cargo-clippy; do
  command -v "$tool" >/dev/null || { echo "test: $tool not found (install Rust with rustup, components rustfmt and clippy)" >&2; exit 1; }
done
echo "test: $(cargo --version), $(rustc --version)"

echo "test: cargo fmt --check"
cargo fmt --all -- --check
cargo fmt --manifest-path fuzz/Cargo.toml -- --check

echo "test: cargo clippy -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings

if ! cargo insta --version >/dev/null 2>&1; then
  echo "test: installing cargo-insta (once per machine)"
  cargo install cargo-insta --locked --quiet
fi

# cargo test through cargo-insta: a snapshot that differs, or one no test references, fails.
echo "test: cargo insta test --workspace --check --unreferenced=reject"
rm -f target/tmp/{mutation-score,equivalent-score,apache-parser-agreement,request-agreement,kfake-judge}.txt
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo insta test --workspace --check --unreferenced=reject 2>&1 | tee "$log"

echo "test: ci/fuzz.sh 10"
ci/fuzz.sh 10

# One closing line for the whole run: cargo test's counts (the fuzz run above passed, or we
# would have stopped).
for figure in mutation-score equivalent-score apache-parser-agreement request-agreement kfake-judge; do
  if [ -f "target/tmp/$figure.txt" ]; then echo "test: $(cat "target/tmp/$figure.txt")"; fi
done
awk '/^test result:/ { p += $4; f += $6; s += $8 } END { printf "tests: %d passed, %d failed, %d skipped\n", p, f, s }' "$log"
