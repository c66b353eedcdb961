package gnetlog_test

import (
	"log/slog"
	"os"

	"github.com/jetrpc/jetrpc/pool/gnetlog"
	"github.com/panjf2000/gnet/v2"
)

// gnet's own lines go to a slog.Logger: its info chatter at debug level,
// its warnings and errors as such.
func ExampleLogger() {
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	l := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: noTime}))
	g := gnetlog.Logger{L: l}
	g.Infof("launching %d event loops", 2) // debug level: not shown
	g.Warnf("connection %d closed with an error", 7)
	_ = gnet.WithLogger(g) // how an engine or a client takes it
	// Output: level=WARN msg="gnet: connection 7 closed with an error"
}
