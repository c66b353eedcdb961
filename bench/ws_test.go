package bench

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsutil"
)

// TestConsumeWS_longPing: a server ping over 125 bytes is a protocol
// error, not answered with a malformed pong.
func TestConsumeWS_longPing(t *testing.T) {
	cfg := Config{Target: "ws://127.0.0.1:1/"}
	if err := cfg.fill(); err != nil {
		t.Fatal(err)
	}
	tg, _ := parseTarget(cfg.Target)
	msgs, _ := messagesFromFlags(cfg.Method, cfg.Params, cfg.Batch, cfg.Notify)
	w := newWorker(newRunner(cfg, tg, msgs), 0)
	ping := append([]byte{0x89, 126, 0, 200}, make([]byte, 200)...)
	if _, bad := w.consumeWS(ping); bad != ErrWebSocket || len(w.pong) != 0 {
		t.Fatalf("ping of 200 bytes: bad %q, pong %d bytes", bad, len(w.pong))
	}
	if _, bad := w.consumeWS([]byte{0x89, 2, 'h', 'i'}); bad != "" || len(w.pong) != 2+4+2 {
		t.Fatalf("ping of 2 bytes: bad %q, pong % x", bad, w.pong)
	}
}

// TestRun_webSocketFragmentsAndPings: fragmented replies with pings
// between fragments are right.
func TestRun_webSocketFragmentsAndPings(t *testing.T) {
	pongs := make(chan struct{}, 1000)
	addr := fakeServer(t, func(c net.Conn) {
		if _, err := ws.Upgrade(c); err != nil {
			return
		}
		for {
			h, err := ws.ReadHeader(c)
			if err != nil {
				return
			}
			p := make([]byte, h.Length)
			if _, err := io.ReadFull(c, p); err != nil {
				return
			}
			if h.Masked {
				ws.Cipher(p, h.Mask, 0)
			}
			if h.OpCode == ws.OpPong {
				pongs <- struct{}{}
				continue
			}
			r := []byte(okReply(requestIDs(string(p))[0]))
			ws.WriteHeader(c, ws.Header{Fin: false, OpCode: ws.OpText, Length: 3})
			c.Write(r[:3])
			wsutil.WriteServerMessage(c, ws.OpPing, []byte("hi"))
			ws.WriteHeader(c, ws.Header{Fin: false, OpCode: ws.OpContinuation, Length: 5})
			c.Write(r[3:8])
			ws.WriteHeader(c, ws.Header{Fin: true, OpCode: ws.OpContinuation, Length: int64(len(r) - 8)})
			c.Write(r[8:])
		}
	})
	res := mustRun(t, Config{Target: "ws://" + addr + "/", Requests: 50, Timeout: time.Second})
	t.Logf("ws: requests %d errors %v pongs %d", res.Requests, res.Errors, len(pongs))
	if res.TotalErrors() != 0 || res.Requests != 50 {
		t.Fatalf("%+v", res)
	}
}
