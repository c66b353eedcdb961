package bench

// Helpers of the internal tests: loopback fake servers (each stops when
// its test ends), the replies they write, and a Run that fails the test
// on a config error.

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeServer listens on loopback until the test ends, runs each
// connection with conn (closing it after), and returns the address.
func fakeServer(t *testing.T, conn func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				conn(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// requestIDs returns the ids the tool put in a request line, in order.
func requestIDs(line string) []string {
	var out []string
	for {
		_, after, ok := strings.Cut(line, `"id":`)
		if !ok {
			return out
		}
		i := 0
		for i < len(after) && after[i] >= '0' && after[i] <= '9' {
			i++
		}
		out = append(out, after[:i])
		line = after[i:]
	}
}

func mustRun(t *testing.T, cfg Config) *Result {
	t.Helper()
	if cfg.Warmup == 0 {
		cfg.Warmup = -1
	}
	if cfg.Conns == 0 {
		cfg.Conns = 2
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// netHTTPServer: net/http server; reply gets the request body and returns
// the reply body (status 200, application/json).
func netHTTPServer(t *testing.T, reply func(body string) string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, reply(string(b)))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/"
}

// rawHTTPServer: reads HTTP requests (Content-Length bodies) and writes what
// respond returns, in pieces split at every `|` (with a short pause), so
// that the tool sees replies cut at odd places.
func rawHTTPServer(t *testing.T, respond func(body string, n int) string) string {
	return "http://" + fakeServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for n := 0; ; n++ {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			b := make([]byte, req.ContentLength)
			if _, err := io.ReadFull(req.Body, b); err != nil {
				return
			}
			out := respond(string(b), n)
			if out == "CLOSE" {
				return
			}
			for _, p := range strings.Split(out, "|") {
				if _, err := c.Write([]byte(p)); err != nil {
					return
				}
				time.Sleep(time.Millisecond)
			}
		}
	}) + "/"
}

func okReply(id string) string { return `{"jsonrpc":"2.0","result":3,"id":` + id + `}` }

func httpReply(body string) string {
	return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

// stallingServer answers every request right until the time at, then reads
// and never answers again.
func stallingServer(t *testing.T, at *atomic.Int64) string {
	return NewLineServer(t, func(line string, n int) string {
		if time.Now().UnixNano() >= at.Load() {
			return ""
		}
		return okReply(requestIDs(line)[0]) + "\n"
	})
}
