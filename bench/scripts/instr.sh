#!/usr/bin/env bash
# instr.sh: user-space instructions per request of two `jetrpc serve`
# binaries, counted by valgrind's callgrind — a figure that, unlike
# seconds on a shared machine, hardly moves from run to run. For each
# scenario and binary it starts the server under callgrind (one event
# loop), warms it with WARM requests, zeroes the counters, sends N
# requests with `jetrpc bench`, and divides the instructions counted by N.
# GOMAXPROCS=1 and GOGC=off keep the counts steady (perfguard.sh says
# why). Kernel time (syscalls) is not counted: compare it with ab.sh's
# CPU time.
#
#   bench/scripts/instr.sh OLD_BIN NEW_BIN [N] [SCENARIO...]
#
# Scenarios (default: all): http1 http16 tcp1 tcp16 ws1, and each with
# -sleep0 (sleep {"ms":0}: the blocking class, run on a worker). Needs
# valgrind; every target is 127.0.0.1. The load generator is NEW_BIN's
# bench, run with -c 16. OLD_FLAGS and NEW_FLAGS add serve flags to each
# side (the same binary may be both, to compare configurations);
# BENCH_FLAGS adds bench flags (eval'd: quote as in a shell).
set -euo pipefail
set -f # the params are words with brackets, not globs
old=${1:?old binary}; new=${2:?new binary}; n=${3:-10000}
shift $(( $# < 3 ? $# : 3 ))
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(http1 http16 tcp1 tcp16 ws1 http1-sleep0 http16-sleep0 tcp16-sleep0)
command -v valgrind >/dev/null || { echo "instr.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
port=${PORT_BASE:-18800} # PORT_BASE: where its ports start (runs side by side need their own)
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT # by its pid: never by name, which would hit other runs

target() { # target SCENARIO ADDR: the bench flags of a scenario
  local s=$1 a=$2 m="-method add -params '[1,2]'"
  case $s in *-sleep0) m="-method sleep -params '{\"ms\":0}'" ;; esac
  case ${s%-sleep0} in
    http1) echo "$m -pipeline 1 http://$a/" ;;
    http16) echo "$m -pipeline 16 http://$a/" ;;
    tcp1) echo "$m -pipeline 1 tcp://$a" ;;
    tcp16) echo "$m -pipeline 16 tcp://$a" ;;
    ws1) echo "$m -pipeline 1 ws://$a/" ;;
    *) echo "unknown scenario $s" >&2; exit 2 ;;
  esac
}

# total FILE: the instructions of a callgrind dump.
total() { awk '/^totals:/ {print $2}' "$1"; }

one() { # one BIN SCENARIO FLAGS: prints instructions per request
  local bin=$1 s=$2 flags=$3 a out t
  port=$((port + 1)); a=127.0.0.1:$port
  out=$tmp/cg.$port
  cp "$bin" "$tmp/jetrpc-instr"
  # --http: old binaries have no --listen
  eval "GOMAXPROCS=1 GOGC=off GODEBUG=asyncpreemptoff=1 exec valgrind --tool=callgrind --callgrind-out-file=\"\$out\" \
    \"\$tmp/jetrpc-instr\" serve --http \"\$a\" --loops 1 $flags" >"$tmp/log" 2>&1 &
  for _ in $(seq 300); do grep -q serving "$tmp/log" && break; sleep 0.1; done
  pid=$! # exec: the job is valgrind itself
  eval "\"\$new\" bench -q -c 16 -warmup 0 -n 2000 ${BENCH_FLAGS:-} $(target "$s" "$a")" >/dev/null
  callgrind_control -d "$pid" >/dev/null 2>&1 # zero the counters
  eval "\"\$new\" bench -q -c 16 -warmup 0 -n \"\$n\" ${BENCH_FLAGS:-} $(target "$s" "$a")" >"$tmp/bench" || { cat "$tmp/bench" >&2; exit 1; }
  callgrind_control -d "$pid" >/dev/null 2>&1
  kill -9 "$pid"; wait "$pid" 2>/dev/null || true
  pid=
  t=$(total "$out.2")
  rm -f "$out"*
  awk -v t="$t" -v n="$n" 'BEGIN { printf "%.0f", t / n }'
}

printf "%-14s %12s %12s %8s\n" scenario "old instr/req" "new instr/req" "new/old"
for s in "${scenarios[@]}"; do
  o=$(one "$old" "$s" "${OLD_FLAGS:-}"); w=$(one "$new" "$s" "${NEW_FLAGS:-}")
  awk -v s="$s" -v o="$o" -v w="$w" 'BEGIN { printf "%-14s %12d %12d %8.2f\n", s, o, w, w / o }'
done
