package bench

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/gobwas/ws"
	"github.com/panjf2000/gnet/v2"
)

// fanoutHere returns the file:line of its caller, for table cases.
func fanoutHere() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", file[bytes.LastIndexByte([]byte(file), '/')+1:], line)
}

const testPrefix = `{"jsonrpc":"2.0","method":"topic_subscription","params":{"subscription":"0xab","result":`

// notificationCases are notifications and what the scanners make of
// them: want ok, seq and t; fast says the fast path takes it.
var notificationCases = []struct {
	where  string
	msg    string
	ok     bool
	seq, t int64
	fast   bool
}{
	{fanoutHere(), testPrefix + `{"seq":7,"t":1700000000000000000}}}`, true, 7, 1700000000000000000, true},
	{fanoutHere(), testPrefix + `{"seq":0,"t":5,"pad":"xxxx"}}}`, true, 0, 5, true},
	{fanoutHere(), testPrefix + `{"t":5,"seq":3}}}`, true, 3, 5, false},    // another order: the slow path
	{fanoutHere(), testPrefix + `{"seq": 3, "t": 5}}}`, true, 3, 5, false}, // spaces: the slow path
	{fanoutHere(), testPrefix + `{"seq":3}}}`, false, 0, 0, false},         // no t
	{fanoutHere(), testPrefix + `{"seq":1,"t":9223372036854775807}}}`, true, 1, 9223372036854775807, true},
	{fanoutHere(), testPrefix + `{"seq":1,"t":9223372036854775808}}}`, false, 0, 0, false}, // overflows
	{fanoutHere(), testPrefix + `{"seq":01,"t":2}}}`, false, 0, 0, false},                  // not JSON
	{fanoutHere(), testPrefix + `{"seq":1,"t":2,"pad":"x"x"}}}`, false, 0, 0, false},
	{fanoutHere(), testPrefix + `{"seq":1,"t":2,"pad":"x\\"}}}`, true, 1, 2, false}, // an escape: the slow path
	{fanoutHere(), testPrefix + `{"seq":1,"t":2,"pad":""}}}`, true, 1, 2, true},
	{fanoutHere(), testPrefix + `{"seq":1,"t":2,"x":[1]}}}`, true, 1, 2, false},                                                                            // more keys: the slow path
	{fanoutHere(), testPrefix + `{"hello":1}}}`, false, 0, 0, false},                                                                                       // not the run's
	{fanoutHere(), testPrefix + `{"seq":-1,"t":5}}}`, true, -1, 5, false},                                                                                  // negative: the slow path reads it, deliver refuses it
	{fanoutHere(), testPrefix + `{"seq":1234567890123456789012,"t":5}}}`, false, 0, 0, false},                                                              // too long for an int64
	{fanoutHere(), `{"jsonrpc":"2.0","method":"topic_subscription","params":{"subscription":"0xcd","result":{"seq":1,"t":2}}}`, false, 0, 0, false},        // another subscription
	{fanoutHere(), `{"jsonrpc":"2.0","method":"other_subscription","params":{"subscription":"0xab","result":{"seq":1,"t":2}}}`, false, 0, 0, false},        // another method
	{fanoutHere(), `{"method":"topic_subscription","jsonrpc":"2.0","params":{"result":{"seq":1,"t":2},"subscription":"0xab"}}`, true, 1, 2, false},         // another key order
	{fanoutHere(), ` ` + testPrefix + `{"seq":1,"t":2}}}`, true, 1, 2, false},                                                                              // leading space
	{fanoutHere(), `{"jsonrpc":"2.0","method":"topic_subscription","params":{"subscription":"0xab","result":{"seq":1,"t":2}},"id":1}`, false, 0, 0, false}, // a call, not a notification
	{fanoutHere(), `{"jsonrpc":"1.0","method":"topic_subscription","params":{"subscription":"0xab","result":{"seq":1,"t":2}}}`, false, 0, 0, false},
	{fanoutHere(), testPrefix + `{"seq":1,"t":2}}`, false, 0, 0, false}, // cut short
	{fanoutHere(), `}}`, false, 0, 0, false},
	{fanoutHere(), ``, false, 0, 0, false},
}

// TestScanNotification: the fast path takes the jetrpc form, the slow
// path the others that are right, and both refuse the rest.
func TestScanNotification(t *testing.T) {
	prefix := []byte(testPrefix)
	for _, c := range notificationCases {
		seq, ts, ok := scanNotification([]byte(c.msg), prefix)
		if ok != c.fast || (ok && (seq != c.seq || ts != c.t)) {
			t.Errorf("%s: fast path: %d %d %v, want ok %v", c.where, seq, ts, ok, c.fast)
		}
		if !ok {
			seq, ts, ok = scanNotificationSlow([]byte(c.msg), "0xab")
		}
		if ok != c.ok || (ok && (seq != c.seq || ts != c.t)) {
			t.Errorf("%s: %d %d %v, want %d %d %v", c.where, seq, ts, ok, c.seq, c.t, c.ok)
		}
	}
}

// FuzzScanNotification: whatever the message, the fast path never
// panics, and what it accepts the full decode reads alike (when the
// payload is an object of unique integer keys, the form the publisher
// writes).
func FuzzScanNotification(f *testing.F) {
	for _, c := range notificationCases {
		f.Add([]byte(c.msg))
	}
	prefix := []byte(testPrefix)
	f.Fuzz(func(t *testing.T, msg []byte) {
		seq, ts, ok := scanNotification(msg, prefix)
		if !ok {
			_, _, _ = scanNotificationSlow(msg, "0xab")
			return
		}
		if seq < 0 || ts < 0 {
			t.Fatalf("%q: negative %d %d", msg, seq, ts)
		}
		if s2, t2, ok2 := scanNotificationSlow(msg, "0xab"); ok2 && bytes.HasPrefix(msg[len(prefix):], []byte(`{"seq":`)) &&
			bytes.Count(msg, []byte(`"seq"`)) == 1 && bytes.Count(msg, []byte(`"t"`)) == 1 && (s2 != seq || t2 != ts) {
			t.Fatalf("%q: fast %d %d, slow %d %d", msg, seq, ts, s2, t2)
		}
	})
}

// serverFrame returns a server frame (unmasked).
func serverFrame(fin bool, op ws.OpCode, payload []byte) []byte {
	var b bytes.Buffer
	_ = ws.WriteHeader(&b, ws.Header{Fin: fin, OpCode: op, Length: int64(len(payload))})
	b.Write(payload)
	return b.Bytes()
}

// testSubscriber returns a subscriber of a fan-out of planned publishes,
// subscribed as 0xab, outside any event loop.
func testSubscriber(planned int64) *subscriber {
	f := &fanout{planned: planned}
	s := &subscriber{f: f, high: -1, seen: make([]uint64, (planned+63)/64), stats: newLoopStats(0),
		prefix: []byte(testPrefix), id: "0xab"}
	s.state.Store(subSubscribed)
	return s
}

// TestSubscriber_consumeChunks: a stream of frames, fed in chunks of
// every size from 1 byte (as reads may cut it), gives the same counts:
// whole messages, a fragmented one with a ping between its fragments,
// a large one (16-bit length), a duplicate, a reordering.
func TestSubscriber_consumeChunks(t *testing.T) {
	note := func(seq int, pad int) []byte {
		return fmt.Appendf(nil, `%s{"seq":%d,"t":1,"pad":"%s"}}}`, testPrefix, seq, bytes.Repeat([]byte("x"), pad))
	}
	var stream []byte
	stream = append(stream, serverFrame(true, ws.OpText, note(0, 0))...)
	n1 := note(1, 0)
	stream = append(stream, serverFrame(false, ws.OpText, n1[:10])...)
	stream = append(stream, serverFrame(true, ws.OpPing, []byte("hi"))...)
	stream = append(stream, serverFrame(false, ws.OpContinuation, n1[10:40])...)
	stream = append(stream, serverFrame(true, ws.OpContinuation, n1[40:])...)
	stream = append(stream, serverFrame(true, ws.OpText, note(3, 300))...)    // 16-bit length
	stream = append(stream, serverFrame(true, ws.OpText, note(2, 70_000))...) // 64-bit length; after 3
	stream = append(stream, serverFrame(true, ws.OpText, note(3, 0))...)      // a duplicate
	for chunk := 1; chunk <= len(stream); chunk = chunk*2 + 1 {
		s := testSubscriber(10)
		var buf []byte
		for i := 0; i < len(stream); i += chunk {
			buf = append(buf, stream[i:min(i+chunk, len(stream))]...)
			used, act := s.consume(nil, buf, 1000)
			if act != gnet.None {
				t.Fatalf("chunk %d: closed at %d", chunk, i)
			}
			buf = buf[used:]
		}
		if len(buf) != 0 || s.stats.delivered.Load() != 4 || s.dups != 1 || s.ooo != 1 || s.invalid != 0 || s.seen[0] != 0b1111 {
			t.Fatalf("chunk %d: %d left, delivered %d dups %d ooo %d invalid %d seen %b",
				chunk, len(buf), s.stats.delivered.Load(), s.dups, s.ooo, s.invalid, s.seen[0])
		}
	}
}

// TestNextFrame_bad: frames a server must not send drop the connection.
func TestNextFrame_bad(t *testing.T) {
	for _, c := range []struct {
		where string
		frame []byte
	}{
		{fanoutHere(), []byte{0x81, 0x82, 1, 2, 3, 4, 'h', 'i'}},                          // masked
		{fanoutHere(), []byte{0xc1, 2, 'h', 'i'}},                                         // RSV1
		{fanoutHere(), append([]byte{0x89, 126, 0, 200}, make([]byte, 200)...)},           // a long ping
		{fanoutHere(), []byte{0x09, 2, 'h', 'i'}},                                         // a fragmented ping
		{fanoutHere(), []byte{0x81, 127, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}, // 2^63 bytes
	} {
		if _, _, _, _, _, st := nextFrame(c.frame, false); st != frameBad {
			t.Errorf("%s: % x: status %d, want frameBad", c.where, c.frame, st)
		}
	}
	s := testSubscriber(1)
	if _, act := s.consume(nil, serverFrame(true, ws.OpClose, nil), 0); act != gnet.Close {
		t.Errorf("a close frame: action %v", act)
	}
}
