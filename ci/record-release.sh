#!/usr/bin/env bash
# Records the answers of other Apache releases than 3.7.2 (whose answers every CI run re-checks
# live) for `--target apache-recorded@RELEASE[:3][+sasl]`: each release given (`4.4`, `4.4+tv2`)
# is launched as JVMs (Java and Maven needed, as for the tests) in each shape its scenarios need
# (one broker, a three-broker cluster, each with SASL and ACLs or without), every scenario
# written for it runs on the shape it is written for, and its answers are written to
# snapshots/<scenario>__apache@<version>[-tv2][-3][-sasl].snap with the digest of the scenario
# text they answered. Read the changes (git diff snapshots/) before committing them: a scenario
# changed since its recording is refused until recorded again, by kconform and by CI.
# About 15 minutes a release here (the cluster scenarios); KCONFORM_RECORD_SCENARIOS=a,b
# records only those scenarios (after editing one, say).
#
#   ci/record-release.sh 4.4 4.4+tv2
#   KCONFORM_RECORD_SCENARIOS=end-txn-commit-and-retry ci/record-release.sh 4.4 4.4+tv2
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -gt 0 ]] || { echo "usage: ci/record-release.sh RELEASE... (e.g. 4.4 4.4+tv2)" >&2; exit 2; }
for release in "$@"; do
  echo "record-release: recording Apache $release"
  # Written in place: cargo-insta's review does not look in snapshots/, which is outside the
  # harness package. Forced (INSTA_UPDATE=force), because insta leaves a file whose answers
  # are unchanged as it is, metadata and all: a scenario's new digest (a fragment it includes
  # was edited, its requests and answers the same) would stay unwritten and refused as stale.
  KCONFORM_RECORD_RELEASE=$release INSTA_UPDATE=force cargo test -p harness --test integration \
    -- --ignored --exact apache_releases::record_the_answers_of_a_release
done
git status --short snapshots/
