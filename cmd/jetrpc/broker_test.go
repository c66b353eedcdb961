package main

import (
	"strings"
	"testing"
	"time"
)

// TestServe_brokerLogsInServeFormat: with --broker, the broker's records
// are written by serve's logger, in the format of the rest of its log
// (key=value, level=…), not by the process's default logger.
func TestServe_brokerLogsInServeFormat(t *testing.T) {
	s := serveOperate(t, false, "--listen", "127.0.0.1:0", "--broker", startNATS(t))
	s.stop(t)
	// nats.go calls the closed handler on its own goroutine: the record
	// may come a moment after serve has returned. (It once came after the
	// test's first look, in CI.)
	wants := []string{`level=INFO msg="natsbroker: connected"`, `level=INFO msg="natsbroker: connection closed"`}
	all := func(logs string) bool {
		for _, want := range wants {
			if !strings.Contains(logs, want) {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(5 * time.Second); !all(s.errOut.String()) && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
	}
	logs := s.errOut.String()
	for _, want := range wants {
		if !strings.Contains(logs, want) {
			t.Errorf("serve's log lacks %s:\n%s", want, logs)
		}
	}
}
