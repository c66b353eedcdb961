package bench

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// NOTE: the HTML report is one self-contained file: its charts are
// inline SVG and its style inline CSS, so that it opens without a
// network (a CI artifact, an attachment). Each chart has an id
// (chart-percentiles, chart-throughput, chart-latency, chart-errors) for
// the tests that open it in a browser.

// WriteHTML writes the run as a self-contained HTML report: the load and
// its outcome (the bytes on the wire per request too), the latency by
// percentile, throughput, latency and errors over time, errors by kind
// and code, the replies by method, the thresholds, and the run's whole
// configuration.
func (r *Result) WriteHTML(w io.Writer) error {
	var b strings.Builder
	esc := html.EscapeString
	b.WriteString(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>jetrpc bench: ` + esc(r.Target) + `</title>
<style>
body{font-family:sans-serif;margin:24px auto;max-width:920px;color:#222}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;font-size:13px}td,th{padding:3px 10px;border-bottom:1px solid #e4e4e4;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}.bad{color:#b00}.ok{color:#070}
.chart{margin:8px 0 16px}pre{background:#f6f6f6;padding:8px;font-size:12px;overflow:auto}
</style></head><body>
`)
	fmt.Fprintf(&b, "<h1>jetrpc bench: %s</h1>\n<p>%s; %s measured.</p>\n", esc(r.Target), esc(r.LoadShape()), esc(r.Duration.Round(time.Millisecond).String()))
	verdict := `<span class="ok">no error: every reply checked</span>`
	switch {
	case r.TotalErrors() > 0:
		verdict = fmt.Sprintf(`<span class="bad">%d errors</span>`, r.TotalErrors())
	case !r.Checked:
		verdict = "no error seen; replies not checked (--no-check)"
	}
	l := r.Latency
	b.WriteString("<table id=\"summary\">\n")
	row := func(k, v string) { fmt.Fprintf(&b, "<tr><th>%s</th><td>%s</td></tr>\n", esc(k), v) }
	row("requests", fmt.Sprintf("%s answered, %s calls", group(float64(r.Requests)), group(float64(r.Calls))))
	row("throughput", fmt.Sprintf("%s requests/s, %s calls/s", group(r.RequestsPerSec), group(r.CallsPerSec)))
	row("latency", esc(fmt.Sprintf("p50 %s · p90 %s · p99 %s · p99.9 %s · max %s · mean %s", us(l.P50), us(l.P90), us(l.P99), us(l.P999), us(l.Max), us(int64(l.Mean)))))
	if r.WireInPerRequest > 0 || r.WireOutPerRequest > 0 {
		wire := fmt.Sprintf("%s B/request in, %s B/request out", group(r.WireInPerRequest), group(r.WireOutPerRequest))
		if r.Compression != "" {
			wire += fmt.Sprintf("; %s asked, %d replies compressed", r.Compression, r.CompressedReplies)
		}
		row("wire", esc(wire))
	}
	row("errors", verdict)
	for _, t := range r.Thresholds {
		class := "ok"
		if !t.OK {
			class = "bad"
		}
		row("threshold", fmt.Sprintf(`<span class="%s">%s</span>`, class, esc(t.String())))
	}
	b.WriteString("</table>\n")

	b.WriteString("<h2>Latency by percentile</h2>\n<div class=\"chart\" id=\"chart-percentiles\">")
	var svg strings.Builder
	if r.Hist != nil {
		if err := r.WritePlotSVG(&svg); err != nil {
			return err
		}
	}
	b.WriteString(svg.String())
	b.WriteString("</div>\n")

	at := make([]float64, len(r.Series))
	rps, eps, mean, mx := make([]float64, len(r.Series)), make([]float64, len(r.Series)), make([]float64, len(r.Series)), make([]float64, len(r.Series))
	for i, s := range r.Series {
		at[i], rps[i], eps[i], mean[i], mx[i] = s.At, s.RequestsPS, s.ErrorsPS, s.MeanUS, float64(s.MaxUS)
	}
	b.WriteString("<h2>Throughput over time</h2>\n")
	b.WriteString(seriesSVG("chart-throughput", "requests/s", false, at, []line{{"answered requests/s", "#1f77b4", rps}}))
	b.WriteString("<h2>Latency over time</h2>\n")
	b.WriteString(seriesSVG("chart-latency", "latency", true, at, []line{{"mean", "#1f77b4", mean}, {"max", "#d62728", mx}}))
	b.WriteString("<h2>Errors over time</h2>\n")
	b.WriteString(seriesSVG("chart-errors", "errors/s", false, at, []line{{"errors/s", "#d62728", eps}}))

	if len(r.Errors) > 0 || len(r.ErrorCodes) > 0 {
		b.WriteString("<h2>Errors</h2>\n")
	}
	if len(r.Errors) > 0 {
		b.WriteString("<table id=\"errors\"><tr><th>kind</th><th>count</th><th>first cause</th></tr>\n")
		kinds := slices.Sorted(maps.Keys(r.Errors))
		for _, k := range kinds {
			fmt.Fprintf(&b, "<tr><td>%s</td><td class=\"n\">%d</td><td>%s</td></tr>\n", esc(k), r.Errors[k], esc(r.ErrorDetail[k]))
		}
		b.WriteString("</table>\n")
	}
	if len(r.ErrorCodes) > 0 {
		fmt.Fprintf(&b, "<p>Error replies by code (expected ones too): %s</p>\n", esc(r.codesText()))
	}
	if len(r.Methods) > 0 {
		b.WriteString("<h2>Replies by method</h2>\n<table id=\"methods\"><tr><th>method</th><th>replies</th><th>errors</th><th>wrong</th><th>error codes</th></tr>\n")
		names := slices.Sorted(maps.Keys(r.Methods))
		for _, n := range names {
			m := r.Methods[n]
			codes := ""
			if len(m.Codes) > 0 {
				codes = countsText(m.Codes)
			}
			fmt.Fprintf(&b, "<tr><td>%s</td><td class=\"n\">%d</td><td class=\"n\">%d</td><td class=\"n\">%d</td><td>%s</td></tr>\n",
				esc(n), m.Replies, m.Errors, m.WrongReply, esc(codes))
		}
		b.WriteString("</table>\n")
	}
	cfg := *r
	cfg.Series, cfg.Hist = nil, nil
	j, err := json.MarshalIndent(&cfg, "", "  ")
	if err != nil {
		return err
	}
	b.WriteString("<h2>The run, as JSON</h2>\n<pre id=\"config\">" + esc(string(j)) + "</pre>\n</body></html>\n")
	_, err = io.WriteString(w, b.String())
	return err
}

// line is one curve of a time series chart.
type line struct {
	name, color string
	ys          []float64
}

// seriesSVG draws curves against time in seconds: an SVG with the id,
// its y axis in unit (a latency in µs when latency).
func seriesSVG(id, unit string, latency bool, xs []float64, lines []line) string {
	const (
		width, height = 860, 260
		left, right   = 84, 48
		top, bottom   = 28, 44
	)
	plotW, plotH := float64(width-left-right), float64(height-top-bottom)
	var xmax, ymax float64
	for _, x := range xs {
		xmax = math.Max(xmax, x)
	}
	for _, l := range lines {
		for _, y := range l.ys {
			ymax = math.Max(ymax, y)
		}
	}
	xstep, xt := niceRange(xmax)
	ystep, yt := niceRange(ymax)
	xtop, ytop := xstep*float64(xt), ystep*float64(yt)
	x := func(v float64) float64 { return float64(left) + plotW*v/xtop }
	y := func(v float64) float64 { return float64(top) + plotH*(1-v/ytop) }
	var b strings.Builder
	fmt.Fprintf(&b, `<div class="chart"><svg id="%s" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", id, width, height, width, height)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	for i := 0; i <= xt; i++ {
		v := xstep * float64(i)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/><text x="%.1f" y="%d" text-anchor="middle">%ss</text>`+"\n",
			x(v), top, x(v), height-bottom, x(v), height-bottom+16, trimFloat(v))
	}
	for i := 0; i <= yt; i++ {
		v := ystep * float64(i)
		label := group(v)
		if ystep < 1 {
			label = trimFloat(v)
		}
		if latency {
			label = tickLabel(v, ytop)
		}
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n",
			left, y(v), width-right, y(v), left-8, y(v)+4, label)
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">seconds into the measured window</text>`+"\n", float64(left)+plotW/2, height-8)
	fmt.Fprintf(&b, `<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", float64(top)+plotH/2, html.EscapeString(unit))
	for k, l := range lines {
		b.WriteString(`<polyline fill="none" stroke="` + l.color + `" stroke-width="2" points="`)
		for i, v := range l.ys {
			fmt.Fprintf(&b, "%.1f,%.1f ", x(xs[i]), y(v))
		}
		b.WriteString("\"/>\n")
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="%s">— %s</text>`+"\n", left+10+140*k, top+14, l.color, html.EscapeString(l.name))
	}
	b.WriteString("</svg></div>\n")
	return b.String()
}

// niceRange is niceTicks for any positive scale: a step of 1, 2 or 5
// times a power of ten (0.1 too), and 4 to 10 of them reaching hi.
func niceRange(hi float64) (step float64, n int) {
	if !(hi > 0) {
		hi = 1
	}
	for step = math.Pow(10, math.Floor(math.Log10(hi))-1); ; step *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if n = int(math.Ceil(hi / (step * m) * (1 - 1e-12))); n <= 10 {
				return step * m, max(n, 4)
			}
		}
	}
}

// trimFloat writes v without needless decimals.
func trimFloat(v float64) string {
	s := fmt.Sprintf("%.3f", v)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
