#!/usr/bin/env bash
# mcpcost.sh: an MCP tools/call over Streamable HTTP on jetrpc serve --mcp
# against the official Go SDK's own HTTP server (bench/peers/cmd/mcpsdk,
# stateless, JSON replies) serving the same tool, add. Each server runs
# pinned to core 0, jetrpc bench to core 1, in interleaved rounds; per
# round: requests/s (bench) and the server's CPU time (user+sys from
# /proc, read around the measured run alone, after a warm-up run) per
# call. Medians at the end.
#
#   bench/scripts/mcpcost.sh [JETRPC_BIN]
#
#   ROUNDS (default 4), SECS (default 3), CONNS (default 8: -c of bench)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-4} SECS=${SECS:-3} CONNS=${CONNS:-8}
PORTS=1869[23]
. bench/scripts/cost.sh
(cd bench/peers && go build -o "$tmp/mcpsdk" ./cmd/mcpsdk)
start() { # name → pid
  case $1 in
  jetrpc) taskset -c 0 "$BIN" serve --listen 127.0.0.1:18692 --mcp >"$tmp/jetrpc.log" 2>&1 & echo $! ;;
  gosdk) taskset -c 0 "$tmp/mcpsdk" -http 127.0.0.1:18693 >"$tmp/gosdk.log" 2>&1 & echo $! ;;
  esac
}
url() { case $1 in jetrpc) echo http://127.0.0.1:18692/mcp ;; gosdk) echo http://127.0.0.1:18693/ ;; esac; }
echo "server   round  calls/s  server CPU µs/call"
for r in $(seq "$ROUNDS"); do
  order="jetrpc gosdk"
  [ $((r % 2)) -eq 0 ] && order="gosdk jetrpc"
  for s in $order; do
    pid=$(start "$s")
    sleep 0.5
    call() { # duration, then bench's own flags
      local d=$1; shift
      taskset -c 1 "$BIN" bench -c "$CONNS" -d "$d" -json -method tools/call \
        -params '{"name":"add","arguments":{"a":1,"b":2}}' \
        -header 'Accept: application/json, text/event-stream' -header 'MCP-Protocol-Version: 2025-11-25' \
        "$@" "$(url "$s")" >"$tmp/out.json" 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
    }
    call 1s # warm-up, not counted: the CPU below is the measured calls' alone
    c0=$(cpu "$pid")
    call "${SECS}s" -warmup 0
    c1=$(cpu "$pid")
    kill "$pid"; wait "$pid" 2>/dev/null || true
    python3 - "$tmp/out.json" "$s" "$r" "$c0" "$c1" "$ticks" >>"$tmp/rows" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = d.get("requests") or d.get("calls") or 0
rps = d.get("requests_per_sec", 0)
errs = d.get("errors") or {}
cpu_us = (float(sys.argv[5]) - float(sys.argv[4])) / float(sys.argv[6]) * 1e6
print(sys.argv[2], sys.argv[3], round(rps), round(cpu_us / max(n, 1), 2), n, json.dumps(errs) if errs else "")
PY
    tail -1 "$tmp/rows"
  done
done
echo "medians:"
for s in jetrpc gosdk; do
  rps=$(grep "^$s " "$tmp/rows" | awk '{print $3}' | median)
  cpu=$(grep "^$s " "$tmp/rows" | awk '{print $4}' | median)
  echo "  $s: $rps calls/s, $cpu µs of server CPU per call"
done
