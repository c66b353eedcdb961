package engine_test

// NOTE: socket tests of HTTP compression (compress.go): replies
// negotiated from Accept-Encoding and checked byte for byte against the
// raw reply once decompressed, on every path a reply takes (inline, a
// worker, a batch, pipelined); request bodies inflated, and bombs
// refused at the message limit.

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
)

// bigJSON is a JSON array of about n bytes, as a method returns it
// (benchJSON, the benchmarks').
func bigJSON(n int) handler.Raw { return engine.BenchJSON(n) }

// compressionTable is the demo table with "big", an inline method whose
// result is a 100 KB array, and "big_slow", the same on a worker.
func compressionTable() *handler.Table {
	tab := handler.NewTable(handler.WithLogger(quiet()), handler.WithMaxResponseSize(32<<20, 0))
	demo.Register(tab)
	big := bigJSON(100_000)
	handler.RegisterNoParams(tab, "big", func(context.Context) (handler.Raw, error) { return big, nil }, handler.Inline())
	handler.RegisterNoParams(tab, "big_slow", func(context.Context) (handler.Raw, error) { return big, nil })
	return tab
}

const (
	bigCall     = `{"jsonrpc":"2.0","method":"big","id":1}`
	bigSlowCall = `{"jsonrpc":"2.0","method":"big_slow","id":1}`
	addCall     = `{"jsonrpc":"2.0","method":"add","params":[40,2],"id":1}`
)

// decode returns body decoded as its Content-Encoding says.
func decode(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	body := []byte(bodyOf(resp))
	switch ce := resp.Header.Get("Content-Encoding"); ce {
	case "":
		return body
	case "gzip":
		r, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		out, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return out
	case "zstd":
		d, err := zstd.NewReader(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		out, err := d.DecodeAll(body, nil)
		if err != nil {
			t.Fatal(err)
		}
		return out
	default:
		t.Fatalf("Content-Encoding %q", ce)
		return nil
	}
}

// rawReply returns the reply to body from a request without
// Accept-Encoding, checked to be raw.
func rawReply(t *testing.T, addr, body string) []byte {
	t.Helper()
	resps := rawHTTP(t, addr, post(body, ""), 1)
	if len(resps) != 1 || resps[0].StatusCode != 200 || resps[0].Header.Get("Content-Encoding") != "" {
		t.Fatalf("raw reply: %v", resps)
	}
	return []byte(bodyOf(resps[0]))
}

// TestHTTPCompression_netHTTPClientGetsGzip: Go's client asks for gzip by
// itself; the reply it decompresses is the raw reply byte for byte, and
// says Vary: Accept-Encoding.
func TestHTTPCompression_netHTTPClientGetsGzip(t *testing.T) {
	_, addr, _ := startEngine(t, compressionTable(), engine.WithCompression("gzip", "zstd"))
	want := rawReply(t, addr, bigCall)
	for _, call := range []string{bigCall, bigSlowCall} {
		resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader(call))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !resp.Uncompressed {
			t.Errorf("%s: the reply was not compressed (%v)", call, resp.Header)
		}
		if v := resp.Header.Get("Vary"); v != "Accept-Encoding" {
			t.Errorf("%s: Vary %q", call, v)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: decompressed reply differs from the raw one (%d bytes, want %d)", call, len(got), len(want))
		}
	}
}

// TestHTTPCompression_negotiation: the coding follows Accept-Encoding —
// q-values, "*", identity, unknown codings — and the engine's order
// breaks ties; small replies, 204 and the health check go out raw.
func TestHTTPCompression_negotiation(t *testing.T) {
	_, addr, _ := startEngine(t, compressionTable(), engine.WithCompression("gzip", "zstd"))
	want := rawReply(t, addr, bigCall)
	for _, c := range []struct {
		ae, body, coding string
	}{
		{"gzip", bigCall, "gzip"},
		{"zstd", bigCall, "zstd"},
		{"GZIP", bigCall, "gzip"},
		{"x-gzip", bigCall, "gzip"},
		{"zstd, gzip", bigCall, "gzip"}, // equal q: the engine's order
		{"gzip;q=0.5, zstd", bigCall, "zstd"},
		{"gzip; q=0.9, zstd;q=0.8", bigCall, "gzip"},
		{"gzip;q=0", bigCall, ""},
		{"gzip;q=0, *", bigCall, "zstd"},
		{"*", bigCall, "gzip"},
		{"*;q=0", bigCall, ""},
		{"identity", bigCall, ""},
		{"br, deflate", bigCall, ""},
		{"gzip;q=x", bigCall, ""},
		{"gzip", bigSlowCall, "gzip"},
		{"zstd", bigSlowCall, "zstd"},
		{"gzip", addCall, ""}, // under the minimum size
	} {
		resps := rawHTTP(t, addr, post(c.body, "Accept-Encoding: "+c.ae+"\r\n"), 1)
		if len(resps) != 1 || resps[0].StatusCode != 200 {
			t.Fatalf("%q %s: %v", c.ae, c.body, resps)
		}
		r := resps[0]
		if got := r.Header.Get("Content-Encoding"); got != c.coding {
			t.Errorf("%q %s: Content-Encoding %q, want %q", c.ae, c.body, got, c.coding)
		}
		if v := r.Header.Get("Vary"); v != "Accept-Encoding" {
			t.Errorf("%q %s: Vary %q", c.ae, c.body, v)
		}
		if c.body != addCall && !bytes.Equal(decode(t, r), want) {
			t.Errorf("%q %s: decoded reply differs from the raw one", c.ae, c.body)
		}
	}
	// Notifications (204) and the health check are never compressed.
	resps := rawHTTP(t, addr, post(`{"jsonrpc":"2.0","method":"update"}`, "Accept-Encoding: gzip\r\n")+
		"GET /health HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n", 2)
	if len(resps) != 2 || resps[0].StatusCode != 204 || resps[1].StatusCode != 200 {
		t.Fatalf("204 and health: %v", resps)
	}
	for _, r := range resps {
		if ce := r.Header.Get("Content-Encoding"); ce != "" {
			t.Errorf("%d: Content-Encoding %q", r.StatusCode, ce)
		}
	}
}

// TestHTTPCompression_batchesAndPipelining: a batch's reply is compressed
// as one body, and pipelined requests — inline and on a worker, each
// with its own coding — get their replies in order, each right.
func TestHTTPCompression_batchesAndPipelining(t *testing.T) {
	_, addr, _ := startEngine(t, compressionTable(), engine.WithCompression("zstd", "gzip"))
	batch := "[" + bigCall + "," + addCall + "," + bigSlowCall + "]"
	wantBatch := rawReply(t, addr, batch)
	wantBig := rawReply(t, addr, bigCall)
	wantAdd := rawReply(t, addr, addCall)
	req := post(batch, "Accept-Encoding: gzip\r\n") +
		post(bigSlowCall, "Accept-Encoding: zstd\r\n") +
		post(addCall, "Accept-Encoding: gzip\r\n") +
		post(bigCall, "Accept-Encoding: gzip, zstd\r\n") +
		post(bigCall, "")
	resps := rawHTTP(t, addr, req, 5)
	if len(resps) != 5 {
		t.Fatalf("%d replies, want 5", len(resps))
	}
	for i, c := range []struct {
		coding string
		want   []byte
	}{{"gzip", wantBatch}, {"zstd", wantBig}, {"", wantAdd}, {"zstd", wantBig}, {"", wantBig}} {
		if got := resps[i].Header.Get("Content-Encoding"); got != c.coding {
			t.Errorf("reply %d: Content-Encoding %q, want %q", i, got, c.coding)
		}
		if !bytes.Equal(decode(t, resps[i]), c.want) {
			t.Errorf("reply %d: decoded reply differs from the raw one", i)
		}
	}
}

// TestHTTPCompression_offByDefault: without Options.Compression a client
// that asks for gzip gets the raw reply, without Vary.
func TestHTTPCompression_offByDefault(t *testing.T) {
	_, addr, _ := startEngine(t, compressionTable())
	resps := rawHTTP(t, addr, post(bigCall, "Accept-Encoding: gzip, zstd\r\n"), 1)
	if len(resps) != 1 || resps[0].Header.Get("Content-Encoding") != "" || resps[0].Header.Get("Vary") != "" {
		t.Fatalf("%v", resps)
	}
}

// gzipped returns b gzipped.
func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = w.Write(b)
	_ = w.Close()
	return buf.Bytes()
}

// zstded returns b compressed with zstd.
func zstded(b []byte) []byte {
	w, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	defer w.Close()
	return w.EncodeAll(b, nil)
}

// postEncoded is a request whose body, body, is compressed with coding.
func postEncoded(coding string, body []byte) string {
	return "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: " + coding +
		"\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + string(body)
}

// TestHTTPCompression_requestBodies: a body sent with Content-Encoding
// gzip or zstd is inflated and run; one that inflates past the message
// limit (a bomb: 64 MiB of zeros in about 64 KB) is refused 413, and a
// body that is not valid for its coding 400, the connection persisting
// after both; a coding not configured, or unknown, is refused 415.
func TestHTTPCompression_requestBodies(t *testing.T) {
	_, addr, _ := startEngine(t, compressionTable(), engine.WithCompression("gzip", "zstd"), engine.WithMaxMessageSize(1<<20))
	echo := []byte(`{"jsonrpc":"2.0","method":"echo","params":` + string(bigJSON(50_000)) + `,"id":7}`)
	want := rawReply(t, addr, string(echo))
	bomb := []byte(`{"jsonrpc":"2.0","method":"echo","params":"` + strings.Repeat("0", 64<<20) + `","id":1}`)
	for _, c := range []struct {
		name, coding string
		body         []byte
		status       int
	}{
		{"gzip", "gzip", gzipped(echo), 200},
		{"zstd", "zstd", zstded(echo), 200},
		{"identity", "identity", echo, 200},
		{"gzip bomb", "gzip", gzipped(bomb), 413},
		{"zstd bomb", "zstd", zstded(bomb), 413},
		{"not gzip", "gzip", echo, 400},
		{"truncated zstd", "zstd", zstded(echo)[:100], 400},
	} {
		// The refused request is followed by another on the same connection.
		resps := rawHTTP(t, addr, postEncoded(c.coding, c.body)+post(addCall, ""), 2)
		if len(resps) != 2 || resps[0].StatusCode != c.status || resps[1].StatusCode != 200 {
			t.Fatalf("%s (%d bytes): %v", c.name, len(c.body), resps)
		}
		if c.status == 200 && !bytes.Equal([]byte(bodyOf(resps[0])), want) {
			t.Errorf("%s: reply differs from the raw request's", c.name)
		}
	}
	// A chunked body, inflated once its last chunk is in.
	gz := gzipped(echo)
	chunked := "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n" +
		strconv.FormatInt(int64(len(gz)/2), 16) + "\r\n" + string(gz[:len(gz)/2]) + "\r\n" +
		strconv.FormatInt(int64(len(gz)-len(gz)/2), 16) + "\r\n" + string(gz[len(gz)/2:]) + "\r\n0\r\n\r\n"
	if resps := rawHTTP(t, addr, chunked, 1); len(resps) != 1 || resps[0].StatusCode != 200 || bodyOf(resps[0]) != string(want) {
		t.Errorf("chunked gzip body: %v", resps)
	}
	for _, coding := range []string{"br", "gzip, zstd", "deflate"} {
		resps := rawHTTP(t, addr, postEncoded(coding, gzipped(echo)), 1)
		if len(resps) != 1 || resps[0].StatusCode != 415 || bodyOf(resps[0]) != "unsupported Content-Encoding\n" {
			t.Errorf("Content-Encoding %q: %v", coding, resps)
		}
	}
	// An engine that compresses with gzip only takes gzip bodies only.
	_, gzAddr, _ := startEngine(t, compressionTable(), engine.WithCompression("gzip"))
	if resps := rawHTTP(t, gzAddr, postEncoded("zstd", zstded(echo)), 1); len(resps) != 1 || resps[0].StatusCode != 415 {
		t.Errorf("zstd body to a gzip engine: %v", resps)
	}
}
