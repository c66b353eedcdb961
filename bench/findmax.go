package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// NOTE: a capacity search runs the open loop at one rate after another:
// doubling from a start rate while the target holds the SLO, then
// halving the interval between the highest rate held and the lowest
// failed until they are within Precision of each other. Each probe is a
// whole Run (its own connections, warm-up and window), so that one
// probe's backlog cannot spill into the next.

// FindMaxConfig describes a capacity search.
type FindMaxConfig struct {
	// SLO are the conditions a rate must meet to be held (see
	// ParseThreshold), besides no error and an answered rate within 2 %
	// of the offered one.
	SLO []Threshold
	// Start is the first rate probed, in requests/s; 0 means 1000.
	Start float64
	// Max bounds the rates probed; 0 means 10,000,000.
	Max float64
	// Precision is how close, relative to the highest rate held, the
	// search brackets the capacity before it stops; 0 means 0.05.
	Precision float64
	// Probes bounds the number of runs; 0 means 20.
	Probes int
	// Progress, when set, receives a line per probe.
	Progress io.Writer
}

// Probe is one rate a capacity search tried.
type Probe struct {
	Rate   float64  `json:"rate"` // offered, requests/s
	Result *Result  `json:"result"`
	Held   bool     `json:"held"`
	Failed []string `json:"failed,omitempty"` // why it did not hold
}

// Capacity is what a capacity search found.
type Capacity struct {
	// Max is the highest rate held (0 when none was); Ceiling the lowest
	// that failed (0 when none did, up to FindMaxConfig.Max).
	Max     float64  `json:"max"`
	Ceiling float64  `json:"ceiling,omitempty"`
	SLO     []string `json:"slo"`
	Probes  []Probe  `json:"probes"` // in the order run
}

// FindMax searches for the highest rate at which the target of cfg (an
// open loop at that rate, cfg's other settings as they are: Duration is
// each probe's window) holds f.SLO with no error. cfg.Rate, Schedule and
// Requests must not be set.
func FindMax(ctx context.Context, cfg Config, f FindMaxConfig) (*Capacity, error) {
	if cfg.Rate != 0 || len(cfg.Schedule) > 0 || cfg.Requests != 0 {
		return nil, errors.New("a capacity search sets the rate of each probe: no rate, schedule or request count")
	}
	if f.Start == 0 {
		f.Start = 1000
	}
	if f.Max == 0 {
		f.Max = 10_000_000
	}
	if f.Precision == 0 {
		f.Precision = 0.05
	}
	if f.Probes == 0 {
		f.Probes = 20
	}
	if !(f.Start > 0) || !(f.Max >= f.Start) || !(f.Precision > 0 && f.Precision < 1) || f.Probes < 2 {
		return nil, errors.New("a capacity search wants 0 < start ≤ max, 0 < precision < 1 and 2 probes or more")
	}
	c := &Capacity{}
	for _, t := range f.SLO {
		c.SLO = append(c.SLO, t.Expr)
	}
	probe := func(rate float64) (bool, error) {
		pc := cfg
		pc.Rate, pc.Progress = rate, nil
		res, err := Run(ctx, pc)
		if err != nil {
			return false, err
		}
		p := Probe{Rate: rate, Result: res}
		if err := res.CheckThresholds(f.SLO); err != nil {
			for _, t := range res.Thresholds {
				if !t.OK {
					p.Failed = append(p.Failed, t.String())
				}
			}
		}
		if n := res.TotalErrors(); n > 0 {
			p.Failed = append(p.Failed, fmt.Sprintf("%d errors", n))
		}
		if res.RequestsPerSec < 0.98*rate {
			p.Failed = append(p.Failed, fmt.Sprintf("answered %s of %s requests/s", group(res.RequestsPerSec), group(rate)))
		}
		p.Held = len(p.Failed) == 0
		c.Probes = append(c.Probes, p)
		if f.Progress != nil {
			fmt.Fprintln(f.Progress, p.line())
		}
		return p.Held, ctx.Err()
	}
	lo, hi := 0.0, 0.0 // the highest rate held, the lowest failed
	for rate := f.Start; len(c.Probes) < f.Probes; rate = math.Min(rate*2, f.Max) {
		held, err := probe(rate)
		if err != nil {
			return c, err
		}
		if !held {
			hi = rate
			break
		}
		lo = rate
		if rate >= f.Max {
			break
		}
	}
	for hi > 0 && len(c.Probes) < f.Probes && (lo == 0 && hi > f.Start/64 || lo > 0 && (hi-lo)/lo > f.Precision) {
		rate := (lo + hi) / 2
		if lo == 0 {
			rate = hi / 2 // the start failed: halve until one holds
		}
		held, err := probe(rate)
		if err != nil {
			return c, err
		}
		if held {
			lo = rate
		} else {
			hi = rate
		}
	}
	c.Max, c.Ceiling = lo, hi
	return c, nil
}

// line says a probe in one line.
func (p *Probe) line() string {
	r := p.Result
	verdict := "held"
	if !p.Held {
		verdict = "FAILED: " + strings.Join(p.Failed, "; ")
	}
	return fmt.Sprintf("%12s %12s %10s %10s %10s  %s", group(p.Rate), group(r.RequestsPerSec), us(r.Latency.P50), us(r.Latency.P99),
		us(r.Latency.Max), verdict)
}

// WriteTable writes the probes, in rate order, and the verdict.
func (c *Capacity) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "%12s %12s %10s %10s %10s  %s\n", "offered/s", "answered/s", "p50", "p99", "max", "verdict")
	for _, i := range c.byRate() {
		fmt.Fprintln(w, c.Probes[i].line())
	}
	slo := "no error"
	if len(c.SLO) > 0 {
		slo = strings.Join(c.SLO, ", ") + " and no error"
	}
	switch {
	case c.Max == 0:
		fmt.Fprintf(w, "capacity    none of the rates tried held %s\n", slo)
	case c.Ceiling == 0:
		fmt.Fprintf(w, "capacity    at least %s requests/s within %s (the highest rate tried)\n", group(c.Max), slo)
	default:
		fmt.Fprintf(w, "capacity    %s requests/s within %s (%s did not hold)\n", group(c.Max), slo, group(c.Ceiling))
	}
}

// byRate returns the probes' indexes sorted by rate.
func (c *Capacity) byRate() []int {
	idx := make([]int, len(c.Probes))
	for i := range idx {
		idx[i] = i
	}
	for i := 1; i < len(idx); i++ { // insertion sort: a few probes
		for j := i; j > 0 && c.Probes[idx[j]].Rate < c.Probes[idx[j-1]].Rate; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	return idx
}

// WritePlotSVG writes the rate/latency curve: p50 and p99 against the
// offered rate, the probes that failed marked, the capacity a line.
func (c *Capacity) WritePlotSVG(w io.Writer) error {
	const (
		width, height = 860, 480
		left, right   = 84, 48
		top, bottom   = 64, 56
	)
	plotW, plotH := float64(width-left-right), float64(height-top-bottom)
	var maxRate, maxLat float64
	for _, p := range c.Probes {
		maxRate = math.Max(maxRate, p.Rate)
		maxLat = math.Max(maxLat, float64(p.Result.Latency.P99))
	}
	rstep, rticks := niceTicks(maxRate)
	lstep, lticks := niceTicks(maxLat)
	rmax, lmax := rstep*float64(rticks), lstep*float64(lticks)
	x := func(r float64) float64 { return float64(left) + plotW*r/rmax }
	y := func(l float64) float64 { return float64(top) + plotH*(1-math.Min(l, lmax)/lmax) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	target := ""
	if len(c.Probes) > 0 {
		target = c.Probes[0].Result.Target
	}
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="15" font-weight="bold">Latency by offered rate: %s</text>`+"\n", left, escapeXML(target))
	sub := "capacity search"
	if c.Max > 0 {
		sub = "capacity " + group(c.Max) + " requests/s"
	}
	if len(c.SLO) > 0 {
		sub += " within " + strings.Join(c.SLO, ", ")
	}
	fmt.Fprintf(&b, `<text x="%d" y="44" fill="#444">%s</text>`+"\n", left, escapeXML(sub))
	for i := 0; i <= rticks; i++ {
		v := rstep * float64(i)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", x(v), top, x(v), height-bottom)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x(v), height-bottom+18, group(v))
	}
	for i := 0; i <= lticks; i++ {
		v := lstep * float64(i)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", left, y(v), width-right, y(v))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", left-8, y(v)+4, tickLabel(v, lmax))
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">offered requests/s</text>`+"\n", float64(left)+plotW/2, height-14)
	fmt.Fprintf(&b, `<text transform="translate(18 %.1f) rotate(-90)" text-anchor="middle">latency</text>`+"\n", float64(top)+plotH/2)
	if c.Max > 0 {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#2ca02c" stroke-dasharray="4 3"/>`+"\n", x(c.Max), top, x(c.Max), height-bottom)
	}
	order := c.byRate()
	for _, s := range []struct {
		name, color string
		of          func(*Result) int64
	}{{"p50", "#1f77b4", func(r *Result) int64 { return r.Latency.P50 }}, {"p99", "#d62728", func(r *Result) int64 { return r.Latency.P99 }}} {
		b.WriteString(`<polyline fill="none" stroke="` + s.color + `" stroke-width="2" points="`)
		for _, i := range order {
			p := c.Probes[i]
			fmt.Fprintf(&b, "%.1f,%.1f ", x(p.Rate), y(float64(s.of(p.Result))))
		}
		b.WriteString("\"/>\n")
		for _, i := range order {
			p := c.Probes[i]
			fill := s.color
			if !p.Held {
				fill = "white"
			}
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s" stroke="%s" stroke-width="2"/>`+"\n", x(p.Rate), y(float64(s.of(p.Result))), fill, s.color)
		}
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#1f77b4">— p50</text><text x="%d" y="%d" fill="#d62728">— p99</text><text x="%d" y="%d">(open circles: did not hold)</text>`+"\n",
		left+10, top+16, left+70, top+16, left+130, top+16)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// DefaultProbeWindow is the measured window of one probe of a capacity
// search that sets none (jetrpc bench --find-max without -d).
const DefaultProbeWindow = 5 * time.Second
