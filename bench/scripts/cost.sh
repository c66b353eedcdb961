# cost.sh: what the pinned measurement scripts share (mcpcost.sh,
# ssecost.sh), sourced from the project root: a temp dir removed at exit
# with the servers on the ports matched by $PORTS killed, the jetrpc
# binary ($1, or ./cmd/jetrpc built), a server's CPU time and a median.
# It sets tmp, BIN and ticks.
tmp=$(mktemp -d)
trap 'pkill -f "127.0.0.1:${PORTS:?}" 2>/dev/null || true; rm -rf "$tmp"' EXIT
BIN=${1:-}
if [ -z "$BIN" ]; then
  go build -o "$tmp/jetrpc" ./cmd/jetrpc
  BIN=$tmp/jetrpc
fi
ticks=$(getconf CLK_TCK)

# cpu PID: the process's user+sys time so far, in clock ticks.
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }

# median: the median of the numbers on standard input, one a line (the
# lower of the middle two for an even count).
median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
