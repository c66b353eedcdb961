#!/usr/bin/env bash
# tracecost.sh: what tracing costs `jetrpc serve`, against tracing off,
# with the same binary. It starts bench/scripts/otlpsink (an OTLP/HTTP
# receiver that answers 200 and counts what it gets) pinned to core 1,
# beside the load, and for each sampling ratio R of RATIOS runs
#   ab.sh     BIN BIN, OLD_FLAGS='' against
#             NEW_FLAGS='--otlp-endpoint http://SINK --trace-sample R'
#             (server CPU time per request and requests/s; the server on
#             core 0, the load on core 1, in interleaved rounds)
#   instr.sh  the same two configurations (user-space instructions per
#             request under callgrind, which a busy machine hardly moves)
# over SCENARIOS, then prints a summary of the ratios traced/off, and the
# sink's counts (so that a run shows the spans really went out: with
# R = 0 none should, with 0.01 about 1 % of the calls'). instr.sh's
# servers run with OTEL_BSP_SCHEDULE_DELAY=3600000 and are killed at the
# end of their window, so that no batch of spans goes out in it (at 1 %,
# N=10000 samples about 100 calls, under the batch of 512; an export at
# the default 5 s timer would land in the window or not by chance): their
# figure is the request path's (sampling, the span, its queueing), and
# the export's share is in ab.sh's CPU time.
#
#   bench/scripts/tracecost.sh [BIN]
#
#   BIN        the jetrpc binary (default: ./cmd/jetrpc, built into a
#              temporary directory); the load generator is its bench
#   RATIOS     the --trace-sample ratios to measure (default "0 0.01")
#   SCENARIOS  ab.sh/instr.sh scenarios (default "http1 tcp16
#              http1-sleep0 tcp16-sleep0": inline and blocking, HTTP with
#              1 in flight and a raw stream with 16)
#   ROUNDS     ab.sh's rounds (default 4: even, so that each side runs
#              first as often), SECS its seconds a run (default 2)
#   N          instr.sh's requests a measurement (default 10000)
#   INSTR=0    skip instr.sh (no valgrind needed)
#
# Both sides get serve's defaults otherwise (--call-timeout 30s and the
# rest): the only difference is the two tracing flags. The sink does a
# loopback POST's work per exported batch on core 1, the load's core, so
# the server's CPU time does not include it; the server's exporter
# (encoding and sending the batch) is counted. Time: about 5 minutes with
# the defaults on the 2-core development VM (ab.sh: 2 ratios x 4
# scenarios x 4 rounds x 2 sides x ~3.4 s; instr.sh ~50 s a ratio);
# it prints its own. Needs taskset, and valgrind unless INSTR=0. Every
# address is 127.0.0.1; the sink is stopped by its pid.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
ratios=${RATIOS:-0 0.01}
scenarios=${SCENARIOS:-http1 tcp16 http1-sleep0 tcp16-sleep0}
rounds=${ROUNDS:-4}; secs=${SECS:-2}; n=${N:-10000}; do_instr=${INSTR:-1}
start=$(date +%s)
tmp=$(mktemp -d)
sink_pid=
trap '[ -z "$sink_pid" ] || { kill "$sink_pid" 2>/dev/null; wait "$sink_pid" 2>/dev/null; }; rm -rf "$tmp"' EXIT
command -v go >/dev/null || PATH=/usr/local/go/bin:$PATH

bin=${1:-}
if [ -z "$bin" ]; then
  (cd "$root" && go build -o "$tmp/jetrpc" ./cmd/jetrpc)
  bin=$tmp/jetrpc
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
(cd "$root" && go build -o "$tmp/otlpsink" ./bench/scripts/otlpsink)

taskset -c 1 "$tmp/otlpsink" -addr 127.0.0.1:0 >"$tmp/sink.log" 2>&1 &
sink_pid=$!
sink=
for _ in $(seq 100); do
  sink=$(sed -n 's|^otlpsink: listening on http://||p' "$tmp/sink.log")
  [ -n "$sink" ] && break
  sleep 0.05
done
[ -n "$sink" ] || { echo "tracecost: the sink did not start:" >&2; cat "$tmp/sink.log" >&2; exit 3; }

# stats: the sink's counts, one line.
stats() {
  # no curl needed: bash's /dev/tcp
  exec 3<>"/dev/tcp/${sink%:*}/${sink##*:}"
  printf 'GET /stats HTTP/1.0\r\nHost: %s\r\n\r\n' "$sink" >&3
  tail -1 <&3
  exec 3<&-
}

echo "tracecost: $bin, sink http://$sink; ratios: $ratios; scenarios: $scenarios"
# shellcheck disable=SC2086 # the lists are words
for r in $ratios; do
  flags="--otlp-endpoint http://$sink --trace-sample $r"
  echo
  echo "== ab.sh: off against $flags ($rounds rounds of ${secs}s)"
  OLD_FLAGS='' NEW_FLAGS=$flags bash "$root/bench/scripts/ab.sh" "$bin" "$bin" "$rounds" "$secs" $scenarios | tee "$tmp/ab.$r"
  echo "sink after ab.sh (cumulative): $(stats)"
  if [ "$do_instr" = 1 ]; then
    echo
    echo "== instr.sh: off against $flags (N=$n)"
    OTEL_BSP_SCHEDULE_DELAY=3600000 OLD_FLAGS='' NEW_FLAGS=$flags bash "$root/bench/scripts/instr.sh" "$bin" "$bin" "$n" $scenarios | tee "$tmp/instr.$r"
    echo "sink after instr.sh (cumulative): $(stats)"
  fi
done

# The summary: a line per ratio and scenario, from ab.sh's medians
# (scenario old_rps new_rps ratio old_us new_us ratio paired) and
# instr.sh's table (scenario old new ratio).
echo
echo "== summary: traced/off, same binary (CPU: server CPU time per request, median of $rounds rounds; paired: the median of each round's own ratio)"
printf '%-7s %-14s %9s %9s %8s %8s   %9s %9s %8s\n' sample scenario "off us" "on us" "CPU x" paired "off instr" "on instr" "instr x"
# shellcheck disable=SC2086 # the lists are words
for r in $ratios; do
  for s in $scenarios; do
    a=$(awk -v s="$s" '$1 == s && $2 != "round" && NF == 8 { print $5, $6, $7, $8 }' "$tmp/ab.$r")
    i='- - -'
    [ "$do_instr" != 1 ] || i=$(awk -v s="$s" '$1 == s && NF == 4 { print $2, $3, $4 }' "$tmp/instr.$r")
    # shellcheck disable=SC2086
    printf '%-7s %-14s %9s %9s %8s %8s   %9s %9s %8s\n' "$r" "$s" ${a:-- - - -} $i
  done
done
echo "sink: $(stats)"
elapsed=$(($(date +%s) - start))
echo "tracecost: took $((elapsed / 60))m$((elapsed % 60))s"
