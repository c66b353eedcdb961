package bench

// A server that closes each connection after a reply saying so
// (Connection: close, as nginx does after keepalive_requests): the tool
// reconnects, and it is no error unless requests were in flight on it.

import (
	"strings"
	"testing"
)

func TestRun_connectionCloseIsNoError(t *testing.T) {
	target := rawHTTPServer(t, func(body string, n int) string {
		_, after, _ := strings.Cut(body, `"id":`)
		id := strings.TrimSuffix(strings.TrimSpace(after), "}")
		reply := okReply(id)
		if n == 2 { // every third reply ends the connection
			return strings.Replace(httpReply(reply), "\r\n\r\n", "\r\nConnection: close\r\n\r\n", 1) + "|CLOSE"
		}
		return httpReply(reply)
	})
	for _, tc := range []struct {
		name     string
		cfg      Config
		inFlight bool
	}{
		{"closed loop", Config{Requests: 60, Conns: 2}, false},
		{"goroutine loop", Config{Rate: 2000, Duration: 200e6, Conns: 2}, false},
		{"pipelined", Config{Requests: 60, Conns: 1, Pipeline: 2}, true},
	} {
		tc.cfg.Target, tc.cfg.Warmup = target, -1
		res := mustRun(t, tc.cfg)
		// The open loop may count a request "not sent" when one falls due
		// while its connection is reopened (under -race, slowly): not the
		// close itself.
		if !tc.inFlight && (res.TotalErrors() != res.Errors[ErrUnsent] || res.Requests == 0 || tc.cfg.Rate == 0 && res.TotalErrors() != 0) {
			t.Errorf("%s: %d requests, errors %v", tc.name, res.Requests, res.Errors)
		}
		if tc.inFlight && (res.Errors[ErrTransport] == 0 || res.ErrorDetail[ErrTransport] != errClosedInFlight.Error()) {
			t.Errorf("%s: errors %v, detail %v", tc.name, res.Errors, res.ErrorDetail)
		}
	}
}
