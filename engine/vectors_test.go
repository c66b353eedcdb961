package engine_test

// The spec vectors (../testdata) over every transport: a stream over TCP
// and over a Unix socket, HTTP, and WebSocket.

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
	"github.com/jetrpc/jetrpc/handler/demo"
)

func vectors(t testing.TB) []demo.Vector {
	vs, err := demo.LoadVectors("../testdata")
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

// TestVectors_stream runs every spec vector over TCP and over the Unix
// socket. A vector that must get no reply is followed by a sentinel
// request: its reply must be the next line.
func TestVectors_stream(t *testing.T) {
	_, tcp, unix := startEngine(t, nil)
	for _, nw := range []struct{ network, addr string }{{"tcp", tcp}, {"unix", unix}} {
		for _, v := range vectors(t) {
			t.Run(nw.network+"/"+v.File+"/"+v.Name, func(t *testing.T) {
				switch {
				case len(bytes.TrimSpace(v.Request)) == 0:
					t.Skip("an empty message does not exist on a stream: whitespace separates messages")
				case v.Name == "trailing-garbage" || v.Name == "two-values":
					t.Skip("on a stream several values are several messages (TestStream_sequence)")
				}
				s := dialStream(t, nw.network, nw.addr)
				// A first request fixes the protocol as a stream (a first
				// byte that is a letter means HTTP).
				s.send(t, []byte(sentinel))
				if got := s.line(t); !bytes.Contains(got, []byte(`"sentinel"`)) {
					t.Fatalf("sentinel: %s", got)
				}
				s.send(t, v.Request)
				if v.Response == nil {
					s.send(t, []byte(sentinel))
					if got := s.line(t); !bytes.Contains(got, []byte(`"sentinel"`)) {
						t.Fatalf("want no reply, got %s", got)
					}
					return
				}
				got := s.line(t)
				if err := demo.SameReply(got, v.Response); err != nil {
					t.Fatalf("%s\n%v", v.Note, err)
				}
			})
		}
	}
}

// TestVectors_HTTP runs every spec vector over HTTP with net/http's
// client.
func TestVectors_HTTP(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	client := &http.Client{Timeout: 10 * time.Second}
	for _, v := range vectors(t) {
		t.Run(v.File+"/"+v.Name, func(t *testing.T) {
			resp, err := client.Post("http://"+tcp+"/", "application/json", bytes.NewReader(v.Request))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if v.Response == nil {
				if resp.StatusCode != http.StatusNoContent || len(body) != 0 {
					t.Fatalf("want 204 and no body, got %d %q", resp.StatusCode, body)
				}
				return
			}
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("Date") == "" {
				t.Fatalf("status %d headers %v", resp.StatusCode, resp.Header)
			}
			if err := demo.SameReply(body, v.Response); err != nil {
				t.Fatalf("%s\n%v", v.Note, err)
			}
		})
	}
}

// TestVectors_WS runs every spec vector over WebSocket; a vector that
// must get no reply is followed by a sentinel whose reply must come next.
func TestVectors_WS(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	c := dialWS(t, tcp, nil)
	for _, v := range vectors(t) {
		t.Run(v.File+"/"+v.Name, func(t *testing.T) {
			// A text message must be UTF-8 (TestWS_protocolErrors): the
			// vectors that are not go as binary messages.
			typ := websocket.TextMessage
			if !utf8.Valid(v.Request) {
				typ = websocket.BinaryMessage
			}
			if err := c.WriteMessage(typ, v.Request); err != nil {
				t.Fatal(err)
			}
			if v.Response == nil {
				if got := wsCall(t, c, sentinel); !bytes.Contains(got, []byte(`"sentinel"`)) {
					t.Fatalf("want no reply, got %s", got)
				}
				return
			}
			if err := demo.SameReply(wsRead(t, c), v.Response); err != nil {
				t.Fatalf("%s\n%v", v.Note, err)
			}
		})
	}
}
