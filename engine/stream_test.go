package engine_test

// Tests of the stream codec (stream.go) and of sniffing (conn.go) over
// loopback sockets.

import (
	"bytes"
	"encoding/json"
	"testing"
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
