package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/jetrpc/jetrpc/bench"
	"github.com/jetrpc/jetrpc/engine/enginetest"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/topics"
)

// writeSecret writes a JWT secret file as geth does (0x, 64 hex digits,
// a newline) and returns its path and the secret.
func writeSecret(t *testing.T) (path string, secret []byte) {
	t.Helper()
	const hex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	path = filepath.Join(t.TempDir(), "jwt.hex")
	if err := os.WriteFile(path, []byte("0x"+hex+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := range 32 {
		secret = append(secret, byte(i))
	}
	return path, secret
}

// TestBench_authFlags: -header is repeatable and adds canonical names;
// -jwt-secret reads the file when parsed.
func TestBench_authFlags(t *testing.T) {
	path, secret := writeSecret(t)
	var cfg bench.Config
	fs, _ := newBenchFlags(&cfg)
	err := fs.Parse([]string{"-header", "X-Api-Key: abc", "--header", "x-multi:a", "-header", "X-Multi:  b c ", "--jwt-secret", path})
	if err != nil {
		t.Fatal(err)
	}
	want := http.Header{"X-Api-Key": {"abc"}, "X-Multi": {"a", "b c"}}
	if !reflect.DeepEqual(cfg.Header, want) {
		t.Errorf("header %v, want %v", cfg.Header, want)
	}
	if !reflect.DeepEqual(cfg.JWTSecret, secret) {
		t.Errorf("secret %x, want %x", cfg.JWTSecret, secret)
	}
	if err := checkAuthFlags(&cfg, "ws://127.0.0.1:1/"); err != nil {
		t.Errorf("a ws:// target: %v", err)
	}
	if err := checkAuthFlags(&cfg, ""); err != nil { // the in-process server, over HTTP
		t.Errorf("no target: %v", err)
	}
}

// TestBench_authFlagErrors: a bad -header or -jwt-secret, or one with a
// raw stream target, is a usage error printed before anything is dialed.
func TestBench_authFlagErrors(t *testing.T) {
	secret, _ := writeSecret(t)
	short := filepath.Join(t.TempDir(), "short.hex")
	if err := os.WriteFile(short, []byte("0x0102\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string // in stderr's first line
	}{
		{[]string{"-header", "NoColon", "http://127.0.0.1:1/"}, `invalid value "NoColon" for flag -header: header "NoColon": want 'Name: Value'`},
		{[]string{"-header", "Bad Name: x", "http://127.0.0.1:1/"}, `header name "Bad Name": not an HTTP token`},
		{[]string{"-header", ": x", "http://127.0.0.1:1/"}, "a header without a name"},
		{[]string{"-header", "X-A: a\r\nX-B: b", "http://127.0.0.1:1/"}, "header X-A: its value holds a control character"},
		{[]string{"-header", "X-A: a\nb", "http://127.0.0.1:1/"}, "control character"},
		{[]string{"-header", "Host: example.com", "http://127.0.0.1:1/"}, "header Host is the tool's own; it cannot be set"},
		{[]string{"-header", "content-type: text/plain", "http://127.0.0.1:1/"}, "header content-type is the tool's own"},
		{[]string{"-header", "Transfer-Encoding: chunked", "http://127.0.0.1:1/"}, "the tool's own"},
		{[]string{"-header", "Connection: close", "http://127.0.0.1:1/"}, "the tool's own"},
		{[]string{"-header", "Upgrade: h2c", "ws://127.0.0.1:1/"}, "the tool's own"},
		{[]string{"-header", "Content-Length: 3", "http://127.0.0.1:1/"}, "the tool's own"},
		{[]string{"-header", "Sec-WebSocket-Protocol: x", "ws://127.0.0.1:1/"}, "Sec-WebSocket-* headers are the tool's own"},
		{[]string{"-jwt-secret", filepath.Join(t.TempDir(), "none"), "http://127.0.0.1:1/"}, "for flag -jwt-secret: open"},
		{[]string{"-jwt-secret", short, "http://127.0.0.1:1/"}, "the JWT secret is 2 bytes; want 32"},
		{[]string{"-header", "X-A: 1", "tcp://127.0.0.1:1"}, "need an http:// or ws:// target; tcp://127.0.0.1:1 is a raw stream"},
		{[]string{"-jwt-secret", secret, "unix:///tmp/jetrpc.sock"}, "need an http:// or ws:// target"},
		{[]string{"-header", "Authorization: Basic eA==", "-jwt-secret", secret, "http://127.0.0.1:1/"}, "the JWT is sent as the Authorization header"},
	} {
		args := append([]string{"bench", "-q"}, c.args...)
		var out, errOut syncBuffer
		err := run(context.Background(), args, &out, &errOut)
		if !errors.As(err, new(errUsage)) {
			t.Errorf("%q: err %v, want an errUsage", c.args, err)
			continue
		}
		first, rest, _ := strings.Cut(errOut.String(), "\n")
		if !strings.Contains(first, c.want) || first != "jetrpc bench: "+err.Error() {
			t.Errorf("%q: stderr starts %q; want it to hold %q", c.args, first, c.want)
		}
		if !strings.Contains(rest, "usage: jetrpc bench") || out.String() != "" {
			t.Errorf("%q: stdout %q, stderr %q", c.args, out.String(), errOut.String())
		}
	}
}

// TestBench_auth: jetrpc bench -header -jwt-secret against a server that
// answers 401 unless the header and a valid JWT (HS256, iat within 60 s,
// as geth checks it) come with the request.
func TestBench_auth(t *testing.T) {
	path, secret := writeSecret(t)
	var good, bad atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		claims := jwt.MapClaims{}
		_, err := jwt.ParseWithClaims(tok, claims, func(*jwt.Token) (any, error) { return secret, nil },
			jwt.WithValidMethods([]string{"HS256"}), jwt.WithIssuedAt())
		iat, _ := claims.GetIssuedAt()
		if err != nil || iat == nil || time.Since(iat.Time).Abs() > 60*time.Second || r.Header.Get("X-Api-Key") != "k1" {
			bad.Add(1)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		good.Add(1)
		_, id, _ := strings.Cut(string(b), `"id":`)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","result":3,"id":`+strings.TrimSuffix(id, "}")+`}`)
	}))
	defer srv.Close()
	args := []string{"bench", "-q", "-json", "-c", "2", "-n", "100", "-warmup", "0", "-header", "X-Api-Key: k1", "-jwt-secret", path, srv.URL + "/"}
	if err := run(context.Background(), args, io.Discard, io.Discard); err != nil || bad.Load() != 0 || good.Load() < 100 {
		t.Fatalf("err %v; %d requests let in, %d refused", err, good.Load(), bad.Load())
	}
	// Without the JWT, the server's refusals are the run's errors.
	args = []string{"bench", "-q", "-json", "-c", "1", "-n", "10", "-warmup", "0", "-header", "X-Api-Key: k1", srv.URL + "/"}
	if err := run(context.Background(), args, io.Discard, io.Discard); err == nil || bad.Load() == 0 {
		t.Fatalf("no JWT: err %v, %d refused", err, bad.Load())
	}
}

// TestBench_traceSample: jetrpc bench -trace-sample 1 sends a W3C
// traceparent with every request, and none without the flag; a share
// outside 0 to 1, a raw stream target, a -header traceparent beside it and
// a fan-out run are refused.
func TestBench_traceSample(t *testing.T) {
	var with, without atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if len(r.Header.Get("Traceparent")) == len("00-")+32+1+16+len("-01") {
			with.Add(1)
		} else {
			without.Add(1)
		}
		_, id, _ := strings.Cut(string(b), `"id":`)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","result":3,"id":`+strings.TrimSuffix(id, "}")+`}`)
	}))
	defer srv.Close()
	for _, c := range []struct {
		flags         []string
		with, without int64
	}{
		{[]string{"-trace-sample", "1"}, 100, 0},
		{nil, 0, 100},
	} {
		with.Store(0)
		without.Store(0)
		args := append([]string{"bench", "run", "-q", "-json", "-c", "2", "-n", "100", "-warmup", "0"}, c.flags...)
		if err := run(context.Background(), append(args, srv.URL+"/"), io.Discard, io.Discard); err != nil ||
			with.Load() != c.with || without.Load() != c.without {
			t.Fatalf("%q: err %v; %d requests with a traceparent, %d without; want %d and %d", c.flags, err, with.Load(), without.Load(), c.with, c.without)
		}
	}
	for _, c := range []struct{ args, want string }{
		{"-trace-sample 2 http://127.0.0.1:1/", "-trace-sample 2: a share between 0 and 1"},
		{"-trace-sample -1 http://127.0.0.1:1/", "a share between 0 and 1"},
		{"-trace-sample 0.5 tcp://127.0.0.1:1", "-trace-sample needs an http:// or ws:// target"},
		{"find-max --slo p99<1s -trace-sample 0.5 unix:///tmp/x.sock", "-trace-sample needs an http:// or ws:// target"},
		{"-trace-sample 1 -header traceparent:x http://127.0.0.1:1/", "-trace-sample writes the traceparent"},
		{"fanout --subscribe news -trace-sample 1 ws://127.0.0.1:1/", "-trace-sample does not apply to a fan-out run (bench fanout)"},
	} {
		args := append([]string{"bench"}, strings.Fields(c.args)...)
		if err := run(context.Background(), args, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.args, err, c.want)
		}
	}
}

// topicNode serves tab on loopback until the test ends and returns its
// ws:// URL.
func topicNode(t *testing.T, tab *handler.Table) string {
	t.Helper()
	_, addr := enginetest.Start(t, tab)
	return "ws://" + addr + "/"
}

// topicTable is jetrpc serve's topic methods over h; with dropEvery > 0,
// its topic_publish answers every dropEvery-th publish 0 without
// delivering it.
func topicTable(h *topics.Topics, dropEvery int64) *handler.Table {
	tab := handler.NewTable(handler.WithLogger(slog.New(slog.DiscardHandler)))
	if dropEvery == 0 {
		demo.RegisterTopics(tab, h)
		return tab
	}
	topics.Register(tab, "topic", h)
	var calls atomic.Int64
	handler.Register(tab, "topic_publish", func(_ context.Context, p demo.TopicParams) (int, error) {
		if calls.Add(1)%dropEvery == 0 {
			return 0, nil
		}
		return h.Publish(p.Name, p.Payload)
	}, handler.Inline())
	return tab
}

// TestBench_subscribe: jetrpc bench --subscribe against engines in the
// process: one node, two nodes joined by a MemoryBus (the subscribers
// spread over both), and the bundled server when no URL is given; the
// table says every delivery was made, the JSON holds the counts.
func TestBench_subscribe(t *testing.T) {
	one := topicNode(t, topicTable(topics.New(nil, nil), 0))
	bus := topics.NewMemoryBus()
	a := topicNode(t, topicTable(topics.New(bus.Node(), nil), 0))
	b := topicNode(t, topicTable(topics.New(bus.Node(), nil), 0))
	flags := []string{"bench", "-q", "--subscribe", "news", "-subscribers", "60", "-publishes", "20", "-publish-rate", "400"}
	for _, c := range []struct {
		urls []string
		want []string
	}{
		{[]string{one}, []string{"subscribers  60 asked, 60 subscribed in ", "1200 local subscribers reported",
			"deliveries   1200 expected, 1200 delivered, 0 lost, 0 duplicated, 0 out of order\n", "latency      p50 ",
			"result       ok: every expected delivery made, once and in order"}},
		{[]string{a, b}, []string{"on 2 node(s): " + a + " " + b, "600 local subscribers reported",
			"deliveries   1200 expected, 1200 delivered, 0 lost", "node 2       " + b + ": 30 subscribed, 600 delivered, 0 lost", "result       ok"}},
		{nil, []string{"No target given: measuring the fan-out of an in-process jetrpc server", "1200 delivered, 0 lost", "result       ok"}},
	} {
		var out, errOut syncBuffer
		if err := run(context.Background(), append(slices.Clone(flags), c.urls...), &out, &errOut); err != nil {
			t.Fatalf("%q: %v\n%s%s", c.urls, err, out.String(), errOut.String())
		}
		for _, want := range c.want {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%q: the table lacks %q:\n%s", c.urls, want, out.String())
			}
		}
	}
	var out syncBuffer
	if err := run(context.Background(), append(slices.Clone(flags), "-json", a, b), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var res bench.FanoutResult
	if err := json.Unmarshal([]byte(out.String()), &res); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	if !res.OK || res.Expected != 1200 || res.Delivered != 1200 || res.Lost != 0 || len(res.Nodes) != 2 ||
		res.Nodes[1].Delivered != 600 || res.Latency.P99 <= 0 || res.Latency.Max < res.Latency.P99 {
		t.Fatalf("JSON result: %+v", res)
	}
}

// TestBench_subscribeLost: a node that drops every 10th message makes the
// command fail, naming the loss, unless -max-lost allows it.
func TestBench_subscribeLost(t *testing.T) {
	url := topicNode(t, topicTable(topics.New(nil, nil), 10))
	args := []string{"bench", "-q", "--subscribe", "news", "-subscribers", "20", "-publishes", "20", "-publish-rate", "400", "-drain", "1s"}
	var out syncBuffer
	err := run(context.Background(), append(slices.Clone(args), url), &out, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "fan-out failed: 40 of 400 deliveries lost (at most 0 allowed)") ||
		!strings.Contains(out.String(), "400 expected, 360 delivered, 40 lost") {
		t.Fatalf("err %v\n%s", err, out.String())
	}
	for _, maxLost := range []string{"40", "-1"} {
		out = syncBuffer{}
		if err := run(context.Background(), append(slices.Clone(args), "-max-lost", maxLost, url), &out, io.Discard); err != nil ||
			!strings.Contains(out.String(), "result       ok: 40 deliveries lost, within the "+maxLost+" allowed") {
			t.Fatalf("-max-lost %s: err %v\n%s", maxLost, err, out.String())
		}
	}
}

// TestBench_subscribeFlagErrors: flags of the other mode, counts that
// bench.FanoutConfig would take as "the default", and targets that are
// not WebSocket are usage errors, before anything is dialed.
func TestBench_subscribeFlagErrors(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{"--subscribe news -c 4 ws://127.0.0.1:1/", "-c does not apply to a fan-out run (--subscribe)"},
		{"--subscribe news -rate 10 ws://127.0.0.1:1/", "-rate does not apply"},
		{"--subscribe news -metrics http://127.0.0.1:1/metrics ws://127.0.0.1:1/", "-metrics does not apply"},
		{"-subscribers 10 ws://127.0.0.1:1/", "-subscribers applies to a fan-out run: it needs --subscribe TOPIC"},
		{"-max-lost 3 http://127.0.0.1:1/", "-max-lost applies to a fan-out run"},
		{"--subscribe news http://127.0.0.1:1/", `"http://127.0.0.1:1/": a fan-out run subscribes over WebSocket`},
		{"--subscribe news -publish-url tcp://127.0.0.1:1 ws://127.0.0.1:1/", "each node is a ws:// URL"},
		{"--subscribe news -publish-url ws://127.0.0.1:1/", "-publish-url without a target"},
		{"--subscribe news -subscribers 0 ws://127.0.0.1:1/", "-subscribers 0: at least one"},
		{"--subscribe news -publish-rate 0 ws://127.0.0.1:1/", "-publish-rate 0"},
		{"--subscribe news -publish-rate NaN ws://127.0.0.1:1/", "-publish-rate NaN"},
		{"--subscribe news -publishes -1 ws://127.0.0.1:1/", "-publishes -1"},
		{"--subscribe news -payload-size -1 ws://127.0.0.1:1/", "-payload-size -1"},
		{"--subscribe news -connect-concurrency 0 ws://127.0.0.1:1/", "-connect-concurrency 0"},
		{"--subscribe news -drain -1s ws://127.0.0.1:1/", "-drain -1s"},
	} {
		args := append([]string{"bench", "-q"}, strings.Fields(c.args)...)
		var errOut syncBuffer
		err := run(context.Background(), args, io.Discard, &errOut)
		if !errors.As(err, new(errUsage)) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want a usage error naming %q", c.args, err, c.want)
		}
	}
}

// TestBench_subscribeDrainZero: an explicit -drain 0 means none, where
// bench.FanoutConfig's zero means the default.
func TestBench_subscribeDrainZero(t *testing.T) {
	for _, c := range []struct {
		args []string
		want time.Duration
	}{
		{nil, bench.DefaultDrain},
		{[]string{"-drain", "0"}, -1},
		{[]string{"-drain", "300ms"}, 300 * time.Millisecond},
	} {
		var cfg bench.Config
		fs, b := newBenchFlags(&cfg)
		if err := fs.Parse(append([]string{"--subscribe", "x"}, c.args...)); err != nil {
			t.Fatal(err)
		}
		fc := b.fan
		if err := checkFanoutFlags(&fc); err != nil || fc.Drain != c.want {
			t.Errorf("%v: drain %v, err %v; want %v", c.args, fc.Drain, err, c.want)
		}
	}
}

// TestBench_subscribeHelp: bench -h shows the fan-out mode, its flags in
// their group, and an example; jetrpc's own usage mentions it.
func TestBench_subscribeHelp(t *testing.T) {
	var out syncBuffer
	if err := run(context.Background(), []string{"bench", "-h"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"       jetrpc bench --subscribe TOPIC [flags] [ws://node/ ...]\n",
		"With --subscribe TOPIC it measures the fan-out of a topic instead",
		"\nfan-out (--subscribe; ws:// targets):\n  -subscribe TOPIC\n",
		"\n  -subscribers N\n        subscribers, one WebSocket connection each",
		"\n  -max-lost N\n",
		"  jetrpc bench --subscribe news -subscribers 10000 -publish-rate 100 -d 10s ws://127.0.0.1:8080/\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("bench usage lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(usage, "--subscribe TOPIC, the fan-out of a topic") {
		t.Errorf("jetrpc usage does not mention --subscribe:\n%s", usage)
	}
}

// -threshold: a failing one makes the run fail, naming it; the JSON
// carries the verdicts; with thresholds, errors fail the run only
// through one (here every reply is an "unexpected result").
func TestBench_thresholds(t *testing.T) {
	run := func(args ...string) (string, error) {
		var out, errOut strings.Builder
		err := runBench(context.Background(), append([]string{"-d", "300ms", "-warmup", "0", "-c", "4", "-q"}, args...), &out, &errOut)
		return out.String() + errOut.String(), err
	}
	out, err := run("-threshold", "errors==0", "-threshold", "rps>1e12")
	if err == nil || !strings.HasPrefix(err.Error(), "thresholds failed: rps>1e12: FAILED (") || strings.Contains(err.Error(), "errors==0") {
		t.Fatalf("a failing threshold: %v\n%s", err, out)
	}
	if !strings.Contains(out, "thresholds  errors==0: ok (0)\n") {
		t.Fatalf("table:\n%s", out)
	}
	out, err = run("-json", "-threshold", "p99.9<1h")
	if err != nil {
		t.Fatalf("a threshold that holds: %v\n%s", err, out)
	}
	var res struct {
		Thresholds []struct {
			Threshold string
			Actual    float64
			OK        bool
		}
	}
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &res); err != nil || len(res.Thresholds) != 1 ||
		res.Thresholds[0].Threshold != "p99.9<1h" || !res.Thresholds[0].OK || res.Thresholds[0].Actual <= 0 {
		t.Fatalf("JSON thresholds %+v %v\n%s", res.Thresholds, err, out)
	}
	out, err = run("-expect-error", "-threshold", "requests>0")
	if err != nil || !strings.Contains(out, "unexpected result") {
		t.Fatalf("errors with a threshold that holds: %v\n%s", err, out)
	}
	if _, err := run("-expect-error"); err == nil {
		t.Fatal("errors without thresholds: no failure")
	}
}

// -schedule runs the open loop on a rate schedule, which sets the
// duration; with -rate or -d it is refused.
func TestBench_schedule(t *testing.T) {
	var out, errOut strings.Builder
	if err := runBench(context.Background(), []string{"-warmup", "0", "-c", "4", "-q", "-schedule", "ramp:0:2000:500ms"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "open loop, ramp 0 → 2,000 requests/s over 500ms") || !strings.Contains(out.String(), "measured    0.50s") {
		t.Fatalf("output:\n%s", out.String())
	}
	for _, extra := range [][]string{{"-rate", "100"}, {"-d", "1s"}} {
		err := runBench(context.Background(), append([]string{"-q", "-schedule", "ramp:0:2000:500ms"}, extra...), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "schedule") {
			t.Errorf("-schedule with %v: %v", extra, err)
		}
	}
}

// --find-max: each probe is printed; a capacity below every rate tried
// (an SLO nothing meets) fails the run and says so; --slo without
// --find-max is refused.
func TestBench_findMax(t *testing.T) {
	var out strings.Builder
	err := runBench(context.Background(), []string{"--find-max", "--slo", "p50<1ns", "-d", "150ms", "-warmup", "0", "-c", "2", "-rate", "64000"}, &out, io.Discard)
	if err == nil || !strings.HasPrefix(err.Error(), "no rate tried held: the capacity is below the lowest, 1000 requests/s") {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if n := strings.Count(out.String(), "FAILED: p50<1ns"); n != 14 { // 64000, then halving down to 1000, each printed live and in the table
		t.Fatalf("%d failed probes printed:\n%s", n, out.String())
	}
	if !strings.Contains(out.String(), "capacity    none of the rates tried held p50<1ns and no error") {
		t.Fatalf("%s", out.String())
	}
	if err := runBench(context.Background(), []string{"--slo", "p99<1s"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "--find-max") {
		t.Fatalf("--slo alone: %v", err)
	}
}

// -workload runs a workload file's mix, prints the replies by method,
// and refuses -method or -bodies beside it.
func TestBench_workload(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mix.json")
	if err := os.WriteFile(path, []byte(`{"calls": [
		{"method": "add", "weight": 3, "params": [{"$int": [1, 9]}, 2]},
		{"method": "nope", "expect": {"error": -32601}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := runBench(context.Background(), []string{"-q", "-n", "4000", "-c", "1", "-warmup", "0", "-workload", path}, &out, io.Discard); err != nil { // one connection: whole rotations
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"methods ", "add ", "3000   75.00%", "nope ", "1000   25.00%", "error codes -32601 1000"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("no %q in:\n%s", want, out.String())
		}
	}
	if err := runBench(context.Background(), []string{"-q", "-workload", path, "-method", "x"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "-workload holds the calls") {
		t.Fatalf("-workload with -method: %v", err)
	}
}

// jetrpc bench compare reads runs appended with -json and prints the
// comparison; it wants two files.
func TestBench_compare(t *testing.T) {
	dir := t.TempDir()
	for name, args := range map[string][]string{"a.json": {"-c", "2"}, "b.json": {"-c", "2", "-pipeline", "8"}} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for range 4 {
			if err := runBench(context.Background(), append([]string{"-json", "-q", "-n", "3000", "-warmup", "0"}, args...), f, io.Discard); err != nil {
				t.Fatal(err)
			}
		}
		f.Close()
	}
	var out strings.Builder
	if err := runBench(context.Background(), []string{"compare", filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"a.json (4 runs)", "b.json (4 runs)", "requests/s", "p99", "errors       0"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("no %q in:\n%s", want, out.String())
		}
	}
	var errOut strings.Builder
	if err := runBench(context.Background(), []string{"compare", filepath.Join(dir, "a.json")}, io.Discard, &errOut); err == nil || !strings.Contains(errOut.String(), "two files of runs, not 1") {
		t.Fatalf("one file: %v %s", err, errOut.String())
	}
}

// -json-schema describes every member -json prints: a run with a
// workload, a threshold and a schedule fills the optional ones.
func TestBench_jsonSchemaCoversTheResult(t *testing.T) {
	var schemaOut strings.Builder
	if err := runBench(context.Background(), []string{"-json-schema"}, &schemaOut, io.Discard); err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Defs map[string]struct {
			Properties map[string]json.RawMessage
		} `json:"$defs"`
	}
	if err := json.Unmarshal([]byte(schemaOut.String()), &schema); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "mix.json")
	if err := os.WriteFile(path, []byte(`{"calls": [{"method": "add", "params": [1, 2]}, {"method": "nope"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	_ = runBench(context.Background(), []string{"-json", "-q", "-warmup", "0", "-c", "2", "-schedule", "200:300ms",
		"-workload", path, "-threshold", "p99<1h"}, &out, io.Discard)
	var res map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out.String()[strings.Index(out.String(), "{"):]), &res); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"methods", "thresholds", "schedule", "series", "error_codes", "errors", "latency_us"} {
		if _, ok := res[key]; !ok {
			t.Errorf("the run printed no %q", key)
		}
	}
	for key := range res {
		if _, ok := schema.Defs["Result"].Properties[key]; !ok {
			t.Errorf("the schema has no %q", key)
		}
	}
	for def, sample := range map[string]string{"Sample": "series", "Stage": "schedule", "ThresholdResult": "thresholds"} {
		var items []map[string]json.RawMessage
		if err := json.Unmarshal(res[sample], &items); err != nil || len(items) == 0 {
			t.Fatalf("%s: %v", sample, err)
		}
		for key := range items[0] {
			if _, ok := schema.Defs[def].Properties[key]; !ok {
				t.Errorf("the schema's %s has no %q", def, key)
			}
		}
	}
}

// --target: the differential check, then interleaved rounds side by
// side; a target argument beside --target is refused.
func TestBench_targets(t *testing.T) {
	stopA, a, err := inProcessServer(&bench.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer stopA()
	stopB, b, err := inProcessServer(&bench.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer stopB()
	var out strings.Builder
	err = runBench(context.Background(), []string{"--target", "a=" + a, "--target", "b=" + b, "-rounds", "2", "-n", "500", "-c", "2",
		"-warmup", "0", "-diff", "20"}, &out, io.Discard)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"differential  20 calls sent to every target, 20 compared, 0 answered differently", "round 2/2  b", "medians of 2 rounds"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("no %q in:\n%s", want, out.String())
		}
	}
	if err := runBench(context.Background(), []string{"--target", "a=" + a, "--target", "b=" + b, a}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "no target argument") {
		t.Fatalf("a target argument beside --target: %v", err)
	}
}

// TestBench_errorOnePrefix: a failing run's error, from the command or
// from package bench, is printed with exactly one "jetrpc bench: ": the
// library's texts carry no prefix and nothing strips one.
func TestBench_errorOnePrefix(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.json")
	for _, args := range [][]string{
		{"-d", "200ms", "-c", "1", "-warmup", "0", "tcp://127.0.0.1:1"}, // nothing listens: the run fails
		{"-workload", missing, "tcp://127.0.0.1:1"},                     // bench.LoadWorkload's error
		{"-d", "200ms", "ftp://127.0.0.1:1"},                            // bench.Run's error
	} {
		err := run(context.Background(), append([]string{"bench", "-q"}, args...), io.Discard, io.Discard)
		if err == nil || errors.As(err, new(errUsage)) {
			t.Errorf("%q: err %v, want a run's error", args, err)
			continue
		}
		line := errorLine(err)
		if line != "jetrpc bench: "+err.Error() || strings.Count(line, "jetrpc") != 1 || strings.Count(line, "bench: ") != 1 {
			t.Errorf("%q: main prints %q", args, line)
		}
	}
}

// TestBench_modes: every mode is reached by its subcommand and, without
// one, by the flag that picked it before the subcommands (a script's
// command line runs unchanged); bench help MODE prints that mode's usage.
func TestBench_modes(t *testing.T) {
	var got string
	for _, m := range benchModes {
		saved := m.run
		t.Cleanup(func() { m.run = saved })
		m.run = func(context.Context, *benchArgs, io.Writer, io.Writer) error { got = m.name; return nil }
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-c", "2", "http://127.0.0.1:1/"}, "run"},
		{[]string{"run", "-c", "2", "http://127.0.0.1:1/"}, "run"},
		{[]string{"--find-max", "--slo", "p99<1s", "http://127.0.0.1:1/"}, "find-max"},
		{[]string{"find-max", "--slo", "p99<1s", "http://127.0.0.1:1/"}, "find-max"},
		{[]string{"find-max", "--find-max", "http://127.0.0.1:1/"}, "find-max"},
		{[]string{"--target", "a=http://127.0.0.1:1/", "--target", "b=http://127.0.0.1:2/"}, "targets"},
		{[]string{"targets", "--target", "a=http://127.0.0.1:1/", "--target", "b=http://127.0.0.1:2/"}, "targets"},
		{[]string{"--subscribe", "news", "-subscribers", "3", "ws://127.0.0.1:1/"}, "fanout"},
		{[]string{"fanout", "--subscribe", "news", "-subscribers", "3", "ws://127.0.0.1:1/"}, "fanout"},
	} {
		got = ""
		if err := run(context.Background(), append([]string{"bench"}, c.args...), io.Discard, io.Discard); err != nil || got != c.want {
			t.Errorf("%q: mode %q, err %v; want %q", c.args, got, err, c.want)
		}
	}
}

// TestBench_modeRefusesForeignFlags: a flag of another mode is a usage
// error that names the mode as the command line chose it, printed once
// with that mode's usage.
func TestBench_modeRefusesForeignFlags(t *testing.T) {
	for _, c := range []struct {
		args  []string
		want  string // the error
		usage string // the usage printed after it
	}{
		{[]string{"run", "-subscribers", "3"}, "-subscribers does not apply to a single run (bench run); it is a flag of bench fanout", "usage: jetrpc bench run "},
		{[]string{"run", "--slo", "p99<1s"}, "-slo does not apply to a single run (bench run); it is a flag of bench find-max", "usage: jetrpc bench run "},
		{[]string{"-rounds", "2"}, "-rounds applies to several targets: it needs --target NAME=URL", "usage: jetrpc bench [flags] [target]"},
		{[]string{"find-max", "-threshold", "p99<1s"}, "-threshold does not apply to a capacity search (bench find-max); it is a flag of bench run", "usage: jetrpc bench find-max "},
		{[]string{"--find-max", "-n", "10"}, "-n does not apply to a capacity search (--find-max)", "usage: jetrpc bench [flags] [target]"},
		{[]string{"targets", "-plot", "x.svg"}, "-plot does not apply to several targets (bench targets)", "usage: jetrpc bench targets "},
		{[]string{"--target", "a=http://127.0.0.1:1/", "-report", "x.html"}, "-report does not apply to several targets (--target); it is a flag of bench run", "usage: jetrpc bench [flags]"},
		{[]string{"fanout", "--subscribe", "x", "-rate", "10"}, "-rate does not apply to a fan-out run (bench fanout)", "usage: jetrpc bench fanout "},
		{[]string{"fanout", "ws://127.0.0.1:1/"}, "bench fanout measures a topic: it needs --subscribe TOPIC", "usage: jetrpc bench fanout "},
	} {
		var out, errOut syncBuffer
		err := run(context.Background(), append([]string{"bench"}, c.args...), &out, &errOut)
		if !errors.As(err, new(errUsage)) || err.Error() != c.want {
			t.Errorf("%q: err %v, want the usage error %q", c.args, err, c.want)
			continue
		}
		first, rest, _ := strings.Cut(errOut.String(), "\n")
		if first != "jetrpc bench: "+c.want || !strings.HasPrefix(strings.TrimLeft(rest, "\n"), c.usage) || out.String() != "" {
			t.Errorf("%q: stdout %q, stderr %q", c.args, out.String(), errOut.String())
		}
	}
}

// TestBench_helpMode: bench help MODE and bench MODE -h print the mode's
// usage, its flags and no other mode's; an unknown mode is an error.
func TestBench_helpMode(t *testing.T) {
	for _, args := range [][]string{{"bench", "help", "find-max"}, {"bench", "find-max", "-h"}} {
		var out, errOut syncBuffer
		if err := run(context.Background(), args, &out, &errOut); err != nil || errOut.String() != "" {
			t.Fatalf("%q: %v %q", args, err, errOut.String())
		}
		for _, want := range []string{"usage: jetrpc bench find-max [--slo CONDITION]... [flags] [target]\n", "\ncapacity search:\n  -find-max\n", "  -slo CONDITION\n", "examples:\n  jetrpc bench find-max --slo"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%q: lacks %q:\n%s", args, want, out.String())
			}
		}
		for _, not := range []string{"\n  -subscribers ", "\n  -threshold ", "\n  -rounds ", "\n  -schedule "} {
			if strings.Contains(out.String(), not) {
				t.Errorf("%q: lists %q, not a flag of find-max:\n%s", args, not, out.String())
			}
		}
	}
	var out syncBuffer
	if err := run(context.Background(), []string{"bench", "help", "compare"}, &out, io.Discard); err != nil || !strings.Contains(out.String(), "usage: jetrpc bench compare [-json] A.json B.json") {
		t.Errorf("help compare: %v\n%s", err, out.String())
	}
	out = syncBuffer{}
	if err := run(context.Background(), []string{"bench", "-h"}, &out, io.Discard); err != nil ||
		!strings.Contains(out.String(), "\nmodes:\n  run ") || !strings.Contains(out.String(), "\n  find-max  a capacity search") {
		t.Errorf("bench -h does not list the modes: %v\n%s", err, out.String())
	}
	var errOut syncBuffer
	if err := run(context.Background(), []string{"bench", "help", "bogus"}, io.Discard, &errOut); !errors.As(err, new(errUsage)) || !strings.Contains(err.Error(), `no mode "bogus"`) {
		t.Errorf("help bogus: %v %s", err, errOut.String())
	}
}

// TestBench_compressionFlags: -compression sets bench.Config.Compression
// (the codings in order) and -ws-compression WSCompression; against the
// in-process server, which then compresses as asked, -json reports the
// replies compressed and the wire bytes per request; bad codings, a
// target of the other kind and -compression in a fan-out run are
// refused.
func TestBench_compressionFlags(t *testing.T) {
	var cfg bench.Config
	fs, _ := newBenchFlags(&cfg)
	if err := fs.Parse([]string{"-compression", "zstd,gzip", "-ws-compression"}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg.Compression, []string{"zstd", "gzip"}) || !cfg.WSCompression {
		t.Fatalf("compression %q, ws %v", cfg.Compression, cfg.WSCompression)
	}
	params := `["` + strings.Repeat("abcdefgh", 2000) + `"]`
	for _, c := range []struct {
		flags       []string
		compression string
	}{
		{nil, ""},
		{[]string{"-compression", "gzip"}, "gzip"},
		{[]string{"-compression", "zstd"}, "zstd"},
		{[]string{"-ws-compression"}, "permessage-deflate"},
	} {
		var out strings.Builder
		args := append([]string{"bench", "run", "-q", "-json", "-c", "2", "-n", "50", "-warmup", "0", "-method", "echo", "-params", params}, c.flags...)
		if err := run(context.Background(), args, &out, io.Discard); err != nil {
			t.Fatalf("%q: %v", c.flags, err)
		}
		var res struct {
			Compression string  `json:"compression"`
			Compressed  int64   `json:"compressed_replies"`
			WireIn      float64 `json:"wire_in_bytes_per_request"`
			WireOut     float64 `json:"wire_out_bytes_per_request"`
		}
		if err := json.Unmarshal([]byte(out.String()), &res); err != nil {
			t.Fatal(err)
		}
		compressed := c.compression != ""
		if res.Compression != c.compression || (res.Compressed >= 50) != compressed || (res.WireIn < 16000) == !compressed || res.WireOut < 16000 {
			t.Fatalf("%q: %+v", c.flags, res)
		}
	}
	for _, c := range []struct{ args, want string }{
		{"-compression br http://127.0.0.1:1/", `compression "br": want gzip or zstd`},
		{"-compression gzip,gzip http://127.0.0.1:1/", "compression gzip named twice"},
		{"-compression gzip ws://127.0.0.1:1/", "HTTP compression (Accept-Encoding) is for http:// and https:// targets"},
		{"-compression gzip tcp://127.0.0.1:1", "HTTP compression (Accept-Encoding) is for http:// and https:// targets"},
		{"-ws-compression http://127.0.0.1:1/", "WebSocket compression is for ws:// and wss:// targets"},
		{"-compression gzip -header Accept-Encoding:br http://127.0.0.1:1/", "the compression setting writes Accept-Encoding"},
		{"fanout --subscribe news -compression gzip ws://127.0.0.1:1/", "-compression does not apply to a fan-out run (bench fanout)"},
	} {
		args := append([]string{"bench"}, strings.Fields(c.args)...)
		if err := run(context.Background(), args, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.args, err, c.want)
		}
	}
}

// TestBench_fanoutWSCompression: bench fanout -ws-compression against the
// in-process server, which then compresses, gets its deliveries
// compressed.
func TestBench_fanoutWSCompression(t *testing.T) {
	var out strings.Builder
	args := []string{"bench", "fanout", "--subscribe", "news", "-q", "-json", "-subscribers", "5", "-publishes", "20",
		"-publish-rate", "200", "-payload-size", "3000", "-ws-compression"}
	if err := run(context.Background(), args, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var res bench.FanoutResult
	if err := json.Unmarshal([]byte(out.String()), &res); err != nil {
		t.Fatal(err)
	}
	if !res.WSCompression || res.CompressedMessages != 5*20 || res.WireInPerMessage > 1000 || res.Lost != 0 {
		t.Fatalf("%d compressed, %.0f B per message, %d lost", res.CompressedMessages, res.WireInPerMessage, res.Lost)
	}
}
