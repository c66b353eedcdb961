//go:build !race

package engine

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gobwas/ws"
	"github.com/panjf2000/gnet/v2"
)

// TestWSDeflate_zeroAllocs: with WSCompression on, a message allocates
// nothing in steady state, whether the connection negotiated
// permessage-deflate (compressed requests inflated, replies and server
// messages compressed) or not.
func TestWSDeflate_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	add := []byte(`{"jsonrpc":"2.0","method":"add","params":[40,2],"id":1}`)
	long := strings.Repeat(`{"block":12345,"hash":"0xabcdef0123456789"},`, 200) // 8.8 KB
	echo := []byte(`{"jsonrpc":"2.0","method":"echo","params":[` + long + `1],"id":2}`)
	echoed := `"result":[{"block":12345`
	batch := []byte("[" + strings.TrimSuffix(strings.Repeat(string(add)+",", 10), ",") + "]")
	cases := []struct {
		name       string
		negotiated bool
		in         []byte
		want       string
	}{
		{"small raw", true, clientFrame(true, ws.OpText, add), `"result":42`},
		{"small compressed", true, compressedFrame(t, add, 0), `"result":42`},
		{"batch compressed", true, compressedFrame(t, batch, 0), `"result":42`},
		{"large raw in, compressed out", true, clientFrame(true, ws.OpText, echo), echoed},
		{"large compressed both ways", true, compressedFrame(t, echo, 0), echoed},
		{"fragmented compressed", true, compressedFrame(t, echo, 50), echoed},
		{"not negotiated small", false, clientFrame(true, ws.OpText, add), `"result":42`},
		{"not negotiated large", false, clientFrame(true, ws.OpText, echo), echoed},
	}
	for _, c := range cases {
		offer := ""
		if c.negotiated {
			offer = "permessage-deflate; client_max_window_bits"
		}
		cs, fc := wsDeflateFakeConn(t, offer)
		buf := make([]byte, len(c.in))
		step := func() {
			copy(buf, c.in) // the server unmasks in place
			fc.in = buf
			fc.out = fc.out[:0]
			if cs.traffic() != gnet.None {
				t.Fatalf("%s: connection closed: %q", c.name, fc.out)
			}
		}
		step()
		ps, zs := deflateFrames(t, fc.out)
		if len(ps) != 1 || !bytes.Contains(ps[0], []byte(c.want)) || len(fc.in) != 0 || zs[0] != (c.negotiated && len(ps[0]) > 1024) {
			t.Fatalf("%s: out %q %v, left %q", c.name, ps, zs, fc.in)
		}
		if got := testing.AllocsPerRun(200, step); got != 0 {
			t.Errorf("%s: %v allocs per message, want 0", c.name, got)
		}
	}
	// A server message, compressed.
	cs, fc := wsDeflateFakeConn(t, "permessage-deflate")
	msg := []byte(`{"jsonrpc":"2.0","method":"tick","params":[` + long + `1]}`)
	step := func() {
		fc.out = fc.out[:0]
		if err := cs.Send(msg); err != nil {
			t.Fatal(err)
		}
		cs.traffic()
		if ps, zs := deflateFrames(t, fc.out); len(ps) != 1 || !zs[0] || !bytes.Equal(ps[0], msg) {
			t.Fatalf("push: %q %v", ps, zs)
		}
	}
	step()
	if got := testing.AllocsPerRun(200, func() {
		fc.out = fc.out[:0]
		_ = cs.Send(msg)
		cs.traffic()
	}); got != 0 {
		t.Errorf("compressed push: %v allocs per message, want 0", got)
	}
}
