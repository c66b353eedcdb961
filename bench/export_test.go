package bench

// Test helpers exported to the external tests (bench_test): loopback
// servers that a test stops when it ends.

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/engine/enginetest"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
)

// NewLineServer starts a newline-delimited stream server on loopback for
// the tests (also the external ones: bench_test) and returns its address:
// answer gets each request line and its number on the connection, and
// returns what to write (possibly "").
func NewLineServer(t *testing.T, answer func(line string, n int) string) string {
	return fakeServer(t, func(c net.Conn) {
		r := bufio.NewReader(c)
		for n := 0; ; n++ {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if s := answer(line, n); s != "" {
				if _, err := io.WriteString(c, s); err != nil {
					return
				}
			}
		}
	})
}

// StartDemoServer serves jetrpc's demo methods on TCP and a Unix socket
// until the test ends, for the tests (also the external ones: bench_test),
// and returns both addresses.
func StartDemoServer(t *testing.T) (tcp, unix string) {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	tab := handler.NewTable(handler.WithLogger(quiet))
	demo.Register(tab)
	sock := filepath.Join(t.TempDir(), "b.sock")
	_, addr := enginetest.Start(t, tab, engine.WithAddrs("tcp://127.0.0.1:0", "unix://"+sock))
	return addr, sock
}

// NewClosingServer starts a stream server that answers each connection's
// first request, then closes it; it returns its address.
func NewClosingServer(t *testing.T) string {
	return fakeServer(t, func(c net.Conn) {
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return
		}
		_, after, _ := strings.Cut(line, `"id":`)
		_, _ = io.WriteString(c, `{"jsonrpc":"2.0","result":3,"id":`+strings.TrimSuffix(strings.TrimSpace(after), "}")+"}\n")
		c.Close()
	})
}
