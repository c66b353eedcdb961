package engine

// NOTE: the measurement of a topic message's fan-out to many WebSocket
// subscribers (prepared.go): a 2 KB JSON message to N subscriptions,
// each on a connection of its own, compressed once for all (Prepared),
// compressed per subscriber (NotifyRaw: each loop compresses its
// subscriber's whole message) and not compressed, side by side in one
// run. The connections are fake (fakeConn), on two loops' scratch as the
// two event loops of a 2-core machine would be: what is measured is the
// server's CPU per delivery — queuing the push, waking, the loop's
// framing and compressing, the copy into the output — without the
// sockets' syscalls (the same per delivery for all three, bar the bytes)
// or the clients'. 10,000 loopback connections would need 20,000
// descriptors in one process, this machine's hard limit.

import (
	"context"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
)

// fanOutMode is how a benchmark's message reaches its subscribers.
type fanOutMode int

const (
	fanOnce          fanOutMode = iota // permessage-deflate; NotifyPrepared: compressed once
	fanPerSubscriber                   // permessage-deflate; NotifyRaw: compressed by each subscriber's loop
	fanPlain                           // no permessage-deflate; NotifyPrepared: the plain message
)

// fanOutBed is n subscriptions, each on a fake WebSocket connection of
// one engine, the connections on two loops.
type fanOutBed struct {
	subs  []*handler.Subscription
	conns []*conn
	fcs   []*fakeConn
}

// newFanOutBed makes a bed of n subscribers, their connections having
// negotiated permessage-deflate when deflate.
func newFanOutBed(tb testing.TB, n int, deflate bool) *fanOutBed {
	tb.Helper()
	tab := handler.NewTable(handler.WithMaxSubscriptions(n, n))
	bed := &fanOutBed{}
	handler.RegisterSubscription(tab, "topic", func(_ context.Context, _ [1]string, s *handler.Subscription) error {
		bed.subs = append(bed.subs, s)
		return nil
	}, handler.Inline())
	e := New(tab, WithWSCompression(true))
	e.baseCtx = context.Background()
	loops := [2]*loopState{fakeLoopState(&fakeConn{}), fakeLoopState(&fakeConn{})}
	hs := []byte(wsHandshake)
	if deflate {
		hs = []byte(wsHandshake[:len(wsHandshake)-2] + "Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n")
	}
	sub := []byte(`{"jsonrpc":"2.0","method":"topic_subscribe","params":["t"],"id":1}`)
	for i := range n {
		fc := &fakeConn{in: hs}
		cs := newConn(e, fc, loops[i%2])
		cs.traffic()
		if cs.codec == nil || cs.codec.(*wsCodec).deflate != deflate {
			tb.Fatalf("connection %d: handshake %q", i, fc.out)
		}
		fc.out = fc.out[:0]
		if reply := tab.Dispatch(cs.Context(), nil, sub); len(bed.subs) != i+1 {
			tb.Fatalf("subscription %d: %s", i, reply)
		}
		bed.conns, bed.fcs = append(bed.conns, cs), append(bed.fcs, fc)
	}
	return bed
}

// publish sends payload to every subscriber as mode says, then plays
// their loops; it returns the bytes written.
func (bed *fanOutBed) publish(tb testing.TB, mode fanOutMode, payload []byte) int {
	if mode == fanPerSubscriber {
		for _, s := range bed.subs {
			if err := s.NotifyRaw(payload); err != nil {
				tb.Fatal(err)
			}
		}
	} else {
		msg := handler.NewPrepared(payload)
		for _, s := range bed.subs {
			if err := s.NotifyPrepared(msg); err != nil {
				tb.Fatal(err)
			}
		}
		msg.Release()
	}
	wire := 0
	for i, cs := range bed.conns {
		cs.traffic()
		wire += len(bed.fcs[i].out)
		bed.fcs[i].out = bed.fcs[i].out[:0]
	}
	return wire
}

// benchFanOut publishes fanPayload to n subscribers as mode says; it
// reports per delivery the time (ns/delivery), the process's CPU
// (cpu-ns/delivery, which other processes do not inflate) and the bytes
// on the wire (wire-B/delivery).
func benchFanOut(n int, mode fanOutMode) func(*testing.B) {
	return func(b *testing.B) {
		bed := newFanOutBed(b, n, mode != fanPlain)
		wire := bed.publish(b, mode, fanPayload) // the first, checked by TestFanOut_benchmarkDeliversEveryMessage
		b.ReportAllocs()
		cpu0 := processCPU()
		for b.Loop() {
			bed.publish(b, mode, fanPayload)
		}
		cpu := processCPU() - cpu0
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/delivery")
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*n), "cpu-ns/delivery")
		b.ReportMetric(float64(wire)/float64(n), "wire-B/delivery")
	}
}

// processCPU returns the CPU time the process has used, user and
// system: a benchmark's CPU whatever else the machine runs (its wall
// time is not, on a shared machine), the garbage collector's included.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFanOutCompression: a 2 KB JSON message to 10,000 WebSocket
// subscribers, compressed once (once), compressed per subscriber
// (per-subscriber) and not compressed (none), in one run: the server's
// CPU and the bytes on the wire per delivery.
func BenchmarkFanOutCompression(b *testing.B) {
	const n = 10_000
	b.Run("once", benchFanOut(n, fanOnce))
	b.Run("per-subscriber", benchFanOut(n, fanPerSubscriber))
	b.Run("none", benchFanOut(n, fanPlain))
}

// TestBenchmarkFanOutCompression runs BenchmarkFanOutCompression
// briefly, over 100 subscribers, as a test.
func TestBenchmarkFanOutCompression(t *testing.T) {
	if testing.Short() {
		t.Skip("benchmarks as tests are skipped in -short mode")
	}
	benchBriefly(t, benchFanOut(100, fanOnce), benchFanOut(100, fanPerSubscriber), benchFanOut(100, fanPlain))
}

// TestFanOut_benchmarkDeliversEveryMessage: in each of the benchmark's
// modes every subscriber gets its notification, byte for byte, and
// compressed where its connection negotiated it.
func TestFanOut_benchmarkDeliversEveryMessage(t *testing.T) {
	for _, mode := range []fanOutMode{fanOnce, fanPerSubscriber, fanPlain} {
		bed := newFanOutBed(t, 20, mode != fanPlain)
		for k := range 3 {
			payload := []byte(`{"n":` + strconv.Itoa(k) + `,"book":` + string(fanPayload) + `}`)
			if mode == fanPerSubscriber {
				for _, s := range bed.subs {
					_ = s.NotifyRaw(payload)
				}
			} else {
				msg := handler.NewPrepared(payload)
				for _, s := range bed.subs {
					_ = s.NotifyPrepared(msg)
				}
				msg.Release()
			}
			for i, cs := range bed.conns {
				cs.traffic()
				ps, zs := deflateFrames(t, bed.fcs[i].out)
				bed.fcs[i].out = bed.fcs[i].out[:0]
				if want := notification(bed.subs[i].ID(), payload); len(ps) != 1 || string(ps[0]) != want || zs[0] != (mode != fanPlain) {
					t.Fatalf("mode %d, subscriber %d, message %d: %d frames, compressed %v", mode, i, k, len(ps), zs)
				}
			}
		}
	}
}
