package bench

// Tests of several targets in one run (targets.go): interleaved rounds
// reported side by side, and the differential check over HTTP,
// WebSocket and a stream.

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestRunTargets_sideBySide(t *testing.T) {
	a, _ := StartDemoServer(t)
	b, _ := StartDemoServer(t)
	targets := []NamedTarget{{"a", "tcp://" + a}, {"b", "tcp://" + b}}
	var progress strings.Builder
	res, err := RunTargets(t.Context(), Config{Requests: 2000, Conns: 2, Warmup: -1}, targets, 4, &progress)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Targets) != 2 || len(res.Targets[0].Runs) != 4 || len(res.Targets[1].Runs) != 4 {
		t.Fatalf("%+v", res)
	}
	// Interleaved: round 1 runs a then b, round 2 b then a.
	lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
	if len(lines) != 8 || !strings.Contains(lines[0], " a ") || !strings.Contains(lines[1], " b ") || !strings.Contains(lines[2], " b ") || !strings.Contains(lines[3], " a ") {
		t.Fatalf("order:\n%s", progress.String())
	}
	var tb strings.Builder
	res.WriteTable(&tb)
	if !strings.Contains(tb.String(), "×") || !strings.Contains(tb.String(), "medians of 4 rounds") {
		t.Fatalf("table:\n%s", tb.String())
	}
	if _, err := ParseNamedTarget("nourl"); err == nil {
		t.Fatal("NAME without =URL: accepted")
	}
	if nt, err := ParseNamedTarget("x=tcp://127.0.0.1:1"); err != nil || nt.Name != "x" {
		t.Fatalf("%+v %v", nt, err)
	}
}

// The same server over HTTP, WebSocket and a stream answers alike; a
// server that answers add wrong differs on add, and a call marked free
// is not compared.
func TestDiff(t *testing.T) {
	tcp, _ := StartDemoServer(t)
	wl := writeWorkload(t, `{"calls": [
		{"method": "add", "params": [{"$int": [1, 5]}, 1]},
		{"method": "subtract", "params": [5, 2]},
		{"method": "nope", "free": true}]}`, nil)
	same := []NamedTarget{{"http", "http://" + tcp + "/"}, {"ws", "ws://" + tcp + "/"}, {"tcp", "tcp://" + tcp}}
	d, err := Diff(t.Context(), Config{Workload: wl, Timeout: 5 * time.Second}, same, 30)
	if err != nil {
		t.Fatal(err)
	}
	if d.Calls != 30 || d.Compared != 20 || d.Differ != 0 {
		t.Fatalf("one server three ways: %+v", d)
	}
	wrong := "tcp://" + NewLineServer(t, func(line string, _ int) string {
		var req struct {
			Method string
			ID     json.RawMessage
		}
		_ = json.Unmarshal([]byte(line), &req)
		if req.Method == "subtract" {
			return `{"jsonrpc":"2.0","result": 3,"id":` + string(req.ID) + "}\n" // white space aside, right
		}
		return `{"jsonrpc":"2.0","result":"wrong","id":` + string(req.ID) + "}\n"
	})
	d, err = Diff(t.Context(), Config{Workload: wl}, []NamedTarget{{"jetrpc", "tcp://" + tcp}, {"other", wrong}}, 30)
	if err != nil {
		t.Fatal(err)
	}
	if d.Compared != 20 || d.Differ != 10 || d.ByMethod["add"] != 10 || d.ByMethod["subtract"] != 0 || len(d.Differences) != 10 {
		t.Fatalf("a wrong add: %+v", d)
	}
	var tb strings.Builder
	d.WriteTable(&tb)
	if !strings.Contains(tb.String(), "30 calls sent to every target, 20 compared, 10 answered differently") || !strings.Contains(tb.String(), `"wrong"`) {
		t.Fatalf("table:\n%s", tb.String())
	}
}
