package bench

// Tests of the HTML report (html.go) and the time series (series.go):
// the report of a real run is self-contained and, opened in headless
// Chromium (JETRPC_REQUIRE_BROWSER=1 makes its absence a failure, as in
// CI), has its four charts with their curves.

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// chromium returns a headless Chromium's path, or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("JETRPC_REQUIRE_BROWSER") == "1" {
		t.Fatal("no chromium, and JETRPC_REQUIRE_BROWSER=1")
	}
	t.Skip("no chromium (Debian: apt-get install chromium); JETRPC_REQUIRE_BROWSER=1 makes this a failure")
	return ""
}

func TestWriteHTML_aRealRunInABrowser(t *testing.T) {
	tcp, _ := StartDemoServer(t)
	wl := writeWorkload(t, `{"calls": [{"method": "add", "weight": 3, "params": [{"$int": [1, 9]}, 1]},
		{"method": "nope", "expect": {"error": -32601}}, {"method": "fail", "params": []}]}`, nil)
	res := mustRun(t, Config{Target: "tcp://" + tcp, Workload: wl, Rate: 2000, Duration: time.Second, Conns: 4, Warmup: -1})
	if n := len(res.Series); n < 8 || n > 11 {
		t.Fatalf("%d samples over 1 s at a 100 ms interval", n)
	}
	for _, s := range res.Series[1 : len(res.Series)-1] {
		if s.RequestsPS < 1000 || s.RequestsPS > 3000 || s.MeanUS <= 0 || s.MaxUS < int64(s.MeanUS) || s.ErrorsPS <= 0 {
			t.Fatalf("sample %+v of an open loop at 2,000/s with errors (fail)", s)
		}
	}
	res.CheckThresholds([]Threshold{{Expr: "p99<1h", Metric: "p99", Op: "<", Value: 3.6e9}})
	path := filepath.Join(t.TempDir(), "report.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.WriteHTML(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	page, _ := os.ReadFile(path)
	if regexp.MustCompile(`(?i)<(script|link|img|iframe)\b|\b(src|href)=`).Match(page) {
		t.Fatal("the report loads something: it must be self-contained")
	}
	for _, want := range []string{`id="summary"`, `id="errors"`, `id="methods"`, `id="config"`, "p99&lt;1h: ok", "unexpected error"} {
		if !strings.Contains(string(page), want) {
			t.Fatalf("no %s in the report", want)
		}
	}

	out, err := exec.Command(chromium(t), "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", "file://"+path).Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	dom := string(out)
	for _, id := range []string{"chart-percentiles", "chart-throughput", "chart-latency", "chart-errors"} {
		i := strings.Index(dom, `id="`+id+`"`)
		if i < 0 {
			t.Fatalf("no chart %s in the DOM", id)
		}
		chart := dom[i:]
		if end := strings.Index(chart, "</svg>"); end > 0 {
			chart = chart[:end]
		}
		if !strings.Contains(chart, "<polyline") || strings.Count(chart, ",") < 8 {
			t.Fatalf("chart %s has no curve:\n%.400s", id, chart)
		}
	}
}
