package metrics_test

// Tests of exemplars: a call whose tracer named its span
// (handler.Call.SetSpan) is its bucket's exemplar in the OpenMetrics
// exposition — which Page answers to a request that accepts it, and
// Handler too — labelled trace_id and span_id; the text format, and a
// call not traced, have none.

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/engine/metrics"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/prometheus/client_golang/prometheus"
)

const omAccept = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"

// getWith GETs url with the Accept field accept ("" for none), and
// returns its Content-Type and body.
func getWith(t *testing.T, url, accept string) (string, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s %s", url, resp.Status, b)
	}
	return resp.Header.Get("Content-Type"), string(b)
}

func TestPage_openMetricsExemplars(t *testing.T) {
	tab := handler.NewTable(handler.WithMetrics(true))
	ref := handler.SpanRef{TraceID: [16]byte{0x4b, 0xf9, 15: 0x36}, SpanID: [8]byte{0, 0xf0, 7: 0xb7}}
	tab.Use(func(_ context.Context, c *handler.Call) error {
		if string(c.ID()) == "1" { // the traced call
			c.SetSpan(ref)
		}
		return nil
	})
	demo.Register(tab)
	s := startServer(t, tab)
	postJSON(t, s.addr, `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`)
	postJSON(t, s.addr, `{"jsonrpc":"2.0","method":"echo","params":["x"],"id":2}`)
	exemplar := `trace_id="` + ref.TraceIDString() + `"`
	url := "http://" + s.addr + "/metrics"

	ct, om := getWith(t, url, omAccept)
	if ct != metrics.OpenMetricsContentType || !strings.HasSuffix(om, "# EOF\n") {
		t.Fatalf("OpenMetrics: Content-Type %q, end %q", ct, om[max(0, len(om)-40):])
	}
	var withExemplar []string
	for _, l := range strings.Split(om, "\n") {
		if strings.Contains(l, exemplar) {
			withExemplar = append(withExemplar, l)
		}
	}
	if len(withExemplar) != 1 || !strings.HasPrefix(withExemplar[0], `jsonrpc_server_handling_seconds_bucket{method="add",`) ||
		!strings.Contains(withExemplar[0], `span_id="`+ref.SpanIDString()+`"`) {
		t.Errorf("exemplar lines %q; want one, of add's bucket, with span_id %s", withExemplar, ref.SpanIDString())
	}

	for _, accept := range []string{"", "text/plain;version=0.0.4"} {
		ct, text := getWith(t, url, accept)
		if ct != metrics.ContentType || strings.Contains(text, "trace_id") || strings.Contains(text, "# EOF") {
			t.Errorf("Accept %q: Content-Type %q, or exemplars in the text format", accept, ct)
		}
	}

	// Handler (a listener of its own) negotiates the same way.
	reg := prometheus.NewRegistry()
	if err := metrics.Register(reg, tab, nil); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(metrics.Handler(reg))
	defer hs.Close()
	if _, body := getWith(t, hs.URL, omAccept); !strings.Contains(body, exemplar) {
		t.Errorf("Handler's OpenMetrics has no exemplar")
	}
	if _, body := getWith(t, hs.URL, ""); strings.Contains(body, "trace_id") {
		t.Errorf("Handler's text format has exemplars")
	}
}
