package engine

import (
	"context"
	"net"
	"strconv"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/panjf2000/gnet/v2"
)

// fakeConn is the part of gnet.Conn the engine uses, over byte slices:
// it drives the HTTP and stream code paths without sockets.
type fakeConn struct {
	gnet.Conn // nil: any other method panics
	in        []byte
	out       []byte
	ctx       any
	wakes     int
}

func (f *fakeConn) Peek(n int) ([]byte, error) {
	if n <= 0 || n > len(f.in) {
		return f.in, nil
	}
	return f.in[:n], nil
}

func (f *fakeConn) Discard(n int) (int, error) {
	if n <= 0 || n >= len(f.in) {
		n = len(f.in)
	}
	f.in = f.in[n:]
	return n, nil
}

func (f *fakeConn) InboundBuffered() int          { return len(f.in) }
func (f *fakeConn) OutboundBuffered() int         { return 0 }
func (f *fakeConn) Write(b []byte) (int, error)   { f.out = append(f.out, b...); return len(b), nil }
func (f *fakeConn) Wake(gnet.AsyncCallback) error { f.wakes++; return nil }
func (f *fakeConn) Context() any                  { return f.ctx }
func (f *fakeConn) SetContext(c any)              { f.ctx = c }
func (f *fakeConn) RemoteAddr() net.Addr          { return fakeRemote }
func (f *fakeConn) LocalAddr() net.Addr           { return fakeLocal }

var (
	fakeRemote = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
	fakeLocal  = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
)

// newFakeConn returns a connection of an engine that was not started.
func newFakeConn(t testing.TB) (*conn, *fakeConn) {
	tab := handler.NewTable()
	demo.Register(tab)
	return newFakeConnOf(t, tab)
}

// newFakeConnOf returns a connection of an engine over tab, with opts,
// that was not started.
func newFakeConnOf(t testing.TB, tab *handler.Table, opts ...Option) (*conn, *fakeConn) {
	e := New(tab, opts...)
	e.baseCtx = context.Background()
	fc := &fakeConn{}
	cs := newConn(e, fc, fakeLoopState(fc))
	return cs, fc
}

// fakeLoop is the part of gnet.EventLoop the engine uses: Execute, the
// waker's, counts a wake of fc and empties the waker's list as its Run
// would; the test then plays the loop by calling traffic itself.
type fakeLoop struct {
	gnet.EventLoop // nil: any other method panics
	fc             *fakeConn
	w              *loopWaker
}

func (l *fakeLoop) Execute(context.Context, gnet.Runnable) error {
	l.fc.wakes++
	l.w.mu.Lock()
	clear(l.w.ready)
	l.w.ready, l.w.armed = l.w.ready[:0], false
	l.w.mu.Unlock()
	return nil
}

// fakeLoopState returns the scratch of a loop whose waker counts the
// wakes of fc.
func fakeLoopState(fc *fakeConn) *loopState {
	l := &fakeLoop{fc: fc}
	l.w = &loopWaker{el: l}
	return newLoopState(l.w)
}

// resetCodec forgets the connection's protocol: the next input is sniffed
// again.
func (c *conn) resetCodec() {
	if c.codec != nil {
		c.codec.release()
		c.codec = nil
	}
}

// TestMailbox_wakeOncePerBurst: workers hand replies back with one Wake per
// burst, not one AsyncWrite (3 allocations in gnet) per reply.
func TestMailbox_wakeOncePerBurst(t *testing.T) {
	cs, fc := newFakeConn(t)
	cs.use(newStreamCodec())
	finishOne := func(id int) {
		j := newJob(cs)
		j.out = append(j.out[:0], `{"jsonrpc":"2.0","result":1,"id":`...)
		j.out = strconv.AppendInt(j.out, int64(id), 10)
		j.out = append(j.out, '}')
		cs.work.inflight++
		cs.finish(j)
	}
	for i := range 10 {
		finishOne(i)
	}
	if fc.wakes != 1 {
		t.Fatalf("%d Wakes for a burst of 10 replies, want 1", fc.wakes)
	}
	cs.traffic()
	if cs.work.inflight != 0 || len(fc.out) == 0 {
		t.Fatalf("inflight %d, out %q", cs.work.inflight, fc.out)
	}
	for i := range 10 {
		want := `"id":` + strconv.Itoa(i) + "}\n"
		if !containsLine(fc.out, want) {
			t.Fatalf("reply %d missing from %q", i, fc.out)
		}
	}
	finishOne(10)
	if fc.wakes != 2 {
		t.Fatalf("%d Wakes after the next burst, want 2", fc.wakes)
	}
}

func containsLine(out []byte, suffix string) bool {
	for _, l := range splitLines(out) {
		if len(l) >= len(suffix) && l[len(l)-len(suffix):] == suffix {
			return true
		}
	}
	return false
}

func splitLines(b []byte) []string {
	var out []string
	start := 0
	for i, c := range b {
		if c == '\n' {
			out = append(out, string(b[start:i+1]))
			start = i + 1
		}
	}
	return out
}
