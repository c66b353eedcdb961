package bench

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/engine/enginetest"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/topics"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// startDemoEngine serves jetrpc's demo methods on loopback with opts
// until the test ends, and returns its address.
func startDemoEngine(t *testing.T, opts ...engine.Option) string {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	tab := handler.NewTable(handler.WithLogger(quiet))
	demo.Register(tab)
	_, addr := enginetest.Start(t, tab, opts...)
	return addr
}

// bigEcho returns echo's params: one string of n bytes of JSON-RPC-like
// text, which compresses as replies do.
func bigEcho(n int) string {
	var b strings.Builder
	b.WriteString(`["`)
	for b.Len() < n {
		b.WriteString(`{\"jsonrpc\":\"2.0\",\"result\":{\"block\":12345,\"hash\":\"0xabcdef\"},\"id\":7},`)
	}
	b.WriteString(`"]`)
	return b.String()
}

// TestRun_httpCompressionDecodesAndShrinksTheWire: against a server
// that compresses, gzip, zstd and both get every reply checked, each one
// compressed, and fewer bytes read per request than raw replies.
func TestRun_httpCompressionDecodesAndShrinksTheWire(t *testing.T) {
	addr := startDemoEngine(t, engine.WithCompression(engine.CodingGzip, engine.CodingZstd))
	params := bigEcho(100 << 10)
	run := func(codings []string) *Result {
		res := mustRun(t, Config{Target: "http://" + addr + "/", Requests: 200, Method: "echo", Params: params, Compression: codings})
		if res.TotalErrors() != 0 || res.Requests != 200 {
			t.Fatalf("%v: %d requests, errors %v %v", codings, res.Requests, res.Errors, res.ErrorDetail)
		}
		var b strings.Builder
		res.WriteTable(&b)
		t.Logf("%v:\n%s", codings, b.String())
		return res
	}
	raw := run(nil)
	if raw.CompressedReplies != 0 || raw.Compression != "" || raw.WireInPerRequest < 100<<10 || raw.WireOutPerRequest < 100<<10 {
		t.Fatalf("raw: %d compressed, %q, %.0f B in, %.0f B out per request", raw.CompressedReplies, raw.Compression, raw.WireInPerRequest, raw.WireOutPerRequest)
	}
	sizes := map[string]float64{}
	for _, codings := range [][]string{{CodingGzip}, {CodingZstd}, {CodingZstd, CodingGzip}, {CodingGzip, CodingZstd}} {
		res := run(codings)
		sizes[strings.Join(codings, ",")] = res.WireInPerRequest
		if res.CompressedReplies < 200 || res.Compression != strings.Join(codings, ",") {
			t.Fatalf("%v: %d replies compressed, compression %q", codings, res.CompressedReplies, res.Compression)
		}
		if res.WireInPerRequest*10 > raw.WireInPerRequest {
			t.Fatalf("%v: %.0f B in per request, raw %.0f: want a tenth at most", codings, res.WireInPerRequest, raw.WireInPerRequest)
		}
		if d := res.WireOutPerRequest - raw.WireOutPerRequest; d < 20 || d > 50 {
			t.Fatalf("%v: %.0f B out per request, raw %.0f: want the Accept-Encoding line more", codings, res.WireOutPerRequest, raw.WireOutPerRequest)
		}
	}
	// The first coding named is preferred: the replies come in it.
	near := func(a, b float64) bool { return math.Abs(a-b) < 5 } // the head's Date aside
	if !near(sizes["zstd,gzip"], sizes["zstd"]) || !near(sizes["gzip,zstd"], sizes["gzip"]) || near(sizes["zstd"], sizes["gzip"]) {
		t.Fatalf("bytes in per request by codings asked: %v", sizes)
	}
}

// TestRun_httpCompressionOverTheGoroutineLoop: the open loop (a
// goroutine per connection) decodes and counts the wire as the event
// loops do.
func TestRun_httpCompressionOverTheGoroutineLoop(t *testing.T) {
	addr := startDemoEngine(t, engine.WithCompression(engine.CodingZstd))
	res := mustRun(t, Config{Target: "http://" + addr + "/", Requests: 100, Rate: 2000, Method: "echo", Params: bigEcho(20 << 10),
		Compression: []string{CodingZstd}})
	if res.TotalErrors() != 0 || res.CompressedReplies < 100 || res.WireInPerRequest > 5<<10 || res.WireOutPerRequest < 20<<10 {
		t.Fatalf("errors %v, %d compressed, %.0f B in, %.0f B out per request", res.Errors, res.CompressedReplies, res.WireInPerRequest, res.WireOutPerRequest)
	}
}

// TestRun_httpBadEncodingIsAnError: a body that does not decode, and a
// coding the tool cannot decode, count as encoding errors, not as the
// JSON they are not.
func TestRun_httpBadEncodingIsAnError(t *testing.T) {
	for _, c := range []struct{ coding, body string }{
		{"gzip", "not gzip at all"},
		{"zstd", "not zstd at all"},
		{"br", `{"jsonrpc":"2.0","result":3,"id":1}`},
	} {
		target := rawHTTPServer(t, func(body string, n int) string {
			return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: " + c.coding +
				"\r\nContent-Length: " + strconv.Itoa(len(c.body)) + "\r\n\r\n" + c.body
		})
		res := mustRun(t, Config{Target: target, Requests: 5, Conns: 1, Compression: []string{CodingGzip, CodingZstd}})
		if res.Errors[ErrEncoding] != 5 || len(res.Errors) != 1 || res.ErrorDetail[ErrEncoding] == "" {
			t.Fatalf("%s: errors %v, detail %v", c.coding, res.Errors, res.ErrorDetail)
		}
	}
}

// TestRun_acceptEncodingHeaderIsDecoded: an Accept-Encoding sent with
// Config.Header, without Compression, also has its replies decoded.
func TestRun_acceptEncodingHeaderIsDecoded(t *testing.T) {
	addr := startDemoEngine(t, engine.WithCompression(engine.CodingGzip))
	res := mustRun(t, Config{Target: "http://" + addr + "/", Requests: 50, Method: "echo", Params: bigEcho(8 << 10),
		Header: http.Header{"Accept-Encoding": {"gzip"}}})
	if res.TotalErrors() != 0 || res.CompressedReplies != 50 {
		t.Fatalf("errors %v, %d compressed", res.Errors, res.CompressedReplies)
	}
}

// TestRun_wsCompressionNegotiatedAndInflated: with WSCompression the
// upgrade negotiates permessage-deflate with a server that has it, the
// compressed replies are inflated and checked, and fewer bytes are read
// per request; without it, or with a server that lacks it, the replies
// come raw.
func TestRun_wsCompressionNegotiatedAndInflated(t *testing.T) {
	on := "ws://" + startDemoEngine(t, engine.WithWSCompression(true)) + "/"
	off := "ws://" + startDemoEngine(t) + "/"
	params := bigEcho(50 << 10)
	run := func(target string, deflate bool, rate float64) *Result {
		res := mustRun(t, Config{Target: target, Requests: 200, Rate: rate, Method: "echo", Params: params, WSCompression: deflate})
		if res.TotalErrors() != 0 || res.Requests != 200 {
			t.Fatalf("%s, deflate %v: %d requests, errors %v %v", target, deflate, res.Requests, res.Errors, res.ErrorDetail)
		}
		return res
	}
	raw := run(on, false, 0)
	if raw.CompressedReplies != 0 {
		t.Fatalf("not offered: %d replies compressed", raw.CompressedReplies)
	}
	for _, rate := range []float64{0, 4000} { // the event loops, then the goroutines
		res := run(on, true, rate)
		if res.CompressedReplies < 200 || res.Compression != "permessage-deflate" || res.WireInPerRequest*10 > raw.WireInPerRequest {
			t.Fatalf("rate %v: %d compressed, %.0f B in per request, raw %.0f", rate, res.CompressedReplies, res.WireInPerRequest, raw.WireInPerRequest)
		}
		if res.WireOutPerRequest < 50<<10 {
			t.Fatalf("rate %v: %.0f B out per request: the requests are sent raw", rate, res.WireOutPerRequest)
		}
	}
	if res := run(off, true, 0); res.CompressedReplies != 0 || res.WireInPerRequest < 50<<10 {
		t.Fatalf("declined: %d compressed, %.0f B in per request", res.CompressedReplies, res.WireInPerRequest)
	}
}

// TestHandshakeWS_deflateAnswer: the offer is accepted by a server with
// WebSocket compression and declined, without error, by one without.
func TestHandshakeWS_deflateAnswer(t *testing.T) {
	for _, c := range []struct {
		opts []engine.Option
		want bool
	}{{nil, false}, {[]engine.Option{engine.WithWSCompression(true)}, true}} {
		tg, err := parseTarget("ws://" + startDemoEngine(t, c.opts...) + "/")
		if err != nil {
			t.Fatal(err)
		}
		nc, err := net.Dial("tcp", tg.address)
		if err != nil {
			t.Fatal(err)
		}
		got, err := handshakeWS(nc, &tg, nil, true, 5*time.Second)
		nc.Close()
		if err != nil || got != c.want {
			t.Fatalf("server compression %v: negotiated %v, err %v", c.want, got, err)
		}
	}
}

// TestRunFanout_wsCompression: subscribers that offer permessage-deflate
// to a node that compresses get every delivery, inflated, in fewer wire
// bytes than the payload.
func TestRunFanout_wsCompression(t *testing.T) {
	url := startTopicNode(t, topicTable(topics.New(nil, nil)), engine.WithWSCompression(true))
	res := mustFanout(t, FanoutConfig{Targets: []string{url}, Subscribers: 20, Publishes: 30, PayloadSize: 4000, WSCompression: true})
	checkClean(t, res, 20, 30)
	if res.CompressedMessages != 20*30 || res.WireInPerMessage <= 0 || res.WireInPerMessage > 1000 {
		t.Fatalf("%d compressed messages, %.0f B per message", res.CompressedMessages, res.WireInPerMessage)
	}
	raw := mustFanout(t, FanoutConfig{Targets: []string{url}, Subscribers: 20, Publishes: 30, PayloadSize: 4000})
	checkClean(t, raw, 20, 30)
	if raw.CompressedMessages != 0 || raw.WireInPerMessage < 4000 {
		t.Fatalf("not offered: %d compressed messages, %.0f B per message", raw.CompressedMessages, raw.WireInPerMessage)
	}
}

// TestConfig_compressionChecks: the codings are gzip and zstd, each
// once; HTTP compression needs an http:// target and no Accept-Encoding
// header, WebSocket compression a ws:// target.
func TestConfig_compressionChecks(t *testing.T) {
	for _, c := range []struct {
		cfg Config
		ok  bool
	}{
		{Config{Target: "http://x/", Compression: []string{"gzip", "zstd"}}, true},
		{Config{Target: "https://x/", Compression: []string{"zstd"}}, true},
		{Config{Target: "ws://x/", WSCompression: true}, true},
		{Config{Target: "wss://x/", WSCompression: true}, true},
		{Config{Target: "http://x/", Compression: []string{"br"}}, false},
		{Config{Target: "http://x/", Compression: []string{"gzip", "gzip"}}, false},
		{Config{Target: "ws://x/", Compression: []string{"gzip"}}, false},
		{Config{Target: "tcp://x:1", Compression: []string{"gzip"}}, false},
		{Config{Target: "http://x/", WSCompression: true}, false},
		{Config{Target: "unix:///s", WSCompression: true}, false},
		{Config{Target: "http://x/", Compression: []string{"gzip"}, Header: http.Header{"Accept-Encoding": {"br"}}}, false},
	} {
		tg, err := parseTarget(c.cfg.Target)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.cfg.checkCompression(&tg); (err == nil) != c.ok {
			t.Errorf("%+v: err %v, want ok %v", c.cfg, err, c.ok)
		}
	}
}

// TestParseCompression_lists: a list of gzip and zstd, each once.
func TestParseCompression_lists(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // joined; "" for an error
	}{
		{"gzip", "gzip"}, {"zstd", "zstd"}, {"gzip,zstd", "gzip,zstd"}, {" zstd , gzip ", "zstd,gzip"},
		{"", ""}, {"br", ""}, {"gzip,", ""}, {"gzip,gzip", ""}, {"GZIP", ""},
	} {
		got, err := ParseCompression(c.in)
		if (err == nil) != (c.want != "") || strings.Join(got, ",") != c.want {
			t.Errorf("%q: %v, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// TestContentCoding_head: the Content-Encoding of a response head, in
// any case, with or without spaces; identity and none are no coding.
func TestContentCoding_head(t *testing.T) {
	for _, c := range []struct {
		head string
		want coding
	}{
		{"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", codingNone},
		{"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n", codingGzip},
		{"HTTP/1.1 200 OK\r\ncontent-encoding:zstd \r\nContent-Length: 3\r\n\r\nabc", codingZstd},
		{"HTTP/1.1 200 OK\r\nVary: Accept-Encoding\r\nCONTENT-ENCODING: GZIP\r\n\r\n", codingGzip},
		{"HTTP/1.1 200 OK\r\nContent-Encoding: identity\r\n\r\n", codingNone},
		{"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\n\r\n", codingOther},
		{"HTTP/1.1 200 OK\r\nContent-Encoding: gzip, zstd\r\n\r\n", codingOther},
		{"HTTP/1.1 200 OK\r\nX-Content-Encoding: gzip\r\n\r\n", codingNone},
	} {
		if got := contentCoding([]byte(c.head)); got != c.want {
			t.Errorf("%q: %v, want %v", c.head, got, c.want)
		}
	}
}

// TestDecoder_roundTrip: gzip, zstd and permessage-deflate bodies
// decode to what was compressed, one after another on one decoder, and
// a body that inflates past the limit is refused.
func TestDecoder_roundTrip(t *testing.T) {
	body := []byte(bigEcho(70 << 10))
	var d decoder
	for range 3 {
		for _, c := range []struct {
			name string
			run  func() ([]byte, error)
		}{
			{"gzip", func() ([]byte, error) { return d.decode(codingGzip, gzipped(t, body)) }},
			{"zstd", func() ([]byte, error) { return d.decode(codingZstd, zstded(t, body)) }},
			{"deflate", func() ([]byte, error) { return d.inflate(deflated(t, body)) }},
		} {
			got, err := c.run()
			if err != nil || !bytes.Equal(got, body) {
				t.Fatalf("%s: %d bytes, err %v", c.name, len(got), err)
			}
		}
	}
	d.max = 1000
	if _, err := d.decode(codingGzip, gzipped(t, body)); err != errInflatedTooLarge {
		t.Fatalf("gzip past the limit: %v", err)
	}
	if _, err := d.inflate(deflated(t, body)); err != errInflatedTooLarge {
		t.Fatalf("deflate past the limit: %v", err)
	}
	if _, err := d.decode(codingZstd, zstded(t, body)); err == nil {
		t.Fatal("zstd past the limit: no error")
	}
}

func gzipped(t testing.TB, b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func zstded(t testing.TB, b []byte) []byte {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(b, nil)
}

// deflated compresses b as a permessage-deflate message: a sync flush,
// its tail 0x00 0x00 0xff 0xff removed (RFC 7692 7.2.1).
func deflated(t testing.TB, b []byte) []byte {
	var out bytes.Buffer
	fw, err := flate.NewWriter(&out, flate.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := fw.Flush(); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(out.Bytes(), []byte{0, 0, 0xff, 0xff})
}

// TestConsumeWS_rsv1: RSV1 is a compressed message's mark only on a
// connection that negotiated permessage-deflate, and only on a data
// message's first frame; a fragmented compressed message is inflated
// whole, and one that does not inflate drops the connection as an
// encoding error.
func TestConsumeWS_rsv1(t *testing.T) {
	newWSWorker := func(deflate bool) *worker {
		cfg := Config{Target: "ws://127.0.0.1:1/", WSCompression: deflate}
		if err := cfg.fill(); err != nil {
			t.Fatal(err)
		}
		tg, _ := parseTarget(cfg.Target)
		msgs, _ := messagesFromFlags(cfg.Method, cfg.Params, cfg.Batch, cfg.Notify)
		w := newWorker(newRunner(cfg, tg, msgs), 0)
		w.deflate = deflate
		return w
	}
	reply := deflated(t, []byte(`{"jsonrpc":"2.0","result":3,"id":1}`))
	frame := func(first byte, payload []byte) []byte {
		return append([]byte{first, byte(len(payload))}, payload...)
	}
	for _, c := range []struct {
		name    string
		deflate bool
		in      []byte
		bad     string
	}{
		{"rsv1 not negotiated", false, frame(0xc1, reply), ErrWebSocket},
		{"rsv1 on a ping", true, frame(0xc9, nil), ErrWebSocket},
		{"rsv1 on a continuation", true, append(frame(0x41, reply[:3]), frame(0xc0, reply[3:])...), ErrWebSocket},
		{"rsv2", true, frame(0xa1, reply), ErrWebSocket},
		{"compressed, whole", true, frame(0xc1, reply), ""},
		{"compressed, in two frames", true, append(frame(0x41, reply[:3]), frame(0x80, reply[3:])...), ""},
		{"does not inflate", true, frame(0xc1, []byte{0xff, 0xff, 0xff}), ErrEncoding},
	} {
		w := newWSWorker(c.deflate)
		used, bad := w.consumeWS(c.in)
		if bad != c.bad || (bad == "" && used != len(c.in)) {
			t.Errorf("%s: used %d of %d, bad %q; want %q", c.name, used, len(c.in), bad, c.bad)
		}
		if c.bad == "" && w.compressed != 1 {
			t.Errorf("%s: %d compressed", c.name, w.compressed)
		}
	}
}

// TestRunTargets_compressionByKind: in a run over an http:// and a ws://
// target, Compression applies to the first and WSCompression to the
// second, so that one config compares them.
func TestRunTargets_compressionByKind(t *testing.T) {
	addr := startDemoEngine(t, engine.WithCompression(engine.CodingGzip), engine.WithWSCompression(true))
	cfg := Config{Conns: 2, Requests: 50, Warmup: -1, Method: "echo", Params: bigEcho(20 << 10),
		Compression: []string{CodingGzip}, WSCompression: true}
	res, err := RunTargets(context.Background(), cfg, []NamedTarget{{Name: "http", URL: "http://" + addr + "/"}, {Name: "ws", URL: "ws://" + addr + "/"}}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"gzip", "permessage-deflate"} {
		r := res.Targets[i].Runs[0]
		if r.TotalErrors() != 0 || r.Compression != want || r.CompressedReplies < 50 {
			t.Fatalf("%s: errors %v, compression %q, %d compressed", res.Targets[i].Name, r.Errors, r.Compression, r.CompressedReplies)
		}
	}
}
