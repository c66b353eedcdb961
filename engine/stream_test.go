package engine_test

// Tests of the stream codec (stream.go) and of sniffing (conn.go) over
// loopback sockets.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/parser"
)

// TestStream_bareLiteralsGetJSONRPC: a stream whose first message is a
// bare JSON literal gets a JSON-RPC answer (-32600, id null), as every
// stream input does. HTTP is sniffed only from an upper-case first byte;
// true, false and null used to be taken for HTTP and answered 400.
func TestStream_bareLiteralsGetJSONRPC(t *testing.T) {
	_, tcp, unix := startEngine(t, nil)
	for _, nw := range []struct{ network, addr string }{{"tcp", tcp}, {"unix", unix}} {
		for _, lit := range []string{"true", "false", "null", "42", `"x"`, "-1"} {
			s := dialStream(t, nw.network, nw.addr)
			s.send(t, []byte(lit+"\n"))
			got := s.line(t)
			var r struct {
				JSONRPC string             `json:"jsonrpc"`
				Error   struct{ Code int } `json:"error"`
				ID      json.RawMessage    `json:"id"`
			}
			if err := json.Unmarshal(got, &r); err != nil || r.JSONRPC != "2.0" || r.Error.Code != -32600 || string(r.ID) != "null" {
				t.Fatalf("%s %s: %q", nw.network, lit, got)
			}
			// The stream goes on.
			s.send(t, []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`+"\n"))
			if got := s.line(t); !bytes.Equal(got, []byte(`{"jsonrpc":"2.0","result":3,"id":1}`+"\n")) {
				t.Fatalf("%s %s, then a call: %q", nw.network, lit, got)
			}
		}
	}
}

// TestStream_sequence: values separated by any whitespace, or none, are
// messages of their own; garbage after a value is one -32700 and close.
func TestStream_sequence(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	s := dialStream(t, "tcp", tcp)
	_, _ = s.c.Write([]byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}{"jsonrpc":"2.0","method":"add","params":[3,4],"id":2}` +
		"\r\n\t " + `[{"jsonrpc":"2.0","method":"add","params":[5,6],"id":3}] x`))
	for _, want := range []string{`"result":3,"id":1}`, `"result":7,"id":2}`, `[{"jsonrpc":"2.0","result":11,"id":3}]`, `"code":-32700`} {
		if got := string(s.line(t)); !strings.Contains(got, want) {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
	_ = s.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := s.r.ReadByte(); err != io.EOF {
		t.Fatalf("not closed: %v", err)
	}
}

// TestStream_oneByteAtATime delivers a message a byte at a time.
func TestStream_oneByteAtATime(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	s := dialStream(t, "tcp", tcp)
	msg := `{"jsonrpc":"2.0","method":"echo","params":["a\"}]b"],"id":1}` + "\n"
	for i := range len(msg) {
		if _, err := s.c.Write([]byte{msg[i]}); err != nil {
			t.Fatal(err)
		}
	}
	if got := string(s.line(t)); got != `{"jsonrpc":"2.0","result":["a\"}]b"],"id":1}`+"\n" {
		t.Fatal(got)
	}
}

// TestStream_invalidJSONCloses: one -32700 reply, then the connection is
// closed after it was flushed.
func TestStream_invalidJSONCloses(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	for _, bad := range []string{`{"jsonrpc":"2.0","method":"add","params":[1,}`, `}`} {
		s := dialStream(t, "tcp", tcp)
		s.send(t, []byte(bad))
		got := s.line(t)
		if !bytes.Contains(got, []byte(`"code":-32700`)) {
			t.Fatalf("%s: %s", bad, got)
		}
		_ = s.c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := s.r.ReadByte(); err != io.EOF {
			t.Fatalf("%s: connection not closed: %v", bad, err)
		}
	}
}

// A method's own -32700 error is a reply like any other: the stream stays
// open and the next request is answered.
//
// A method's own -32700 closed the stream: the outcome came from the reply text (found in a review).
func TestStream_methodParseErrorKeepsConnection(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	handler.Register(tab, "parseInner", func(context.Context, [1]string) (int, error) {
		return 0, &handler.Error{Code: parser.CodeParseError, Message: "inner document is not JSON"}
	}, handler.Inline())
	handler.Register(tab, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	_, tcp, _ := startEngine(t, tab)
	s := dialStream(t, "tcp", tcp)
	s.send(t, []byte(`{"jsonrpc":"2.0","method":"parseInner","params":["{"],"id":1}`))
	if got := string(s.line(t)); !strings.Contains(got, `-32700`) || !strings.Contains(got, `"id":1`) {
		t.Fatalf("reply 1: %s", got)
	}
	s.send(t, []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":2}`))
	if got := strings.TrimSpace(string(s.line(t))); got != `{"jsonrpc":"2.0","result":3,"id":2}` {
		t.Fatalf("reply 2: %s", got)
	}
}

// TestStream_tooLarge: a message over the limit is refused before it is
// all buffered, and the connection closed.
func TestStream_tooLarge(t *testing.T) {
	_, tcp, _ := startEngine(t, nil, engine.WithMaxMessageSize(1<<10))
	s := dialStream(t, "tcp", tcp)
	_, _ = s.c.Write([]byte(`{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat("x", 4096)))
	got := s.line(t)
	if !bytes.Contains(got, []byte(`"code":-32600`)) {
		t.Fatal(string(got))
	}
}

// Large stream messages are gathered in the connection's own buffer
// (not re-copied by gnet at every read): a mix of large and small
// messages, inline and blocking, split at odd places, is answered in full
// and in order for the inline ones.
//
// gnet re-copied a large stream message at every read: time quadratic in its size.
func TestStream_largeMessagesGathered(t *testing.T) {
	_, tcp, _ := startEngine(t, bigReplies(), engine.WithMaxMessageSize(8<<20))
	big := func(id int, n int) string {
		return `{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat("z", n) + `"],"id":` + strconv.Itoa(id) + `}`
	}
	msgs := []string{
		big(1, 3<<20),
		`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":2}`,
		big(3, 200<<10),
		`{"jsonrpc":"2.0","method":"sleep","params":[5],"id":4}`,
		big(5, 5<<20),
		`{"jsonrpc":"2.0","method":"add","params":[2,2],"id":6}`,
	}
	stream := []byte(strings.Join(msgs, "\n") + "\n")
	c, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		// Pieces of odd sizes, so that messages end mid-read.
		for off, k := 0, 0; off < len(stream); k++ {
			n := min(len(stream)-off, 70001+k*3)
			if _, err := c.Write(stream[off : off+n]); err != nil {
				return
			}
			off += n
		}
	}()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	r := bufio.NewReaderSize(c, 1<<20)
	got := map[string]int{}
	for i := range len(msgs) {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		id := line[strings.LastIndex(line, `"id":`)+5 : len(line)-2]
		got[id] = len(line)
	}
	for id, want := range map[string]int{"1": 3<<20 + 39, "2": 36, "3": 200<<10 + 39, "4": 0, "5": 5<<20 + 39, "6": 36} {
		if n, ok := got[id]; !ok || want > 0 && n != want {
			t.Errorf("reply to %s: %d bytes (present %v), want %d", id, n, ok, want)
		}
	}
}
