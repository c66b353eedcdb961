package bench

import (
	"strings"
	"testing"
)

// TestResult_noCheckTable: a --no-check run said "every reply checked".
func TestResult_noCheckTable(t *testing.T) {
	addr := NewLineServer(t, func(string, int) string { return "{\"wrong\":1}\n" })
	res := mustRun(t, Config{Target: "tcp://" + addr, Requests: 20, NoCheck: true})
	var b strings.Builder
	res.WriteTable(&b)
	if res.Checked || strings.Contains(b.String(), "every reply checked") || !strings.Contains(b.String(), "not checked (--no-check)") {
		t.Fatalf("no-check run against a wrong server: checked %v\n%s", res.Checked, b.String())
	}
}
