#!/usr/bin/env bash
# streamcost.sh: a large result streamed against built whole, on
# `jetrpc serve`, measured from outside: time to first byte, total time
# and the server's peak RSS (VmHWM) for range's result of N numbers —
# streamed when called alone (handler.RegisterStream: HTTP chunked, in
# bounded memory), built whole when called as the one element of a batch
# (a batch's elements are built whole, bounded by --max-response, raised
# here). Each measurement runs on a fresh server (its peak RSS is its
# own), server on core 0, curl on core 1, the two modes interleaved for
# ROUNDS rounds. Then, unless SLOW=0, a client that reads at RATE
# (default 1M bytes/s) for SLOWSECS (default 20) seconds a result of
# SLOWN numbers (about 250 MB), the server's RSS sampled every second:
# a streamed result keeps the server within a few MB of its baseline.
#
#   bench/scripts/streamcost.sh [BIN]
#
#   BIN     the jetrpc binary (default: ./cmd/jetrpc built into a temp dir)
#   N       numbers in the result (default 6500000: about 52 MB of JSON)
#   ROUNDS  rounds (default 3)
#   FLAGS   extra serve flags for both modes (e.g. --compression gzip, with
#           CURLFLAGS=--compressed)
#
# Output: one line per measurement, then the medians, then the slow
# reader's RSS samples.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${N:-6500000} ROUNDS=${ROUNDS:-3} FLAGS=${FLAGS:-} CURLFLAGS=${CURLFLAGS:-}
SLOW=${SLOW:-1} RATE=${RATE:-1M} SLOWSECS=${SLOWSECS:-20} SLOWN=${SLOWN:-30000000}
BIN=${1:-}
port=${PORT:-18611}
if curl -s -o /dev/null "http://127.0.0.1:$port/health"; then
  echo "port $port is taken: set PORT" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'pkill -f "serve --listen 127.0.0.1:$port" 2>/dev/null || true; rm -rf "$tmp"' EXIT
if [ -z "$BIN" ]; then
  go build -o "$tmp/jetrpc" ./cmd/jetrpc
  BIN=$tmp/jetrpc
fi
kb() { awk -v k="$1" '$1==k":" {print $2}' "/proc/$2/status"; }

# serve starts a server and prints its pid once it answers.
serve() {
  # shellcheck disable=SC2086
  taskset -c 0 "$BIN" serve --listen "127.0.0.1:$port" --max-response 400000000 --max-batch-response 400000000 $FLAGS >"$tmp/serve.log" 2>&1 &
  local pid=$!
  for _ in $(seq 100); do
    if kill -0 "$pid" 2>/dev/null && curl -s -o /dev/null "http://127.0.0.1:$port/health"; then
      echo "$pid"
      return
    fi
    sleep 0.05
  done
  echo "serve did not start" >&2
  cat "$tmp/serve.log" >&2
  exit 1
}

# stop stops a server and waits for it to be gone (it is not this
# shell's child: wait would not).
stop() {
  kill "$1" 2>/dev/null || true
  for _ in $(seq 200); do
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.05
  done
  kill -9 "$1" 2>/dev/null || true
}

call() { # mode: streamed | whole
  local body='{"jsonrpc":"2.0","method":"range","params":{"n":'"$N"'},"id":1}'
  [ "$1" = whole ] && body="[$body]"
  # shellcheck disable=SC2086
  taskset -c 1 curl -sS -o /dev/null $CURLFLAGS -H 'Content-Type: application/json' --data-binary "$body" \
    -w '%{time_starttransfer} %{time_total} %{size_download}\n' "http://127.0.0.1:$port/"
}

echo "mode      ttfb_ms  total_ms  bytes  rss_base_kb  rss_peak_kb"
for r in $(seq "$ROUNDS"); do
  modes="streamed whole"
  [ $((r % 2)) -eq 0 ] && modes="whole streamed"
  for mode in $modes; do
    pid=$(serve)
    base=$(kb VmRSS "$pid")
    read -r ttfb total bytes < <(call "$mode")
    peak=$(kb VmHWM "$pid")
    stop "$pid"
    printf '%-9s %8.1f %9.1f %6s %12s %12s\n' "$mode" "$(echo "$ttfb*1000" | bc -l)" "$(echo "$total*1000" | bc -l)" "$bytes" "$base" "$peak" | tee -a "$tmp/rows"
  done
done
[ "$ROUNDS" -gt 0 ] && echo "medians (ttfb ms, total ms, peak RSS MB over baseline):"
for mode in $([ "$ROUNDS" -gt 0 ] && echo streamed whole); do
  med() { grep "^$mode " "$tmp/rows" | awk "{print $1}" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
  printf '  %-9s ttfb %8.1f ms  total %8.1f ms  peak RSS +%.1f MB\n' "$mode" "$(med '$2')" "$(med '$3')" "$(med '($6-$5)/1024')"
done

if [ "$SLOW" != 0 ]; then
  echo "slow reader: range $SLOWN at $RATE/s for ${SLOWSECS}s (server RSS in MB, each second)"
  pid=$(serve)
  base=$(kb VmRSS "$pid")
  # shellcheck disable=SC2086
  taskset -c 1 curl -sS -o /dev/null --limit-rate "$RATE" --max-time "$SLOWSECS" $CURLFLAGS -H 'Content-Type: application/json' \
    -w '%{size_download} bytes in %{time_total} s\n' \
    --data-binary '{"jsonrpc":"2.0","method":"range","params":{"n":'"$SLOWN"'},"id":1}' "http://127.0.0.1:$port/" >"$tmp/slow" 2>/dev/null &
  cpid=$!
  samples=""
  for _ in $(seq "$SLOWSECS"); do
    sleep 1
    samples="$samples $(( $(kb VmRSS "$pid") / 1024 ))"
  done
  wait "$cpid" 2>/dev/null || true
  echo "  the client read $(cat "$tmp/slow")"
  echo "  baseline $((base / 1024)) MB; during:$samples; peak $(( $(kb VmHWM "$pid") / 1024 )) MB"
  stop "$pid"
fi
