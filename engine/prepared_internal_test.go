package engine

import (
	"bytes"
	"compress/flate" // the standard library's inflater, not the one that compressed
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/topics"
)

// fanPayload is a 2 KB JSON message, as a topic would carry.
var fanPayload = func() []byte {
	var b strings.Builder
	b.WriteString(`{"symbol":"ABC","book":[`)
	for i := 0; b.Len() < 2000; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"price":` + strconv.Itoa(10100+i*7) + `.25,"size":` + strconv.Itoa(300+i*13) + `,"side":"bid"}`)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}()

// rlHere returns the file:line of its caller, for table cases.
func rlHere() string {
	_, file, line, _ := runtime.Caller(1)
	return filepath.Base(file) + ":" + strconv.Itoa(line)
}

// stdInflate inflates a permessage-deflate message with the standard
// library: the tail 0x00 0x00 0xff 0xff appended (RFC 7692 7.2.2), then
// an empty final block, which it must read as a block of its own — so
// the message ends on a block boundary, as a sync-flushed one does, and
// not inside a block's header (a stream that ended after a stored block,
// without the 0x00 of the empty block's header, would read the tail as
// a stored block's LEN 0xff00: corrupt).
func stdInflate(t testing.TB, z []byte) []byte {
	t.Helper()
	got, err := io.ReadAll(flate.NewReader(io.MultiReader(bytes.NewReader(z), strings.NewReader("\x00\x00\xff\xff\x01\x00\x00\xff\xff"))))
	if err != nil {
		t.Fatalf("inflating with the tail and a final block appended: %v after %d bytes", err, len(got))
	}
	return got
}

// frameOf returns the payload of the one server frame in out and whether
// RSV1 is set.
func frameOf(t testing.TB, out []byte) ([]byte, bool) {
	t.Helper()
	h, n, err := readWSHeader(out)
	if err != nil || h.Masked || !h.Fin || h.Rsv&^4 != 0 || len(out) != n+int(h.Length) {
		t.Fatalf("not one server frame: %q", out)
	}
	return out[n:], h.Rsv == 4
}

// TestSendPrepared_inflatesToPlain: a message sent with SendPrepared on
// a connection that negotiated permessage-deflate goes out compressed,
// with RSV1 set, at the size it was counted at, and inflates — with the
// standard library as with the engine's own inflater — to exactly the
// plain message, whatever the sizes of prefix and suffix (stored blocks
// split at 65,535 bytes; no suffix at all).
func TestSendPrepared_inflatesToPlain(t *testing.T) {
	big := []byte(strings.Repeat(`{"k":"0123456789abcdef"},`, 4000)) // 100 KB
	cases := []struct {
		where          string
		prefix, suffix string
		payload        []byte
	}{
		{rlHere(), `{"jsonrpc":"2.0","method":"topic_subscription","params":{"subscription":"0x00112233445566778899aabbccddeeff","result":`, `}}`, fanPayload},
		{rlHere(), ``, `}}`, fanPayload},
		{rlHere(), `[`, ``, fanPayload},
		{rlHere(), ``, ``, fanPayload},
		{rlHere(), `{"a":"` + strings.Repeat("p", 70000) + `","b":`, `,"c":"` + strings.Repeat("s", 140000) + `"}`, fanPayload},
		{rlHere(), `{"a":"` + strings.Repeat("p", maxStored-6) + `","b":`, `}`, big},
		{rlHere(), `[`, `,"` + strings.Repeat("s", maxStored-3) + `"]`, big},
	}
	for _, c := range cases {
		cs, fc := wsDeflateFakeConn(t, "permessage-deflate", WithMaxPushQueue(4<<20))
		msg := handler.NewPrepared(c.payload)
		if err := cs.SendPrepared([]byte(c.prefix), msg, []byte(c.suffix)); err != nil {
			t.Fatalf("%s: %v", c.where, err)
		}
		size := cs.mail.queued.Load()
		msg.Release() // the queued push holds its own reference
		cs.traffic()
		plain := c.prefix + string(c.payload) + c.suffix
		z, compressed := frameOf(t, fc.out)
		if !compressed || int64(len(z)) != size || len(z) >= len(plain) {
			t.Fatalf("%s: compressed %v, %d bytes, counted %d, plain %d", c.where, compressed, len(z), size, len(plain))
		}
		if got := stdInflate(t, z); string(got) != plain {
			t.Fatalf("%s: the standard library inflates %d bytes, differing from the plain %d", c.where, len(got), len(plain))
		}
		if ps, _ := deflateFrames(t, fc.out); string(ps[0]) != plain {
			t.Fatalf("%s: the engine inflates %d bytes, differing from the plain %d", c.where, len(ps[0]), len(plain))
		}
		if cs.mail.queued.Load() != 0 {
			t.Fatalf("%s: %d bytes still counted as queued", c.where, cs.mail.queued.Load())
		}
	}
}

// TestSendPrepared_plainWhereNotCompressed: without permessage-deflate,
// on a stream, and under CompressionMinSize, SendPrepared sends the
// plain message as Send does.
func TestSendPrepared_plainWhereNotCompressed(t *testing.T) {
	prefix, suffix := []byte(`{"jsonrpc":"2.0","method":"t","params":`), []byte(`}`)
	plain := string(prefix) + string(fanPayload) + string(suffix)
	msg := handler.NewPrepared(fanPayload)
	defer msg.Release()

	noDeflate, fc := wsDeflateFakeConn(t, "")
	small, fcSmall := wsDeflateFakeConn(t, "permessage-deflate", WithCompressionMinSize(len(plain)+1))
	for _, c := range []struct {
		cs *conn
		fc *fakeConn
	}{{noDeflate, fc}, {small, fcSmall}} {
		if err := c.cs.SendPrepared(prefix, msg, suffix); err != nil {
			t.Fatal(err)
		}
		c.cs.traffic()
		if p, compressed := frameOf(t, c.fc.out); compressed || string(p) != plain {
			t.Fatalf("compressed %v: %q", compressed, p)
		}
	}

	stream, fcs := newFakeConn(t)
	stream.use(newStreamCodec())
	if err := stream.SendPrepared(prefix, msg, suffix); err != nil {
		t.Fatal(err)
	}
	stream.traffic()
	if string(fcs.out) != plain+"\n" {
		t.Fatalf("stream: %q", fcs.out)
	}

	notText := handler.NewPrepared([]byte("\"\xff\""))
	defer notText.Release()
	if err := noDeflate.SendPrepared(prefix, notText, suffix); err != handler.ErrNotUTF8 {
		t.Fatalf("a payload that is not UTF-8: %v", err)
	}
}

// topicConn is one subscriber's connection in a topics test.
type topicConn struct {
	cs *conn
	fc *fakeConn
	id string // its subscription's id
}

// subscribeTopic subscribes cs to topic "t" of tab (topics registered
// as "topic") and returns it with its subscription id.
func subscribeTopic(t testing.TB, tab *handler.Table, cs *conn, fc *fakeConn) topicConn {
	t.Helper()
	reply := tab.Dispatch(cs.Context(), nil, []byte(`{"jsonrpc":"2.0","method":"topic_subscribe","params":["t"],"id":1}`))
	var r struct{ Result string }
	if err := json.Unmarshal(reply, &r); err != nil || r.Result == "" {
		t.Fatalf("subscribe: %s", reply)
	}
	return topicConn{cs, fc, r.Result}
}

// notification returns the notification of subscription id with result.
func notification(id string, result []byte) string {
	return `{"jsonrpc":"2.0","method":"topic_subscription","params":{"subscription":"` + id + `","result":` + string(result) + `}}`
}

// TestSendPrepared_mixedSubscribersOfATopic: one message published on a
// topic reaches subscribers with and without permessage-deflate, each
// its own notification byte for byte; those that compress share one
// compressed payload (their frames differ only in the subscription id).
func TestSendPrepared_mixedSubscribersOfATopic(t *testing.T) {
	tab := handler.NewTable()
	node := topics.New(nil, nil)
	topics.Register(tab, "topic", node)
	var subs []topicConn
	for i := range 6 {
		offer := ""
		if i%2 == 0 {
			offer = "permessage-deflate"
		}
		cs, fc := wsDeflateFakeConnOf(t, tab, offer)
		subs = append(subs, subscribeTopic(t, tab, cs, fc))
	}
	stream, fcs := newFakeConnOf(t, tab)
	stream.use(newStreamCodec())
	subs = append(subs, subscribeTopic(t, tab, stream, fcs))
	if n, err := node.PublishRaw("t", fanPayload); err != nil || n != len(subs) {
		t.Fatalf("published to %d: %v", n, err)
	}
	var shared []byte
	for i, s := range subs {
		s.cs.traffic()
		want := notification(s.id, fanPayload)
		if s.cs.codec.transport() != transportWebSocket {
			if string(s.fc.out) != want+"\n" {
				t.Fatalf("stream subscriber: %q", s.fc.out)
			}
			continue
		}
		p, compressed := frameOf(t, s.fc.out)
		if compressed != (i%2 == 0) {
			t.Fatalf("subscriber %d: compressed %v", i, compressed)
		}
		if !compressed {
			if string(p) != want {
				t.Fatalf("subscriber %d: %q", i, p)
			}
			continue
		}
		if got := stdInflate(t, p); string(got) != want {
			t.Fatalf("subscriber %d inflates %q", i, got)
		}
		rest := bytes.ReplaceAll(p, []byte(s.id), nil)
		if shared == nil {
			shared = rest
		} else if !bytes.Equal(rest, shared) {
			t.Fatalf("subscriber %d: compressed bytes differ beyond the subscription id", i)
		}
	}
}

// TestPrepared_deflatedOnceConcurrently: goroutines asking a Prepared
// for its compressed form at once all get the same bytes, made once.
func TestPrepared_deflatedOnceConcurrently(t *testing.T) {
	msg := handler.NewPrepared(fanPayload)
	defer msg.Release()
	got := make(chan []byte, 8)
	for range 8 {
		go func() { got <- msg.Deflated() }()
	}
	first := <-got
	for range 7 {
		if z := <-got; &z[0] != &first[0] {
			t.Fatal("two compressed forms")
		}
	}
	if string(stdInflate(t, first)) != string(fanPayload) {
		t.Fatal("Deflated does not inflate to the payload")
	}
}

// TestSendPrepared_concurrentFanOut: messages published on a topic of
// 2,048 subscribers — fanned out by several goroutines — while the loop
// writes them out: each subscriber gets every message once, in order,
// inflating to its notification; the shared compressed bytes are never
// given back while a push still holds them (run with -race).
func TestSendPrepared_concurrentFanOut(t *testing.T) {
	const subscribers, messages = 2048, 10
	tab := handler.NewTable(handler.WithMaxSubscriptions(1, subscribers))
	node := topics.New(nil, nil)
	topics.Register(tab, "topic", node)
	e := New(tab, WithWSCompression(true))
	e.baseCtx = context.Background()
	ls := fakeLoopState(&fakeConn{})
	hs := wsHandshake[:len(wsHandshake)-2] + "Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n"
	subs := make([]topicConn, subscribers)
	for i := range subs {
		fc := &fakeConn{in: []byte(hs)}
		cs := newConn(e, fc, ls)
		cs.traffic()
		fc.out = fc.out[:0]
		subs[i] = subscribeTopic(t, tab, cs, fc)
	}
	payload := func(k int) []byte { return []byte(`{"k":` + strconv.Itoa(k) + `,"book":` + string(fanPayload) + `}`) }
	done := make(chan struct{})
	go func() {
		defer close(done)
		for k := range messages {
			if n, err := node.PublishRaw("t", payload(k)); err != nil || n != subscribers {
				t.Errorf("message %d published to %d: %v", k, n, err)
			}
		}
	}()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		for _, s := range subs { // the loop, meanwhile
			s.cs.traffic()
		}
	}
	for i, s := range subs {
		ps, zs := deflateFrames(t, s.fc.out)
		if len(ps) != messages {
			t.Fatalf("subscriber %d: %d messages, want %d", i, len(ps), messages)
		}
		for k, p := range ps {
			if !zs[k] || string(p) != notification(s.id, payload(k)) {
				t.Fatalf("subscriber %d, message %d: compressed %v, %.100q", i, k, zs[k], p)
			}
		}
	}
}
