package engine_test

// Tests of a topic's fan-out compressed once (prepared.go) over
// loopback sockets.

import (
	"bytes"
	"compress/flate" // the standard library's inflater, not the one that compressed
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/gorilla/websocket"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/topics"
)

// TestSendPrepared_clientsInflateTheNotification: a message published on
// a topic reaches, over sockets, a client that reads frames with
// gobwas/ws and inflates with compress/flate (RSV1 set; with the RFC
// 7692 tail appended, it ends on a block boundary), gorilla/websocket with compression
// on, and a client without compression (RSV1 clear): each gets its
// notification byte for byte.
func TestSendPrepared_clientsInflateTheNotification(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	node := topics.New(nil, quiet())
	topics.Register(tab, "topic", node)
	_, addr, _ := startEngine(t, tab, engine.WithWSCompression(true))
	payload := []byte(`{"book":[` + strings.Repeat(`{"price":101.25,"size":300,"side":"bid"},`, 50) + `{}]}`)
	want := func(id string) string {
		return `{"jsonrpc":"2.0","method":"topic_subscription","params":{"subscription":"` + id + `","result":` + string(payload) + `}}`
	}
	subscribe := []byte(`{"jsonrpc":"2.0","method":"topic_subscribe","params":["t"],"id":1}`)
	idOf := func(reply []byte) string {
		var r struct{ Result string }
		if err := json.Unmarshal(reply, &r); err != nil || r.Result == "" {
			t.Fatalf("subscribe: %s", reply)
		}
		return r.Result
	}

	z, _ := dialDeflateClient(t, addr, "permessage-deflate")
	z.send(t, true, false, ws.OpText, subscribe)
	_, reply := z.read(t)
	zID := idOf(reply)
	plain, _ := dialDeflateClient(t, addr, "")
	plain.send(t, true, false, ws.OpText, subscribe)
	_, reply = plain.read(t)
	plainID := idOf(reply)
	g := dialWS(t, addr, &websocket.Dialer{EnableCompression: true, HandshakeTimeout: 10 * time.Second})
	gID := idOf(wsCall(t, g, string(subscribe)))

	if n, err := node.PublishRaw("t", payload); err != nil || n != 3 {
		t.Fatalf("published to %d: %v", n, err)
	}
	h, p := z.read(t)
	if h.Rsv != 4 {
		t.Fatalf("RSV %d, want RSV1: %q", h.Rsv, p)
	}
	// The tail, then an empty final block: read as a block of its own,
	// the message ends on a block boundary.
	got, err := io.ReadAll(flate.NewReader(io.MultiReader(bytes.NewReader(p), strings.NewReader("\x00\x00\xff\xff\x01\x00\x00\xff\xff"))))
	if err != nil || string(got) != want(zID) {
		t.Fatalf("compress/flate: %v, %q", err, got)
	}
	if h, p := plain.read(t); h.Rsv != 0 || string(p) != want(plainID) {
		t.Fatalf("without compression: RSV %d, %q", h.Rsv, p)
	}
	if got := wsRead(t, g); string(got) != want(gID) {
		t.Fatalf("gorilla: %q", got)
	}
}
