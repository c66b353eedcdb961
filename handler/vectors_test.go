package handler_test

// The spec examples and edge cases of testdata, run against the demo
// methods through Dispatch, DispatchInline and the net/http adapter.

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
)

func vectors(t testing.TB) []demo.Vector {
	t.Helper()
	vs, err := demo.LoadVectors("../testdata")
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) < 90 {
		t.Fatalf("only %d vectors", len(vs))
	}
	return vs
}

// TestVectors_dispatch runs every spec example and edge case of testdata through
// Dispatch, and through DispatchInline with what an event loop does with
// a message it defers: Run on a goroutine, from the Pending, after the
// message's own bytes are gone.
func TestVectors_dispatch(t *testing.T) {
	tab := demoTable(t)
	for _, v := range vectors(t) {
		t.Run(v.File+"/"+v.Name, func(t *testing.T) {
			got := tab.Dispatch(context.Background(), nil, v.Request)
			if err := demo.SameReply(got, v.Response); err != nil {
				t.Fatalf("%s\nrequest %s\n%v", v.Note, v.Request, err)
			}
			msg := append([]byte(nil), v.Request...)
			var later handler.Pending
			out, oc := tab.DispatchInline(context.Background(), []byte("prefix"), msg, &later)
			if oc == handler.Deferred {
				if string(out) != "prefix" || later.Empty() {
					t.Fatalf("DispatchInline deferred but wrote %q (pending empty: %v)", out, later.Empty())
				}
				clear(msg) // the Pending holds its own copy
				out = later.Run(context.Background(), out)
				if !later.Empty() {
					t.Fatal("Run left the Pending filled")
				}
			}
			if !bytes.HasPrefix(out, []byte("prefix")) {
				t.Fatalf("the caller's buffer was overwritten: %q", out)
			}
			if err := demo.SameReply(out[len("prefix"):], v.Response); err != nil {
				t.Fatalf("DispatchInline: %v", err)
			}
		})
	}
}

// TestVectors_HTTP runs the vectors through the net/http adapter over a
// real loopback socket.
func TestVectors_HTTP(t *testing.T) {
	srv := httptest.NewServer(handler.NewHTTPHandler(demoTable(t)))
	defer srv.Close()
	for _, v := range vectors(t) {
		t.Run(v.File+"/"+v.Name, func(t *testing.T) {
			resp, err := http.Post(srv.URL, "application/json", bytes.NewReader(v.Request))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if v.Response == nil {
				if resp.StatusCode != http.StatusNoContent || len(body) != 0 {
					t.Fatalf("want 204 and no body, got %d %q", resp.StatusCode, body)
				}
				return
			}
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("status %d content-type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			if err := demo.SameReply(body, v.Response); err != nil {
				t.Fatalf("%s\n%v", v.Note, err)
			}
		})
	}
}
