#!/usr/bin/env bash
# ssecost.sh: server messages over an event stream (a POST answered
# text/event-stream) against WebSocket push, on the same `jetrpc serve`:
# clients call countdown {"from":N,"interval_ms":0} again and again and
# read its N notifications, then its reply (bench/peers/cmd/notifyload,
# which checks their order). The server runs pinned to core 0, the
# clients to core 1, in interleaved rounds; per round: notifications per
# second, and the server's CPU time (user+sys from /proc, read around
# the measured run alone, after a warm-up run) per notification. Medians
# at the end.
#
#   bench/scripts/ssecost.sh [JETRPC_BIN]
#
#   ROUNDS (default 4), SECS (default 3), CONNS (default 4), N (default 1000)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-4} SECS=${SECS:-3} CONNS=${CONNS:-4} N=${N:-1000}
tmp=$(mktemp -d)
trap 'pkill -f "127.0.0.1:18695" 2>/dev/null || true; rm -rf "$tmp"' EXIT
BIN=${1:-}
if [ -z "$BIN" ]; then
  go build -o "$tmp/jetrpc" ./cmd/jetrpc
  BIN=$tmp/jetrpc
fi
(cd bench/peers && go build -o "$tmp/notifyload" ./cmd/notifyload)
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
taskset -c 0 "$BIN" serve --listen 127.0.0.1:18695 >"$tmp/serve.log" 2>&1 &
pid=$!
sleep 0.5
load() { # mode duration
  taskset -c 1 "$tmp/notifyload" -mode "$1" -c "$CONNS" -n "$N" -d "$2" http://127.0.0.1:18695/ >"$tmp/out.json" 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
}
echo "mode  round  notifications/s  server CPU ns/notification"
for r in $(seq "$ROUNDS"); do
  order="sse ws"
  [ $((r % 2)) -eq 0 ] && order="ws sse"
  for m in $order; do
    load "$m" 1s # warm-up, not counted
    c0=$(cpu "$pid")
    load "$m" "${SECS}s"
    c1=$(cpu "$pid")
    python3 - "$tmp/out.json" "$m" "$r" "$c0" "$c1" "$ticks" >>"$tmp/rows" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = d["notifications"]
cpu_ns = (float(sys.argv[5]) - float(sys.argv[4])) / float(sys.argv[6]) * 1e9
print(sys.argv[2], sys.argv[3], round(d["notifications_per_sec"]), round(cpu_ns / max(n, 1), 1))
PY
    tail -1 "$tmp/rows"
  done
done
kill "$pid"; wait "$pid" 2>/dev/null || true
echo "medians:"
for m in sse ws; do
  rate=$(grep "^$m " "$tmp/rows" | awk '{print $3}' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
  ns=$(grep "^$m " "$tmp/rows" | awk '{print $4}' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
  echo "  $m: $rate notifications/s, $ns ns of server CPU per notification"
done
