#!/usr/bin/env bash
# The test command (ci/test.sh) as a fresh machine runs it, timed: a clean clone of HEAD with
# every cache of this user's replaced by an empty one. cargo's registry and its installed tools
# (mdbook, cargo-fuzz), kconform's cache (Apache's jars, the clients, the CI build
# cache), Maven's repository, the Go module and build caches, npm's and pip's: all start empty,
# as they are on a new machine; the toolchains (rustup's, Java, Maven, Go, Node.js, Python)
# are the machine's. Chromium is a system package and stays where it is installed: remove it
# first (apt-get purge chromium) to time its install too.
#
#   ci/fresh-machine.sh            # prints the run's own closing lines: seconds per step
#   KEEP=1 ci/fresh-machine.sh     # keeps the fresh home and clone (its path is printed)
#
# Everything goes under one temporary folder ($TMPDIR, about 15 GB), removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
fresh=$(mktemp -d "${TMPDIR:-/tmp}/kconform-fresh.XXXXXX")
[[ -n ${KEEP:-} ]] || trap 'rm -rf "$fresh"' EXIT
echo "fresh-machine: a clean clone of $(git rev-parse --short HEAD) with empty caches under $fresh"
git clone -q "$repo" "$fresh/clone"
# The clone finds the shared folder where CI's does: beside it.
[[ -e $repo/../shared ]] && ln -s "$(cd "$repo/.." && pwd)/shared" "$fresh/shared"

home=$fresh/home
mkdir -p "$home/.cargo/bin" "$home/.cache"
# rustup's proxies alone (rustup tells them apart by name), none of the tools installed beside
# them.
rustup_bin=$(readlink -f "$(command -v rustup)") ||
  { echo "fresh-machine: rustup not found" >&2; exit 1; }
for proxy in cargo cargo-clippy cargo-fmt clippy-driver rustc rustdoc rustfmt rustup; do
  ln -s "$rustup_bin" "$home/.cargo/bin/$proxy"
done
old_cargo_bin=${CARGO_HOME:-$HOME/.cargo}/bin
path=$home/.cargo/bin
IFS=: read -ra entries <<<"$PATH"
for entry in "${entries[@]}"; do
  [[ $entry == "$old_cargo_bin" || $entry == "$HOME/go/bin" ]] || path+=":$entry"
done

fresh_env=(
  "HOME=$home"
  "PATH=$path"
  "CARGO_HOME=$home/.cargo"
  "RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup}"
  "PYENV_ROOT=${PYENV_ROOT:-$HOME/.pyenv}"
  "XDG_CACHE_HOME=$home/.cache"
  "GOPATH=$home/go"
  "MAVEN_OPTS=${MAVEN_OPTS:+$MAVEN_OPTS }-Dmaven.repo.local=$home/.m2/repository"
)
# The machine's Go settings (its proxy, its flags) are the machine's, not a cache.
command -v go >/dev/null && fresh_env+=("GOPROXY=$(go env GOPROXY)" "GOFLAGS=$(go env GOFLAGS)")
unsets=()
for unset_var in KCONFORM_CI_CACHE GOMODCACHE GOCACHE npm_config_cache PIP_CACHE_DIR FUZZ_CORPUS; do
  unsets+=("-u" "$unset_var")
done

began=$(date +%s)
status=0
(cd "$fresh/clone" && env "${unsets[@]}" "${fresh_env[@]}" CI=true bash .ci/run) || status=$?
echo "fresh-machine: exit $status after $(( $(date +%s) - began )) s"
exit "$status"
