#!/usr/bin/env bash
# Holds decoders this project did not write to Apache's verdict, in process (kconform-wire's
# check), and prints one line per defect with where it showed:
#   ci/decoders-others.sh [INPUTS]      # default 30000
# tansu-sans-io 0.6.0 (examples/decoders-tansu, written by `kconform fuzz init-decoders`);
# kafka-protocol 0.15's are checked by `cargo test -p kconform-wire --test kafka_protocol`,
# whose snapshot records what it finds. Exit 1 when a decoder shows a defect (they do).
set -euo pipefail
cd "$(dirname "$0")/.."
inputs=${1:-30000}
[[ $inputs =~ ^[0-9]+$ ]] || { echo "usage: ci/decoders-others.sh [INPUTS]" >&2; exit 2; }
status=0
echo "== tansu-sans-io 0.6.0"
cargo run --quiet --release --manifest-path examples/decoders-tansu/fuzz-apache/Cargo.toml \
  --locked --bin decoders_session -- "$inputs" || status=$?
exit "$status"
