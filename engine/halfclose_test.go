package engine_test

// Tests of half-closed connections (halfclose.go).

import (
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine"
)

// A client that half-closes after its requests (nc -N, socat, printf |
// ...) gets every reply: to the ones on workers when the EOF came, and to
// the ones still buffered behind them (MaxInFlight; HTTP's one request on
// a worker at a time), in order for HTTP.
//
// A client that half-closed lost the replies to its work in flight: gnet closes a connection at EOF.
func TestHalfClose_repliesStillDelivered(t *testing.T) {
	sleep := func(id int) string {
		return `{"jsonrpc":"2.0","method":"sleep","params":[30],"id":` + strconv.Itoa(id) + `}`
	}
	add := func(id int) string {
		return `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":` + strconv.Itoa(id) + `}`
	}
	exchange := func(t *testing.T, addr, req string) string {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, _ = io.WriteString(c, req)
		_ = c.(*net.TCPConn).CloseWrite()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, err := io.ReadAll(c)
		if err != nil {
			t.Fatalf("read: %v (got %q)", err, got)
		}
		return string(got)
	}
	t.Run("stream", func(t *testing.T) {
		e, tcp, _ := startEngine(t, nil, engine.WithMaxInFlight(1))
		got := exchange(t, tcp, sleep(1)+"\n"+sleep(2)+"\n"+add(3)+"\n"+sleep(4)+"\n"+`{"jsonrpc":"2.0","method":"sleep","params":[1]}`+"\n"+`{"incomplete":`)
		for _, id := range []string{`"id":1}`, `"id":2}`, `"result":3,"id":3}`, `"id":4}`} {
			if !strings.Contains(got, id) {
				t.Errorf("no reply with %s in %q", id, got)
			}
		}
		if n := strings.Count(got, "\n"); n != 4 {
			t.Errorf("%d replies, want 4 (the notification gets none): %q", n, got)
		}
		waitConns(t, e, 0)
	})
	t.Run("http", func(t *testing.T) {
		e, tcp, _ := startEngine(t, nil)
		post := func(body string) string {
			return "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
		}
		got := exchange(t, tcp, post(sleep(1))+post(add(2))+post(sleep(3)))
		i1, i2, i3 := strings.Index(got, `"id":1}`), strings.Index(got, `"result":3,"id":2}`), strings.Index(got, `"id":3}`)
		if i1 < 0 || i2 < i1 || i3 < i2 || strings.Count(got, "HTTP/1.1 200") != 3 {
			t.Errorf("want 3 replies in order, got %q", got)
		}
		waitConns(t, e, 0)
	})
}
