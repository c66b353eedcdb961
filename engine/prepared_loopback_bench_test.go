package engine_test

// NOTE: BenchmarkFanOutLoopback is the fake-connection fan-out
// measurement of prepared_bench_test.go over real loopback sockets and a
// started engine: 10,000 subscriptions, two per WebSocket connection
// (5,000 connections: 10,000 descriptors in one process, under this
// machine's limit of 20,000, where one connection each would need
// 20,000), a 2 KB JSON message published to all. Each client is a
// goroutine that only reads and counts bytes (it knows the bytes a
// message makes from a first round), so that the process's CPU is the
// server's, its syscalls and gnet's included, plus that small reading.

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gobwas/ws"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
)

// loopbackPayload is the 2 KB JSON message of the fan-out tests
// (fanPayload, prepared_internal_test.go).
var loopbackPayload = engine.FanPayload

// loopbackCPU returns the CPU time the process has used.
func loopbackCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchFanOutLoopback publishes loopbackPayload to conns*2 subscribers:
// compressed once (NotifyPrepared, deflate), per subscriber (NotifyRaw,
// deflate) or not (NotifyPrepared, no deflate).
func benchFanOutLoopback(conns int, deflate, prepared bool) func(*testing.B) {
	return func(b *testing.B) {
		const perConn = 2
		tab := handler.NewTable(handler.WithLogger(quiet()), handler.WithMaxSubscriptions(perConn, conns*perConn))
		var mu sync.Mutex
		var made []*handler.Subscription // guarded by mu
		handler.RegisterSubscription(tab, "topic", func(_ context.Context, _ [1]string, s *handler.Subscription) error {
			mu.Lock()
			made = append(made, s)
			mu.Unlock()
			return nil
		}, handler.Inline())
		_, addr, _ := startEngine(b, tab, engine.WithWSCompression(true))
		var got atomic.Int64 // bytes read by all clients
		req := "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
		if deflate {
			req += "Sec-WebSocket-Extensions: permessage-deflate\r\n"
		}
		req += "\r\n"
		sub := []byte(`{"jsonrpc":"2.0","method":"topic_subscribe","params":["t"],"id":1}`)
		var frame []byte
		for range perConn {
			h := ws.Header{Fin: true, OpCode: ws.OpText, Masked: true, Length: int64(len(sub))}
			var hb strings.Builder
			_ = ws.WriteHeader(&hb, h)
			frame = append(append(frame, hb.String()...), sub...) // mask 0: the payload as it is
		}
		var wg sync.WaitGroup // the readers, which end when their connection is closed
		clients := make([]net.Conn, 0, conns)
		b.Cleanup(func() {
			for _, c := range clients {
				c.Close()
			}
			wg.Wait()
		})
		for i := range conns {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatalf("connection %d: %v", i, err)
			}
			clients = append(clients, c)
			r := bufio.NewReader(c)
			if _, err := io.WriteString(c, req); err != nil {
				b.Fatal(err)
			}
			resp, err := http.ReadResponse(r, nil)
			if err != nil || resp.StatusCode != http.StatusSwitchingProtocols || (resp.Header.Get("Sec-WebSocket-Extensions") != "") != deflate {
				b.Fatalf("handshake %d: %v %v", i, resp, err)
			}
			if _, err := c.Write(frame); err != nil {
				b.Fatal(err)
			}
			for range perConn { // the subscribe replies
				hd, err := ws.ReadHeader(r)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := r.Discard(int(hd.Length)); err != nil {
					b.Fatal(err)
				}
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				buf := make([]byte, 64<<10)
				if n := r.Buffered(); n > 0 {
					k, _ := r.Read(buf[:n])
					got.Add(int64(k))
				}
				for {
					n, err := c.Read(buf)
					got.Add(int64(n))
					if err != nil {
						return
					}
				}
			}()
		}
		mu.Lock() // made on the loops: read here after them
		subs := made
		mu.Unlock()
		if len(subs) != conns*perConn {
			b.Fatalf("%d subscriptions, want %d", len(subs), conns*perConn)
		}
		publish := func() {
			if !prepared {
				for _, s := range subs {
					if err := s.NotifyRaw(loopbackPayload); err != nil {
						b.Fatal(err)
					}
				}
				return
			}
			msg := handler.NewPrepared(loopbackPayload)
			for _, s := range subs {
				if err := s.NotifyPrepared(msg); err != nil {
					b.Fatal(err)
				}
			}
			msg.Release()
		}
		wait := func(want int64) {
			deadline := time.Now().Add(30 * time.Second)
			for got.Load() < want {
				if time.Now().After(deadline) {
					b.Fatalf("read %d bytes of %d", got.Load(), want)
				}
				time.Sleep(50 * time.Microsecond)
			}
		}
		publish()
		var perMsg int64 // the bytes one message makes: the same each time
		for last := int64(-1); perMsg != last || perMsg == 0; {
			last = perMsg
			time.Sleep(200 * time.Millisecond)
			perMsg = got.Load()
		}
		cpu0 := loopbackCPU()
		k := int64(1)
		for b.Loop() {
			publish()
			k++
			wait(k * perMsg)
		}
		cpu := loopbackCPU() - cpu0
		n := float64(b.N * conns * perConn)
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/delivery")
		b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/delivery")
		b.ReportMetric(float64(perMsg)/float64(conns*perConn), "wire-B/delivery")
	}
}

// BenchmarkFanOutLoopback: a 2 KB JSON message to 10,000 subscribers
// over loopback WebSocket connections, compressed once, per subscriber
// and not at all, in one run: time, the process's CPU and the bytes on
// the wire per delivery.
func BenchmarkFanOutLoopback(b *testing.B) {
	const conns = 5000
	b.Run("once", benchFanOutLoopback(conns, true, true))
	b.Run("per-subscriber", benchFanOutLoopback(conns, true, false))
	b.Run("none", benchFanOutLoopback(conns, false, true))
}

// TestBenchmarkFanOutLoopback runs BenchmarkFanOutLoopback briefly, over
// 50 connections, as a test.
func TestBenchmarkFanOutLoopback(t *testing.T) {
	if testing.Short() {
		t.Skip("benchmarks as tests are skipped in -short mode")
	}
	engine.BenchBriefly(t, benchFanOutLoopback(50, true, true), benchFanOutLoopback(50, true, false), benchFanOutLoopback(50, false, true))
}
