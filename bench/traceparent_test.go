package bench

import (
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

var traceparentRE = regexp.MustCompile(`^00-([0-9a-f]{32})-([0-9a-f]{16})-01$`)

// checkTraceparents checks that every value is a valid traceparent with
// ids not all zero, and that no trace id and no span id repeats.
func checkTraceparents(t *testing.T, values []string) {
	t.Helper()
	traces, spans := map[string]bool{}, map[string]bool{}
	for _, v := range values {
		m := traceparentRE.FindStringSubmatch(v)
		if m == nil {
			t.Fatalf("traceparent %q: want 00-<32 hex>-<16 hex>-01", v)
		}
		if strings.Trim(m[1], "0") == "" || strings.Trim(m[2], "0") == "" {
			t.Fatalf("traceparent %q: an all-zero id", v)
		}
		if traces[m[1]] || spans[m[2]] {
			t.Fatalf("traceparent %q: an id sent before", v)
		}
		traces[m[1]], spans[m[2]] = true, true
	}
}

// TestTraceparent_shares: with TraceSample 0 no request carries a
// traceparent, with 1 every one does, with 0.5 about half of them; each
// is valid, with ids never sent before.
func TestTraceparent_shares(t *testing.T) {
	const n = 2000
	for _, c := range []struct {
		share    float64
		min, max int // requests with a traceparent
	}{
		{0, 0, 0},
		{1, n, n},
		{0.5, n/2 - 200, n/2 + 200}, // ±9 standard deviations (22.4)
	} {
		var mu sync.Mutex
		var values []string
		var without int
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			if tp := r.Header.Values("Traceparent"); len(tp) > 0 {
				values = append(values, tp...)
			} else {
				without++
			}
			mu.Unlock()
			b, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, okReply(requestIDs(string(b))[0]))
		}))
		t.Cleanup(srv.Close)
		res := mustRun(t, Config{Target: srv.URL + "/", Conns: 4, Requests: n, TraceSample: c.share, Timeout: 5 * time.Second})
		if res.TotalErrors() != 0 || res.Requests != n {
			t.Fatalf("share %v: requests %d, errors %v", c.share, res.Requests, res.Errors)
		}
		mu.Lock()
		got := len(values)
		if got < c.min || got > c.max || got+without != n {
			t.Errorf("share %v: %d requests with a traceparent, %d without; want %d to %d of %d", c.share, got, without, c.min, c.max, n)
		}
		checkTraceparents(t, values)
		mu.Unlock()
	}
}

// TestTraceparent_webSocketUpgrade: over a WebSocket the traceparent goes
// with each connection's upgrade request, not with its frames.
func TestTraceparent_webSocketUpgrade(t *testing.T) {
	var log headerLog
	target := recordingWSServer(t, &log)
	res := mustRun(t, Config{Target: target, Conns: 3, Requests: 300, TraceSample: 1, Timeout: 5 * time.Second})
	if res.TotalErrors() != 0 || res.Requests != 300 {
		t.Fatalf("requests %d, errors %v", res.Requests, res.Errors)
	}
	var values []string
	for v, k := range log.get("Traceparent") {
		for range k {
			values = append(values, v)
		}
	}
	if len(values) != 3 {
		t.Fatalf("%d upgrades with a traceparent, want 3 (one per connection): %v", len(values), values)
	}
	checkTraceparents(t, values)
}

// TestTraceparent_refused: a share outside 0 to 1, one over a raw
// stream, or one beside a traceparent of Header is an error.
func TestTraceparent_refused(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Target: "http://127.0.0.1:1/", TraceSample: 1.5}, "between 0 and 1"},
		{Config{Target: "http://127.0.0.1:1/", TraceSample: -0.1}, "between 0 and 1"},
		{Config{Target: "http://127.0.0.1:1/", TraceSample: math.NaN()}, "between 0 and 1"},
		{Config{Target: "tcp://127.0.0.1:1", TraceSample: 0.5}, "raw stream"},
		{Config{Target: "unix:///nowhere", TraceSample: 1}, "raw stream"},
		{Config{Target: "http://127.0.0.1:1/", TraceSample: 1, Header: http.Header{"Traceparent": {"x"}}}, "the tool writes the traceparent"},
	} {
		_, err := Run(t.Context(), c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s share %v: err %v, want %q", c.cfg.Target, c.cfg.TraceSample, err, c.want)
		}
	}
}
