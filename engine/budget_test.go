package engine

// Tests of the output budget and of real TCP back-pressure (budget.go,
// pause_linux.go). The attack tests run the server as a subprocess — this
// test binary, running TestBudget_serverProcess — so that its RSS is the
// server's alone, and attack it on 127.0.0.1 with clients that never
// read, while a well-behaved client keeps calling. The figures (RSS at
// rest, peak and after, the good client's latencies, a timeline) are in
// the -v log. To measure by hand, the server process reads
// JETRPC_BUDGET_NOGATE=1 (no back-pressure), JETRPC_BUDGET_OVERRIDE=-1
// (no budget) and JETRPC_BUDGET_KERNELBUFS=1 (the kernel's autotuned
// socket buffers instead of fixed 64 KiB ones) from the environment.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/panjf2000/gnet/v2"
)

const (
	testBudget = 64 << 20 // the budget of the attack tests
	// testSlack is how far the server's RSS may grow past its RSS at rest
	// plus the budget while attacked: gnet's buffers round what they
	// hold up (to powers of two), and the heap grows past what is live
	// before a collection (GOGC=100). Measured: see the logs.
	testSlack = 2 * testBudget
	// testSettle is the liveness bound for the RSS to come back near its
	// rest once the attackers leave (released within about a second:
	// budget.release).
	testSettle = 10 * time.Second
)

var addBody = `{"jsonrpc":"2.0","id":1,"method":"add","params":[1,2]}`

func httpAdd() string { return httpPost(addBody) }

func httpPost(body string) string {
	return "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

// demoTable returns a table of the demo methods.
func demoTable() *handler.Table {
	tab := handler.NewTable(handler.WithLogger(slog.New(slog.DiscardHandler)))
	demo.Register(tab)
	return tab
}

// smallBufs dials with 4 KiB socket buffers, set before the handshake, so
// that the replies a client does not read back up into the server sooner,
// instead of filling megabytes of the client's kernel buffers first.
var smallBufs = &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
	return c.Control(func(fd uintptr) {
		_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, 4096)
	})
}}

// TestBudget_serverProcess is the server of the attack tests, run as a
// subprocess: it serves the demo methods on 127.0.0.1, prints its
// address, logs the budget's state on stderr every 250 ms, and stops when
// its stdin closes.
func TestBudget_serverProcess(t *testing.T) {
	if os.Getenv("JETRPC_BUDGET_CHILD") != "1" {
		t.Skip("the server of the budget tests, run by them as a subprocess")
	}
	budget, _ := strconv.Atoi(os.Getenv("JETRPC_BUDGET"))
	if o := os.Getenv("JETRPC_BUDGET_OVERRIDE"); o != "" {
		budget, _ = strconv.Atoi(o) // to measure by hand: -1 disables the budget
	}
	if os.Getenv("JETRPC_BUDGET_NOGATE") == "1" {
		gateOff.Store(true) // to measure the engine without back-pressure
	}
	tab := demoTable()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	e := New(tab, WithAddrs("tcp://127.0.0.1:0"), WithMaxOutputBudget(budget), WithLogger(log))
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("JETRPC_BUDGET_KERNELBUFS") != "1" {
		// Fixed 64 KiB socket buffers, inherited from the listener by the
		// accepted sockets: the attacks reach the budget within a second
		// or two, instead of first filling the megabytes per connection
		// that the kernel's autotuning gives on loopback.
		setServerBufs(t, e, 64<<10)
	}
	fmt.Printf("ADDR %s\n", e.Addrs()[0])
	go func() {
		var ms runtime.MemStats
		for range time.Tick(250 * time.Millisecond) {
			b := &e.budget
			runtime.ReadMemStats(&ms)
			fmt.Fprintf(os.Stderr, "STAT heap=%dMiB used=%d holders=%d closed=%d conns=%d\n", ms.HeapAlloc>>20, b.used.Load(), b.holders.Load(), b.closed.Load(), e.Conns())
		}
	}()
	_, _ = io.Copy(io.Discard, os.Stdin)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = e.Stop(ctx)
}

// serverProcess is a server run as a subprocess.
type serverProcess struct {
	cmd    *exec.Cmd
	addr   string
	stdin  io.Closer
	mu     sync.Mutex
	stat   string // its last STAT line
	closes int    // its "output budget exceeded" logs
	warns  []string
}

func startServerProcess(t *testing.T, budget int, env ...string) *serverProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestBudget_serverProcess$")
	cmd.Env = append(append(os.Environ(), "JETRPC_BUDGET_CHILD=1", "JETRPC_BUDGET="+strconv.Itoa(budget)), env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errp, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serverProcess{cmd: cmd, stdin: in}
	t.Cleanup(func() {
		_ = in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	go func() {
		s := bufio.NewScanner(errp)
		for s.Scan() {
			line := s.Text()
			p.mu.Lock()
			switch {
			case strings.HasPrefix(line, "STAT "):
				p.stat = line
			case strings.Contains(line, "output budget exceeded"):
				p.closes++
			default:
				if len(p.warns) < 5 {
					p.warns = append(p.warns, line)
				}
			}
			p.mu.Unlock()
		}
	}()
	r := bufio.NewReader(out)
	line, err := r.ReadString('\n')
	if !strings.HasPrefix(line, "ADDR ") {
		t.Fatalf("server process: %q %v", line, err)
	}
	p.addr = strings.TrimSpace(line[5:])
	go func() { _, _ = io.Copy(io.Discard, r) }()
	return p
}

// cpu returns the server's CPU time so far.
func (p *serverProcess) cpu(t *testing.T) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ = 100
}

// rss returns the server's resident set size.
func (p *serverProcess) rss(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmRSS:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// waitConns waits until the server has accepted n connections.
func (p *serverProcess) waitConns(t *testing.T, n int) {
	want := "conns=" + strconv.Itoa(n)
	for i := 0; ; i++ {
		stat, _, _ := p.state()
		if strings.HasSuffix(stat, want) {
			return
		}
		if i == 1000 {
			t.Fatalf("server: %s, want %s", stat, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (p *serverProcess) state() (stat string, closes int, warns []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stat, p.closes, slices.Clone(p.warns)
}

// goodHTTPClient calls add over one keep-alive HTTP connection until stop
// is closed, and returns the latencies.
func goodHTTPClient(t *testing.T, addr string, stop <-chan struct{}) []time.Duration {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Error(err)
		return nil
	}
	defer c.Close()
	r := bufio.NewReader(c)
	req := []byte(httpAdd())
	var lat []time.Duration
	for {
		select {
		case <-stop:
			return lat
		default:
		}
		start := time.Now()
		_ = c.SetDeadline(start.Add(10 * time.Second)) // liveness only
		if _, err := c.Write(req); err != nil {
			t.Errorf("good client: %v", err)
			return lat
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Errorf("good client: %v after %d calls", err, len(lat))
			return lat
		}
		body, _ := io.ReadAll(resp.Body)
		if !strings.Contains(string(body), `"result":3`) {
			t.Errorf("good client: %s", body)
			return lat
		}
		lat = append(lat, time.Since(start))
		time.Sleep(time.Millisecond)
	}
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// attack runs an attack on a server process: open dials the attackers,
// start sets them going; the test closes their connections to end it.
// Meanwhile a good HTTP client calls, and the server's RSS is sampled.
func attack(t *testing.T, p *serverProcess, name string, dur time.Duration, open func() []net.Conn, start func()) {
	conns := open()
	p.waitConns(t, len(conns))
	rest := p.rss(t)
	stop := make(chan struct{})
	lats := make(chan []time.Duration, 1)
	go func() { lats <- goodHTTPClient(t, p.addr, stop) }()
	t0, cpu0 := time.Now(), p.cpu(t)
	start()
	peak := rest
	var timeline []string
	for next := time.Second; time.Since(t0) < dur; time.Sleep(20 * time.Millisecond) {
		rss := p.rss(t)
		peak = max(peak, rss)
		if time.Since(t0) >= next {
			stat, _, _ := p.state()
			timeline = append(timeline, fmt.Sprintf("%v: RSS %d MiB, %s", next, rss>>20, strings.TrimPrefix(stat, "STAT ")))
			next += time.Second
		}
	}
	close(stop)
	lat := <-lats
	cpu := p.cpu(t) - cpu0
	stat, closes, warns := p.state()
	for _, c := range conns {
		_ = c.Close()
	}
	left := time.Now()
	var settled time.Duration
	var after int64
	for {
		after = p.rss(t)
		if after <= rest+16<<20 || time.Since(left) > testSettle || raceEnabled {
			settled = time.Since(left)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("%s: %d attackers; server RSS at rest %d MiB, peak %d MiB (budget %d MiB), %d MiB %v after they left",
		name, len(conns), rest>>20, peak>>20, testBudget>>20, after>>20, settled.Round(10*time.Millisecond))
	t.Logf("%s: server CPU %v in %v; timeline:\n%s", name, cpu, time.Since(t0).Round(time.Millisecond), strings.Join(timeline, "\n"))
	t.Logf("%s: good client: %d calls, p50 %v, p99 %v, max %v; server: %s, %d budget closes; other logs %q",
		name, len(lat), percentile(lat, 0.5), percentile(lat, 0.99), percentile(lat, 1), stat, closes, warns)
	if len(lat) == 0 {
		t.Errorf("%s: the good client got no answer", name)
	}
	if raceEnabled {
		return // the race detector's shadow memory makes RSS meaningless
	}
	if peak > rest+testBudget+testSlack {
		t.Errorf("%s: server RSS peaked at %d MiB, over %d MiB at rest + %d MiB budget + %d MiB slack", name, peak>>20, rest>>20, testBudget>>20, testSlack>>20)
	}
	if after > rest+16<<20 {
		t.Errorf("%s: server RSS still %d MiB %v after the attackers left (%d MiB at rest)", name, after>>20, testSettle, rest>>20)
	}
}

// TestBudget_pipeliningAttack: 500 connections pipeline HTTP requests and
// never read. Each is held back (TCP back-pressure) once its unsent
// replies pass its share of the budget; the server's RSS stays under the
// budget plus a slack; it comes back once they leave; a client that reads
// is served all along.
func TestBudget_pipeliningAttack(t *testing.T) {
	if !gateSupported {
		t.Skip("no TCP back-pressure on this system")
	}
	p := startServerProcess(t, testBudget)
	n := 500
	// Pipelined calls of echo with 4 KiB: the replies are as large as the
	// requests, as with add, at less CPU per byte, so that the attack
	// fills the kernel's socket buffers (about 2 MiB per connection here)
	// and reaches the budget within seconds on two cores.
	batch := []byte(strings.Repeat(httpPost(`{"jsonrpc":"2.0","id":1,"method":"echo","params":["`+strings.Repeat("x", 4000)+`"]}`), 16))
	var conns []net.Conn
	attack(t, p, "pipelining", 8*time.Second, func() []net.Conn {
		for range n {
			c, err := smallBufs.Dial("tcp", p.addr)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
		}
		return conns
	}, func() {
		for _, c := range conns {
			go func() {
				for {
					if _, err := c.Write(batch); err != nil {
						return // closed by the server, or by the test
					}
				}
			}()
		}
	})
}

// TestBudget_subscriptionAttack: 300 WebSocket clients subscribe to a
// 1 ms clock and never read. Their pushes cannot be held back: the budget
// closes the connections holding the most, and the RSS stays bounded.
func TestBudget_subscriptionAttack(t *testing.T) {
	p := startServerProcess(t, testBudget)
	n := 300
	d := &websocket.Dialer{NetDialContext: smallBufs.DialContext, HandshakeTimeout: 10 * time.Second}
	var wss []*websocket.Conn
	attack(t, p, "subscriptions", 8*time.Second, func() []net.Conn {
		conns := make([]net.Conn, 0, n)
		for range n {
			ws, _, err := d.Dial("ws://"+p.addr+"/", nil)
			if err != nil {
				t.Fatal(err)
			}
			wss = append(wss, ws)
			conns = append(conns, ws.NetConn())
		}
		return conns
	}, func() {
		for _, ws := range wss {
			if err := ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":1,"method":"clock_subscribe","params":[1]}`)); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestBudget_heldBackConnDoesNotRead: a connection held back (its unsent
// replies over MaxPendingOutput) takes nothing more from its socket: the
// client's writes block, the server buffers no more than a read, and once
// the client reads every request is answered.
func TestBudget_heldBackConnDoesNotRead(t *testing.T) {
	if !gateSupported {
		t.Skip("no TCP back-pressure on this system")
	}
	e := New(demoTable(), WithAddrs("tcp://127.0.0.1:0"), WithMaxPendingOutput(64<<10), WithLogger(slog.New(slog.DiscardHandler)))
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = e.Stop(ctx)
	}()
	c, err := smallBufs.Dial("tcp", e.Addrs()[0].String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msg := addBody + "\n"
	batch := []byte(strings.Repeat(msg, 1000))
	var sent atomic.Int64
	blocked := make(chan struct{})
	go func() {
		defer close(blocked)
		_ = c.SetWriteDeadline(time.Now().Add(3 * time.Second))
		for {
			n, err := c.Write(batch)
			sent.Add(int64(n))
			if err != nil {
				return // the deadline: the kernel holds what it could not take
			}
		}
	}()
	<-blocked
	// The server's side, on its loop.
	type side struct {
		in, out int
		off     bool
	}
	got := make(chan side, 1)
	e.mu.Lock()
	for sc := range e.conns {
		_ = sc.gc.Wake(func(gc gnet.Conn, _ error) error {
			got <- side{gc.InboundBuffered(), gc.OutboundBuffered(), sc.gate.off}
			return nil
		})
	}
	e.mu.Unlock()
	s := <-got
	t.Logf("client sent %d KiB before its writes blocked; server: %d KiB unread, %d KiB unsent, reading off %v", sent.Load()>>10, s.in>>10, s.out>>10, s.off)
	if !s.off {
		t.Error("the held-back connection's socket is still read")
	}
	if s.in > 64<<10+len(msg) {
		t.Errorf("the server buffered %d KiB of a held-back connection's input, want at most one read (64 KiB)", s.in>>10)
	}
	if e.Conns() != 1 {
		t.Fatalf("the held-back connection was closed")
	}
	// Once the client reads, every complete request is answered.
	want := int(sent.Load()) / len(msg)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReaderSize(c, 1<<16)
	for i := range want {
		line, err := r.ReadString('\n')
		if err != nil || !strings.Contains(line, `"result":3`) {
			t.Fatalf("reply %d of %d: %q %v", i, want, line, err)
		}
	}
}

// TestBudget_shedLargestFirst: over the budget, the connections holding
// the most are chosen first, until the rest is under the pressure line.
func TestBudget_shedLargestFirst(t *testing.T) {
	e := New(handler.NewTable(), WithMaxOutputBudget(100<<20), WithLogger(slog.New(slog.DiscardHandler)))
	e.baseCtx = context.Background()
	var cs []*conn
	for _, mib := range []int64{2, 30, 5, 28, 20, 0, 25} {
		fc := &fakeConn{}
		c := newConn(e, fc, fakeLoopState(fc))
		e.conns[c] = struct{}{}
		c.setHeld(mib << 20)
		cs = append(cs, c)
	}
	if e.budget.used.Load() != 110<<20 || e.budget.holders.Load() != 6 {
		t.Fatalf("used %d, holders %d", e.budget.used.Load(), e.budget.holders.Load())
	}
	now := time.Now()
	e.checkBudget(now, false) // over the budget, under the hard line: not yet
	for _, c := range cs {
		if c.doomed.Load() {
			t.Fatal("closed before the grace")
		}
	}
	e.checkBudget(now.Add(budgetGrace), false)
	// 110 MiB: 30 and 28 go (52 left, under 75).
	for i, want := range []bool{false, true, false, true, false, false, false} {
		if cs[i].doomed.Load() != want {
			t.Errorf("conn %d (%d MiB): doomed %v, want %v", i, cs[i].held.Load()>>20, !want, want)
		}
	}
	// Over the hard line (112.5 MiB), at once: 118 MiB.
	for _, c := range cs {
		c.doomed.Store(false)
	}
	e.budget.overSince = time.Time{}
	cs[0].setHeld(10 << 20)
	e.checkBudget(now, false)
	if !cs[1].doomed.Load() || !cs[3].doomed.Load() || cs[6].doomed.Load() {
		t.Error("over the hard line: the largest not closed at once")
	}
	// Under pressure, only those over their share (75/6 MiB) are held back.
	if !e.budget.squeezes(13<<20) || e.budget.squeezes(12<<20) {
		t.Error("squeezes")
	}
	for _, c := range cs {
		c.release()
	}
	if e.budget.used.Load() != 0 || e.budget.holders.Load() != 0 {
		t.Fatalf("after release: used %d, holders %d", e.budget.used.Load(), e.budget.holders.Load())
	}
}

// TestBudget_pushesCountedBeforeTheLoopLooks: the budget hears of a push
// queue as it grows, by steps of budgetStep, though the connection's loop
// does not look; the loop's look counts it exactly; a connection the
// ticker chose to close takes pushes while it stays within its share (as
// its loop would spare it), then refuses them and closes for the budget.
//
// A queue counted only when the loop looked could grow by up to MaxPushQueue unseen on every connection of a loop that lagged behind a flood (issue 22).
func TestBudget_pushesCountedBeforeTheLoopLooks(t *testing.T) {
	const budget = 256 << 10 // pressure 192 KiB: the share of one holder
	c, _ := newFakeConnOf(t, handler.NewTable(), WithMaxOutputBudget(budget), WithLogger(slog.New(slog.DiscardHandler)))
	c.use(newStreamCodec())
	b := &c.e.budget
	msg := []byte(`"` + strings.Repeat("x", 998) + `"`)
	send := func(n int) {
		t.Helper()
		for range n {
			if err := c.Send(msg); err != nil {
				t.Fatal(err)
			}
		}
	}
	send(100)
	q := c.mail.queued.Load()
	if u := b.used.Load(); u > q || u < q-budgetStep || c.held.Load() != u || b.holders.Load() != 1 {
		t.Fatalf("queued %d: budget used %d, held %d, holders %d; want the queue within a step", q, u, c.held.Load(), b.holders.Load())
	}
	c.account(0)
	if u := b.used.Load(); u != q {
		t.Fatalf("after the loop's look: used %d, want %d", u, q)
	}
	c.doom()
	send(80) // 180 KB: within the share
	err := error(nil)
	for i := 0; err == nil; i++ {
		if i == 100 {
			t.Fatal("a doomed connection over its share still takes pushes")
		}
		err = c.Send(msg)
	}
	if err != handler.ErrSlowConsumer || c.mail.kill.Load() != uint32(closeBudget) {
		t.Fatalf("over its share: %v, kill %d", err, c.mail.kill.Load())
	}
	if held := c.mail.queued.Load(); held > b.share() || held < b.share()-int64(len(msg)) {
		t.Errorf("refused holding %d, share %d", held, b.share())
	}
	if got := c.Send(msg); got != handler.ErrConnClosed {
		t.Errorf("after the refusal: %v", got)
	}
	if a := c.traffic(); a != gnet.Close || c.closing != closeBudget || b.closed.Load() != 1 {
		t.Errorf("traffic: %v, closing %d, budget closes %d", a, c.closing, b.closed.Load())
	}
	c.release()
	if b.used.Load() != 0 || b.holders.Load() != 0 {
		t.Errorf("after release: used %d, holders %d", b.used.Load(), b.holders.Load())
	}
}

// TestBudget_default: a quarter of the memory, at most 64 MiB.
//
// It was at most 1 GiB: 300 subscribers that never read grew the RSS by 1.7 GiB (issue 22).
func TestBudget_default(t *testing.T) {
	if DefaultMaxOutputBudget != 64<<20 {
		t.Errorf("DefaultMaxOutputBudget = %d MiB, want 64 (the figures of cmd/jetrpc/README.md)", DefaultMaxOutputBudget>>20)
	}
	for _, c := range []struct {
		mem  int64
		want int
	}{{0, DefaultMaxOutputBudget}, {128 << 20, 32 << 20}, {2 << 30, DefaultMaxOutputBudget}, {64 << 30, DefaultMaxOutputBudget}} {
		if got := defaultOutputBudget(c.mem); got != c.want {
			t.Errorf("defaultOutputBudget(%d) = %d, want %d", c.mem, got, c.want)
		}
	}
	if m := availableMemory(); m <= 0 && gateSupported {
		t.Errorf("availableMemory() = %d on Linux", m)
	}
	var o Options
	o.fill()
	if o.MaxOutputBudget <= 0 || o.MaxOutputBudget > DefaultMaxOutputBudget {
		t.Errorf("default budget %d", o.MaxOutputBudget)
	}
}
