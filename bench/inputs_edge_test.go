package bench

// Edge cases of the load tool's inputs: thresholds over error replies,
// the differential check of bodies, the notification share, workload
// weights and step schedules.

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// Every call answered with an error reply: error_rate is 1, not 0.5.
// (It once divided by requests plus errors, counting each such call twice.)
func TestThreshold_errorRateOfErrorReplies(t *testing.T) {
	addr := NewLineServer(t, func(line string, n int) string {
		ids := requestIDs(line)
		return `{"jsonrpc":"2.0","error":{"code":-32601,"message":"no"},"id":` + ids[0] + "}\n"
	})
	res := mustRun(t, Config{Target: "tcp://" + addr, Method: "x", Requests: 100, Conns: 1})
	th, err := ParseThreshold("error_rate<0.6")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("requests %d, errors %v", res.Requests, res.Errors)
	if got := th.Actual(res); got != 1 {
		t.Errorf("every request answered with an error: error_rate %g, want 1", got)
	}
	if res.CheckThresholds([]Threshold{th}) == nil {
		t.Errorf("error_rate<0.6 held when every request failed")
	}
}

// Diff sends Config.Bodies' calls when there are bodies (it once sent
// the default method instead).
func TestDiff_sendsTheBodies(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	answer := func(line string, n int) string {
		mu.Lock()
		seen = append(seen, strings.TrimSpace(line))
		mu.Unlock()
		return `{"jsonrpc":"2.0","result":1,"id":` + requestIDs(line)[0] + "}\n"
	}
	a, b := NewLineServer(t, answer), NewLineServer(t, answer)
	cfg := Config{Bodies: [][]byte{[]byte(`{"jsonrpc":"2.0","method":"ping","params":[7],"id":1}`)}, Timeout: 2 * time.Second}
	if _, err := Diff(t.Context(), cfg, []NamedTarget{{"a", "tcp://" + a}, {"b", "tcp://" + b}}, 2); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range seen {
		if !strings.Contains(s, `"method":"ping"`) {
			t.Errorf("sent %s, not the body's call", s)
		}
	}
}

// A notification share holds exactly over the rotation of 100 calls
// (29 % once gave 28: 100×0.29 is 28.999… in floating point).
func TestMessagesFromFlags_notifyShareExact(t *testing.T) {
	for _, share := range []float64{0.29, 0.57, 0.58} {
		msgs, err := messagesFromFlags("x", "", 1, share)
		if err != nil {
			t.Fatal(err)
		}
		calls, holes := 0, 0
		for _, m := range msgs {
			calls += m.calls
			holes += m.holes
		}
		if got, want := calls-holes, int(share*100+0.5); got != want {
			t.Errorf("share %g: %d notifications of %d calls, want %d", share, got, calls, want)
		}
	}
}

// Weights whose sum overflows are refused, not a panic (the
// largest-remainder loop once ran past the calls).
func TestRotation_overflowingWeightsRefused(t *testing.T) {
	calls := []WorkloadCall{{Method: "a", Weight: 1e308}, {Method: "b", Weight: 1e308}}
	if _, err := rotation(calls); err == nil || !strings.Contains(err.Error(), "finite") {
		t.Fatalf("weights summing to +Inf: %v", err)
	}
}

// A step schedule whose step cannot move its rate in floating point
// ends (it once looped forever, appending stages).
func TestParseSchedule_tinyStepEnds(t *testing.T) {
	for spec, stages := range map[string]int{"step:0.1:1e-18:0.1:1s": 1, "step:1e17:1:1e17:1s": 1, "step:0.1:0.1:0.3:1s": 3} {
		st, err := ParseSchedule(spec)
		if err != nil || len(st) != stages {
			t.Errorf("%s: %d stages, %v; want %d", spec, len(st), err, stages)
		}
	}
}
