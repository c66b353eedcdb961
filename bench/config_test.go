package bench

import (
	"context"
	"math"
	"testing"
)

// TestConfig_rejects: negative counts, NaN and infinite rates or shares,
// and targets without a host are errors, not defaults.
func TestConfig_rejects(t *testing.T) {
	for _, cfg := range []Config{
		{Target: "tcp://127.0.0.1:1", Conns: -1},
		{Target: "tcp://127.0.0.1:1", Pipeline: -1},
		{Target: "tcp://127.0.0.1:1", Batch: -1},
		{Target: "tcp://127.0.0.1:1", Notify: math.NaN()},
		{Target: "tcp://127.0.0.1:1", Rate: math.NaN()},
		{Target: "tcp://127.0.0.1:1", Rate: math.Inf(1)},
		{Target: "http://:8080/"},
		{Target: "ws:///path"},
		{Target: "tcp://"},
	} {
		if _, err := Run(context.Background(), cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}
