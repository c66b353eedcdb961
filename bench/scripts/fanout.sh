#!/usr/bin/env bash
# fanout.sh: the fan-out of one topic by one `jetrpc serve` node against
# two nodes joined by a nats-server (serve --broker), in interleaved
# rounds, each process pinned. For every run it prints `jetrpc bench
# --subscribe`'s table and each process's CPU time (user+system, from
# /proc, over the whole run: connecting and subscribing included) per
# delivery it made.
#
#   bench/scripts/fanout.sh [-j JETRPC] [-N NATS_SERVER] [-s SUBSCRIBERS]
#       [-r PUBLISHES_PER_S] [-d DURATION] [-D DRAIN] [-n ROUNDS]
#       [-S CPUS] [-A CPUS] [-B CPUS] [-M CPUS] [-L CPUS]
#
# -S: the single node's cores; -A and -B: the two nodes' cores; -M:
# nats-server's; -L: the load generator's (taskset lists, "0-3,8").
# Defaults: 10000 subscribers, 100 publishes/s for 10s, one round, the
# servers on core 0, the load on core 1 (a 2-core machine). In the
# two-node runs the publisher is on node A and the subscribers alternate
# A, B. Every target is 127.0.0.1; each run is bounded by DURATION and
# DRAIN.
set -euo pipefail
jet=jetrpc nats=nats-server subs=10000 rate=100 dur=10s drain=30s rounds=1
S=0 A=0 B=0 M=0 L=1
while getopts j:N:s:r:d:D:n:S:A:B:M:L: o; do
  case $o in
    j) jet=$OPTARG ;; N) nats=$OPTARG ;; s) subs=$OPTARG ;; r) rate=$OPTARG ;;
    d) dur=$OPTARG ;; D) drain=$OPTARG ;; n) rounds=$OPTARG ;;
    S) S=$OPTARG ;; A) A=$OPTARG ;; B) B=$OPTARG ;; M) M=$OPTARG ;; L) L=$OPTARG ;;
    *) sed -n '2,20p' "$0" >&2; exit 2 ;;
  esac
done
if ! command -v taskset >/dev/null 2>&1; then
  echo "fanout.sh: no taskset (util-linux): the processes run unpinned" >&2
  taskset() { shift 2; "$@"; }
fi
ulimit -n 1048576 2>/dev/null || ulimit -n "$(ulimit -Hn)"
hz=$(getconf CLK_TCK)
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT

# cpu PID: its CPU ticks so far (user+system).
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }

# wait_for FILE PATTERN: until PATTERN is in FILE (10 s at most).
wait_for() {
  for _ in $(seq 200); do grep -q "$2" "$1" && return 0; sleep 0.05; done
  echo "fanout.sh: no \"$2\" in $1:" >&2; cat "$1" >&2; exit 1
}

# node NAME CPUS [BROKER]: starts a serve node; sets $pid and $url.
node() {
  local log=$work/$1.log
  taskset -c "$2" "$jet" serve --listen 127.0.0.1:0 ${3:+--broker "$3"} >"$log" 2>&1 &
  pid=$!; pids+=("$pid")
  wait_for "$log" 'ws://'
  url=$(grep -o 'ws://[^ ]*' "$log" | head -1)
}

# run LABEL URL...: the bench, then each process's CPU per delivery.
# $procs holds "name pid" pairs of the processes to account.
run() {
  local label=$1; shift
  declare -A before
  local name p
  for name in "${!procs[@]}"; do before[$name]=$(cpu "${procs[$name]}"); done
  echo "== $label, round $r"
  taskset -c "$L" "$jet" bench --subscribe fanout -subscribers "$subs" -publish-rate "$rate" -d "$dur" \
    -drain "$drain" -max-lost -1 "$@" | tee "$work/out" || true
  local total; total=$(awk '/^deliveries/ {print $4}' "$work/out")
  local sum=0 i=0
  for name in $(echo "${!procs[@]}" | tr ' ' '\n' | sort); do
    p=$(( $(cpu "${procs[$name]}") - ${before[$name]} ))
    sum=$(( sum + p ))
    local mine=$total
    if [[ $name == node* ]]; then
      i=$(( ${name#node} + 1 ))
      mine=$(awk -v n="$i" '$1 == "node" && $2 == n {for (k = 3; k <= NF; k++) if ($(k+1) ~ /^delivered/) {print $k; exit}}' "$work/out")
      mine=${mine:-$total} # one node: the table has no per-node lines
    fi
    awk -v n="$name" -v t="$p" -v hz="$hz" -v d="${mine:-0}" 'BEGIN {
      printf "cpu          %-6s %.2fs, %.2fµs per delivery it made (%d)\n", n, t / hz, d ? t / hz * 1e6 / d : 0, d }'
  done
  awk -v t="$sum" -v hz="$hz" -v d="${total:-0}" 'BEGIN {
    printf "cpu          all    %.2fs, %.2fµs per delivery (%d)\n", t / hz, d ? t / hz * 1e6 / d : 0, d }'
}

for r in $(seq "$rounds"); do
  declare -A procs=()
  node one "$S"
  procs=([node0]=$pid)
  run "1 node (cores $S)" "$url"
  kill "$pid"; wait "$pid" 2>/dev/null || true

  taskset -c "$M" "$nats" -a 127.0.0.1 -p -1 >"$work/nats.log" 2>&1 &
  npid=$!; pids+=("$npid")
  wait_for "$work/nats.log" 'Server is ready'
  port=$(grep -o 'client connections on 127.0.0.1:[0-9]*' "$work/nats.log" | head -1 | cut -d: -f2)
  node a "$A" "nats://127.0.0.1:$port"; pa=$pid; ua=$url
  node b "$B" "nats://127.0.0.1:$port"; pb=$pid; ub=$url
  procs=([node0]=$pa [node1]=$pb [nats]=$npid)
  run "2 nodes over NATS (cores $A and $B, nats-server $M)" "$ua" "$ub"
  kill "$pa" "$pb" "$npid"; wait "$pa" "$pb" "$npid" 2>/dev/null || true
done
