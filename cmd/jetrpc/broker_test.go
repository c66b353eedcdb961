package main

import (
	"strings"
	"testing"
)

// TestServe_brokerLogsInServeFormat: with --broker, the broker's records
// are written by serve's logger, in the format of the rest of its log
// (key=value, level=…), not by the process's default logger.
func TestServe_brokerLogsInServeFormat(t *testing.T) {
	s := serveOperate(t, false, "--listen", "127.0.0.1:0", "--broker", startNATS(t))
	s.stop(t)
	logs := s.errOut.String()
	for _, want := range []string{`level=INFO msg="natsbroker: connected"`, `level=INFO msg="natsbroker: connection closed"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("serve's log lacks %s:\n%s", want, logs)
		}
	}
}
