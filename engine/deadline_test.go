package engine_test

// NOTE: tests of the deadlines the engine watches (deadline.go): a
// blocking call with a timeout runs on the engine's worker alone, and the
// loop answers it -32002 at its deadline, in its place in the order of
// replies; the late result is dropped. Waits are bounded; no test
// asserts how fast anything is, only what is answered and in which
// order.

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/pool"
)

// blockedPool returns a pool of one worker that is busy until the test
// ends, with no queue: whatever is submitted to it is refused.
func blockedPool(t *testing.T) *pool.Workers {
	t.Helper()
	w := pool.NewWorkers(1, 0)
	hold, running := make(chan struct{}), make(chan struct{})
	for !w.TrySubmit(pool.TaskFunc(func() { close(running); <-hold })) {
		time.Sleep(time.Millisecond)
	}
	<-running
	t.Cleanup(func() { close(hold); w.Close() })
	return w
}

// TestDeadline_callRunsOnTheEngineWorker: a blocking call with a timeout
// runs on the engine's worker, not on the table's pool — here a pool
// that refuses everything, which would answer -32000 "Server busy" if
// the call hopped there — and is still answered -32002 at its deadline.
func TestDeadline_callRunsOnTheEngineWorker(t *testing.T) {
	for _, tr := range fairTransports {
		t.Run(tr, func(t *testing.T) {
			tab, f := fairTable(t, []handler.MethodOption{handler.Timeout(50 * time.Millisecond)},
				handler.WithCallTimeout(time.Minute), handler.WithWorkers(blockedPool(t)))
			_, tcp, _ := startEngine(t, tab)
			c := dialFair(t, tr, tcp)
			if got := c.roundTrip(fairReq("bigSlow", "[3]", 1)); got != `{"jsonrpc":"2.0","result":"xxx","id":1}` {
				t.Fatalf("a blocking call with the table's timeout: %s", got)
			}
			want := fairErr(-32002, "Deadline exceeded: the call ran past its timeout of 50ms", 2)
			if got := c.roundTrip(fairReq("slow", "", 2)); got != want {
				t.Fatalf("a call past its deadline:\ngot  %s\nwant %s", got, want)
			}
			waitFair(t, "the method's context done", func() bool { return f.ended.Load() == 1 })
			close(f.release)
			<-f.returned
		})
	}
}

// TestDeadline_httpKeepsTheOrderOfReplies: pipelined on one HTTP
// connection, a call answered at its deadline keeps its place: the
// replies come in request order, the late result never.
func TestDeadline_httpKeepsTheOrderOfReplies(t *testing.T) {
	tab, f := fairTable(t, []handler.MethodOption{handler.Timeout(50 * time.Millisecond)}, handler.WithCallTimeout(time.Minute))
	_, tcp, _ := startEngine(t, tab)
	c, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msgs := []string{fairReq("bigSlow", "[1]", 1), fairReq("slow", "", 2), fairReq("add", "[1,2]", 3), fairReq("bigSlow", "[2]", 4), fairReq("slow", "", -1)}
	var req strings.Builder
	for _, m := range msgs {
		req.WriteString(post(m, ""))
	}
	if _, err := io.WriteString(c, req.String()); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"jsonrpc":"2.0","result":"x","id":1}`,
		fairErr(-32002, "Deadline exceeded: the call ran past its timeout of 50ms", 2),
		`{"jsonrpc":"2.0","result":3,"id":3}`,
		`{"jsonrpc":"2.0","result":"xx","id":4}`,
		"", // the notification past its deadline: 204
	}
	r := bufio.NewReader(c)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for i, w := range want {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("reply %d: %v", i+1, err)
		}
		b, _ := io.ReadAll(resp.Body)
		if string(b) != w || (w == "") != (resp.StatusCode == http.StatusNoContent) {
			t.Fatalf("reply %d: %s %q, want %q", i+1, resp.Status, b, w)
		}
	}
	waitFair(t, "both methods' contexts done", func() bool { return f.ended.Load() == 2 })
	close(f.release) // the late results come now, and are dropped
	for range 2 {
		<-f.returned
	}
	if _, err := io.WriteString(c, post(fairReq("add", "[2,3]", 5), "")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(resp.Body); string(b) != `{"jsonrpc":"2.0","result":5,"id":5}` {
		t.Fatalf("after the late results, the next reply: %q", b)
	}
}

// TestDeadline_manyCallsAndTimeouts: calls with two timeouts and none,
// on several connections of each transport at once, some past their
// deadline and some not: every call gets its own answer — its result,
// or -32002 when its method outlives its timeout — once.
// Under -race a late result went out when RunHere judged lateness by the coarse clock, which lagged.
func TestDeadline_manyCallsAndTimeouts(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()), handler.WithCallTimeout(time.Minute))
	sleep := func(ctx context.Context, p [1]int) (int, error) {
		select {
		case <-time.After(time.Duration(p[0]) * time.Millisecond):
		case <-ctx.Done():
		}
		return p[0], nil // late or not: the engine decides what goes
	}
	handler.Register(tab, "short", sleep, handler.Timeout(100*time.Millisecond))
	handler.Register(tab, "long", sleep, handler.Timeout(300*time.Millisecond))
	handler.Register(tab, "table", sleep) // the table's minute
	_, tcp, _ := startEngine(t, tab)
	type call struct {
		method string
		ms     int
	}
	calls := []call{{"short", 0}, {"short", 400}, {"long", 20}, {"long", 600}, {"table", 1}, {"short", 5}, {"long", 0}, {"table", 30}}
	late := func(c call) bool { return c.method == "short" && c.ms >= 400 || c.method == "long" && c.ms >= 600 }
	var wg sync.WaitGroup
	for _, tr := range fairTransports {
		for conn := range 3 {
			c := dialFair(t, tr, tcp)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i, k := range calls {
					id := conn*100 + i
					want := `{"jsonrpc":"2.0","result":` + strconv.Itoa(k.ms) + `,"id":` + strconv.Itoa(id) + `}`
					if late(k) {
						timeout := map[string]string{"short": "100ms", "long": "300ms"}[k.method]
						want = fairErr(-32002, "Deadline exceeded: the call ran past its timeout of "+timeout, id)
					}
					if got := c.roundTrip(fairReq(k.method, "["+strconv.Itoa(k.ms)+"]", id)); got != want {
						t.Errorf("%s: %s(%d):\ngot  %s\nwant %s", tr, k.method, k.ms, got, want)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
}

// TestDeadline_clientLeavesWhileCallsRun: a client that leaves with
// calls on workers, some past their deadline and answered, some not yet,
// costs nothing to the others: the late results are dropped when they
// come, and the next client is served.
func TestDeadline_clientLeavesWhileCallsRun(t *testing.T) {
	for _, tr := range fairTransports {
		t.Run(tr, func(t *testing.T) {
			tab, f := fairTable(t, []handler.MethodOption{handler.Timeout(30 * time.Millisecond)})
			e, tcp, _ := startEngine(t, tab)
			c := dialFair(t, tr, tcp)
			if got := c.roundTrip(fairReq("slow", "", 1)); !strings.Contains(got, "-32002") {
				t.Fatalf("the first call: %s", got)
			}
			c.send(fairReq("slow", "", 2)) // still running when the client leaves
			c.close()
			waitFair(t, "both contexts done", func() bool { return f.ended.Load() == 2 })
			close(f.release)
			for range 2 {
				<-f.returned
			}
			waitFair(t, "nothing in flight", func() bool { return e.Stats().InFlight == 0 && e.Conns() == 0 })
			d := dialFair(t, tr, tcp)
			if got := d.roundTrip(fairReq("bigSlow", "[2]", 3)); got != `{"jsonrpc":"2.0","result":"xx","id":3}` {
				t.Fatalf("the next client: %s", got)
			}
		})
	}
}

// TestDeadline_halfClosedStream: a stream client that sends a call and
// closes its writing half gets the call's -32002 at its deadline, then
// the end of the stream: the connection finishing off its loop watches
// the deadline too.
func TestDeadline_halfClosedStream(t *testing.T) {
	tab, f := fairTable(t, []handler.MethodOption{handler.Timeout(50 * time.Millisecond)})
	_, tcp, _ := startEngine(t, tab)
	c, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, fairReq("slow", "", 7)+"\n"+fairReq("bigSlow", "[1]", 8)+"\n"); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	want := map[string]bool{fairErr(-32002, "Deadline exceeded: the call ran past its timeout of 50ms", 7): true, `{"jsonrpc":"2.0","result":"x","id":8}`: true}
	if len(lines) != 2 || !want[lines[0]] || !want[lines[1]] || lines[0] == lines[1] {
		t.Fatalf("got %q", got)
	}
	if f.ended.Load() != 1 {
		t.Errorf("the method's context: ended %d times, want 1", f.ended.Load())
	}
	close(f.release)
	<-f.returned
}

// TestDeadline_stopAfterALateAnswer: Stop, once every call is answered
// — one of them at its deadline, its method still running — stops
// cleanly when the method returns; its context was done at the
// deadline.
func TestDeadline_stopAfterALateAnswer(t *testing.T) {
	tab, f := fairTable(t, []handler.MethodOption{handler.Timeout(30 * time.Millisecond)})
	e, tcp, _ := startEngine(t, tab, engine.WithStopTimeout(5*time.Second))
	c := dialFair(t, "stream", tcp)
	if got := c.roundTrip(fairReq("slow", "", 1)); !strings.Contains(got, "-32002") {
		t.Fatalf("the call: %s", got)
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		close(f.release)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if f.ended.Load() != 1 {
		t.Errorf("the method's context: ended %d times, want 1", f.ended.Load())
	}
}
