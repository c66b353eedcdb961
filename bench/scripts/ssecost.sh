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
#   bench/scripts/ssecost.sh [JETRPC_BIN [OLD_BIN]]
#
# With OLD_BIN, both binaries serve (each pinned to core 0, on its own
# port) and the rounds interleave them: "new" and "old" rows.
#
#   ROUNDS (default 4), SECS (default 3), CONNS (default 4), N (default 1000)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-4} SECS=${SECS:-3} CONNS=${CONNS:-4} N=${N:-1000}
PORTS=1869[57]
. bench/scripts/cost.sh
(cd bench/peers && go build -o "$tmp/notifyload" ./cmd/notifyload)
OLD=${2:-}
taskset -c 0 "$BIN" serve --listen 127.0.0.1:18695 >"$tmp/serve.log" 2>&1 &
pids=(new:$!:18695)
if [ -n "$OLD" ]; then
  taskset -c 0 "$OLD" serve --listen 127.0.0.1:18697 >"$tmp/old.log" 2>&1 &
  pids+=(old:$!:18697)
fi
sleep 0.5
load() { # mode duration port
  taskset -c 1 "$tmp/notifyload" -mode "$1" -c "$CONNS" -n "$N" -d "$2" "http://127.0.0.1:$3/" >"$tmp/out.json" 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
}
echo "binary mode  round  notifications/s  server CPU ns/notification"
for r in $(seq "$ROUNDS"); do
  combos=()
  for b in "${pids[@]}"; do combos+=("$b:sse" "$b:ws"); done
  [ $((r % 2)) -eq 0 ] && combos=($(printf '%s\n' "${combos[@]}" | tac))
  for c in "${combos[@]}"; do
    IFS=: read -r name pid port m <<<"$c"
    load "$m" 1s "$port" # warm-up, not counted
    c0=$(cpu "$pid")
    load "$m" "${SECS}s" "$port"
    c1=$(cpu "$pid")
    python3 - "$tmp/out.json" "$name" "$m" "$r" "$c0" "$c1" "$ticks" >>"$tmp/rows" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = d["notifications"]
cpu_ns = (float(sys.argv[6]) - float(sys.argv[5])) / float(sys.argv[7]) * 1e9
print(sys.argv[2], sys.argv[3], sys.argv[4], round(d["notifications_per_sec"]), round(cpu_ns / max(n, 1), 1))
PY
    tail -1 "$tmp/rows"
  done
done
for b in "${pids[@]}"; do kill "$(cut -d: -f2 <<<"$b")" 2>/dev/null || true; done
wait 2>/dev/null || true
echo "medians:"
for b in "${pids[@]}"; do
  name=${b%%:*}
  for m in sse ws; do
    rate=$(grep "^$name $m " "$tmp/rows" | awk '{print $4}' | median)
    ns=$(grep "^$name $m " "$tmp/rows" | awk '{print $5}' | median)
    echo "  $name $m: $rate notifications/s, $ns ns of server CPU per notification"
  done
done
