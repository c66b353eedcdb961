package engine_test

// Tests of the engine's counters (stats.go, Engine.Stats) over loopback
// sockets: exact byte counts per transport, connections by transport
// and by why they closed, work in flight, pushes, refusals.

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/pool"
)

// waitStats polls e's counters until ok accepts them, or fails with the
// last ones.
func waitStats(t *testing.T, e *engine.Engine, what string, ok func(engine.Stats) bool) engine.Stats {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := e.Stats()
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: never so; last %+v", what, st)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func closedTotal(c engine.CloseCounts) uint64 {
	return c.Client + c.Protocol + c.Idle + c.ReadTimeout + c.WriteTimeout + c.PushQueue + c.OutputBudget + c.Flood + c.Stopping
}

// exchangeAll writes req on a new TCP connection, half-closes when
// halfClose is set, and reads until the server closes.
func exchangeAll(t *testing.T, addr, req string, halfClose bool) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	if halfClose {
		_ = c.(*net.TCPConn).CloseWrite()
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("read: %v (got %q)", err, got)
	}
	return string(got)
}

// chunk is s as one chunk of a chunked body.
func chunk(s string) string { return strconv.FormatInt(int64(len(s)), 16) + "\r\n" + s + "\r\n" }

// TestStats_bytesExact: the bytes in and out of a transport are exactly
// those the client sent and received, replies from workers included.
func TestStats_bytesExact(t *testing.T) {
	t.Run("stream", func(t *testing.T) {
		e, tcp, _ := startEngine(t, nil)
		sc := dialStream(t, "tcp", tcp)
		msgs := []string{
			`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`,
			`{"jsonrpc":"2.0","method":"sleep","params":[5],"id":2}`,
			`{"jsonrpc":"2.0","method":"notify_hello","params":[1]}`,
			`[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":3},{"jsonrpc":"2.0","method":"sleep","params":[1],"id":4}]`,
			`{"jsonrpc":"2.0","method":"nope","id":5}`,
		}
		sent, got := 0, 0
		for _, m := range msgs {
			sc.send(t, []byte(m))
			sent += len(m) + 1
		}
		for range 4 {
			got += len(sc.line(t))
		}
		sc.c.Close()
		st := waitStats(t, e, "the stream closed", func(s engine.Stats) bool { return s.Conns == 0 })
		if st.Stream.BytesIn != uint64(sent) || st.Stream.BytesOut != uint64(got) {
			t.Errorf("stream in %d out %d, want %d and %d", st.Stream.BytesIn, st.Stream.BytesOut, sent, got)
		}
		if st.HTTP.BytesIn+st.HTTP.BytesOut+st.WebSocket.BytesIn+st.WebSocket.BytesOut != 0 {
			t.Errorf("other transports moved: %+v %+v", st.HTTP, st.WebSocket)
		}
	})
	t.Run("http", func(t *testing.T) {
		e, tcp, _ := startEngine(t, nil)
		req := post(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, "") +
			post(`{"jsonrpc":"2.0","method":"sleep","params":[5],"id":2}`, "") +
			"GET /health HTTP/1.1\r\nHost: x\r\n\r\n" +
			post(`{"jsonrpc":"2.0","method":"add","params":[1,2]}`, "") +
			"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
			chunk(`[{"js`) + chunk(`onrpc":"2.0","method":"add","params":[2,2],"id":3}]`) + "0\r\n\r\n" +
			post(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":4}`, "Connection: close\r\n")
		got := exchangeAll(t, tcp, req, false)
		if strings.Count(got, "HTTP/1.1 ") != 6 {
			t.Fatalf("want 6 responses: %q", got)
		}
		st := waitStats(t, e, "closed", func(s engine.Stats) bool { return s.Conns == 0 })
		if st.HTTP.BytesIn != uint64(len(req)) || st.HTTP.BytesOut != uint64(len(got)) {
			t.Errorf("http in %d out %d, want %d and %d", st.HTTP.BytesIn, st.HTTP.BytesOut, len(req), len(got))
		}
	})
	t.Run("websocket", func(t *testing.T) {
		e, tcp, _ := startEngine(t, nil)
		c, err := net.Dial("tcp", tcp)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		hs := "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
		frames := string(frame(true, 1, []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`), true)) +
			string(frame(true, 1, []byte(`{"jsonrpc":"2.0","method":"sleep","params":[5],"id":2}`), true)) +
			string(frame(true, 9, []byte("ping"), true))
		closing := string(frame(true, 8, []byte{0x03, 0xe8}, true))
		_, _ = io.WriteString(c, hs)
		time.Sleep(20 * time.Millisecond) // the handshake in its own read
		_, _ = io.WriteString(c, frames)
		time.Sleep(100 * time.Millisecond) // the sleep's reply out before the close
		_, _ = io.WriteString(c, closing)
		frames += closing
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		got, _ := io.ReadAll(c)
		if !strings.Contains(string(got), `"result":5,"id":2`) {
			t.Fatalf("no sleep reply: %q", got)
		}
		st := waitStats(t, e, "closed", func(s engine.Stats) bool { return s.Conns == 0 })
		in := st.HTTP.BytesIn + st.WebSocket.BytesIn
		out := st.HTTP.BytesOut + st.WebSocket.BytesOut
		if in != uint64(len(hs)+len(frames)) || out != uint64(len(got)) {
			t.Errorf("in %d out %d (http %+v, websocket %+v), want %d and %d", in, out, st.HTTP, st.WebSocket, len(hs)+len(frames), len(got))
		}
		if st.Upgrades != 1 || closedTotal(st.Closed) != 1 {
			t.Errorf("upgrades %d, closed %+v", st.Upgrades, st.Closed)
		}
	})
}

// TestStats_halfClosedCounted: a connection that finishes off its loop
// after its client half-closed (halfclose.go) counts its bytes — the
// requests it serves there, the replies it writes there — and closes
// once.
//
// Bytes read and written off the loop were not counted: finishOffLoop writes with nc.Write, past the loop's counters.
// Stats could read Conns 0 before the last connection's close was counted: forget dropped the count first.
func TestStats_halfClosedCounted(t *testing.T) {
	for _, kind := range []string{"stream", "http"} {
		t.Run(kind, func(t *testing.T) {
			e, tcp, _ := startEngine(t, nil) // all three on workers when the EOF comes
			var req string
			n := 0
			for i := range 3 {
				m := `{"jsonrpc":"2.0","method":"sleep","params":[20],"id":` + strconv.Itoa(i) + `}`
				if kind == "stream" {
					req += m + "\n"
				} else {
					req += post(m, "")
				}
				n++
			}
			got := exchangeAll(t, tcp, req, true)
			want := `"result":20`
			if kind == "http" {
				want = `"code":-32001` // an HTTP client's EOF cancels its calls; their replies still go (halfclose.go)
			}
			if c := strings.Count(got, want); c != n {
				t.Fatalf("%d replies of %d: %q", c, n, got)
			}
			st := waitStats(t, e, "closed", func(s engine.Stats) bool { return s.Conns == 0 })
			ts := st.Stream
			if kind == "http" {
				ts = st.HTTP
			}
			if ts.BytesIn != uint64(len(req)) || ts.BytesOut != uint64(len(got)) {
				t.Errorf("%s in %d out %d, want %d and %d", kind, ts.BytesIn, ts.BytesOut, len(req), len(got))
			}
			if closedTotal(st.Closed) != 1 || st.Closed.Client != 1 || st.Accepted != 1 || st.InFlight != 0 {
				t.Errorf("closed %+v, accepted %d, in flight %d", st.Closed, st.Accepted, st.InFlight)
			}
		})
	}
}

// TestStats_connsByTransport: under churn of every transport the
// counts come back exactly: with k of each open they read k, and 0 once
// all closed; every connection accepted is closed once.
func TestStats_connsByTransport(t *testing.T) {
	e, tcp, _ := startEngine(t, nil)
	hs := "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
	const add = `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`
	// open dials a connection of kind and waits until the server has
	// answered on it (none: nothing sent).
	open := func(kind int) (net.Conn, error) {
		c, err := net.Dial("tcp", tcp)
		if err != nil {
			return nil, err
		}
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		r := bufio.NewReader(c)
		switch kind {
		case 0: // http
			_, err = io.WriteString(c, post(add, ""))
			if err == nil {
				var resp *http.Response
				if resp, err = http.ReadResponse(r, nil); err == nil {
					_, err = io.ReadAll(resp.Body)
				}
			}
		case 1: // websocket
			_, err = io.WriteString(c, hs)
			if err == nil {
				var resp *http.Response
				if resp, err = http.ReadResponse(r, nil); err == nil && resp.StatusCode != 101 {
					err = errors.New(resp.Status)
				}
			}
		case 2: // stream
			_, err = io.WriteString(c, add+"\n")
			if err == nil {
				_, err = r.ReadString('\n')
			}
		}
		if err != nil {
			c.Close()
		}
		return c, err
	}
	var wg sync.WaitGroup
	var launched [4]atomic.Int64
	for g := range 16 {
		wg.Go(func() {
			for i := range 40 {
				kind := (g + i) % 4
				c, err := open(kind)
				if err != nil {
					t.Error(err)
					return
				}
				launched[kind].Add(1)
				if i%5 == 0 {
					time.Sleep(time.Millisecond)
				}
				c.Close()
			}
		})
	}
	stop := make(chan struct{})
	sampled := make(chan int)
	go func() {
		n := 0
		defer func() { sampled <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			st := e.Stats()
			if st.HTTP.Conns < 0 || st.WebSocket.Conns < 0 || st.Stream.Conns < 0 || st.Conns < 0 || st.InFlight < 0 {
				t.Errorf("a negative count: %+v", st)
				return
			}
			n++
			time.Sleep(100 * time.Microsecond)
		}
	}()
	wg.Wait()
	close(stop)
	<-sampled
	total := uint64(launched[0].Load() + launched[1].Load() + launched[2].Load() + launched[3].Load())
	// A connection its client closed may still wait in the listen queue:
	// all closed is all accepted and none open.
	st := waitStats(t, e, "all closed", func(s engine.Stats) bool { return s.Conns == 0 && s.Accepted == total })
	if st.HTTP.Conns != 0 || st.WebSocket.Conns != 0 || st.Stream.Conns != 0 {
		t.Fatalf("after churn, by transport: %d %d %d", st.HTTP.Conns, st.WebSocket.Conns, st.Stream.Conns)
	}
	if st.Accepted != total || closedTotal(st.Closed) != total || st.Upgrades != uint64(launched[1].Load()) {
		t.Fatalf("accepted %d, closed %+v (%d), upgrades %d; want %d accepted and closed, %d upgrades",
			st.Accepted, st.Closed, closedTotal(st.Closed), st.Upgrades, total, launched[1].Load())
	}

	// Now k of each, held open: exact, none hidden by a drift below zero.
	const k = 5
	var held []net.Conn
	for kind := range 4 {
		for range k {
			c, err := open(kind)
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, c)
		}
	}
	st = waitStats(t, e, "all open", func(s engine.Stats) bool { return s.Conns == 4*k })
	if st.HTTP.Conns != k || st.WebSocket.Conns != k || st.Stream.Conns != k {
		t.Errorf("with %d of each open: http %d, websocket %d, stream %d", k, st.HTTP.Conns, st.WebSocket.Conns, st.Stream.Conns)
	}
	for _, c := range held {
		c.Close()
	}
	st = waitStats(t, e, "all closed again", func(s engine.Stats) bool { return s.Conns == 0 })
	if st.HTTP.Conns != 0 || st.WebSocket.Conns != 0 || st.Stream.Conns != 0 || closedTotal(st.Closed) != st.Accepted {
		t.Errorf("after closing them: %+v", st)
	}
}

// TestStats_inFlightBackToZero: messages on workers count while they
// run and stop counting when they end — when their client left first,
// and when they are answered busy.
func TestStats_inFlightBackToZero(t *testing.T) {
	workers := pool.NewWorkers(2, 0)
	defer workers.Close()
	tab := handler.NewTable(handler.WithLogger(quiet()))
	demo.Register(tab)
	entered, release := make(chan struct{}, 8), make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free() // before the workers close, even on failure
	handler.Register(tab, "hold", func(ctx context.Context, _ handler.Raw) (int, error) {
		entered <- struct{}{}
		<-release
		return 1, nil
	})
	e, tcp, _ := startEngine(t, tab, engine.WithWorkers(workers))
	// Two holds take both workers; their clients leave.
	var gone []*streamClient
	for range 2 {
		sc := dialStream(t, "tcp", tcp)
		sc.send(t, []byte(`{"jsonrpc":"2.0","method":"hold","id":1}`))
		select {
		case <-entered:
		case <-time.After(5 * time.Second):
			t.Fatal("hold never ran")
		}
		gone = append(gone, sc)
	}
	if st := e.Stats(); st.InFlight != 2 {
		t.Fatalf("in flight %d, want 2", st.InFlight)
	}
	// Busy: three more on a stream, two over HTTP.
	sc := dialStream(t, "tcp", tcp)
	for i := range 3 {
		sc.send(t, []byte(`{"jsonrpc":"2.0","method":"sleep","params":[1],"id":`+strconv.Itoa(i)+`}`))
		if l := sc.line(t); !strings.Contains(string(l), "-32000") {
			t.Fatalf("want busy: %s", l)
		}
	}
	for i := range 2 {
		got := rawHTTP(t, tcp, post(`{"jsonrpc":"2.0","method":"sleep","params":[1],"id":`+strconv.Itoa(i)+`}`, ""), 1)
		if len(got) != 1 || !strings.Contains(bodyOf(got[0]), "-32000") {
			t.Fatalf("want busy over HTTP: %v", got)
		}
	}
	for _, g := range gone {
		g.c.Close()
	}
	time.Sleep(20 * time.Millisecond)
	if st := e.Stats(); st.InFlight != 2 || st.Stream.Busy != 3 || st.HTTP.Busy != 2 {
		t.Errorf("with the holders gone: in flight %d (want 2: still running), busy stream %d http %d", st.InFlight, st.Stream.Busy, st.HTTP.Busy)
	}
	free()
	waitStats(t, e, "in flight back to 0, the holders' connections closed", func(s engine.Stats) bool { return s.InFlight == 0 && s.Conns == 1 })
	sc.send(t, []byte(`{"jsonrpc":"2.0","method":"sleep","params":[1],"id":9}`))
	if l := sc.line(t); !strings.Contains(string(l), `"result":1`) {
		t.Fatalf("after release: %s", l)
	}
	waitStats(t, e, "in flight back to 0", func(s engine.Stats) bool { return s.InFlight == 0 })
}

// TestStats_pushesSentOrDropped: every server message queued for a
// client that never reads is either sent (written to its connection)
// or dropped — refused at the full queue, or left queued at the close —
// and the client is closed once, for its push queue.
func TestStats_pushesSentOrDropped(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	payload := strings.Repeat("x", 500)
	var queued, refused, other atomic.Int64
	done := make(chan struct{})
	handler.RegisterSubscription(tab, "flood", func(_ context.Context, _ handler.Raw, sub *handler.Subscription) error {
		go func() {
			defer close(done)
			for {
				switch err := sub.Notify(payload); {
				case err == nil:
					queued.Add(1)
					time.Sleep(20 * time.Microsecond) // let the loop write some
					continue
				case errors.Is(err, handler.ErrSlowConsumer):
					refused.Add(1)
				default:
					other.Add(1)
				}
				return
			}
		}()
		return nil
	}, handler.Inline())
	e, tcp, _ := startEngine(t, tab, engine.WithMaxPendingOutput(16<<10), engine.WithMaxPushQueue(16<<10))
	slow, err := smallReceiveBuffer().Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	if _, err := slow.Write([]byte(`{"jsonrpc":"2.0","method":"flood_subscribe","id":1}` + "\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the flood never stopped")
	}
	if !waitClosed(slow, 10*time.Second) {
		t.Fatal("the slow client was not disconnected")
	}
	st := waitStats(t, e, "closed", func(s engine.Stats) bool { return s.Conns == 0 })
	if st.PushesSent+st.PushesDropped != uint64(queued.Load()+refused.Load()) {
		t.Errorf("sent %d + dropped %d != queued %d + refused %d (other errors %d)",
			st.PushesSent, st.PushesDropped, queued.Load(), refused.Load(), other.Load())
	}
	if refused.Load() != 1 || st.PushesDropped < 1 || st.PushesSent == 0 {
		t.Errorf("refused %d, dropped %d, sent %d", refused.Load(), st.PushesDropped, st.PushesSent)
	}
	if st.Closed.PushQueue != 1 || closedTotal(st.Closed) != 1 {
		t.Errorf("closed %+v, want one, for the push queue", st.Closed)
	}
}

// TestStats_pushesSentToReader: a client that reads gets every
// notification counted as sent, none dropped.
func TestStats_pushesSentToReader(t *testing.T) {
	e, tcp, _ := startEngine(t, nil)
	ws := dialWS(t, tcp, nil)
	wsCall(t, ws, `{"jsonrpc":"2.0","method":"clock_subscribe","params":[1],"id":1}`)
	for range 20 {
		wsRead(t, ws)
	}
	wsCall(t, ws, `{"jsonrpc":"2.0","method":"clock_unsubscribe","params":["0x1"],"id":2}`)
	st := e.Stats()
	if st.PushesSent < 20 || st.PushesDropped != 0 || st.Upgrades != 1 || st.WebSocket.Conns != 1 || st.HTTP.Conns != 0 {
		t.Errorf("%+v", st)
	}
}

// TestStats_tooLarge: each transport's refusal of a message over
// MaxMessageSize counts once, and a head over MaxHeaderSize counts
// apart.
func TestStats_tooLarge(t *testing.T) {
	e, tcp, _ := startEngine(t, nil, engine.WithMaxMessageSize(1024), engine.WithMaxHeaderSize(1024))
	big := `{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat("x", 2000) + `"],"id":1}`
	if got := rawHTTP(t, tcp, post(big, ""), 1); len(got) != 1 || got[0].StatusCode != 413 {
		t.Fatalf("HTTP Content-Length: %v", got)
	}
	chunked := "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
		strconv.FormatInt(int64(len(big)), 16) + "\r\n" + big + "\r\n0\r\n\r\n"
	if got := rawHTTP(t, tcp, chunked, 1); len(got) != 1 || got[0].StatusCode != 413 {
		t.Fatalf("HTTP chunked: %v", got)
	}
	if got := rawHTTP(t, tcp, "GET / HTTP/1.1\r\nHost: x\r\nX-Big: "+strings.Repeat("y", 2000)+"\r\n\r\n", 1); len(got) != 1 || got[0].StatusCode != 431 {
		t.Fatalf("HTTP head: %v", got)
	}
	sc := dialStream(t, "tcp", tcp)
	sc.send(t, []byte(big))
	if l := sc.line(t); !strings.Contains(string(l), "-32600") {
		t.Fatalf("stream: %s", l)
	}
	c, r := rawWS(t, tcp)
	_, _ = c.Write(frame(true, 1, []byte(big), true))
	expectClose(t, r, c, 1009)
	st := waitStats(t, e, "all closed", func(s engine.Stats) bool { return s.Conns == 0 })
	if st.TooLarge != 4 || st.HeadTooLarge != 1 {
		t.Errorf("too large %d (want 4), head too large %d (want 1)", st.TooLarge, st.HeadTooLarge)
	}
	if closedTotal(st.Closed) != 5 || st.Closed.Stopping+st.Closed.Idle != 0 {
		t.Errorf("closed %+v, want 5", st.Closed)
	}
}

// TestStats_closeReasonOfA413: a body over MaxMessageSize closes the
// connection for the same reason whether it came with a Content-Length
// or chunked.
//
// The Content-Length 413 (answerHead) counted as closed by the client, the chunked one (refuse) for protocol.
func TestStats_closeReasonOfA413(t *testing.T) {
	e, tcp, _ := startEngine(t, nil, engine.WithMaxMessageSize(1024))
	big := `{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat("x", 2000) + `"],"id":1}`
	reasonOf := func(req string) engine.CloseCounts {
		before := e.Stats().Closed
		if got := rawHTTP(t, tcp, req, 1); len(got) != 1 || got[0].StatusCode != 413 {
			t.Fatalf("want 413: %v", got)
		}
		after := waitStats(t, e, "closed", func(s engine.Stats) bool { return closedTotal(s.Closed) == closedTotal(before)+1 }).Closed
		return engine.CloseCounts{Client: after.Client - before.Client, Protocol: after.Protocol - before.Protocol}
	}
	byLength := reasonOf(post(big, ""))
	chunked := reasonOf("POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk(big) + "0\r\n\r\n")
	if byLength != chunked {
		t.Errorf("closed with a Content-Length %+v, chunked %+v: one limit, two reasons", byLength, chunked)
	}
	if byLength.Client != 0 {
		t.Errorf("a 413 counted as closed by the client: %+v", byLength)
	}
}

// TestStats_webSocketCloseFrameCountsAsClient: a client that ends its
// WebSocket with a normal close frame closed it (CloseCounts.Client: "a
// WebSocket close frame"), not broke the protocol.
//
// wsCodec.close noted closeProtocol for every close frame, the client's own 1000 included.
func TestStats_webSocketCloseFrameCountsAsClient(t *testing.T) {
	e, tcp, _ := startEngine(t, nil)
	for _, payload := range [][]byte{{0x03, 0xe8}, nil, {0x03, 0xe9, 'b', 'y', 'e'}} {
		c, r := rawWS(t, tcp)
		_, _ = c.Write(frame(true, 8, payload, true))
		expectClose(t, r, c, map[int]uint16{0: 1000, 2: 1000, 5: 1001}[len(payload)])
	}
	st := waitStats(t, e, "closed", func(s engine.Stats) bool { return s.Conns == 0 })
	if st.Closed.Client != 3 || st.Closed.Protocol != 0 {
		t.Errorf("three WebSockets closed by their clients' close frames: %+v", st.Closed)
	}
}

// TestStats_closedWhenStopping: connections the engine closes as it
// stops count as closed for stopping, once each.
func TestStats_closedWhenStopping(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	demo.Register(tab)
	e := engine.New(tab, engine.WithAddrs("tcp://127.0.0.1:0"), engine.WithLogger(quiet()))
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	tcp := e.Addrs()[0].String()
	var conns []*streamClient
	for range 3 {
		sc := dialStream(t, "tcp", tcp)
		sc.send(t, []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`))
		sc.line(t)
		conns = append(conns, sc)
	}
	ws := dialWS(t, tcp, nil)
	wsCall(t, ws, `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	st := e.Stats()
	if st.Conns != 0 || st.Closed.Stopping != 4 || closedTotal(st.Closed) != 4 || st.Accepted != 4 {
		t.Errorf("after Stop: conns %d, closed %+v, accepted %d", st.Conns, st.Closed, st.Accepted)
	}
}

// TestStats_closedForWriteTimeout: a client that reads none of its
// replies for WriteTimeout is closed for it, counted once as a slow
// consumer.
// (On a loaded machine the wait once ended before the connection was
// even accepted — no connection open — so it waits for the accept too.)
func TestStats_closedForWriteTimeout(t *testing.T) {
	e, tcp, _ := startEngine(t, bigReplies(), engine.WithTimeouts(0, 0, 200*time.Millisecond), engine.WithMaxMessageSize(8<<20))
	c, err := smallReceiveBuffer().Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	big := `{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat("x", 4<<20) + `"],"id":1}` + "\n"
	go func() { _, _ = io.WriteString(c, big) }()
	st := waitStats(t, e, "closed for the write timeout", func(s engine.Stats) bool { return s.Accepted == 1 && s.Conns == 0 })
	if st.Closed.WriteTimeout != 1 || closedTotal(st.Closed) != 1 {
		t.Errorf("closed %+v, want one, for the write timeout", st.Closed)
	}
}
