#!/usr/bin/env bash
# Where an Apache release's broker can produce an error code: every class of the broker's own
# jars (all but kafka-clients and the third-party ones) whose bytecode names the error
# (`Errors.NAME`) or its exception (`NameException`, which `Errors.forException` turns into
# the code), and the methods that name them (javap). What `kconform coverage` leaves unreached because no broker
# code path returns it is shown here: TRANSACTION_ABORTABLE (120), which the message
# definitions of InitProducerId v5, AddOffsetsToTxn v4 and EndTxn v4 list, is named by
# 3.8.1 to 4.4.0 only in the coordinator's verify-only AddPartitionsToTxn and in the
# produce-side verification (AddPartitionsToTxnManager), so no request to those three APIs
# can get it.
#
#   ci/apache-error-sites.sh ERROR_NAME [RELEASE...]   (default: every release in the cache)
#   ci/apache-error-sites.sh TRANSACTION_ABORTABLE 3.8.1 4.4.0
#
# The jars come from kconform's cache ($XDG_CACHE_HOME/kconform, else ~/.cache/kconform); a
# release not there yet is cached by `kconform apache up --release R` (then `down`). javap
# comes with the JDK the Apache target needs.
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: ci/apache-error-sites.sh ERROR_NAME [RELEASE...]" >&2; exit 2; }
error=$1
shift
[[ $error =~ ^[A-Z_]+$ ]] || { echo "apache-error-sites: '$error' is not an Errors constant (e.g. TRANSACTION_ABORTABLE)" >&2; exit 2; }
command -v javap >/dev/null || { echo "apache-error-sites: javap not found (a JDK is needed)" >&2; exit 2; }
cache=${XDG_CACHE_HOME:-$HOME/.cache}/kconform
releases=("$@")
if [[ ${#releases[@]} -eq 0 ]]; then
  for dir in "$cache"/apache-kafka-*/libs; do
    [[ -d $dir ]] && releases+=("$(basename "$(dirname "$dir")" | sed 's/^apache-kafka-//')")
  done
fi
[[ ${#releases[@]} -gt 0 ]] || { echo "apache-error-sites: no release cached in $cache (kconform apache up --release R caches one)" >&2; exit 2; }
# TRANSACTION_ABORTABLE -> TransactionAbortableException, as Errors names its exceptions.
exception=$(echo "$error" | tr 'A-Z' 'a-z' | awk -F_ '{ for (i = 1; i <= NF; i++) printf "%s", toupper(substr($i, 1, 1)) substr($i, 2) }')Exception
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for release in "${releases[@]}"; do
  libs=$cache/apache-kafka-$release/libs
  if [[ ! -d $libs ]]; then
    echo "$release: not cached (kconform apache up --release $release caches it)"
    continue
  fi
  echo "$release: $error (or $exception) named by"
  found=0
  for jar in "$libs"/kafka_2.13-*.jar "$libs"/kafka-*.jar; do
    [[ -f $jar ]] || continue
    case $(basename "$jar") in kafka-clients-*) continue ;; esac
    rm -rf "$work/x" && mkdir "$work/x"
    (cd "$work/x" && unzip -q -o "$jar" '*.class' 2>/dev/null) || true
    while IFS= read -r class; do
      found=1
      # The method around each mention: the last signature line javap printed before it.
      methods=$(javap -c -p "$class" | awk -v e="Errors.$error:" -v x="/$exception" '
        /^  [^ ].*\(.*\)/ { m = $0 }
        index($0, e) || index($0, x) { sub(/^ +/, "", m); sub(/ throws .*/, "", m); print "      " m }' | sort -u)
      echo "  ${class#"$work"/x/} ($(basename "$jar"))"
      [[ -n $methods ]] && echo "$methods"
    done < <(grep -rlE --include='*.class' "$error|$exception" "$work/x" || true)
  done
  [[ $found -eq 1 ]] || echo "  nothing: no broker class names it"
done
