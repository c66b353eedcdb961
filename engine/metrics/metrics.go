// Package metrics exports the counters of a jetrpc method table and
// engine as Prometheus metrics, with the Prometheus client library.
//
// The table and the engine count on their own (handler.Options.Metrics,
// engine.Stats), lock-free and without allocation, in counters made once
// when the table is sealed; this package reads them when Prometheus
// scrapes, so a call costs the same whether or not anyone scrapes, and
// importing package engine alone does not link Prometheus.
//
// Serve the exposition on its own address with Handler, or on the
// engine's own listeners with Page:
//
//	t := handler.NewTable(handler.WithMetrics(true))
//	// register methods ...
//	reg := prometheus.NewRegistry()
//	e := engine.New(t, engine.WithPage(metrics.Page("/metrics", reg)))
//	metrics.Register(reg, t, e)
//
// Every series is listed in cmd/jetrpc/README.md's "Metrics" section.
package metrics

import (
	"bytes"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/stats"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
)

// Namespace prefixes every metric's name.
const Namespace = "jsonrpc_server"

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(Namespace+"_"+name, help, labels, nil)
}

// The series of a table.
var (
	descStarted = desc("started_total",
		"Calls started: requests, notifications and batch elements, by method ("+stats.UnknownMethod+" for names not registered, "+stats.InvalidMethod+" for invalid requests).", "method")
	descHandled = desc("handled_total",
		"Calls finished, by method and by the JSON-RPC code of their reply (0 for a result; other for codes past the 32 distinct application codes a server tells apart).", "method", "code")
	descHandling = desc("handling_seconds",
		"Time from when a call began to run to when its reply was written, by method.", "method")
	descBatch = desc("batch_size",
		"Batches, by their number of elements.")
	descRefusals = desc("limit_refusals_total",
		"Calls, messages and connections refused for a limit, by limit.", "limit")
	descSubs = desc("subscriptions",
		"Live subscriptions.")
)

// The series of an engine.
var (
	descConns = desc("connections",
		"Open connections, by transport (none until the first byte names the protocol).", "transport")
	descAccepted = desc("connections_accepted_total",
		"Connections accepted.")
	descRefused = desc("connections_refused_total",
		"Connections closed as soon as accepted, by reason.", "reason")
	descClosed = desc("connections_closed_total",
		"Connections closed, by reason.", "reason")
	descIn = desc("received_bytes_total",
		"Bytes of input served, by transport.", "transport")
	descOut = desc("sent_bytes_total",
		"Bytes written, by transport.", "transport")
	descInFlight = desc("messages_in_flight",
		"Messages on workers: queued or running.")
	descBusy = desc("busy_messages_total",
		"Messages answered Server busy (-32000) because no worker could take them, by transport.", "transport")
	descUpgrades = desc("websocket_upgrades_total",
		"WebSocket upgrades.")
	descPushed = desc("pushes_sent_total",
		"Server messages (pushes, subscription notifications) written.")
	descDropped = desc("pushes_dropped_total",
		"Server messages dropped: the client left too much unread (push queue or output budget), or its connection closed.")
	descSlow = desc("slow_consumers_closed_total",
		"Connections closed because the client did not read: write timeout, push queue or output budget.")
	descHeld = desc("output_held_bytes",
		"Bytes held for all connections: unsent output and queued server messages (what the output budget bounds).")
	descConnPeak = desc("connection_output_peak_bytes",
		"The most bytes one connection has held: its unsent output plus its queued server messages (what the push queue bounds).")
	descReady = desc("ready",
		"1 while the health check answers 200; 0 while it answers 503: the server is not ready (engine.Engine.SetNotReady, handler.HTTPPolicy.Ready), drains (engine.Drain, jetrpc serve --drain-grace) or stops.")
)

// Collector is a prometheus.Collector of a table's metrics and, when it
// has one, an engine's.
type Collector struct {
	t *handler.Table
	e *engine.Engine
}

// NewCollector returns the collector of t and of e, which may be nil
// (for a table served by handler.HTTPHandler, say). The table's call
// metrics need handler.Options.Metrics; without it only its limit
// refusals and subscriptions are exported.
func NewCollector(t *handler.Table, e *engine.Engine) *Collector {
	return &Collector{t: t, e: e}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descStarted, descHandled, descHandling, descBatch, descRefusals, descSubs} {
		ch <- d
	}
	if c.e != nil {
		for _, d := range []*prometheus.Desc{descConns, descAccepted, descRefused, descClosed, descIn, descOut, descInFlight, descBusy, descUpgrades, descPushed, descDropped, descSlow, descHeld, descConnPeak, descReady} {
			ch <- d
		}
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	var s *engine.Stats
	if c.e != nil {
		st := c.e.Stats()
		s = &st
	}
	c.collectTable(ch, s)
	if s != nil {
		collectEngine(ch, s)
		ready := int64(0)
		if c.e.Ready() {
			ready = 1
		}
		gauge(ch, descReady, ready)
	}
}

func counter(ch chan<- prometheus.Metric, d *prometheus.Desc, v uint64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v int64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
}

// histogram exports h, whose buckets are bounded by bounds (the last
// one, +Inf, implied).
// Its exemplars (h.Exemplars, traced calls) go with their buckets,
// labelled trace_id and span_id as OpenMetrics and Prometheus expect: the
// OpenMetrics exposition shows them (Handler, Page), the text format
// does not.
func histogram(ch chan<- prometheus.Metric, d *prometheus.Desc, h *stats.Histogram, bounds []float64, labels ...string) {
	buckets := make(map[float64]uint64, len(bounds))
	var n uint64
	for i, b := range bounds {
		n += h.Buckets[i]
		buckets[b] = n
	}
	m := prometheus.MustNewConstHistogram(d, h.Count, h.Sum, buckets, labels...)
	var exs []prometheus.Exemplar
	for i := range h.Exemplars {
		if e := &h.Exemplars[i]; e.Valid() {
			exs = append(exs, prometheus.Exemplar{
				Value:     e.Value,
				Labels:    prometheus.Labels{TraceIDLabel: hex.EncodeToString(e.TraceID[:]), SpanIDLabel: hex.EncodeToString(e.SpanID[:])},
				Timestamp: e.Time,
			})
		}
	}
	if len(exs) > 0 {
		if mx, err := prometheus.NewMetricWithExemplars(m, exs...); err == nil {
			m = mx
		}
	}
	ch <- m
}

// The labels of an exemplar of jsonrpc_server_handling_seconds: the
// trace and the span of a traced call, in lower-case hex, as
// OpenTelemetry and Prometheus' exemplar storage name them.
const (
	TraceIDLabel = "trace_id"
	SpanIDLabel  = "span_id"
)

var (
	durationBounds = func() []float64 {
		var out []float64
		for _, d := range stats.DurationBuckets() {
			out = append(out, d.Seconds())
		}
		return out
	}()
	batchBounds = func() []float64 {
		var out []float64
		for _, n := range stats.BatchSizeBuckets() {
			out = append(out, float64(n))
		}
		return out
	}()
)

func (c *Collector) collectTable(ch chan<- prometheus.Metric, s *engine.Stats) {
	t := c.t
	batches, ok := t.Metrics(func(m *stats.Method) {
		counter(ch, descStarted, m.Started, m.Method)
		for _, h := range m.Handled {
			code := "other"
			if !h.Other {
				code = strconv.Itoa(int(h.Code))
			}
			counter(ch, descHandled, h.Count, m.Method, code)
		}
		histogram(ch, descHandling, &m.Duration, durationBounds, m.Method)
	})
	if ok {
		histogram(ch, descBatch, &batches.Sizes, batchBounds)
	}
	r := t.LimitRefusals()
	counter(ch, descRefusals, r.Rate, "rate")
	counter(ch, descRefusals, r.RateDropped, "rate_notification")
	counter(ch, descRefusals, r.Subscriptions, "subscriptions")
	if ok {
		counter(ch, descRefusals, r.Concurrency, "concurrency")
		counter(ch, descRefusals, r.ResponseSize, "response_size")
		counter(ch, descRefusals, r.BatchLength, "batch_length")
	}
	if s != nil {
		counter(ch, descRefusals, s.TooLarge, "message_size")
		counter(ch, descRefusals, s.HeadTooLarge, "header_size")
		counter(ch, descRefusals, s.RefusedMaxConns, "connections")
	}
	gauge(ch, descSubs, int64(t.SubscriptionCount()))
}

func collectEngine(ch chan<- prometheus.Metric, s *engine.Stats) {
	known := int64(0)
	for _, tr := range []struct {
		name string
		s    *engine.TransportStats
	}{{"http", &s.HTTP}, {"websocket", &s.WebSocket}, {"stream", &s.Stream}} {
		gauge(ch, descConns, tr.s.Conns, tr.name)
		counter(ch, descIn, tr.s.BytesIn, tr.name)
		counter(ch, descOut, tr.s.BytesOut, tr.name)
		counter(ch, descBusy, tr.s.Busy, tr.name)
		known += tr.s.Conns
	}
	gauge(ch, descConns, max(s.Conns-known, 0), "none")
	counter(ch, descAccepted, s.Accepted)
	counter(ch, descRefused, s.RefusedAddress, "address")
	counter(ch, descRefused, s.RefusedMaxConns, "max_conns")
	counter(ch, descRefused, s.RefusedStopping, "stopping")
	cl := &s.Closed
	for _, r := range []struct {
		name string
		n    uint64
	}{
		{"client", cl.Client}, {"protocol", cl.Protocol}, {"idle", cl.Idle}, {"read_timeout", cl.ReadTimeout},
		{"write_timeout", cl.WriteTimeout}, {"push_queue", cl.PushQueue}, {"output_budget", cl.OutputBudget},
		{"flood", cl.Flood}, {"stopping", cl.Stopping},
	} {
		counter(ch, descClosed, r.n, r.name)
	}
	gauge(ch, descInFlight, s.InFlight)
	counter(ch, descUpgrades, s.Upgrades)
	counter(ch, descPushed, s.PushesSent)
	counter(ch, descDropped, s.PushesDropped)
	counter(ch, descSlow, cl.WriteTimeout+cl.PushQueue+cl.OutputBudget)
	gauge(ch, descHeld, s.OutputHeld)
	gauge(ch, descConnPeak, s.ConnOutputPeak)
}

// Register registers on reg the collector of t and e (e may be nil),
// and the Go runtime's and the process's collectors unless reg has them
// already (prometheus.DefaultRegisterer does).
func Register(reg prometheus.Registerer, t *handler.Table, e *engine.Engine) error {
	for _, c := range []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := reg.Register(c); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
			return err
		}
	}
	return reg.Register(NewCollector(t, e))
}

// Handler returns the http.Handler of g's exposition, for a server of
// its own (promhttp.HandlerFor: content negotiation, gzip, errors),
// OpenMetrics included for a scraper that asks for it, with the
// exemplars of traced calls.
func Handler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// ContentType is the Content-Type of Page's exposition in Prometheus'
// text format.
var ContentType = string(expfmt.NewFormat(expfmt.TypeTextPlain))

// OpenMetricsContentType is the Content-Type of Page's exposition to a
// scraper that accepts OpenMetrics 1.0 (Prometheus does by default):
// the same metrics, and the exemplars of traced calls.
var OpenMetricsContentType = string(expfmt.FmtOpenMetrics_1_0_0)

// Page returns the engine page (engine.WithPage) serving g's exposition
// at path, on the engine's own listeners: in OpenMetrics 1.0, with the
// exemplars of traced calls, to a request whose Accept field prefers it
// (Prometheus' scrapes do), else in Prometheus' text format. Metrics
// that fail to gather are left out; in the text format the failure is
// written as a comment, so a scrape always gets what could be gathered.
func Page(path string, g prometheus.Gatherer) engine.Page {
	text := engine.Page{Path: path, ContentType: ContentType, Append: func(dst []byte) []byte {
		return expose(dst, g, expfmt.NewFormat(expfmt.TypeTextPlain))
	}}
	om := engine.Page{Path: path, ContentType: OpenMetricsContentType, Append: func(dst []byte) []byte {
		return expose(dst, g, expfmt.FmtOpenMetrics_1_0_0)
	}}
	accepted := []expfmt.Format{expfmt.FmtOpenMetrics_1_0_0, expfmt.FmtText}
	text.Negotiate = func(accept string) *engine.Page {
		if accept == "" {
			return &text
		}
		f := expfmt.NegotiateAccept(http.Header{"Accept": {accept}}, accepted...)
		if f.FormatType() == expfmt.TypeOpenMetrics {
			return &om
		}
		return &text
	}
	return text
}

// expose appends g's exposition in format f to dst.
func expose(dst []byte, g prometheus.Gatherer, f expfmt.Format) []byte {
	buf := bytes.NewBuffer(dst)
	mfs, err := g.Gather()
	enc := expfmt.NewEncoder(buf, f)
	for _, mf := range mfs {
		if e := enc.Encode(mf); e != nil && err == nil {
			err = e
		}
	}
	if f.FormatType() == expfmt.TypeOpenMetrics {
		// OpenMetrics has no free comments: a failure leaves its metrics out.
		if c, ok := enc.(expfmt.Closer); ok {
			_ = c.Close() // "# EOF"
		}
		return buf.Bytes()
	}
	if err != nil {
		buf.WriteString("# jetrpc: gathering failed: ")
		buf.WriteString(strconv.Quote(err.Error()))
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}
