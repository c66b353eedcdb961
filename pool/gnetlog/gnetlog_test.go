package gnetlog_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/pool/gnetlog"
)

func TestLogger_levels(t *testing.T) {
	var buf bytes.Buffer
	g := gnetlog.Logger{L: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	g.Debugf("debug %d", 1)
	g.Infof("info %d", 2)
	g.Warnf("warn %d", 3)
	g.Errorf("error %d", 4)
	g.Fatalf("fatal %d", 5)
	out := buf.String()
	for _, hidden := range []string{"debug 1", "info 2"} {
		if strings.Contains(out, hidden) {
			t.Errorf("%q logged at info level: %s", hidden, out)
		}
	}
	for _, want := range []string{`level=WARN msg="gnet: warn 3"`, `level=ERROR msg="gnet: error 4"`, `level=ERROR msg="gnet: fatal: fatal 5"`} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in %s", want, out)
		}
	}
}

func TestLogger_minimumLevel(t *testing.T) {
	var buf bytes.Buffer
	g := gnetlog.Logger{L: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), Level: slog.LevelError}
	g.Debugf("d")
	g.Infof("i")
	g.Warnf("w")
	g.Errorf("e %s", "x")
	if out := buf.String(); strings.Count(out, "level=") != 1 || !strings.Contains(out, `msg="gnet: e x"`) {
		t.Fatalf("with Level error: %s", out)
	}
}
