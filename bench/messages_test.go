package bench_test

// Tests of what a run says about its errors: error replies by JSON-RPC
// code, the cause of connection failures, and the run's verdict.

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/bench"
)

// Error replies are counted by code, expected or not; a code past the
// first 32 counts as "other".
func TestRun_errorCodes(t *testing.T) {
	target := wrongServer(t, func(l string, n int) string {
		code := []string{"-32601", "-32000", "-32601", "7"}[n%4]
		return `{"jsonrpc":"2.0","error":{"code":` + code + `,"message":"x"},"id":` + idOf(l) + "}\n"
	})
	res := run(t, bench.Config{Target: target, Requests: 400, Conns: 1, Warmup: -1})
	if res.Errors[bench.ErrUnexpectedError] != 400 || res.ErrorCodes["-32601"] != 200 || res.ErrorCodes["-32000"] != 100 || res.ErrorCodes["7"] != 100 {
		t.Fatalf("errors %v, codes %v", res.Errors, res.ErrorCodes)
	}
	var b strings.Builder
	res.WriteTable(&b)
	if !strings.Contains(b.String(), "error codes -32601 200, -32000 100, 7 100\n") {
		t.Fatalf("table:\n%s", b.String())
	}
	res = run(t, bench.Config{Target: target, Requests: 40, Conns: 1, Warmup: -1, ExpectError: true})
	if res.TotalErrors() != 0 || res.ErrorCodes["-32601"] != 20 {
		t.Fatalf("expected errors: %v, codes %v", res.Errors, res.ErrorCodes)
	}

	many := wrongServer(t, func(l string, n int) string {
		return `{"jsonrpc":"2.0","error":{"code":` + itoa(-40000-n) + `,"message":"x"},"id":` + idOf(l) + "}\n"
	})
	res = run(t, bench.Config{Target: many, Requests: 50, Conns: 1, Warmup: -1, ExpectError: true})
	if len(res.ErrorCodes) != 33 || res.ErrorCodes["other"] != 18 {
		t.Fatalf("50 distinct codes: %d kept, other %d", len(res.ErrorCodes), res.ErrorCodes["other"])
	}
}

func itoa(n int) string {
	if n < 0 {
		return "-" + itoa(-n)
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// A target that refuses connections: the run says it could not connect,
// naming the target and the cause, not that the server answered wrong.
func TestRun_refusedSaysSo(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for _, target := range []string{"http://" + addr + "/", "tcp://" + addr, "ws://" + addr + "/"} {
		for _, rate := range []float64{0, 100} { // the event loops, then the open loop's goroutines
			res, err := bench.Run(t.Context(), bench.Config{Target: target, Duration: 200 * time.Millisecond, Warmup: -1, Conns: 2, Rate: rate})
			if err != nil {
				t.Fatal(err)
			}
			f := res.Failure()
			if f == nil || !strings.HasPrefix(f.Error(), "could not connect to "+target+": dial tcp "+addr+": connect: connection refused (") {
				t.Fatalf("%s, rate %g: %v (errors %v, detail %v)", target, rate, f, res.Errors, res.ErrorDetail)
			}
		}
	}
}

// A server that closes every connection after one reply: transport
// errors, their cause said once (closed, or reset: the kernel
// resets a connection closed with input unread).
func TestRun_closedSaysSo(t *testing.T) {
	closing := "tcp://" + bench.NewClosingServer(t)
	res, err := bench.Run(t.Context(), bench.Config{Target: closing, Duration: 300 * time.Millisecond, Warmup: -1, Conns: 2})
	if err != nil {
		t.Fatal(err)
	}
	f := res.Failure()
	if res.Errors[bench.ErrTransport] == 0 || res.ErrorDetail[bench.ErrTransport] == "" ||
		f == nil || !strings.Contains(f.Error(), "transport ") || !strings.HasSuffix(f.Error(), "the server did not answer right") {
		t.Fatalf("errors %v, detail %v, failure %v", res.Errors, res.ErrorDetail, f)
	}
}
