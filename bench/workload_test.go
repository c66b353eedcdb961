package bench

// Tests of workloads (workload.go): the mix's proportions, each
// generator, expected replies, per-method counts, refusals, and no
// allocation per request with templates on.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// writeWorkload writes a workload file and its extra files into a
// folder, and loads it.
func writeWorkload(t testing.TB, text string, files map[string]string) *Workload {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "w.json")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := LoadWorkload(path)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestRotation_proportionsAndInterleaving(t *testing.T) {
	rot, err := rotation([]WorkloadCall{{Weight: 5}, {Weight: 3}, {}, {Weight: 2}})
	if err != nil || len(rot) != 11 {
		t.Fatalf("%v %v", rot, err)
	}
	counts := map[int]int{}
	for _, i := range rot {
		counts[i]++
	}
	if counts[0] != 5 || counts[1] != 3 || counts[2] != 1 || counts[3] != 2 {
		t.Fatalf("counts %v", counts)
	}
	if rot[0] == rot[1] && rot[1] == rot[2] {
		t.Fatalf("not interleaved: %v", rot)
	}
	rot, err = rotation([]WorkloadCall{{Weight: 0.7}, {Weight: 0.2}, {Weight: 0.1}})
	if err != nil || len(rot) != 1000 {
		t.Fatalf("fractional weights: %d %v", len(rot), err)
	}
	counts = map[int]int{}
	for _, i := range rot {
		counts[i]++
	}
	if counts[0] != 700 || counts[1] != 200 || counts[2] != 100 {
		t.Fatalf("fractional counts %v", counts)
	}
}

// Over 100,000 calls against the demo server, each method's share of
// the replies is its weight's within 2 %, and the expected replies hold.
func TestRun_workloadMix(t *testing.T) {
	tcp, _ := StartDemoServer(t)
	wl := writeWorkload(t, `{"calls": [
		{"method": "add", "weight": 5, "params": [{"$int": [1, 9]}, 1]},
		{"method": "subtract", "weight": 3, "params": {"minuend": 5, "subtrahend": 2}, "expect": {"result": 3}},
		{"method": "nope", "weight": 2, "expect": {"error": -32601}}
	]}`, nil)
	res := mustRun(t, Config{Target: "tcp://" + tcp, Workload: wl, Requests: 100_000, Conns: 4, Pipeline: 8, Batch: 4, Warmup: -1})
	if res.TotalErrors() != 0 {
		t.Fatalf("errors %v %v", res.Errors, res.ErrorDetail)
	}
	total := res.Methods["add"].Replies + res.Methods["subtract"].Replies + res.Methods["nope"].Replies
	if total != 400_000 {
		t.Fatalf("%d replies, want 400,000 (100,000 batches of 4)", total)
	}
	for name, want := range map[string]float64{"add": 0.5, "subtract": 0.3, "nope": 0.2} {
		share := float64(res.Methods[name].Replies) / float64(total)
		if share < want*0.98 || share > want*1.02 {
			t.Errorf("%s: %.4f of the replies, want %.2f ± 2 %%", name, share, want)
		}
	}
	if m := res.Methods["nope"]; m.Errors != m.Replies || m.Codes["-32601"] != m.Replies || m.WrongReply != 0 {
		t.Errorf("nope: %+v", m)
	}
	var b strings.Builder
	res.WriteTable(&b)
	if !strings.Contains(b.String(), "methods") || !strings.Contains(b.String(), "subtract") {
		t.Errorf("table:\n%s", b.String())
	}
}

// Each generator fills its value at every send, as the file says.
func TestRun_workloadTemplates(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	target := "tcp://" + NewLineServer(t, func(line string, _ int) string {
		mu.Lock()
		lines = append(lines, line)
		mu.Unlock()
		var req struct{ ID json.RawMessage }
		_ = json.Unmarshal([]byte(line), &req)
		if req.ID == nil {
			return ""
		}
		return `{"jsonrpc":"2.0","result":3,"id":` + string(req.ID) + "}\n"
	})
	wl := writeWorkload(t, `{"calls": [
		{"method": "m", "params": {"seq": {"$seq": {}}, "int": {"$int": [-3, 3]}, "float": {"$float": [0.5, 1.5]},
			"choice": {"$choice": ["a", 2, null]}, "hex": {"$hex": 5}, "line": {"$lines": "v.jsonl"}, "plain": [1, {"k": "v"}]}},
		{"method": "n", "notify": true, "params": [{"$seq": {}}]}
	]}`, map[string]string{"v.jsonl": "{\"x\": 1}\n\n\"y\"\n"})
	mustRun(t, Config{Target: "tcp://" + target[len("tcp://"):], Workload: wl, Requests: 200, Conns: 1, Warmup: -1, Rate: 2000})
	mu.Lock()
	defer mu.Unlock()
	var seqs []int
	linesSeen := map[string]int{}
	for _, l := range lines {
		var req struct {
			Method string
			Params json.RawMessage
			ID     *int
		}
		if err := json.Unmarshal([]byte(l), &req); err != nil {
			t.Fatalf("not JSON: %s", l)
		}
		if req.Method == "n" {
			if req.ID != nil || !strings.HasPrefix(string(req.Params), "[") {
				t.Fatalf("notification: %s", l)
			}
			continue
		}
		if !strings.HasPrefix(string(req.Params), `{"choice":`) {
			t.Fatalf("members not in order: %s", req.Params)
		}
		var p struct {
			Seq    int
			Int    int
			Float  float64
			Choice any
			Hex    string
			Line   json.RawMessage
			Plain  json.RawMessage
		}
		if err := json.Unmarshal(req.Params, &p); err != nil {
			t.Fatal(err)
		}
		if p.Int < -3 || p.Int > 3 || p.Float < 0.5 || p.Float > 1.5 || len(p.Hex) != 12 || !strings.HasPrefix(p.Hex, "0x") ||
			string(p.Plain) != `[1,{"k":"v"}]` || (p.Choice != "a" && p.Choice != 2.0 && p.Choice != nil) {
			t.Fatalf("params %s", req.Params)
		}
		if _, err := strconv.ParseUint(p.Hex[2:], 16, 64); err != nil {
			t.Fatalf("hex %q", p.Hex)
		}
		seqs = append(seqs, p.Seq)
		linesSeen[string(p.Line)]++
	}
	if len(seqs) < 50 || linesSeen[`{"x":1}`] == 0 || linesSeen[`"y"`] == 0 || len(linesSeen) != 2 {
		t.Fatalf("%d calls, lines %v", len(seqs), linesSeen)
	}
	seen := map[int]bool{}
	for _, s := range seqs {
		if seen[s] {
			t.Fatalf("$seq %d twice", s)
		}
		seen[s] = true
	}
}

// A server that answers a result other than the expected one: wrong
// replies, counted for the method.
func TestRun_workloadExpectations(t *testing.T) {
	target := "tcp://" + NewLineServer(t, func(line string, n int) string {
		var req struct{ ID json.RawMessage }
		_ = json.Unmarshal([]byte(line), &req)
		if n%2 == 0 {
			return `{"jsonrpc":"2.0","result": 4 ,"id":` + string(req.ID) + "}\n"
		}
		return `{"jsonrpc":"2.0","result":3,"id":` + string(req.ID) + "}\n"
	})
	wl := writeWorkload(t, `{"calls": [{"method": "add", "params": [1, 2], "expect": {"result": 3}}]}`, nil)
	res := mustRun(t, Config{Target: target, Workload: wl, Requests: 100, Conns: 1, Warmup: -1})
	if res.Errors[ErrWrongReply] != 50 || res.Methods["add"].WrongReply != 50 || res.Methods["add"].Replies != 100 {
		t.Fatalf("errors %v, add %+v", res.Errors, res.Methods["add"])
	}
	if !equalJSONText([]byte(` { "a" : [1, "x y"] }`), []byte(`{"a":[1,"x y"]}`)) || equalJSONText([]byte(`"x y"`), []byte(`"xy"`)) ||
		equalJSONText([]byte(`{"a":1}`), []byte(`{"a":12}`)) || equalJSONText([]byte(`"a\"b"`), []byte(`"a\"c"`)) {
		t.Fatal("equalJSONText")
	}
}

func TestLoadWorkload_refuses(t *testing.T) {
	for text, why := range map[string]string{
		`{"calls": []}`:                                                         "no calls",
		`{"calls": [{"params": [1]}]}`:                                          "has no method",
		`{"calls": [{"method": "m", "params": 3}]}`:                             "array or an object",
		`{"calls": [{"method": "m", "params": {"$int": [1, 2]}}]}`:              "not a generator",
		`{"calls": [{"method": "m", "params": [{"$int": [2, 1]}]}]}`:            "LO ≤ HI",
		`{"calls": [{"method": "m", "params": [{"$int": [1.5, 2]}]}]}`:          "two integers",
		`{"calls": [{"method": "m", "params": [{"$choice": []}]}]}`:             "non-empty array",
		`{"calls": [{"method": "m", "params": [{"$hex": -1}]}]}`:                "a number of bytes",
		`{"calls": [{"method": "m", "params": [{"$lines": "missing"}]}]}`:       "no such file",
		`{"calls": [{"method": "m", "params": [{"$what": 1}]}]}`:                "no generator $what",
		`{"calls": [{"method": "m", "weight": -1}]}`:                            "a weight",
		`{"calls": [{"method": "m", "notify": true, "expect": {"result": 1}}]}`: "gets no reply",
		`{"calls": [{"method": "m", "expect": {}}]}`:                            "one of them",
		`{"calls": [{"method": "m", "speed": 3}]}`:                              "unknown field",
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "w.json")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		wl, err := LoadWorkload(path)
		if err == nil {
			_, err = wl.compile()
		}
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %v, want an error saying %q", text, err, why)
		}
	}
}

// A request of a workload with generators, built and its reply checked,
// allocates nothing in steady state.
func TestWorker_workloadZeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	wl := writeWorkload(t, `{"calls": [
		{"method": "a", "weight": 2, "params": [{"$int": [1, 1000]}, {"$float": [0, 1]}, {"$choice": ["x", 1]}, {"$hex": 32}, {"$seq": {}}, {"$lines": "l.jsonl"}]},
		{"method": "b", "params": {"k": [1, 2]}, "expect": {"result": 3}}
	]}`, map[string]string{"l.jsonl": "1\n2\n"})
	cfg := Config{Target: "http://127.0.0.1:1/", Workload: wl}
	if err := cfg.fill(); err != nil {
		t.Fatal(err)
	}
	tg, _ := parseTarget(cfg.Target)
	specs, err := wl.compile()
	if err != nil {
		t.Fatal(err)
	}
	rot, _ := rotation(wl.Calls)
	r := newRunner(cfg, tg, messagesFromWorkload(specs, rot, 1))
	r.specs = specs
	w := newWorker(r, 0)
	var body []byte
	step := func() {
		w.wbuf = w.wbuf[:0]
		w.push(time.Now())
		body = append(body[:0], `{"jsonrpc":"2.0","result":3,"id":`...)
		body = strconv.AppendUint(body, w.next-1, 10)
		body = append(body, '}')
		w.rbuf = append(w.rbuf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "...)
		w.rbuf = strconv.AppendInt(w.rbuf, int64(len(body)), 10)
		w.rbuf = append(w.rbuf, "\r\n\r\n"...)
		w.rbuf = append(w.rbuf, body...)
		w.consume()
		if w.n != 0 || len(w.errs) != 0 {
			t.Fatalf("in flight %d, errors %v", w.n, w.errs)
		}
	}
	for range 10 {
		step()
	}
	if got := testing.AllocsPerRun(1000, step); got != 0 {
		t.Errorf("%v allocs per request, want 0", got)
	}
}

// BenchmarkWorker_request measures building one HTTP request and
// checking its reply: -method/-params ("plain"), and a workload call with
// five generators and an expected result ("workload").
func BenchmarkWorker_request(b *testing.B) {
	wl := writeWorkload(b, `{"calls": [{"method": "add", "params": [{"$int": [1, 1000]}, {"$float": [0, 1]}, {"$choice": ["x", 1]}, {"$hex": 20}, {"$seq": {}}],
		"expect": {"result": 3}}]}`, nil)
	for _, c := range []struct {
		name string
		wl   *Workload
	}{{"plain", nil}, {"workload", wl}} {
		b.Run(c.name, func(b *testing.B) {
			cfg := Config{Target: "http://127.0.0.1:1/", Workload: c.wl}
			if err := cfg.fill(); err != nil {
				b.Fatal(err)
			}
			tg, _ := parseTarget(cfg.Target)
			msgs, _ := messagesFromFlags(cfg.Method, cfg.Params, 1, 0)
			var specs []callSpec
			if c.wl != nil {
				specs, _ = c.wl.compile()
				rot, _ := rotation(c.wl.Calls)
				msgs = messagesFromWorkload(specs, rot, 1)
			}
			r := newRunner(cfg, tg, msgs)
			r.specs = specs
			w := newWorker(r, 0)
			var body []byte
			b.ReportAllocs()
			for range b.N {
				w.wbuf = w.wbuf[:0]
				w.push(time.Now())
				body = append(body[:0], `{"jsonrpc":"2.0","result":3,"id":`...)
				body = strconv.AppendUint(body, w.next-1, 10)
				body = append(body, '}')
				w.rbuf = append(w.rbuf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "...)
				w.rbuf = strconv.AppendInt(w.rbuf, int64(len(body)), 10)
				w.rbuf = append(w.rbuf, "\r\n\r\n"...)
				w.rbuf = append(w.rbuf, body...)
				w.consume()
			}
			if len(w.errs) != 0 {
				b.Fatalf("errors %v", w.errs)
			}
		})
	}
}
