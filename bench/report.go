package bench

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Result is what a load test measured.
type Result struct {
	Target   string        `json:"target"`
	Conns    int           `json:"conns"`
	Pipeline int           `json:"pipeline"`
	Batch    int           `json:"batch"`
	Rate     float64       `json:"rate,omitempty"`     // the open loop's target rate; 0 for a closed loop
	Schedule []Stage       `json:"schedule,omitempty"` // the open loop's rate schedule, when it has one
	Duration time.Duration `json:"duration_ns"`        // the measured window
	Requests int64         `json:"requests"`           // requests fully answered (an open loop's sent after the end: in Latency only)
	Calls    int64         `json:"calls"`              // calls answered, and notifications sent
	// Offered is an open loop's requests due in the measured window:
	// sent on time, sent late (in Latency, not in Requests), or never
	// (ErrUnsent). Requests below it means the target, or the tool,
	// fell behind.
	Offered int64 `json:"offered,omitempty"`
	// RequestsPerSec and CallsPerSec are the throughput.
	RequestsPerSec float64 `json:"requests_per_sec"`
	CallsPerSec    float64 `json:"calls_per_sec"`
	// Latency percentiles of requests, in microseconds.
	Latency Latency `json:"latency_us"`
	// Errors counts the errors by kind (see the Err constants); a test
	// with errors measured a server that does not answer right.
	Errors map[string]int64 `json:"errors"`
	// ErrorDetail holds, for the errors whose cause has a text (connect,
	// tls, websocket, transport, encoding), the first one's: "dial tcp
	// 127.0.0.1:1: connect: connection refused".
	ErrorDetail map[string]string `json:"error_detail,omitempty"`
	// ErrorCodes counts the error replies by JSON-RPC code (expected or
	// not, measured): the first 32 codes seen, the rest as "other".
	ErrorCodes map[string]int64 `json:"error_codes,omitempty"`
	// WireInPerRequest and WireOutPerRequest are the bytes read from and
	// written to the connections per request, as they are on the wire
	// (compressed replies compressed; HTTP heads, WebSocket frame heads
	// and stream newlines included; TLS records and the WebSocket
	// upgrade not): over the whole run, warm-up included, the bytes read
	// divided by the requests fully answered, and the bytes written by
	// the requests sent. 0 when none was.
	WireInPerRequest  float64 `json:"wire_in_bytes_per_request"`
	WireOutPerRequest float64 `json:"wire_out_bytes_per_request"`
	// CompressedReplies counts the replies that came compressed and were
	// decoded, over the whole run, warm-up included: HTTP bodies with a
	// Content-Encoding (Config.Compression), WebSocket messages with
	// RSV1 set (Config.WSCompression).
	CompressedReplies int64 `json:"compressed_replies,omitempty"`
	// Compression says what the run asked for: the codings of
	// Config.Compression joined by commas, or "permessage-deflate" for
	// Config.WSCompression; "" for none.
	Compression string `json:"compression,omitempty"`
	// Checked says the replies were checked (Config.NoCheck not set);
	// otherwise only framing, transport and timeout errors are counted.
	Checked bool `json:"checked"`
	// Hist is the latency histogram (microseconds).
	Hist *hdrhistogram.Histogram `json:"-"`
	// Server is the server's own view of the window, read from
	// Config.MetricsURL; nil without one.
	Server *ServerView `json:"server,omitempty"`
	// Methods are a workload's replies by method (Config.Workload), nil
	// without one.
	Methods map[string]*MethodStats `json:"methods,omitempty"`
	// Series is the run's time series: a sample per interval (a tenth of
	// the run, 100 ms to 1 s) from the opening of the measured window.
	Series []Sample `json:"series,omitempty"`
	// Thresholds are the thresholds checked against the run
	// (CheckThresholds), in order; empty without any.
	Thresholds []ThresholdResult `json:"thresholds,omitempty"`
}

// Latency holds latency percentiles in microseconds.
type Latency struct {
	P50  int64   `json:"p50"`
	P90  int64   `json:"p90"`
	P99  int64   `json:"p99"`
	P999 int64   `json:"p99_9"`
	Max  int64   `json:"max"`
	Mean float64 `json:"mean"`
}

// TotalErrors returns the sum of Errors.
func (r *Result) TotalErrors() int64 {
	var n int64
	for _, v := range r.Errors {
		n += v
	}
	return n
}

func (r *runner) result(workers []*worker, stop time.Time) *Result {
	res := &Result{
		Target: r.cfg.Target, Conns: r.cfg.Conns, Pipeline: r.cfg.Pipeline, Batch: r.cfg.Batch, Rate: r.cfg.Rate, Schedule: r.cfg.Schedule,
		Errors: map[string]int64{}, Hist: hdrhistogram.New(histMin, histMax, histDigits),
		Checked: !r.cfg.NoCheck,
	}
	end := stop
	if r.cfg.Requests <= 0 && r.end.Before(stop) {
		end = r.end
	}
	res.Duration = end.Sub(r.start)
	if res.Duration <= 0 {
		res.Duration = time.Nanosecond
	}
	var wireIn, wireOut, answered, sent int64
	for _, w := range workers {
		wireIn, wireOut, answered, sent = wireIn+w.wireIn, wireOut+w.wireOut, answered+w.answered, sent+w.sent
		res.CompressedReplies += w.compressed
		res.Requests += w.done.Load()
		if res.Rate > 0 || len(res.Schedule) > 0 {
			res.Offered += w.offered
		}
		res.Calls += w.calls.Load()
		for k, v := range w.errs {
			res.Errors[k] += v
		}
		for k, v := range w.detail {
			if res.ErrorDetail == nil {
				res.ErrorDetail = map[string]string{}
			}
			if res.ErrorDetail[k] == "" {
				res.ErrorDetail[k] = v
			}
		}
		for i := range w.mstats {
			res.addMethod(r.specs[i].method, &w.mstats[i])
		}
		for code, n := range w.codes {
			res.addCode(strconv.FormatInt(code, 10), n)
		}
		if w.others > 0 {
			res.addCode("other", w.others)
		}
		res.Hist.Merge(w.hist)
	}
	if answered > 0 {
		res.WireInPerRequest = float64(wireIn) / float64(answered)
	}
	if sent > 0 {
		res.WireOutPerRequest = float64(wireOut) / float64(sent)
	}
	switch {
	case len(r.cfg.Compression) > 0:
		res.Compression = strings.Join(r.cfg.Compression, ",")
	case r.cfg.WSCompression:
		res.Compression = "permessage-deflate"
	}
	secs := res.Duration.Seconds()
	res.RequestsPerSec = float64(res.Requests) / secs
	res.CallsPerSec = float64(res.Calls) / secs
	h := res.Hist
	res.Latency = Latency{
		P50: h.ValueAtQuantile(50), P90: h.ValueAtQuantile(90), P99: h.ValueAtQuantile(99),
		P999: h.ValueAtQuantile(99.9), Max: h.Max(), Mean: h.Mean(),
	}
	return res
}

// MethodStats are the measured replies to one method of a workload.
type MethodStats struct {
	Replies    int64            `json:"replies"`               // replies received (results and errors)
	Errors     int64            `json:"errors"`                // error replies, expected or not
	WrongReply int64            `json:"wrong_reply"`           // replies other than the workload expects (ErrWrongReply)
	Codes      map[string]int64 `json:"error_codes,omitempty"` // error replies by code
}

// methodCounts are a worker's counts of one workload call.
type methodCounts struct {
	replies, errors, wrong int64
	codes                  map[int64]int64 // made at the first error reply
}

// count counts an error reply of code, 32 codes at most (then "other",
// under the code math.MinInt64).
func (c *methodCounts) count(code int64) {
	if c.codes == nil {
		c.codes = map[int64]int64{}
	}
	if _, ok := c.codes[code]; !ok && len(c.codes) >= maxErrorCodes {
		code = math.MinInt64
	}
	c.codes[code]++
}

// addMethod adds a worker's counts of a call of method.
func (r *Result) addMethod(method string, c *methodCounts) {
	if r.Methods == nil {
		r.Methods = map[string]*MethodStats{}
	}
	m := r.Methods[method]
	if m == nil {
		m = &MethodStats{}
		r.Methods[method] = m
	}
	m.Replies += c.replies
	m.Errors += c.errors
	m.WrongReply += c.wrong
	for code, n := range c.codes {
		if m.Codes == nil {
			m.Codes = map[string]int64{}
		}
		key := strconv.FormatInt(code, 10)
		if code == math.MinInt64 {
			key = "other"
		}
		m.Codes[key] += n
	}
}

// addCode adds n error replies of code to ErrorCodes.
func (r *Result) addCode(code string, n int64) {
	if r.ErrorCodes == nil {
		r.ErrorCodes = map[string]int64{}
	}
	r.ErrorCodes[code] += n
}

// WriteTable writes a human-readable summary.
func (r *Result) WriteTable(w io.Writer) {
	mode := "closed loop"
	switch {
	case len(r.Schedule) > 0:
		mode = "open loop, " + describeSchedule(r.Schedule) + " (latency from intended send times)"
	case r.Rate > 0:
		mode = fmt.Sprintf("open loop at %.0f req/s (latency from intended send times)", r.Rate)
	}
	fmt.Fprintf(w, "target      %s\n", r.Target)
	fmt.Fprintf(w, "load        %d connections, pipeline %d, batch %d, %s\n", r.Conns, r.Pipeline, r.Batch, mode)
	fmt.Fprintf(w, "measured    %.2fs: %d requests, %d calls\n", r.Duration.Seconds(), r.Requests, r.Calls)
	fmt.Fprintf(w, "throughput  %.0f requests/s", r.RequestsPerSec)
	if r.Batch > 1 {
		fmt.Fprintf(w, ", %.0f calls/s", r.CallsPerSec)
	}
	fmt.Fprintln(w)
	l := r.Latency
	fmt.Fprintf(w, "latency     p50 %s  p90 %s  p99 %s  p99.9 %s  max %s\n",
		us(l.P50), us(l.P90), us(l.P99), us(l.P999), us(l.Max))
	r.writeWire(w)
	switch {
	case len(r.Errors) > 0:
		kinds := slices.Sorted(maps.Keys(r.Errors))
		parts := make([]string, len(kinds))
		for i, k := range kinds {
			parts[i] = fmt.Sprintf("%s %d", k, r.Errors[k])
		}
		fmt.Fprintf(w, "ERRORS      %d: %s\n", r.TotalErrors(), strings.Join(parts, ", "))
		for _, k := range kinds {
			if d := r.ErrorDetail[k]; d != "" {
				fmt.Fprintf(w, "            %s: %s\n", k, d)
			}
		}
	case r.Checked:
		fmt.Fprintln(w, "errors      none: every reply checked")
	default:
		fmt.Fprintln(w, "errors      none seen, replies not checked (--no-check)")
	}
	if len(r.ErrorCodes) > 0 {
		fmt.Fprintf(w, "error codes %s\n", r.codesText())
	}
	if len(r.Methods) > 0 {
		names := slices.Sorted(maps.Keys(r.Methods))
		fmt.Fprintf(w, "methods     %-24s %10s %8s %8s  %s\n", "", "replies", "share", "errors", "wrong / codes")
		var total int64
		for _, m := range r.Methods {
			total += m.Replies
		}
		for _, name := range names {
			m := r.Methods[name]
			codes := "-"
			if len(m.Codes) > 0 {
				codes = countsText(m.Codes)
			}
			fmt.Fprintf(w, "            %-24s %10d %7.2f%% %8d  %d / %s\n", name, m.Replies, 100*float64(m.Replies)/float64(max(total, 1)), m.Errors, m.WrongReply, codes)
		}
	}
	r.Server.writeTable(w, r)
	for i, c := range r.Thresholds {
		head := "            "
		if i == 0 {
			head = "thresholds  "
		}
		fmt.Fprintln(w, head+c.String())
	}
}

// writeWire writes the wire line: bytes per request in and out, and
// the compression asked for and the replies that came compressed.
func (r *Result) writeWire(w io.Writer) {
	if r.WireInPerRequest == 0 && r.WireOutPerRequest == 0 {
		return
	}
	fmt.Fprintf(w, "wire        %s B/request in, %s B/request out", group(r.WireInPerRequest), group(r.WireOutPerRequest))
	if r.Compression != "" {
		fmt.Fprintf(w, "; %s asked, %d replies compressed", r.Compression, r.CompressedReplies)
	}
	fmt.Fprintln(w)
}

// codesText says the error replies by code, most first: "-32601 12,
// -32000 3".
func (r *Result) codesText() string { return countsText(r.ErrorCodes) }

// countsText says the counts of m, most first, then by name:
// "timeout 12, transport 3".
func countsText(m map[string]int64) string {
	keys := slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		if c := cmp.Compare(m[b], m[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// Failure says why the run failed, nil when it had no error: that it
// could not connect (or upgrade) at all, naming the target and the
// cause, or how many errors of which kinds it saw.
func (r *Result) Failure() error {
	total := r.TotalErrors()
	if total == 0 {
		return nil
	}
	// Nothing answered, and every error a failed connection (or, in an
	// open loop, a request never sent for the lack of one).
	if dials := r.Errors[ErrConnect] + r.Errors[ErrTLS] + r.Errors[ErrWebSocket]; r.Requests == 0 && dials > 0 && dials+r.Errors[ErrUnsent] == total {
		kind := ErrConnect
		what := "could not connect to"
		switch {
		case r.Errors[ErrWebSocket] > 0:
			kind, what = ErrWebSocket, "could not open a WebSocket to"
		case r.Errors[ErrTLS] > 0:
			kind, what = ErrTLS, "could not make a TLS connection to"
		}
		if d := r.ErrorDetail[kind]; d != "" {
			return fmt.Errorf("%s %s: %s (%d attempts)", what, r.Target, d, dials)
		}
		return fmt.Errorf("%s %s (%d attempts)", what, r.Target, dials)
	}
	return fmt.Errorf("%d errors (%s): the server did not answer right", total, countsText(r.Errors))
}

// us formats microseconds readably.
func us(v int64) string {
	switch {
	case v >= 1_000_000:
		return fmt.Sprintf("%.2fs", float64(v)/1e6)
	case v >= 1000:
		return fmt.Sprintf("%.2fms", float64(v)/1e3)
	}
	return fmt.Sprintf("%dµs", v)
}

// WritePlotSVG writes the latency distribution as an SVG chart: latency
// against percentile, the percentile axis in "nines" (50 %, 90 %, 99 %,
// 99.9 %, ...) as HdrHistogram's plots do, so that the tail is visible.
// Its title says the target and the whole load shape; the latency axis
// has round ticks with their unit.
func (r *Result) WritePlotSVG(w io.Writer) error {
	const (
		width, height = 860, 480
		left, right   = 84, 48 // room for the tick labels, and for the last percentile's
		top, bottom   = 64, 56
	)
	plotW, plotH := float64(width-left-right), float64(height-top-bottom)
	maxNines := 5.0 // up to 99.999 %
	step, ticks := niceTicks(float64(r.Hist.Max()))
	ymax := step * float64(ticks) // the axis' top value, µs
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="15" font-weight="bold">Latency by percentile: %s</text>`+"\n", left, escapeXML(r.Target))
	fmt.Fprintf(&b, `<text x="%d" y="44" font-size="12" fill="#444">%s; %s requests/s answered over %.2fs</text>`+"\n",
		left, escapeXML(r.LoadShape()), group(r.RequestsPerSec), r.Duration.Seconds())
	// Percentile grid and labels.
	for i := 0; i <= int(maxNines); i++ {
		x := float64(left) + plotW*float64(i)/maxNines
		label := strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.5f", 100*(1-math.Pow(10, -float64(i)))), "0"), ".") + "%"
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", x, top, x, height-bottom)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x, height-bottom+18, label)
	}
	// Latency grid: round ticks, with their unit.
	for i := 0; i <= ticks; i++ {
		v := step * float64(i)
		y := float64(top) + plotH*(1-v/ymax)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", left, y, width-right, y)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", left-8, y+4, tickLabel(v, ymax))
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">percentile</text>`+"\n", float64(left)+plotW/2, height-14)
	fmt.Fprintf(&b, `<text transform="translate(18 %.1f) rotate(-90)" text-anchor="middle">latency</text>`+"\n", float64(top)+plotH/2)
	b.WriteString(`<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="`)
	for i := 0; i <= 400; i++ {
		n := maxNines * float64(i) / 400
		q := 100 * (1 - math.Pow(10, -n))
		v := float64(r.Hist.ValueAtQuantile(q))
		fmt.Fprintf(&b, "%.1f,%.1f ", float64(left)+plotW*n/maxNines, float64(top)+plotH*(1-v/ymax))
	}
	b.WriteString("\"/>\n")
	l := r.Latency
	fmt.Fprintf(&b, `<text x="%d" y="%d">p50 %s · p99 %s · p99.9 %s · max %s</text>`+"\n", left+10, top+16, us(l.P50), us(l.P99), us(l.P999), us(l.Max))
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// LoadShape says how the run loaded the target: "closed loop, 64
// connections, pipeline 4, batch 10" or "open loop at 20,000 requests/s,
// 64 connections".
func (r *Result) LoadShape() string {
	var b strings.Builder
	switch {
	case len(r.Schedule) > 0:
		b.WriteString("open loop, " + describeSchedule(r.Schedule) + ", ")
	case r.Rate > 0:
		b.WriteString("open loop at " + group(r.Rate) + " requests/s, ")
	default:
		b.WriteString("closed loop, ")
	}
	fmt.Fprintf(&b, "%d connections", r.Conns)
	if r.Pipeline > 1 {
		fmt.Fprintf(&b, ", pipeline %d", r.Pipeline)
	}
	if r.Batch > 1 {
		fmt.Fprintf(&b, ", batch %d", r.Batch)
	}
	return b.String()
}

// group writes v rounded, its thousands grouped: 36,586.
func group(v float64) string {
	s := strconv.FormatInt(int64(math.Round(v)), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// niceTicks returns a round step (1, 2 or 5 times a power of ten, in
// µs) and how many of them reach hi: 4 to 10; the step is at least 1 µs.
func niceTicks(hi float64) (step float64, n int) {
	hi = math.Max(hi, 1)
	for step = 1; ; step *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if n = int(math.Ceil(hi / (step * m))); n <= 10 {
				return step * m, max(n, 4)
			}
		}
	}
}

// tickLabel writes a tick's value v (µs) in the unit the axis' top
// value ymax reads best in, without needless decimals: 0, 500µs, 1.5ms, 2s.
func tickLabel(v, ymax float64) string {
	unit, div := "µs", 1.0
	switch {
	case ymax >= 1e6:
		unit, div = "s", 1e6
	case ymax >= 1e3:
		unit, div = "ms", 1e3
	}
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v/div, 'f', -1, 64) + unit
}

func escapeXML(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
