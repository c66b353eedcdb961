package engine_test

// Tests of the connection core (conn.go) over loopback sockets: what
// every protocol shares — partial input left buffered, closing only after
// the output is flushed, large messages, many connections at once, and
// messages that get no reply.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine"
)

// TestConn_partialNotDiscarded: a complete message followed by the first
// half of the next one in one write; the half must stay buffered
// (gnet's Discard(0) would drop everything).
//
// One of gnet's traps listed in ../shared/research/gnet-sonic.md.
func TestConn_partialNotDiscarded(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	s := dialStream(t, "tcp", tcp)
	second := `{"jsonrpc":"2.0","method":"add","params":[3,4],"id":2}`
	_, _ = s.c.Write([]byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}` + "\n" + second[:20]))
	if got := string(s.line(t)); !strings.Contains(got, `"id":1`) {
		t.Fatal(got)
	}
	time.Sleep(20 * time.Millisecond)
	_, _ = s.c.Write([]byte(second[20:] + "\n"))
	if got := string(s.line(t)); got != `{"jsonrpc":"2.0","result":7,"id":2}`+"\n" {
		t.Fatal(got)
	}
}

// TestConn_closeAfterFlush: closing never truncates a pending reply
// (returning gnet.Close with output pending does).
//
// One of gnet's traps listed in ../shared/research/gnet-sonic.md.
func TestConn_closeAfterFlush(t *testing.T) {
	_, tcp, _ := startEngine(t, bigReplies(), engine.WithMaxMessageSize(16<<20))
	big := strings.Repeat("y", 8<<20)
	msg := `{"jsonrpc":"2.0","method":"echo","params":["` + big + `"],"id":1}`
	want := `{"jsonrpc":"2.0","result":["` + big + `"],"id":1}`
	resps := rawHTTP(t, tcp, post(msg, "Connection: close\r\n"), 1)
	if len(resps) != 1 || bodyOf(resps[0]) != want {
		t.Fatalf("HTTP with Connection: close: %d responses", len(resps))
	}
	// On a stream: a big reply, then bad JSON: the reply arrives whole,
	// then the -32700, then the close.
	c, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() { _, _ = c.Write([]byte(msg + "\n}\n")) }()
	time.Sleep(300 * time.Millisecond) // let the server write and close before we read
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	all, _ := io.ReadAll(c)
	if !strings.HasPrefix(string(all), want+"\n") || !strings.Contains(string(all[len(want):]), `"code":-32700`) {
		t.Fatalf("stream: %d bytes received, want %d and an error", len(all), len(want))
	}
}

// TestConn_largeMessage sends a 4 MiB message over HTTP and over a stream.
func TestConn_largeMessage(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	big := strings.Repeat("x", 4<<20)
	msg := `{"jsonrpc":"2.0","method":"echo","params":["` + big + `"],"id":1}`
	want := `{"jsonrpc":"2.0","result":["` + big + `"],"id":1}`
	resps := rawHTTP(t, tcp, post(msg, ""), 1)
	if len(resps) != 1 || bodyOf(resps[0]) != want {
		t.Fatalf("HTTP: %d responses", len(resps))
	}
	s := dialStream(t, "tcp", tcp)
	s.send(t, []byte(msg))
	if got := s.line(t); string(got) != want+"\n" {
		t.Fatalf("stream: %d bytes", len(got))
	}
}

// TestConn_manyConnections: 1,000 concurrent connections, half HTTP, half
// stream, each with a few requests.
func TestConn_manyConnections(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for i := range 1000 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", tcp)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(30 * time.Second))
			r := bufio.NewReader(c)
			for k := range 3 {
				msg := fmt.Sprintf(`{"jsonrpc":"2.0","method":"add","params":[%d,%d],"id":%d}`, i, k, k)
				want := fmt.Sprintf(`{"jsonrpc":"2.0","result":%d,"id":%d}`, i+k, k)
				if i%2 == 0 {
					io.WriteString(c, msg+"\n")
					line, err := r.ReadString('\n')
					if err != nil || line != want+"\n" {
						errs <- fmt.Errorf("stream %d: %q %v", i, line, err)
						return
					}
					continue
				}
				io.WriteString(c, post(msg, ""))
				resp, err := http.ReadResponse(r, nil)
				if err != nil || bodyOf(resp) != want {
					errs <- fmt.Errorf("http %d: %v", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestConn_allNotificationBatch: 204 over HTTP, nothing over a stream.
func TestConn_allNotificationBatch(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	batch := `[{"jsonrpc":"2.0","method":"notify_sum","params":[1,2,4]},{"jsonrpc":"2.0","method":"notify_hello","params":[7]}]`
	resps := rawHTTP(t, tcp, post(batch, ""), 1)
	if len(resps) != 1 || resps[0].StatusCode != 204 || bodyOf(resps[0]) != "" {
		t.Fatalf("HTTP: %+v", resps)
	}
	s := dialStream(t, "tcp", tcp)
	s.send(t, []byte(batch))
	s.send(t, []byte(sentinel))
	if got := s.line(t); !bytes.Contains(got, []byte("sentinel")) {
		t.Fatalf("stream: %s", got)
	}
}
