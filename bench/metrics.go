package bench

// NOTE: the server's own view of a run, read from its Prometheus metrics
// (Config.MetricsURL). A serverWatch scrapes the URL when the measured
// window opens (after the warm-up) and when it closes (at its end, or when
// the run stops); each scrape is a serverSnapshot of the jsonrpc_server_*
// series, parsed with expfmt's TextParser; serverView turns two snapshots
// into a ServerView: the deltas of the counters, and p50/p99 estimated from
// the delta of the handling-time histogram as PromQL's histogram_quantile
// does. All methods are merged, as the client's figures merge every call
// it sends (several with Config.Bodies).

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The metrics of a jetrpc server that the server view is made of.
const (
	// handledMetric counts the calls finished, by method and code (the
	// JSON-RPC error code in decimal, "0" for a success).
	handledMetric = "jsonrpc_server_handled_total"
	// handlingMetric is the histogram of the handling time of calls, in
	// seconds, by method.
	handlingMetric = "jsonrpc_server_handling_seconds"
)

// Limits of one scrape of Config.MetricsURL.
const (
	scrapeTimeout = 5 * time.Second
	maxScrape     = 64 << 20 // bytes of exposition
)

// ServerView is the server's own account of the measured window, read
// from its Prometheus metrics at Config.MetricsURL when the window opened
// and when it closed: the calls it finished, their errors by code, and its
// handling time, all methods merged (other clients' calls included).
type ServerView struct {
	// URL is Config.MetricsURL.
	URL string `json:"url"`
	// Error, when set, says why the server's view could not be read
	// (naming the URL); the other fields are then zero.
	Error string `json:"error,omitempty"`
	// Window is the time between the two scrapes.
	Window time.Duration `json:"window_ns"`
	// Calls is the increase of jsonrpc_server_handled_total, all methods
	// and codes: the calls (requests, notifications and batch elements)
	// the server finished in the window.
	Calls int64 `json:"calls"`
	// CallsPerSec is Calls over Window.
	CallsPerSec float64 `json:"calls_per_sec"`
	// Errors counts the calls of Calls finished with an error, by
	// JSON-RPC error code in decimal ("-32601"); empty when none.
	Errors map[string]int64 `json:"errors"`
	// Handling holds quantiles of the server's handling time of a call;
	// nil when jsonrpc_server_handling_seconds observed nothing in the
	// window.
	Handling *ServerLatency `json:"handling_us,omitempty"`
}

// ServerLatency holds quantiles of the server's handling time, in
// microseconds, estimated from the increase of the
// jsonrpc_server_handling_seconds buckets in the window, all methods
// merged, with linear interpolation inside a bucket (PromQL's
// histogram_quantile): an estimate no finer than the buckets.
type ServerLatency struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
}

// TotalErrors returns the sum of Errors.
func (v *ServerView) TotalErrors() int64 {
	var n int64
	for _, c := range v.Errors {
		n += c
	}
	return n
}

// checkMetricsURL checks Config.MetricsURL: "" (none) or an http:// or
// https:// URL with a host.
func checkMetricsURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("metrics URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("metrics URL %q: want http://host:port/path", s)
	}
	return nil
}

// seriesKey names a series of handledMetric.
type seriesKey struct{ method, code string }

// serverSnapshot is what one scrape read.
type serverSnapshot struct {
	at      time.Time             // when it was read: the middle of the request
	found   bool                  // the exposition has handledMetric
	handled map[seriesKey]float64 // handledMetric by series
	buckets map[float64]float64   // handlingMetric's cumulative counts by upper bound, all series summed
}

// scrapeServer reads the metrics at rawURL with client. Its errors do
// not name the URL: the caller does.
func scrapeServer(ctx context.Context, client *http.Client, rawURL string) (*serverSnapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	t0 := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		line, _ := bufio.NewReader(io.LimitReader(resp.Body, 200)).ReadString('\n')
		if line = strings.TrimSpace(line); line != "" {
			return nil, fmt.Errorf("HTTP %s: %s", resp.Status, line)
		}
		return nil, errors.New("HTTP " + resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(io.LimitReader(resp.Body, maxScrape))
	if err != nil {
		return nil, err
	}
	return snapshotOf(fams, t0.Add(time.Since(t0)/2))
}

// snapshotOf picks the server view's series out of parsed metric
// families.
func snapshotOf(fams map[string]*dto.MetricFamily, at time.Time) (*serverSnapshot, error) {
	s := &serverSnapshot{at: at, handled: map[seriesKey]float64{}, buckets: map[float64]float64{}}
	if mf := fams[handledMetric]; mf != nil {
		s.found = true
		for _, m := range mf.GetMetric() {
			var v float64
			switch {
			case m.GetCounter() != nil:
				v = m.GetCounter().GetValue()
			case m.GetUntyped() != nil:
				v = m.GetUntyped().GetValue()
			default:
				return nil, fmt.Errorf("%s is a %s, not a counter", handledMetric, mf.GetType())
			}
			if !finite(v) {
				return nil, fmt.Errorf("%s has a value that is not a count: %v", handledMetric, v)
			}
			s.handled[seriesKey{labelValue(m, "method"), labelValue(m, "code")}] += v
		}
	}
	if mf := fams[handlingMetric]; mf != nil {
		for _, m := range mf.GetMetric() {
			h := m.GetHistogram()
			if h == nil {
				return nil, fmt.Errorf("%s is a %s, not a histogram", handlingMetric, mf.GetType())
			}
			inf := false
			for _, b := range h.GetBucket() {
				if !finite(b.GetCumulativeCountFloat()) || math.IsNaN(b.GetUpperBound()) {
					return nil, fmt.Errorf("%s has a bucket that is not a count", handlingMetric)
				}
				s.buckets[b.GetUpperBound()] += float64(b.GetCumulativeCount()) + b.GetCumulativeCountFloat()
				inf = inf || math.IsInf(b.GetUpperBound(), 1)
			}
			if !inf { // the +Inf bucket is the count
				s.buckets[math.Inf(1)] += float64(h.GetSampleCount()) + h.GetSampleCountFloat()
			}
		}
	}
	return s, nil
}

// finite reports whether v is a number a counter may hold: finite, not
// negative.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 }

// labelValue returns the value of m's label name, or "".
func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// counterReset ends the error of a server view whose counters went down
// between the two scrapes.
const counterReset = ": the server's counters went down between the scrapes: did it restart?"

// failedView returns the view of the metrics at rawURL that could not be
// read: "metrics at rawURL" then what.
func failedView(rawURL, what string) *ServerView {
	return &ServerView{URL: rawURL, Error: "metrics at " + rawURL + what}
}

// serverView returns the server's view of the window between two
// snapshots of the metrics at rawURL.
func serverView(rawURL string, before, after *serverSnapshot) *ServerView {
	v := &ServerView{URL: rawURL, Errors: map[string]int64{}}
	if !before.found && !after.found {
		return failedView(rawURL, ": no "+handledMetric+" in either scrape: not a jetrpc server's?")
	}
	var calls float64
	for k, n := range after.handled {
		d := n - before.handled[k]
		if d < 0 {
			return failedView(rawURL, counterReset)
		}
		calls += d
		if k.code != "0" && d > 0 {
			v.Errors[k.code] += int64(math.Round(d))
		}
	}
	for k := range before.handled {
		if _, ok := after.handled[k]; !ok {
			return failedView(rawURL, counterReset)
		}
	}
	bs := make([]bucket, 0, len(after.buckets))
	for le, n := range after.buckets {
		d := n - before.buckets[le]
		if d < 0 {
			return failedView(rawURL, counterReset)
		}
		bs = append(bs, bucket{le, d})
	}
	v.Calls = int64(math.Round(calls))
	v.Window = after.at.Sub(before.at)
	if v.Window > 0 {
		v.CallsPerSec = calls / v.Window.Seconds()
	}
	if p50 := histogramQuantile(0.5, bs); !math.IsNaN(p50) {
		v.Handling = &ServerLatency{P50: p50 * 1e6, P99: histogramQuantile(0.99, bs) * 1e6}
	}
	return v
}

// bucket is a histogram bucket: its upper bound and cumulative count.
type bucket struct{ le, count float64 }

// histogramQuantile estimates the q-quantile (0 ≤ q ≤ 1) of the
// observations counted by cumulative buckets bs, as PromQL's
// histogram_quantile does: it finds the bucket of rank q×count and
// interpolates linearly inside it (from 0 in the first bucket); a rank in
// the +Inf bucket gives the highest finite bound. It returns NaN without
// a +Inf bucket, with fewer than two buckets, or with no observation. It
// sorts bs and makes its counts monotonic.
func histogramQuantile(q float64, bs []bucket) float64 {
	switch {
	case math.IsNaN(q):
		return math.NaN()
	case q < 0:
		return math.Inf(-1)
	case q > 1:
		return math.Inf(1)
	}
	slices.SortFunc(bs, func(a, b bucket) int { return compareFloat(a.le, b.le) })
	if len(bs) < 2 || !math.IsInf(bs[len(bs)-1].le, 1) {
		return math.NaN()
	}
	for i := 1; i < len(bs); i++ { // PromQL's ensureMonotonic
		bs[i].count = max(bs[i].count, bs[i-1].count)
	}
	total := bs[len(bs)-1].count
	if total == 0 {
		return math.NaN()
	}
	rank := q * total
	b := sort.Search(len(bs)-1, func(i int) bool { return bs[i].count >= rank })
	if b == len(bs)-1 {
		return bs[len(bs)-2].le
	}
	if b == 0 && bs[0].le <= 0 {
		return bs[0].le
	}
	start, end, count := 0.0, bs[b].le, bs[b].count
	if b > 0 {
		start = bs[b-1].le
		count -= bs[b-1].count
		rank -= bs[b-1].count
	}
	return start + (end-start)*(rank/count)
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// serverWatch scrapes Config.MetricsURL when the measured window opens
// and when it closes.
type serverWatch struct {
	url    string
	client *http.Client
	done   chan struct{} // closed when the goroutine has ended
	// Written by the goroutine, read after done.
	before, after *serverSnapshot
	err           error
	stage         string // what err failed at
}

// watchServer starts scraping Config.MetricsURL: when the window opens
// (after the warm-up) and, in a timed run, when it closes. It returns nil
// without a MetricsURL. Call view once the run has stopped.
func (r *runner) watchServer(ctx context.Context) *serverWatch {
	if r.cfg.MetricsURL == "" {
		return nil
	}
	s := &serverWatch{url: r.cfg.MetricsURL, client: &http.Client{Transport: &http.Transport{}}, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		if !sleepUntil(ctx, r.start) {
			return
		}
		if s.before, s.err = scrapeServer(ctx, s.client, s.url); s.err != nil {
			s.stage = "when the measured window opened"
			return
		}
		if !r.timed() || !sleepUntil(ctx, r.end) {
			return
		}
		if s.after, s.err = scrapeServer(ctx, s.client, s.url); s.err != nil {
			s.stage = "when the measured window closed"
		}
	}()
	return s
}

// view returns the server's view of the window, scraping the URL again
// if the run stopped before the end of its window (or had no set end). It
// returns nil for a nil s.
func (s *serverWatch) view() *ServerView {
	if s == nil {
		return nil
	}
	<-s.done
	defer s.client.CloseIdleConnections()
	if s.err == nil && s.before == nil {
		s.err, s.stage = errors.New("the run stopped before its measured window"), "at all"
	}
	if s.err == nil && s.after == nil {
		if s.after, s.err = scrapeServer(context.Background(), s.client, s.url); s.err != nil {
			s.stage = "after the run"
		}
	}
	if s.err != nil {
		return failedView(s.url, " not read "+s.stage+": "+s.err.Error())
	}
	return serverView(s.url, s.before, s.after)
}

// sleepUntil waits until t; it returns false if ctx is done first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// writeTable prints the server's view beside the client's of r; nothing
// for a nil v.
func (v *ServerView) writeTable(w io.Writer, r *Result) {
	if v == nil {
		return
	}
	if v.Error != "" {
		fmt.Fprintf(w, "SERVER      %s (client-side figures only)\n", v.Error)
		return
	}
	var rows [][3]string
	row := func(name, client, server string) { rows = append(rows, [3]string{name, client, server}) }
	row("", "client", "server "+v.URL)
	row("window", fmt.Sprintf("%.2fs", r.Duration.Seconds()), fmt.Sprintf("%.2fs between scrapes", v.Window.Seconds()))
	row("calls", strconv.FormatInt(r.Calls, 10)+" answered", strconv.FormatInt(v.Calls, 10)+" handled")
	row("calls/s", fmt.Sprintf("%.0f", r.CallsPerSec), fmt.Sprintf("%.0f", v.CallsPerSec))
	serverErrs := strconv.FormatInt(v.TotalErrors(), 10) + " error replies"
	if len(v.Errors) > 0 {
		codes := make([]string, 0, len(v.Errors))
		for c := range v.Errors {
			codes = append(codes, c)
		}
		sort.Strings(codes)
		for i, c := range codes {
			codes[i] = fmt.Sprintf("%s %d", c, v.Errors[c])
		}
		serverErrs += ": " + strings.Join(codes, ", ")
	}
	row("errors", strconv.FormatInt(r.TotalErrors(), 10)+" wrong or missing", serverErrs)
	p50, p99 := "-", "-"
	if h := v.Handling; h != nil {
		p50, p99 = usFloat(h.P50), usFloat(h.P99)
	}
	row("p50", us(r.Latency.P50), p50)
	row("p99", us(r.Latency.P99), p99)
	// The client column is 22 wide, or wider for a longer cell: two
	// spaces at least before the server's.
	width := 22
	for _, c := range rows {
		width = max(width, utf8.RuneCountInString(c[1])+2)
	}
	fmt.Fprintln(w)
	for _, c := range rows {
		fmt.Fprintf(w, "%-12s%-*s%s\n", c[0], width, c[1], c[2])
	}
	fmt.Fprintln(w, "            (client: latency of a request from its send time; server: handling time of a")
	fmt.Fprintln(w, "            call, all methods, interpolated in the histogram's buckets as histogram_quantile)")
}

// usFloat formats fractional microseconds readably.
func usFloat(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fs", v/1e6)
	case v >= 1000:
		return fmt.Sprintf("%.2fms", v/1e3)
	}
	return fmt.Sprintf("%.1fµs", v)
}
