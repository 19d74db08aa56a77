#!/usr/bin/env bash
# The published matrix: every broker of matrix/brokers.toml installed, started and certified
# against Apache 3.7.2 (each later release too with --against apache@4.4 ...), the site written
# to target/matrix (every run kept under its runs/: commit them where the site is published, and
# a broker's page shows what changed between runs). Tens of minutes on two cores (about five a
# broker with --budget 5m); never in CI. Extra arguments go to `kconform matrix`:
#
#   ci/matrix.sh                                   # every broker, against 3.7.2
#   ci/matrix.sh --broker tansu,kfake              # some of them
#   ci/matrix.sh --against apache --against apache@4.4
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p harness --bin kconform
target/release/kconform matrix --brokers matrix/brokers.toml --site target/matrix --budget 5m "$@"
