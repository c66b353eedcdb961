// Package gnetlog routes the logs of gnet (github.com/panjf2000/gnet/v2)
// to a log/slog Logger, for the engine's event loops and for the event
// loops of jetrpc bench's client.
package gnetlog

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/panjf2000/gnet/v2/pkg/logging"
)

// Logger is a gnet logger (logging.Logger) writing to L: gnet's info and
// debug lines at debug level, so that gnet is quiet by default, its
// warnings and errors at their levels, and "fatal" lines as errors (gnet
// goes on after them). The zero Logger writes to slog.Default(). Safe
// from any goroutine.
type Logger struct {
	// L receives the lines; nil means slog.Default().
	L *slog.Logger
	// Level drops the lines below it, whatever L would pass: a client
	// whose connections close by design (a load generator) sets
	// slog.LevelError. The zero value passes all that L passes.
	Level slog.Level
}

var _ logging.Logger = Logger{}

func (g Logger) log(level slog.Level, f string, a []any) {
	if g.Level != 0 && level < g.Level {
		return
	}
	l := g.L
	if l == nil {
		l = slog.Default()
	}
	if ctx := context.Background(); l.Enabled(ctx, level) {
		l.Log(ctx, level, "gnet: "+fmt.Sprintf(f, a...))
	}
}

// Debugf logs at debug level.
func (g Logger) Debugf(f string, a ...any) { g.log(slog.LevelDebug, f, a) }

// Infof logs at debug level: gnet's info lines are start-up chatter.
func (g Logger) Infof(f string, a ...any) { g.log(slog.LevelDebug, f, a) }

// Warnf logs at warn level.
func (g Logger) Warnf(f string, a ...any) { g.log(slog.LevelWarn, f, a) }

// Errorf logs at error level.
func (g Logger) Errorf(f string, a ...any) { g.log(slog.LevelError, f, a) }

// Fatalf logs at error level, prefixed "fatal: ".
func (g Logger) Fatalf(f string, a ...any) { g.log(slog.LevelError, "fatal: "+f, a) }
