package bench

// Tests of the latency chart (WritePlotSVG): well-formed SVG whose title
// says the load shape, round latency ticks with their unit, an axis
// label, and every label inside the picture.

import (
	"encoding/xml"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

func TestNiceTicks(t *testing.T) {
	for _, tc := range []struct {
		max         float64
		step        float64
		n           int
		first, last string
	}{
		{0, 1, 4, "1µs", "4µs"},
		{7, 1, 7, "1µs", "7µs"},
		{41_020, 5000, 9, "5ms", "45ms"},
		{999, 100, 10, "0.1ms", "1ms"},
		{1_500_000, 200_000, 8, "0.2s", "1.6s"},
		{12_345_678, 2_000_000, 7, "2s", "14s"},
	} {
		step, n := niceTicks(tc.max)
		if step != tc.step || n != tc.n {
			t.Errorf("niceTicks(%g): %g × %d, want %g × %d", tc.max, step, n, tc.step, tc.n)
			continue
		}
		ymax := step * float64(n)
		if ymax < tc.max {
			t.Errorf("niceTicks(%g): the axis ends at %g, below the largest value", tc.max, ymax)
		}
		if a, b := tickLabel(step, ymax), tickLabel(ymax, ymax); a != tc.first || b != tc.last {
			t.Errorf("niceTicks(%g): labels %s … %s, want %s … %s", tc.max, a, b, tc.first, tc.last)
		}
	}
}

func TestWritePlotSVG_titleTicksAndBounds(t *testing.T) {
	h := hdrhistogram.New(histMin, histMax, histDigits)
	for i := int64(1); i <= 10_000; i++ {
		_ = h.RecordValue(100 + i*4) // 104µs to 40.1ms
	}
	r := &Result{Target: "http://127.0.0.1:8080/", Conns: 64, Pipeline: 4, Batch: 10, RequestsPerSec: 36_586.4,
		Duration: 5 * time.Second, Hist: h, Latency: Latency{P50: 20_000, P99: 39_700, P999: 40_000, Max: h.Max()}}
	var b strings.Builder
	if err := r.WritePlotSVG(&b); err != nil {
		t.Fatal(err)
	}
	var width float64
	var texts []string
	dec := xml.NewDecoder(strings.NewReader(b.String()))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v", err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		attr := map[string]string{}
		for _, a := range el.Attr {
			attr[a.Name.Local] = a.Value
		}
		switch el.Name.Local {
		case "svg":
			width, _ = strconv.ParseFloat(attr["width"], 64)
		case "text":
			var s string
			if err := dec.DecodeElement(&s, &el); err != nil {
				t.Fatal(err)
			}
			texts = append(texts, s)
			// A label centred on x, at about 7 px a character, fits.
			if x, err := strconv.ParseFloat(attr["x"], 64); err == nil && attr["text-anchor"] == "middle" && x+3.5*float64(len(s)) > width {
				t.Errorf("label %q at x=%g is clipped by the width %g", s, x, width)
			}
		}
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{
		"Latency by percentile: http://127.0.0.1:8080/",
		"closed loop, 64 connections, pipeline 4, batch 10; 36,586 requests/s answered over 5.00s",
		"latency", "percentile", "99.999%", "0\n5ms\n10ms", "45ms",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q among the texts:\n%s", want, all)
		}
	}
	r.Rate, r.Pipeline, r.Batch = 20_000, 1, 1
	if got := r.LoadShape(); got != "open loop at 20,000 requests/s, 64 connections" {
		t.Errorf("open loop shape: %q", got)
	}
}
