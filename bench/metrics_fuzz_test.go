package bench

import (
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// FuzzServerView: two expositions, whatever they hold, give a server
// view or an error, never a panic, and a view's figures are sane:
// counts and rates not negative, quantiles not NaN and ordered.
func FuzzServerView(f *testing.F) {
	const head = "# TYPE jsonrpc_server_handled_total counter\n# TYPE jsonrpc_server_handling_seconds histogram\n"
	f.Add(head+`jsonrpc_server_handled_total{method="add",code="0"} 10
jsonrpc_server_handling_seconds_bucket{method="add",le="1e-06"} 2
jsonrpc_server_handling_seconds_bucket{method="add",le="+Inf"} 10
jsonrpc_server_handling_seconds_sum{method="add"} 0.001
jsonrpc_server_handling_seconds_count{method="add"} 10
`, head+`jsonrpc_server_handled_total{method="add",code="0"} 110
jsonrpc_server_handled_total{method="(unknown)",code="-32601"} 5
jsonrpc_server_handling_seconds_bucket{method="add",le="1e-06"} 50
jsonrpc_server_handling_seconds_bucket{method="add",le="+Inf"} 115
jsonrpc_server_handling_seconds_sum{method="add"} 0.01
jsonrpc_server_handling_seconds_count{method="add"} 115
`)
	f.Add("", "")
	f.Add(head+"jsonrpc_server_handled_total 5\n", head+"jsonrpc_server_handled_total 3\n")                    // a counter that went down
	f.Add("jsonrpc_server_handled_total{code=\"0\"} NaN\n", "jsonrpc_server_handled_total{code=\"0\"} +Inf\n") // counts that are not numbers gave NaN rates and a garbage call count
	f.Fuzz(func(t *testing.T, before, after string) {
		at := time.Unix(1000, 0)
		snap := func(s string, at time.Time) *serverSnapshot {
			p := expfmt.NewTextParser(model.UTF8Validation)
			fams, err := p.TextToMetricFamilies(strings.NewReader(s))
			if err != nil {
				return nil
			}
			sn, err := snapshotOf(fams, at)
			if err != nil {
				return nil
			}
			return sn
		}
		b, a := snap(before, at), snap(after, at.Add(time.Second))
		if b == nil || a == nil {
			return
		}
		v := serverView("http://127.0.0.1:1/metrics", b, a)
		if v == nil {
			t.Fatal("no view")
		}
		if v.Error == "" {
			if v.Calls < 0 || v.CallsPerSec < 0 || math.IsNaN(v.CallsPerSec) {
				t.Fatalf("calls %v, rate %v", v.Calls, v.CallsPerSec)
			}
			if h := v.Handling; h != nil && (math.IsNaN(h.P50) || math.IsNaN(h.P99) || h.P50 > h.P99) {
				t.Fatalf("quantiles %+v", *h)
			}
		}
		v.writeTable(io.Discard, &Result{})
	})
}
