#!/usr/bin/env bash
# Three kaas-ref processes started by hand, as a user's own cluster would be, and the signals
# kconform's --fault-cmd sends them: the way to check that the cluster scenarios judge a
# cluster kconform did not start as they judge ref:3.
#
#   ci/kaas-ref-processes.sh compare            # the cluster scenarios on them and on apache:3,
#                                               # then the kaas-only ones on them and on ref:3
#   ci/kaas-ref-processes.sh up DIR [N]         # start N (default 3) in DIR; prints the target
#   ci/kaas-ref-processes.sh fault DIR ACT NODE # ACT: kill, restart, pause, resume,
#                                               # hold_markers, release_markers, fill_disk
#                                               # or free_disk
#   ci/kaas-ref-processes.sh down DIR
#
# The processes get the settings ref:3 gets (a peer down 3 s after its last stamp, the reaper
# every 500 ms, as many offsets partitions as brokers, three replicas), so that verdicts
# compare. kaas-ref is built with its storage fault switch (the `faults` feature): while
# DIR/disk-full exists every write of every broker fails as on a full disk, the volume they
# share being full (fill_disk touches it, free_disk removes it). KAAS_REF=path uses that
# binary instead (it must have the switch).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
kaas_ref="${KAAS_REF:-$root/target/release/kaas-ref}"

start_one() { # DIR NODE
  local dir="$1" node="$2" n peers port
  n="$(cat "$dir/brokers")"
  peers="$(cat "$dir/peers")"
  port="$(cut -d, -f"$((node + 1))" "$dir/peers" | cut -d: -f2)"
  "$kaas_ref" --listen "127.0.0.1:$port" --broker-id "$node" --peers "$peers" \
    --data-dir "$dir/data" --member-timeout-ms 3000 --txn-reaper-interval-ms 500 \
    --offsets-topic-partitions "$n" --default-replication-factor 3 \
    --disk-full-while "$dir/disk-full" \
    --group-initial-rebalance-delay-ms 0 >>"$dir/broker-$node.log" 2>&1 &
  echo $! >"$dir/broker-$node.pid"
  # Listening within 10 s, or the start failed.
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      if [ -e "$dir/broker-$node.markers-held" ]; then kill -USR1 "$(cat "$dir/broker-$node.pid")"; fi
      return 0
    fi
    sleep 0.1
  done
  echo "broker $node did not listen on $port; its log ends:" >&2
  tail -5 "$dir/broker-$node.log" >&2
  return 1
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

up() { # DIR [N]
  local dir="$1" n="${2:-3}" peers="" node
  [ -n "${KAAS_REF:-}" ] || (cd "$root" && cargo build --release -q -p reference-broker --features faults)
  mkdir -p "$dir/data"
  for node in $(seq 0 $((n - 1))); do
    peers="${peers:+$peers,}$node=127.0.0.1:$(free_port)"
  done
  echo "$n" >"$dir/brokers"
  echo "$peers" >"$dir/peers"
  for node in $(seq 0 $((n - 1))); do start_one "$dir" "$node"; done
  echo "external:$n=$(cut -d, -f1 "$dir/peers" | cut -d= -f2)"
}

fault() { # DIR ACT NODE
  local dir="$1" act="$2" node="$3" pid
  pid="$(cat "$dir/broker-$node.pid")"
  case "$act" in
    kill) kill -9 "$pid"; while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done ;;
    restart) start_one "$dir" "$node" ;;
    pause) kill -STOP "$pid" ;;
    resume) kill -CONT "$pid" ;;
    # Held across a restart, as kconform's own clusters hold them: the mark stays in DIR.
    hold_markers) touch "$dir/broker-$node.markers-held"; kill -USR1 "$pid" ;;
    release_markers) rm -f "$dir/broker-$node.markers-held"; kill -USR2 "$pid" ;;
    # The volume is shared: one mark fills (or frees) every broker's disk, whichever node.
    fill_disk) touch "$dir/disk-full" ;;
    free_disk) rm -f "$dir/disk-full" ;;
    *) echo "unknown act $act (kill, restart, pause, resume, hold_markers, release_markers, fill_disk or free_disk)" >&2; return 2 ;;
  esac
}

down() { # DIR
  local dir="$1" pidfile
  for pidfile in "$dir"/broker-*.pid; do
    [ -e "$pidfile" ] || continue
    kill -CONT "$(cat "$pidfile")" 2>/dev/null || true
    kill -9 "$(cat "$pidfile")" 2>/dev/null || true
  done
}

compare() {
  local target self="$root/ci/kaas-ref-processes.sh"
  # Global: the trap runs after this function has returned.
  work="$(mktemp -d -t kaas-ref-processes-XXXXXX)"
  trap 'down "$work"; rm -rf "$work"' EXIT
  local dir="$work"
  (cd "$root" && cargo build --release -q -p reference-broker -p harness --features reference-broker/faults)
  target="$(up "$dir" 3)"
  echo "three kaas-ref processes: $target (logs in $dir)"
  "$root/target/release/kconform" run --target "$target" --target apache:3 \
    --fault-cmd "kill=$self fault $dir kill {node}" \
    --fault-cmd "restart=$self fault $dir restart {node}" \
    --fault-cmd "pause=$self fault $dir pause {node}" \
    --fault-cmd "resume=$self fault $dir resume {node}" \
    --fault-cmd "hold_markers=$self fault $dir hold_markers {node}" \
    --fault-cmd "release_markers=$self fault $dir release_markers {node}" "$@"
  # What Apache cannot do (fill a disk) is left out above: those scenarios on the processes
  # beside kaas-ref's own cluster, which should answer alike.
  local kaas_only
  kaas_only="$("$root/target/release/kconform" list | awk '/fill_disk/ { print $1 }')"
  echo "the kaas-only scenarios, on the processes and on ref:3:" $kaas_only
  # shellcheck disable=SC2086 # one name a word
  "$root/target/release/kconform" run --target "$target" --target ref:3 \
    --fault-cmd "kill=$self fault $dir kill {node}" \
    --fault-cmd "restart=$self fault $dir restart {node}" \
    --fault-cmd "pause=$self fault $dir pause {node}" \
    --fault-cmd "resume=$self fault $dir resume {node}" \
    --fault-cmd "fill_disk=$self fault $dir fill_disk {node}" \
    --fault-cmd "free_disk=$self fault $dir free_disk {node}" $kaas_only
}

case "${1:-}" in
  up) shift; up "$@" ;;
  fault) shift; fault "$@" ;;
  down) shift; down "$@" ;;
  compare) shift; compare "$@" ;;
  *) sed -n '2,19p' "$0" >&2; exit 2 ;;
esac
