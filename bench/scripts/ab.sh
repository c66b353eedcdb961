#!/usr/bin/env bash
# ab.sh: two `jetrpc serve` binaries side by side, in interleaved rounds,
# each server pinned to core 0 and `jetrpc bench` to core 1. For every
# scenario and round it prints requests/s and the server's CPU time per
# request (user+system, from /proc over the measured window).
#
#   bench/scripts/ab.sh OLD_BIN NEW_BIN [ROUNDS] [SECONDS] [SCENARIO...]
#
# Rounds are interleaved: each round runs every scenario, old then new
# (new then old in even rounds: the second run of a pair was measured
# ~9% dearer whichever binary it is), so that the drift of a shared
# machine spreads over both. At the end it prints the medians and the
# ratios.
#
# Scenarios (default: all): http1 http16 tcp16 ws1, and the blocking class
# against the inline class of the same work: http1-sleep0 http16-sleep0
# tcp16-sleep0 (sleep {"ms":0}: blocking, returns at once; compare with
# add, which is inline). The load generator is NEW_BIN's bench. Every
# target is 127.0.0.1; each run is bounded by SECONDS.
#
# OLD_FLAGS and NEW_FLAGS add serve flags to each side (the same binary
# may be both, to compare configurations); BENCH_FLAGS adds bench flags
# to every run (say --header 'Authorization: Bearer KEY'; it is eval'd,
# so quote as in a shell).
set -euo pipefail
old=${1:?old binary}; new=${2:?new binary}
rounds=${3:-3}; secs=${4:-3}
shift $(( $# < 4 ? $# : 4 ))
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(http1 http16 tcp16 ws1 http1-sleep0 http16-sleep0 tcp16-sleep0)
hz=$(getconf CLK_TCK)
port=${PORT_BASE:-18400} # PORT_BASE: where its ports start (runs side by side need their own)

# args SCENARIO ADDR: the bench flags and target of a scenario.
args() {
  local s=$1 a=$2 m=(-method add -params '[1,2]')
  case $s in *-sleep0) m=(-method sleep -params '{"ms":0}') ;; esac
  case ${s%-sleep0} in
    http1) echo "-c 64 -pipeline 1 ${m[*]@Q} http://$a/" ;;
    http16) echo "-c 64 -pipeline 16 ${m[*]@Q} http://$a/" ;;
    tcp16) echo "-c 64 -pipeline 16 ${m[*]@Q} tcp://$a" ;;
    ws1) echo "-c 64 -pipeline 1 ${m[*]@Q} ws://$a/" ;;
    *) echo "unknown scenario $s" >&2; exit 2 ;;
  esac
}

ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }

one() { # one BIN SCENARIO SIDE: prints "req/s cpu_us_per_req"
  local bin=$1 s=$2 log pid a t0 t1 out reqs
  port=$((port + 1)); a=127.0.0.1:$port
  log=$(mktemp)
  local flags=${OLD_FLAGS:-}
  if [ "$3" = new ]; then flags=${NEW_FLAGS:-}; fi
  # exec: the background job is the server itself, whose CPU time is read
  eval "exec taskset -c 0 \"\$bin\" serve --http \"\$a\" --loops 1 $flags" >"$log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do grep -q serving "$log" && break; sleep 0.05; done
  eval "taskset -c 1 $new bench -q -json -warmup 1s -d ${secs}s ${BENCH_FLAGS:-} $(args "$s" "$a")" >"$log.json" &
  local bp=$!
  sleep 1 # the warm-up
  t0=$(ticks "$pid")
  wait $bp
  t1=$(ticks "$pid")
  kill -INT "$pid"; wait "$pid" || true
  reqs=$(grep -o '"requests": [0-9]*' "$log.json" | grep -o '[0-9]*$')
  errs=$(tr -d '\n ' <"$log.json" | grep -o '"errors":{[^}]*}')
  rm -f "$log" "$log.json"
  awk -v r="$reqs" -v d="$secs" -v t=$((t1 - t0)) -v hz="$hz" -v e="$errs" \
    'BEGIN { printf "%9.0f req/s %6.2f us/req %s\n", r/d, t/hz*1e6/r, (e == "\"errors\":{}" ? "" : e) }'
}

results=$(mktemp)
for r in $(seq "$rounds"); do
  order="old new"
  [ $((r % 2)) -eq 0 ] && order="new old" # ABBA: the second run of a pair costs more (measured: an A/A run read 1.09), whichever it is
  for s in "${scenarios[@]}"; do
    for which in $order; do
      bin=$old; [ $which = new ] && bin=$new
      line=$(one "$bin" "$s" "$which")
      printf "%-14s round %d  %s %s\n" "$s" "$r" "$which" "$line"
      echo "$s $which $line" >>"$results"
    done
  done
done

# Medians, and the ratios new/old (throughput, CPU per request; "paired":
# the median of each round's own new/old CPU ratio, which the drift of a
# shared machine between rounds does not move) and, for each -sleep0
# scenario, blocking/inline within each binary.
echo
echo "medians of $rounds rounds of ${secs}s:"
awk '
  { key = $1 " " $2; n[key]++; rps[key, n[key]] = $3; cpu[key, n[key]] = $5 }
  function med(arr, key, k,   i, j, t, v) {
    for (i = 1; i <= k; i++) v[i] = arr[key, i]
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
    return (k % 2) ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
  }
  END {
    printf "0 %-14s %10s %10s %7s   %8s %8s %7s %7s\n", "scenario", "old req/s", "new req/s", "new/old", "old us", "new us", "new/old", "paired"
    for (key in n) { split(key, p, " "); seen[p[1]] = 1 }
    for (s in seen) {
      o = s " old"; w = s " new"
      R[s, "old"] = med(rps, o, n[o]); R[s, "new"] = med(rps, w, n[w])
      C[s, "old"] = med(cpu, o, n[o]); C[s, "new"] = med(cpu, w, n[w])
      k = (n[o] < n[w]) ? n[o] : n[w]
      for (i = 1; i <= k; i++) ratio[s, i] = cpu[w, i] / cpu[o, i]
      printf "1 %-14s %10.0f %10.0f %7.2f   %8.2f %8.2f %7.2f %7.3f\n", s, R[s, "old"], R[s, "new"], R[s, "new"] / R[s, "old"], C[s, "old"], C[s, "new"], C[s, "new"] / C[s, "old"], med(ratio, s, k)
    }
    for (s in seen) if (s ~ /-sleep0$/) {
      i = s; sub(/-sleep0$/, "", i)
      if ((i, "old") in R)
        printf "2 blocking/inline %-7s old %.2f  new %.2f\n", i, R[s, "old"] / R[i, "old"], R[s, "new"] / R[i, "new"]
    }
  }' "$results" | sort | cut -c3-
rm -f "$results"
