//go:build !race

package engine

// NOTE: the allocation guards of HTTP compression: with pooled encoders a
// compressed reply allocates nothing in the steady state, and an engine
// that compresses costs nothing to a request that does not ask.

import (
	"context"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/pool"
)

// TestConn_zeroAllocsWithCompression: with compression on, a reply
// compressed with gzip or zstd — 100 KB inline, 16 KB from a worker — a
// small reply under the minimum size, and a request that does not ask
// for compression allocate nothing per request. (A worker's reply over
// 64 KiB allocates with or without compression: the job's buffer is not
// pooled past that size.)
func TestConn_zeroAllocsWithCompression(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	tab := handler.NewTable(handler.WithMaxResponseSize(32<<20, 0))
	demo.Register(tab)
	big := handler.Raw(`[` + strings.Repeat(`{"index":12345,"hash":"0x9e3779b97f4a7c15","status":"confirmed"},`, 1600) + `0]`)
	handler.RegisterNoParams(tab, "big", func(context.Context) (handler.Raw, error) { return big, nil }, handler.Inline())
	mid := handler.Raw(`[` + strings.Repeat(`{"index":12345,"hash":"0x9e3779b97f4a7c15","status":"confirmed"},`, 250) + `0]`)
	handler.RegisterNoParams(tab, "mid_slow", func(context.Context) (handler.Raw, error) { return mid, nil })
	cs, fc := newFakeConnOf(t, tab, WithCompression("gzip", "zstd"))
	cs.e.workers = pool.NewWorkers(1, 16)
	defer cs.e.workers.Close()
	req := func(body, ae string) string {
		return "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + ae + "Content-Length: " + itoa(len(body)) + "\r\n\r\n" + body
	}
	bigCall := `{"jsonrpc":"2.0","method":"big","id":1}`
	slowCall := `{"jsonrpc":"2.0","method":"mid_slow","id":1}`
	add := `{"jsonrpc":"2.0","method":"add","params":[40,2],"id":1}`
	for _, c := range []struct {
		name, in string
		worker   bool
		want     string
	}{
		{"gzip inline", req(bigCall, "Accept-Encoding: gzip\r\n"), false, "Content-Encoding: gzip\r\n"},
		{"zstd inline", req(bigCall, "Accept-Encoding: zstd\r\n"), false, "Content-Encoding: zstd\r\n"},
		{"gzip worker", req(slowCall, "Accept-Encoding: gzip\r\n"), true, "Content-Encoding: gzip\r\n"},
		{"zstd worker", req(slowCall, "Accept-Encoding: zstd\r\n"), true, "Content-Encoding: zstd\r\n"},
		{"under the minimum", req(add, "Accept-Encoding: gzip\r\n"), false, `{"jsonrpc":"2.0","result":42,"id":1}`},
		{"not asked inline", req(bigCall, ""), false, "Vary: Accept-Encoding\r\n"},
		{"not asked worker", req(slowCall, ""), true, "Vary: Accept-Encoding\r\n"},
		{"small not asked", req(add, ""), false, `{"jsonrpc":"2.0","result":42,"id":1}`},
	} {
		assertRequestNoAllocs(t, cs, fc, c.name, c.in, c.worker, c.want)
	}
}
