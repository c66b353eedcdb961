package engine_test

// Tests of the order of what methods send through their directConn
// (push.go, work.go collect, streamed.go endStream): before their own
// replies, inline or not, held behind a streamed reply or not; ordered
// pushes still after theirs; a flood bounded; and of how the Accept of
// real clients is taken (sse.go acceptOf).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
)

// wsAndStream returns a send and a read over a WebSocket and a stream
// connection to addr.
func wsAndStream(t *testing.T, addr string) map[string]struct {
	send func(string)
	read func() []byte
} {
	ws := dialWS(t, addr, nil)
	st := dialStream(t, "tcp", addr)
	return map[string]struct {
		send func(string)
		read func() []byte
	}{
		"websocket": {
			func(m string) {
				if err := ws.WriteMessage(websocket.TextMessage, []byte(m)); err != nil {
					t.Fatal(err)
				}
			},
			func() []byte { return wsRead(t, ws) },
		},
		"stream": {func(m string) { st.send(t, []byte(m)) }, func() []byte { return bytes.TrimSpace(st.line(t)) }},
	}
}

// TestPush_inlineMethodDirectMessagesPrecedeItsReply: what an Inline
// method sends through its context's DirectConn reaches the client
// before its reply.
//
// It came after: the codecs wrote the inline reply, then the pushes (found in a review).
func TestPush_inlineMethodDirectMessagesPrecedeItsReply(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	handler.Register(tab, "inline_progress", func(ctx context.Context, _ []int) (string, error) {
		c := handler.ConnFrom(ctx)
		if _, ok := c.(handler.DirectConn); !ok {
			return "", errors.New("no DirectConn")
		}
		if err := handler.Notify(c, "progress", map[string]int{"n": 1}); err != nil {
			return "", err
		}
		return "done", nil
	}, handler.Inline())
	_, tcp, _ := startEngine(t, tab)
	for name, tr := range wsAndStream(t, tcp) {
		tr.send(`{"jsonrpc":"2.0","method":"inline_progress","params":[],"id":1}`)
		first, second := decodeNote(t, tr.read()), decodeNote(t, tr.read())
		if first.Method != "progress" || string(second.ID) != "1" {
			t.Errorf("%s: got %+v then %+v, want the progress notification, then the reply", name, first, second)
		}
	}
}

// TestPush_directMessagesPrecedeTheirReplyHeldBehindAStreamedReply: a
// blocking method B that sends through its DirectConn and returns while
// another call's streamed reply A is open: B's reply, held behind A,
// follows B's message when A ends.
//
// It came first: endStream wrote the held replies before the pushes (found in a review).
func TestPush_directMessagesPrecedeTheirReplyHeldBehindAStreamedReply(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	var (
		mu    sync.Mutex
		bsent chan struct{}
	)
	var e *engine.Engine
	handler.RegisterStream(tab, "longstream", func(ctx context.Context, _ []int) iter.Seq2[string, error] {
		return func(yield func(string, error) bool) {
			big := strings.Repeat("x", 1<<10)
			for range 40 { // 40 KiB: past the first 32 KiB part
				if !yield(big, nil) {
					return
				}
			}
			mu.Lock()
			wait := bsent
			mu.Unlock()
			<-wait                       // B has sent its message and is returning
			for e.Stats().InFlight > 1 { // B's Run is past its method: only this one is in flight
				runtime.Gosched()
			}
			yield("end", nil)
		}
	})
	handler.Register(tab, "b_progress", func(ctx context.Context, _ []int) (string, error) {
		if err := handler.Notify(handler.ConnFrom(ctx), "b_progress", map[string]int{"n": 1}); err != nil {
			return "", err
		}
		mu.Lock()
		close(bsent)
		mu.Unlock()
		return "b", nil
	})
	e, tcp, _ := startEngine(t, tab)
	bad := 0
	const rounds = 30
	for round := range rounds {
		mu.Lock()
		bsent = make(chan struct{})
		mu.Unlock()
		s := dialStream(t, "tcp", tcp)
		s.send(t, []byte(`{"jsonrpc":"2.0","method":"longstream","params":[],"id":"a"}`))
		// Its first part is out: the streamed reply is open (c.strm).
		if _, err := s.r.Peek(1); err != nil {
			t.Fatal(err)
		}
		s.send(t, []byte(`{"jsonrpc":"2.0","method":"b_progress","params":[],"id":"b"}`))
		if l := s.line(t); !bytes.Contains(l, []byte(`"id":"a"`)) {
			t.Fatalf("round %d: want the streamed reply first, got %.80q", round, l)
		}
		first, second := decodeNote(t, s.line(t)), decodeNote(t, s.line(t))
		if first.Method != "b_progress" || string(second.ID) != `"b"` {
			bad++
			if bad == 1 {
				t.Errorf("round %d: got %+v then %+v, want B's message, then B's reply", round, first, second)
			}
		}
		s.c.Close()
	}
	if bad > 0 {
		t.Errorf("B's message followed its reply in %d of %d rounds", bad, rounds)
	}
}

// TestPush_subscriptionNotificationsKeepTheirOrderBehindDirectPushes:
// a subscription's notifications (the connection's Conn, ordered),
// held by a call still running, keep their order and wait for that
// call's reply, while another call's direct messages, queued between
// them, pass them and precede their own reply; an ordered message
// queued after the last direct one was taken off the queue's end (the
// tail moved back) is not lost.
func TestPush_subscriptionNotificationsKeepTheirOrderBehindDirectPushes(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	var (
		mu      sync.Mutex
		conns   = map[string]handler.Conn{}
		started = make(chan struct{}, 1)
		release = make(chan struct{})
		stop    = make(chan struct{})
		step    = make(chan struct{})
		stepped = make(chan struct{})
	)
	handler.Register(tab, "grab", func(ctx context.Context, p [1]string) (string, error) {
		mu.Lock()
		conns[p[0]] = handler.Connection(handler.ConnFrom(ctx))
		mu.Unlock()
		return "ok", nil
	})
	handler.Register(tab, "hold", func(ctx context.Context, _ []int) (string, error) {
		mu.Lock()
		r := release
		mu.Unlock()
		started <- struct{}{}
		select {
		case <-r:
		case <-stop:
		}
		return "held", nil
	})
	handler.Register(tab, "direct", func(ctx context.Context, _ []int) (string, error) {
		c := handler.ConnFrom(ctx)
		for i := 1; i <= 3; i++ {
			select {
			case <-step:
			case <-stop:
				return "", nil
			}
			if err := handler.Notify(c, "d", map[string]int{"result": i}); err != nil {
				return "", err
			}
			stepped <- struct{}{}
		}
		return "direct", nil
	})
	_, tcp, _ := startEngine(t, tab)
	t.Cleanup(func() { close(stop) }) // before the engine stops
	for name, tr := range wsAndStream(t, tcp) {
		for round := range 20 {
			where := fmt.Sprintf("%s round %d", name, round)
			tr.send(`{"jsonrpc":"2.0","method":"grab","params":["` + name + `"],"id":"g"}`)
			if r := decodeNote(t, tr.read()); string(r.ID) != `"g"` {
				t.Fatalf("%s: %+v", where, r)
			}
			mu.Lock()
			sub := conns[name]
			mu.Unlock()
			ordered := func(i int) {
				if err := handler.Notify(sub, "n", map[string]int{"result": i}); err != nil {
					t.Fatalf("%s: %v", where, err)
				}
			}
			mu.Lock()
			release = make(chan struct{})
			mu.Unlock()
			tr.send(`{"jsonrpc":"2.0","method":"hold","params":[],"id":"h"}`)
			<-started
			ordered(1) // held by "hold"
			ordered(2)
			tr.send(`{"jsonrpc":"2.0","method":"direct","params":[],"id":"d"}`)
			// The queue: n1 n2 d1 n3 d2 n4 d3 (as the loop has not taken the d's yet).
			for i := 3; i <= 5; i++ {
				step <- struct{}{}
				<-stepped
				if i < 5 {
					ordered(i)
				}
			}
			var got []string
			for range 4 { // d1 d2 d3, then the direct call's reply
				n := decodeNote(t, tr.read())
				got = append(got, n.Method+string(n.ID)+string(n.Params.Result)+string(n.Result))
			}
			ordered(5) // after the last direct one left the queue's end
			mu.Lock()
			close(release)
			mu.Unlock()
			for range 6 { // hold's reply, then n1..n5
				n := decodeNote(t, tr.read())
				got = append(got, n.Method+string(n.ID)+string(n.Params.Result)+string(n.Result))
			}
			want := []string{"d1", "d2", "d3", `"d""direct"`, `"h""held"`, "n1", "n2", "n3", "n4", "n5"}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%s: got %q, want the direct messages, the direct reply, the held reply, then n1..n5", where, got)
				}
			}
		}
	}
}

// TestPush_directFloodToAClientThatNeverReadsIsDisconnected: a method
// that floods through its DirectConn a client that never reads (direct
// messages ignore MaxPendingOutput) is refused with ErrSlowConsumer
// once the connection holds MaxPushQueue, and the client is
// disconnected; the server's memory stays bounded.
func TestPush_directFloodToAClientThatNeverReadsIsDisconnected(t *testing.T) {
	const bound = 256 << 10
	tab := handler.NewTable(handler.WithLogger(quiet()))
	var sent atomic.Int64
	result := make(chan error, 1)
	handler.Register(tab, "flood", func(ctx context.Context, _ []int) (string, error) {
		c := handler.ConnFrom(ctx)
		msg := []byte(`{"jsonrpc":"2.0","method":"f","params":"` + strings.Repeat("x", 1000) + `"}`)
		for {
			if err := c.Send(msg); err != nil {
				result <- err
				return "", err
			}
			if sent.Add(1) > 1_000_000 { // 1 GB: not bounded
				result <- nil
				return "", nil
			}
		}
	})
	e, tcp, _ := startEngine(t, tab, engine.WithMaxPushQueue(bound), engine.WithMaxPendingOutput(8<<10))
	c, err := smallReceiveBuffer().Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(`{"jsonrpc":"2.0","method":"flood","params":[],"id":1}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if err := <-result; !errors.Is(err, handler.ErrSlowConsumer) && !errors.Is(err, handler.ErrConnClosed) {
		t.Fatalf("the flood ended with %v after %d messages, want ErrSlowConsumer", err, sent.Load())
	}
	if !waitClosed(c, 10*time.Second) {
		t.Fatal("the client that never reads was not disconnected")
	}
	if st := e.Stats(); st.ConnOutputPeak > bound+2<<10 {
		t.Errorf("a connection held %d bytes, over the bound %d", st.ConnOutputPeak, bound)
	}
	t.Logf("%d messages taken before the refusal; %+v", sent.Load(), e.Stats().Closed)
}

// acceptStatus posts an add call with the Accept value given and
// returns the response's status and body.
func acceptStatus(t *testing.T, addr, accept string) (int, string) {
	t.Helper()
	resps := rawHTTP(t, addr, post(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, "Accept: "+accept+"\r\n"), 1)
	if len(resps) != 1 {
		t.Fatalf("%q: no response", accept)
	}
	return resps[0].StatusCode, bodyOf(resps[0])
}

// TestAccept_javaHttpURLConnectionDefaultIsServed: Java's
// HttpURLConnection (JDK 8 to 17, under jsonrpc4j and many JSON-RPC
// clients on the JVM) sends, when the caller sets no Accept,
// "text/html, image/gif, image/jpeg, *; q=.2, */*; q=.2": not a list of
// media ranges ("*" alone, "q=.2"), but a real client that takes JSON,
// served with and without event streams.
//
// It was refused 400 as malformed (found in a review).
func TestAccept_javaHttpURLConnectionDefaultIsServed(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	for _, sse := range []bool{false, true} {
		_, addr := tcp, tcp
		if sse {
			_, addr, _ = startEngine(t, nil, engine.WithSSE(true))
		}
		status, body := acceptStatus(t, addr, "text/html, image/gif, image/jpeg, *; q=.2, */*; q=.2")
		if status != http.StatusOK || body != `{"jsonrpc":"2.0","result":3,"id":1}` {
			t.Errorf("sse=%v: %d %s, want 200 and the reply", sse, status, body)
		}
	}
}

// TestAccept_realClientsAreServed: the Accept values of browsers, curl,
// axios, jQuery, HTTPie, geth, the MCP SDKs and odd but valid lists are
// answered with JSON, with or without event streams.
func TestAccept_realClientsAreServed(t *testing.T) {
	_, plain, _ := startEngine(t, nil)
	_, withSSE, _ := startEngine(t, nil, engine.WithSSE(true))
	for _, accept := range []string{
		"*/*",
		"application/json",
		"application/json;charset=utf-8",
		"application/json; charset=\"UTF-8\"",
		"Application/JSON",
		"application/json, text/plain, */*",
		"application/json, text/javascript, */*; q=0.01",
		"application/json, */*;q=0.5",
		"text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7",
		"application/json, text/event-stream",
		"application/json-rpc",
		"application/*",
		"*/*;q=0.1",
		"application/json ,, ",
		"",
	} {
		for _, addr := range []string{plain, withSSE} {
			status, body := acceptStatus(t, addr, accept)
			if status != http.StatusOK || body != `{"jsonrpc":"2.0","result":3,"id":1}` {
				t.Errorf("%q (sse %v): %d %s", accept, addr == withSSE, status, body)
			}
		}
	}
	for accept, want := range map[string]int{
		"text/html":            http.StatusNotAcceptable,
		"application/json;q=0": http.StatusNotAcceptable,
		"application/json;q=2": http.StatusBadRequest,
		"json":                 http.StatusBadRequest,
	} {
		if status, body := acceptStatus(t, plain, accept); status != want {
			t.Errorf("%q: %d %s, want %d", accept, status, body, want)
		}
	}
}

// TestAccept_specificZeroWeightOverridesWildcard: the most specific
// range has precedence (RFC 9110 12.5.1): "application/json;q=0, */*"
// refuses JSON as "application/json;q=0" alone does.
//
// The wildcard allowed it (found in a review).
func TestAccept_specificZeroWeightOverridesWildcard(t *testing.T) {
	_, addr, _ := startEngine(t, nil)
	alone, _ := acceptStatus(t, addr, "application/json;q=0")
	for _, accept := range []string{"application/json;q=0, */*", "application/json;q=0, application/*;q=0.5"} {
		if status, body := acceptStatus(t, addr, accept); status != alone {
			t.Errorf("%q: %d %s, want %d as for application/json;q=0 alone", accept, status, body, alone)
		}
	}
}
