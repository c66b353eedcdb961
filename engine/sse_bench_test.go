package engine_test

// BenchmarkNotifications: what one notification costs from a call that
// sends many, received whole by the client over loopback: as events of
// an HTTP event stream against as WebSocket pushes, on the same engine.
// An op is one notification (MB/s reads as millions of notifications a
// second); the client's reading is in the figure, in the same process.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
)

// notificationsTable has burst [n]: n progress notifications of about
// 100 bytes, then n.
func notificationsTable() *handler.Table {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	msg := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"abc","progress":12345,"total":99999}}`)
	handler.Register(tab, "burst", func(ctx context.Context, p [1]int) (int, error) {
		c := handler.ConnFrom(ctx)
		for range p[0] {
			if err := c.Send(msg); err != nil {
				return 0, err
			}
		}
		return p[0], nil
	})
	return tab
}

func BenchmarkNotifications(b *testing.B) {
	const perCall = 1000
	_, addr, _ := startEngine(b, notificationsTable(), engine.WithSSE(true), engine.WithMaxPushQueue(64<<20))
	call := fmt.Sprintf(`{"jsonrpc":"2.0","method":"burst","params":[%d],"id":1}`, perCall)
	b.Run("sse", func(b *testing.B) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		r := bufio.NewReaderSize(c, 1<<16)
		req := fmt.Sprintf("POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(call), call)
		b.SetBytes(1)
		b.ResetTimer()
		for i := 0; i < b.N; i += perCall {
			if _, err := io.WriteString(c, req); err != nil {
				b.Fatal(err)
			}
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				b.Fatal(err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			if err != nil || n < perCall*100 {
				b.Fatalf("%d bytes: %v", n, err)
			}
		}
	})
	b.Run("websocket", func(b *testing.B) {
		ws := dialWS(b, addr, nil)
		b.SetBytes(1)
		b.ResetTimer()
		for i := 0; i < b.N; i += perCall {
			if err := ws.WriteMessage(websocket.TextMessage, []byte(call)); err != nil {
				b.Fatal(err)
			}
			// The notifications and the reply, in whatever order (over a
			// WebSocket a call's own notifications follow its reply).
			for got, replied := 0, false; got < perCall || !replied; {
				_, m, err := ws.ReadMessage()
				if err != nil {
					b.Fatal(err)
				}
				if strings.HasPrefix(string(m), `{"jsonrpc":"2.0","result"`) {
					replied = true
				} else {
					got++
				}
			}
		}
	})
}
