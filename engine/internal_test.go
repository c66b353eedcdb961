package engine

// White-box tests of the connection core's helpers: the constant-time
// comparison of the authorization cache (access.go), the release of jobs
// (work.go) and the yield to a worker (conn.go).

import (
	"bytes"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/pool"
)

// TestSameBytes: sameBytes is bytes.Equal for slices of one length,
// whatever byte differs, at every offset of every length to 40.
func TestSameBytes(t *testing.T) {
	for n := 0; n <= 40; n++ {
		a := bytes.Repeat([]byte{0xA5}, n)
		if !sameBytes(a, bytes.Clone(a)) {
			t.Fatalf("len %d: equal slices differ", n)
		}
		for i := range n {
			for _, bit := range []byte{1, 0x80} {
				b := bytes.Clone(a)
				b[i] ^= bit
				if sameBytes(a, b) {
					t.Fatalf("len %d: a difference at %d (bit %#x) not seen", n, i, bit)
				}
			}
		}
	}
}

// TestJob_releaseClearsEveryField: release leaves a job as a new one
// but for the buffers it keeps (emptied) and the parts it need not clear
// (the Pending Run empties, the CallContext an HTTP job overwrites): a
// field added to job without a line in release fails here.
func TestJob_releaseClearsEveryField(t *testing.T) {
	j := new(job)
	v := reflect.ValueOf(j).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		f = reflect.NewAt(f.Type(), f.Addr().UnsafePointer()).Elem() // unexported: set it anyway
		switch f.Kind() {
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 3, 3))
		case reflect.String:
			f.SetString("x")
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int64:
			f.SetInt(7)
		case reflect.Uint8, reflect.Uint64:
			f.SetUint(7)
		case reflect.Struct: // the Pending and the CallContext
		default:
			t.Fatalf("field %s: kind %v not covered by this test", v.Type().Field(i).Name, f.Kind())
		}
	}
	j.release()
	for i := range v.NumField() {
		name, f := v.Type().Field(i).Name, v.Field(i)
		switch {
		case f.Kind() == reflect.Slice:
			if f.Len() != 0 {
				t.Errorf("%s: %d bytes left", name, f.Len())
			}
		case f.Kind() == reflect.Struct:
		case !f.IsZero():
			t.Errorf("%s: not cleared", name)
		}
	}
}

// TestConn_awaitOneRepliesInTheSameRead: when the loops take every P, a
// read that hands one message to a worker lets the worker run and writes
// its reply with the read's own output — one traffic call, no second pass
// of the loop — over HTTP and a stream; without the yield (a P to spare
// for workers) the reply comes on the next pass. A read that hands off
// several messages does not wait. Each case is tried 20 times and judged
// by the majority: the scheduler gives no promise for one try (a try in
// about 200 went the other way, under -count=200).
func TestConn_awaitOneRepliesInTheSameRead(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // as in a pinned server: the worker runs only when the loop lets it
	call := `{"jsonrpc":"2.0","method":"sleep","params":[0],"id":1}`
	const tries = 20
	for _, c := range []struct {
		name, in string
		n        int
	}{
		{"http", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: " + strconv.Itoa(len(call)) + "\r\n\r\n" + call, 1},
		{"stream", call + "\n", 1},
		{"stream pipelined", strings.Repeat(call+"\n", 4), 4},
	} {
		for _, yield := range []bool{true, false} {
			sameRead := 0 // tries whose read's own output held a reply
			for range tries {
				cs, fc := newFakeConn(t)
				cs.e.workers = pool.NewWorkers(4, 16)
				cs.e.yield = yield
				fc.in = []byte(c.in)
				cs.traffic()
				got := bytes.Count(fc.out, []byte(`"result":0,"id":1}`))
				if got > 0 {
					sameRead++
				}
				for got < c.n { // the rest come on later passes
					for !cs.mail.pending() {
						runtime.Gosched()
					}
					cs.traffic()
					got = bytes.Count(fc.out, []byte(`"result":0,"id":1}`))
				}
				if got != c.n {
					t.Errorf("%s, yield %v: %d replies in all, want %d", c.name, yield, got, c.n)
				}
				cs.e.workers.Close()
			}
			if want := yield && c.n == 1; (sameRead > tries/2) != want {
				t.Errorf("%s, yield %v: a reply in the read's own output in %d of %d tries, want the majority %v", c.name, yield, sameRead, tries, want)
			}
		}
	}
}
