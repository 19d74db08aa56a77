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

echo "test: cargo test --workspace"
cargo test --workspace --locked

echo "test: ci/fuzz.sh 10"
ci/fuzz.sh 10
