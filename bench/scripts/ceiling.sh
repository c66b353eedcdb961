#!/usr/bin/env bash
# ceiling.sh: `jetrpc serve` against the ceiling — bench/peers' gnet server
# that answers every request with a fixed reply, parsing no JSON — under
# the same wrk load, in interleaved rounds, each server pinned to core 0
# and wrk to core 1. For each server and round it prints requests/s and
# the server's CPU time per request (user+system from /proc over the
# measured window, and the user part alone); at the end the medians and
# the ratio the issue tracks: the ceiling's CPU per request over
# jetrpc's (1.0: as cheap as the ceiling).
#
#   bench/scripts/ceiling.sh JETRPC_BIN CEILING_BIN [ROUNDS] [SECONDS]
#
# Build the ceiling with (cd bench/peers && go build -o /tmp/ceiling
# ./cmd/ceiling). The load is wrk -t1 -c64 -s bench/scripts/add.lua (one
# add call per request, HTTP/1.1 keep-alive, one in flight per
# connection); jetrpc bench cannot load the ceiling, whose replies all
# carry id 1. JETRPC_FLAGS adds serve flags (default: none, the flags
# every `jetrpc serve` user gets). Every target is 127.0.0.1; each run is
# bounded by SECONDS. Needs wrk (Debian: apt-get install wrk).
set -euo pipefail
jet=${1:?jetrpc binary}; ceil=${2:?ceiling binary}
rounds=${3:-3}; secs=${4:-5}
command -v wrk >/dev/null || { echo "ceiling.sh: wrk is not installed (apt-get install wrk)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
hz=$(getconf CLK_TCK)
port=${PORT_BASE:-18600} # PORT_BASE: where its ports start (runs side by side need their own)
srv=
trap '[ -n "$srv" ] && kill -9 "$srv" 2>/dev/null; true' EXIT # by its pid, never by name

ticks() { awk '{print $14+$15, $14}' "/proc/$1/stat"; }

one() { # one NAME: prints "req/s cpu_us_per_req user_us_per_req"
  local name=$1 log a t0 t1 reqs
  port=$((port + 1)); a=127.0.0.1:$port
  log=$(mktemp)
  if [ "$name" = ceiling ]; then
    taskset -c 0 "$ceil" -addr "tcp://$a" -loops 1 >"$log" 2>&1 &
    srv=$!
    for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.05; done
  else
    # shellcheck disable=SC2086 # JETRPC_FLAGS is words
    taskset -c 0 "$jet" serve --listen "$a" --loops 1 ${JETRPC_FLAGS:-} >"$log" 2>&1 &
    srv=$!
    for _ in $(seq 100); do grep -q serving "$log" && break; sleep 0.05; done
  fi
  taskset -c 1 wrk -t1 -c64 -d1s -s "$here/add.lua" "http://$a/" >/dev/null # the warm-up
  read -r t0 u0 < <(ticks "$srv")
  reqs=$(taskset -c 1 wrk -t1 -c64 -d"${secs}s" -s "$here/add.lua" "http://$a/" | awk '/requests in/ {print $1}')
  read -r t1 u1 < <(ticks "$srv")
  kill -9 "$srv"; wait "$srv" 2>/dev/null || true
  srv=
  rm -f "$log"
  awk -v r="$reqs" -v d="$secs" -v t=$((t1 - t0)) -v u=$((u1 - u0)) -v hz="$hz" \
    'BEGIN { printf "%9.0f req/s %6.2f us/req %6.2f user us/req\n", r/d, t/hz*1e6/r, u/hz*1e6/r }'
}

results=$(mktemp)
for r in $(seq "$rounds"); do
  order="ceiling jetrpc"
  [ $((r % 2)) -eq 0 ] && order="jetrpc ceiling" # ABBA, as ab.sh
  for which in $order; do
    line=$(one "$which")
    printf "round %d  %-8s %s\n" "$r" "$which" "$line"
    echo "$which $line" >>"$results"
  done
done
echo
echo "medians of $rounds rounds of ${secs}s (wrk -t1 -c64, add):"
awk '
  { n[$1]++; rps[$1, n[$1]] = $2; cpu[$1, n[$1]] = $4; usr[$1, n[$1]] = $6 }
  function med(arr, key, k,   i, j, t, v) {
    for (i = 1; i <= k; i++) v[i] = arr[key, i]
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
    return (k % 2) ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
  }
  END {
    for (s in n) printf "%-8s %9.0f req/s %6.2f us/req (user %5.2f)\n", s, med(rps, s, n[s]), med(cpu, s, n[s]), med(usr, s, n[s])
    printf "ceiling/jetrpc by server CPU per request: %.3f; by requests/s: %.3f\n",
      med(cpu, "ceiling", n["ceiling"]) / med(cpu, "jetrpc", n["jetrpc"]), med(rps, "jetrpc", n["jetrpc"]) / med(rps, "ceiling", n["ceiling"])
  }' "$results"
rm -f "$results"
