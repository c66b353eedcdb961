// Command compare measures jetrpc side by side with its peers: it builds
// every server, then for each scenario and server starts the server pinned
// to one core, loads it from this process pinned to the other core with
// the jetrpc bench library, reads the server's CPU time from /proc over
// the measured window, and prints a markdown table with the ratios.
// With -o it also writes the report into a file: in place of the
// generated part of a file that has one (see writeReport), else whole.
//
//	cd bench/peers && go run ./cmd/compare -o ../RESULTS.md
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jetrpc/jetrpc/bench"
	"golang.org/x/sys/unix"
)

// server is one peer.
type server struct {
	name       string
	pkg        string // what to build: a package of this module, or of dir's
	dir        string // where to build pkg: "" for this module; ../.. for jetrpc, built in its own module with its own go.sum
	args       func(httpAddr, tcpAddr string) []string
	http       bool
	tcp        bool
	shared     bool // one port serves both
	ws         bool // serves WebSocket: on the HTTP port, or on a port of its own given by wsFlag
	wsFlag     string
	prefix     string
	batch      bool
	check      bool // replies can be checked (not a fixed-reply ceiling)
	note       string
	bin        string
	cmd        *exec.Cmd
	ha, ta, wa string // addresses while running
}

func servers() []*server {
	return []*server{
		{name: "ceiling", pkg: "./cmd/ceiling", http: true, tcp: true, shared: true, batch: true, check: false,
			note: "gnet, fixed reply, no JSON parsing",
			args: func(h, _ string) []string { return []string{"-addr", "tcp://" + h} }},
		{name: "jetrpc", pkg: "./cmd/jetrpc", dir: "../..", http: true, tcp: true, shared: true, ws: true, batch: true, check: true,
			args: func(h, _ string) []string { return []string{"serve", "--http", h, "--loops", "1"} }},
		{name: "fasthttp+sonic", pkg: "./cmd/fasthttp", http: true, batch: true, check: true,
			args: func(h, _ string) []string { return []string{"-http", h} }},
		{name: "net/http+encoding/json", pkg: "./cmd/nethttp", http: true, tcp: true, batch: true, check: true,
			args: func(h, t string) []string { return []string{"-http", h, "-tcp", t} }},
		{name: "geth rpc", pkg: "./cmd/geth", http: true, tcp: true, ws: true, wsFlag: "-ws", batch: true, check: true, prefix: "calc_",
			note: "TCP: geth's IPC stream codec",
			args: func(h, t string) []string { return []string{"-http", h, "-tcp", t} }},
		{name: "jrpc2", pkg: "./cmd/jrpc2", http: true, tcp: true, batch: true, check: true,
			args: func(h, t string) []string { return []string{"-http", h, "-tcp", t} }},
		{name: "sourcegraph/jsonrpc2", pkg: "./cmd/sourcegraph", tcp: true, ws: true, wsFlag: "-ws", check: true,
			note: "no batches",
			args: func(_, t string) []string { return []string{"-tcp", t} }},
	}
}

// scenario is one row group of the table.
type scenario struct {
	id    int
	title string
	http  bool
	cfg   bench.Config
	sleep bool // the sleep method
	ws    bool // over WebSocket
}

func scenarios() []scenario {
	return []scenario{
		{1, "HTTP, single add, keep-alive", true, bench.Config{Conns: 64}, false, false},
		{2, "HTTP, batch of 10 add", true, bench.Config{Conns: 64, Batch: 10}, false, false},
		{3, "HTTP, single add, pipelining depth 16", true, bench.Config{Conns: 64, Pipeline: 16}, false, false},
		{4, "TCP, single add, pipelining depth 16", false, bench.Config{Conns: 64, Pipeline: 16}, false, false},
		{5, "TCP, single add, no pipelining", false, bench.Config{Conns: 64}, false, false},
		{6, "TCP, batch of 10 add", false, bench.Config{Conns: 64, Batch: 10}, false, false},
		{7, "batch of 10 sleep 10 ms, 8 connections", true, bench.Config{Conns: 8, Batch: 10, Params: "[10]"}, true, false},
		{9, "WebSocket, single add", false, bench.Config{Conns: 64}, false, true},
	}
}

type row struct {
	srv       *server
	res       *bench.Result
	cpuPerReq float64 // µs of server CPU per request
	skipped   string
	lo, hi    float64 // requests/s: the slowest and fastest round
	rounds    int
}

// median returns the round with the median requests/s, with the spread
// of all rounds.
func median(rs []row) row {
	var ok []row
	for _, r := range rs {
		if r.res != nil {
			ok = append(ok, r)
		}
	}
	if len(ok) == 0 {
		return rs[0]
	}
	sort.Slice(ok, func(i, j int) bool { return ok[i].res.RequestsPerSec < ok[j].res.RequestsPerSec })
	m := ok[len(ok)/2]
	m.lo, m.hi, m.rounds = ok[0].res.RequestsPerSec, ok[len(ok)-1].res.RequestsPerSec, len(ok)
	return m
}

func main() {
	dur := flag.Duration("d", 5*time.Second, "measured duration per scenario and server")
	warm := flag.Duration("warmup", time.Second, "warm-up before each measurement")
	out := flag.String("o", "", "also write the report to this file")
	only := flag.String("only", "", "comma-separated scenario numbers to run (default all, and the memory one)")
	idle := flag.Int("idle", 10000, "connections of the idle-memory scenario")
	rounds := flag.Int("rounds", 3, "rounds of each scenario, the servers taking turns in each; the median round is reported")
	flag.Parse()
	if *rounds < 1 {
		*rounds = 1
	}

	// The load runs on core 1; servers on core 0.
	var set unix.CPUSet
	set.Set(1)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		fmt.Fprintln(os.Stderr, "compare: cannot pin the load to core 1:", err)
	}
	runtime.GOMAXPROCS(1)
	raiseFileLimit()

	dir, err := os.MkdirTemp("", "jetrpc-compare")
	must(err)
	defer os.RemoveAll(dir)
	srvs := servers()
	for _, s := range srvs {
		s.bin = filepath.Join(dir, strings.NewReplacer("/", "_", "+", "_").Replace(s.name))
		fmt.Fprintf(os.Stderr, "building %s\n", s.name)
		cmd := exec.Command("go", "build", "-o", s.bin, s.pkg)
		cmd.Dir = s.dir
		cmd.Stderr = os.Stderr
		must(cmd.Run())
	}
	want := map[int]bool{}
	for _, f := range strings.Split(*only, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
			want[n] = true
		}
	}
	var report strings.Builder
	header(&report, *dur, *rounds)
	memory := len(want) == 0 || want[8]
	for _, sc := range scenarios() {
		if sc.id == 9 && memory {
			memoryTable(&report, srvs, *idle)
			memory = false
		}
		if len(want) > 0 && !want[sc.id] {
			continue
		}
		all := make([][]row, len(srvs))
		for range *rounds {
			for i, s := range srvs {
				all[i] = append(all[i], measure(s, sc, *dur, *warm))
			}
		}
		rows := make([]row, len(srvs))
		for i := range srvs {
			rows[i] = median(all[i])
		}
		table(&report, sc, rows)
	}
	if memory {
		memoryTable(&report, srvs, *idle)
	}
	if len(want) == 0 || want[1] {
		loadTools(&report, srvs, *dur, *rounds)
	}
	fmt.Print(report.String())
	if *out != "" {
		must(writeReport(*out, report.String()))
	}
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	defer ln.Close()
	return ln.Addr().String()
}

// start runs the server pinned to core 0 with GOMAXPROCS=1.
func (s *server) start() error {
	s.ha, s.ta, s.wa = freeAddr(), freeAddr(), ""
	if s.shared {
		s.ta = s.ha
	}
	args := append([]string{"-c", "0", s.bin}, s.args(s.ha, s.ta)...)
	if s.ws {
		s.wa = s.ha
		if s.wsFlag != "" {
			s.wa = freeAddr()
			args = append(args, s.wsFlag, s.wa)
		}
	}
	s.cmd = exec.Command("taskset", args...)
	s.cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	s.cmd.Stdout, s.cmd.Stderr = io.Discard, io.Discard
	if err := s.cmd.Start(); err != nil {
		return err
	}
	var addrs []string
	if s.http {
		addrs = append(addrs, s.ha)
	}
	if s.tcp && !s.shared {
		addrs = append(addrs, s.ta)
	}
	if s.wa != "" && s.wa != s.ha {
		addrs = append(addrs, s.wa)
	}
	for _, a := range addrs {
		for i := 0; ; i++ {
			c, err := net.Dial("tcp", a)
			if err == nil {
				c.Close()
				break
			}
			if i > 500 {
				return fmt.Errorf("%s does not listen on %s", s.name, a)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return nil
}

func (s *server) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = s.cmd.Process.Kill()
			<-done
		}
	}
	s.cmd = nil
}

// pid is the server process (taskset execs it, keeping the pid).
func (s *server) pid() int { return s.cmd.Process.Pid }

// cpuTicks reads utime+stime of a process, in clock ticks (1/100 s).
func cpuTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return u + st
}

// rssKiB reads a process's resident memory.
func rssKiB(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	return 0
}

func measure(s *server, sc scenario, dur, warm time.Duration) row {
	r := row{srv: s}
	switch {
	case sc.ws && !s.ws:
		r.skipped = "no WebSocket"
	case sc.ws && !s.check:
		r.skipped = "not a WebSocket server"
	case sc.http && !s.http && !sc.sleep: // the sleep scenario runs over TCP where there is no HTTP
		r.skipped = "no HTTP"
	case !sc.http && !sc.ws && !s.tcp:
		r.skipped = "no TCP"
	case sc.cfg.Batch > 1 && !s.batch:
		r.skipped = "no batches"
	case sc.sleep && !s.check:
		r.skipped = "a fixed reply does not sleep"
	}
	if r.skipped != "" {
		return r
	}
	if err := s.start(); err != nil {
		r.skipped = err.Error()
		return r
	}
	defer s.stop()
	cfg := sc.cfg
	cfg.Method = s.prefix + "add"
	if sc.sleep {
		cfg.Method = s.prefix + "sleep"
	}
	cfg.NoCheck = !s.check
	if sc.ws {
		cfg.Target = "ws://" + s.wa + "/"
	} else if sc.http && s.http {
		cfg.Target = "http://" + s.ha + "/"
	} else {
		cfg.Target = "tcp://" + s.ta
	}
	fmt.Fprintf(os.Stderr, "scenario %d: %s\n", sc.id, s.name)
	w := cfg
	w.Duration, w.Warmup = warm, -1
	if _, err := bench.Run(context.Background(), w); err != nil {
		r.skipped = err.Error()
		return r
	}
	before := cpuTicks(s.pid())
	cfg.Duration, cfg.Warmup = dur, -1
	res, err := bench.Run(context.Background(), cfg)
	after := cpuTicks(s.pid())
	if err != nil {
		r.skipped = err.Error()
		return r
	}
	r.res = res
	if res.Requests > 0 {
		r.cpuPerReq = float64(after-before) * 1e4 / float64(res.Requests) // ticks of 10 ms, in µs
	}
	return r
}

// idleConns opens n connections and makes one request on each.
func idleConns(s *server, n int) ([]net.Conn, error) {
	var conns []net.Conn
	http := s.http
	addr := s.ha
	if !http {
		addr = s.ta
	}
	body := `{"jsonrpc":"2.0","method":"` + s.prefix + `add","params":[1,2],"id":1}`
	req := body + "\n"
	if http {
		req = "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	}
	buf := make([]byte, 4096)
	for i := range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return conns, fmt.Errorf("after %d connections: %v", i, err)
		}
		conns = append(conns, c)
		if _, err := io.WriteString(c, req); err != nil {
			return conns, err
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Read(buf); err != nil {
			return conns, fmt.Errorf("connection %d: %v", i, err)
		}
	}
	return conns, nil
}

// loadTools compares jetrpc bench with wrk and hey on scenario 1.
func loadTools(w io.Writer, srvs []*server, dur time.Duration, rounds int) {
	fmt.Fprintf(w, "## Load tools on scenario 1 (HTTP single add, 64 connections, the tool on one core)\n\n")
	fmt.Fprintf(w, "The median of %d rounds, the tools taking turns in each; the slowest and fastest round in brackets.\n\n", rounds)
	fmt.Fprintf(w, "| tool | ceiling requests/s | jetrpc requests/s | over wrk's |\n| --- | ---: | ---: | --- |\n")
	tools := []string{"jetrpc bench", "wrk", "hey"}
	got := map[string]map[string][]float64{} // tool → server → rounds
	for _, t := range tools {
		got[t] = map[string][]float64{}
	}
	var names []string
	for _, s := range srvs {
		if s.name != "ceiling" && s.name != "jetrpc" {
			continue
		}
		names = append(names, s.name)
		if err := s.start(); err != nil {
			fmt.Fprintf(w, "| — | %s: %v | |\n\n", s.name, err)
			return
		}
		url := "http://" + s.ha + "/"
		for range rounds {
			for _, t := range tools {
				fmt.Fprintf(os.Stderr, "load tools: %s against %s\n", t, s.name)
				if v, ok := runTool(t, url, dur, !s.check); ok {
					got[t][s.name] = append(got[t][s.name], v)
				}
			}
		}
		s.stop()
	}
	med := func(v []float64) (m, lo, hi float64) {
		if len(v) == 0 {
			return 0, 0, 0
		}
		v = append([]float64(nil), v...)
		sort.Float64s(v)
		return v[len(v)/2], v[0], v[len(v)-1]
	}
	for _, t := range tools {
		fmt.Fprintf(w, "| %s |", t)
		var ratios []string
		for _, n := range names {
			m, lo, hi := med(got[t][n])
			if m == 0 {
				fmt.Fprintf(w, " not run |")
				continue
			}
			fmt.Fprintf(w, " %.0f (%.0f–%.0fk) |", m, lo/1000, hi/1000)
			if wm, _, _ := med(got["wrk"][n]); wm > 0 && t != "wrk" {
				ratios = append(ratios, fmt.Sprintf("%s %.2f", n, m/wm))
			}
		}
		fmt.Fprintf(w, " %s |\n", strings.Join(ratios, ", "))
	}
	fmt.Fprintln(w)
}

// runTool runs one load tool for dur on core 1 and returns its requests/s.
func runTool(tool, url string, dur time.Duration, noCheck bool) (float64, bool) {
	body := `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`
	secs := strconv.Itoa(int(dur.Seconds())) + "s"
	switch tool {
	case "jetrpc bench":
		res, err := bench.Run(context.Background(), bench.Config{Target: url, Conns: 64, Duration: dur, NoCheck: noCheck})
		if err != nil {
			return 0, false
		}
		return res.RequestsPerSec, true
	case "wrk":
		path, err := exec.LookPath("wrk")
		if err != nil {
			return 0, false
		}
		script := filepath.Join(os.TempDir(), "jetrpc-add.lua")
		_ = os.WriteFile(script, []byte(`wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '`+body+`'
`), 0o644)
		out, _ := exec.Command("taskset", "-c", "1", path, "-t1", "-c64", "-d"+secs, "-s", script, url).Output()
		return grab(string(out), "Requests/sec:")
	case "hey":
		path, err := exec.LookPath("hey")
		if err != nil {
			path = filepath.Join(os.Getenv("HOME"), "go", "bin", "hey")
			if _, err := os.Stat(path); err != nil {
				return 0, false
			}
		}
		out, _ := exec.Command("taskset", "-c", "1", path, "-z", secs, "-c", "64", "-m", "POST", "-T", "application/json", "-d", body, url).Output()
		return grab(string(out), "Requests/sec:")
	}
	return 0, false
}

// grab returns the number after key in a tool's output.
func grab(out, key string) (float64, bool) {
	for _, l := range strings.Split(out, "\n") {
		if _, v, ok := strings.Cut(l, key); ok {
			if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				return f, true
			}
		}
	}
	return 0, false
}

func raiseFileLimit() {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil && lim.Cur < lim.Max {
		lim.Cur = lim.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
}
