#!/usr/bin/env bash
# scrape.sh: the server's rate as a real Prometheus server sees it, beside
# the rate jetrpc bench measured. By hand, what TestScrape_prometheusRate
# (cmd/jetrpc/scrape_test.go) checks:
#
#   1. jetrpc serve --listen 127.0.0.1:0 --metrics 127.0.0.1:0 (free ports,
#      read from the lines it prints);
#   2. prometheus (Debian's package) scraping its /metrics every second, on
#      a free loopback port, its storage in a temporary folder;
#   3. jetrpc bench in an open loop at RATE requests/s for DURATION seconds
#      (after a 1 s warm-up at the same rate), with -metrics, as JSON;
#   4. the PromQL query sum(rate(jsonrpc_server_handled_total[Rs])) with
#      R = DURATION-4, evaluated 2 s before the bench ended: a range inside
#      the measured window, away from its edges.
#
# It prints the three rates (the bench's, its -metrics view of the server's
# counters, Prometheus') and exits 1 when Prometheus' differs from the
# bench's by more than 10 %.
#
#   bench/scripts/scrape.sh [JETRPC_BIN]
#
# Without JETRPC_BIN it builds ./cmd/jetrpc (run it from the repository,
# with go). RATE (default 2000), DURATION (seconds, default 12, at least 6)
# and CONNS (default 4) set the load. Needs prometheus and curl
# (apt-get install --no-install-recommends prometheus curl); every address
# is 127.0.0.1, and every step is bounded in time.
set -euo pipefail
rate=${RATE:-2000}; duration=${DURATION:-12}; conns=${CONNS:-4}
[ "$duration" -ge 6 ] || { echo "scrape.sh: DURATION must be at least 6 (seconds)" >&2; exit 2; }
for c in prometheus curl; do
  command -v "$c" >/dev/null || { echo "scrape.sh: $c is not installed (apt-get install --no-install-recommends prometheus curl)" >&2; exit 2; }
done
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

bin=${1:-}
if [ -z "$bin" ]; then
  echo "building ./cmd/jetrpc ..." >&2
  timeout 300 go build -o "$tmp/jetrpc" ./cmd/jetrpc
  bin=$tmp/jetrpc
fi

# wait_for SECONDS COMMAND...: run COMMAND every 0.2 s until it succeeds.
wait_for() {
  local n=$(( $1 * 5 )); shift
  for _ in $(seq "$n"); do "$@" && return 0; sleep 0.2; done
  return 1
}

# 1. The server.
"$bin" serve --listen 127.0.0.1:0 --metrics 127.0.0.1:0 >"$tmp/serve.log" 2>&1 &
pids+=($!)
printed() { grep -q '^jetrpc: serving JSON-RPC on ' "$tmp/serve.log" && grep -q '^jetrpc: metrics on ' "$tmp/serve.log"; }
wait_for 10 printed || { echo "scrape.sh: jetrpc serve --metrics printed no addresses:" >&2; head -5 "$tmp/serve.log" >&2; exit 1; }
rpc=$(sed -n 's|^jetrpc: serving JSON-RPC on \(http://[^,]*\),.*|\1|p' "$tmp/serve.log" | head -1)
metrics=$(sed -n 's|^jetrpc: metrics on \(http://[^ ]*\).*|\1|p' "$tmp/serve.log" | head -1)
hostport=${metrics#http://}; path=/${hostport#*/}; hostport=${hostport%%/*}
echo "server      $rpc, metrics $metrics"

# 2. Prometheus, on a free port (or PROM_PORT).
port=${PROM_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null || echo 19090)}
prom=http://127.0.0.1:$port
cat >"$tmp/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: jetrpc
    metrics_path: "$path"
    static_configs:
      - targets: ["$hostport"]
EOF
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
  --web.listen-address="127.0.0.1:$port" --log.level=warn >"$tmp/prometheus.log" 2>&1 &
pids+=($!)
wait_for 30 curl -sf -o /dev/null "$prom/-/ready" || { echo "scrape.sh: prometheus not ready on $prom:" >&2; cat "$tmp/prometheus.log" >&2; exit 1; }

# query PROMQL [TIME]: the value of the query's one sample, or nothing.
query() {
  curl -sf --max-time 10 --get --data-urlencode "query=$1" ${2:+--data-urlencode "time=$2"} "$prom/api/v1/query" |
    sed -n 's/.*"value":\[[^,]*,"\([^"]*\)"\].*/\1/p'
}
up() { [ "$(query 'up{job="jetrpc"}')" = 1 ]; }
wait_for 20 up || { echo "scrape.sh: prometheus never scraped $metrics" >&2; exit 1; }
echo "prometheus  $prom, scraping every 1s"

# 3. The load.
echo "bench       open loop, $rate requests/s, $conns connections, ${duration}s after a 1s warm-up ..."
timeout $(( duration + 60 )) "$bin" bench -q -json -rate "$rate" -d "${duration}s" -c "$conns" -warmup 1s \
  -metrics "$metrics" "$rpc" >"$tmp/bench.json" || { cat "$tmp/bench.json" >&2; exit 1; }
end=$(date +%s.%N)

# 4. The query, over a range inside the measured window.
range=$(( duration - 4 ))
at=$(awk -v e="$end" 'BEGIN { printf "%.3f", e - 2 }')
promql="sum(rate(jsonrpc_server_handled_total[${range}s]))"
got=""
for _ in $(seq 20); do got=$(query "$promql" "$at") && [ -n "$got" ] && break; sleep 0.5; done
[ -n "$got" ] || { echo "scrape.sh: $promql: no result" >&2; exit 1; }

client=$(sed -n 's/^  "calls_per_sec": \(.*\),$/\1/p' "$tmp/bench.json")
server=$(sed -n 's/^    "calls_per_sec": \(.*\),$/\1/p' "$tmp/bench.json")
if grep -q '^    "error": ' "$tmp/bench.json"; then server=""; fi
echo
awk -v c="$client" -v s="$server" -v p="$got" -v q="$promql" 'BEGIN {
  printf "bench (client side)       %10.1f calls/s\n", c
  if (s != "") printf "bench -metrics (server)   %10.1f calls/s  the server'"'"'s counters, read as the window opened and closed\n", s
  else printf "bench -metrics (server)   not read: see the \"server\" object of the JSON\n"
  printf "prometheus                %10.1f calls/s  %s, 2s before the end\n", p, q
  d = 100 * (p / c - 1)
  printf "prometheus vs bench       %+9.2f %%\n", d
  exit (d < -10 || d > 10) ? 1 : 0
}'
