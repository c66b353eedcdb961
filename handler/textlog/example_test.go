package textlog_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/jetrpc/jetrpc/handler/textlog"
)

// A handler for a logger: its lines are slog.TextHandler's. The record
// here is built by hand for a fixed time; a Logger stamps time.Now().
func ExampleNew() {
	h := textlog.New(os.Stdout, &slog.HandlerOptions{Level: slog.LevelInfo})
	r := slog.NewRecord(time.Date(2024, 5, 17, 13, 4, 5, 123456789, time.UTC), slog.LevelInfo, "jetrpc: call", 0)
	r.AddAttrs(slog.String("method", "add"), slog.String("id", "a"), slog.Int("code", 0),
		slog.Float64("duration_ms", 0.035), slog.String("transport", "http"))
	_ = h.Handle(context.Background(), r)

	slog.New(h).Debug("not written: below the level")
	// Output:
	// time=2024-05-17T13:04:05.123Z level=INFO msg="jetrpc: call" method=add id=a code=0 duration_ms=0.035 transport=http
}

// Attributes given once: flat ones are formatted once, into a prefix.
func ExampleHandler_WithAttrs() {
	h := textlog.New(os.Stdout, nil).WithAttrs([]slog.Attr{slog.String("service", "jet rpc")})
	r := slog.NewRecord(time.Time{}, slog.LevelWarn+1, "started", 0) // the zero time is omitted
	r.AddAttrs(slog.Int("pid", 42))
	_ = h.Handle(context.Background(), r)
	// Output:
	// level=WARN+1 msg=started service="jet rpc" pid=42
}

// A group: the handler's records go to its fallback, slog.TextHandler.
func ExampleHandler_WithGroup() {
	h := textlog.New(os.Stdout, nil).WithGroup("req")
	r := slog.NewRecord(time.Time{}, slog.LevelInfo, "done", 0)
	r.AddAttrs(slog.Int("code", 0))
	_ = h.Handle(context.Background(), r)
	// Output:
	// level=INFO msg=done req.code=0
}

// Enabled compares with the options' level, as slog.TextHandler does.
func ExampleHandler_Enabled() {
	h := textlog.New(os.Stdout, &slog.HandlerOptions{Level: slog.LevelWarn})
	fmt.Println(h.Enabled(context.Background(), slog.LevelInfo))
	fmt.Println(h.Enabled(context.Background(), slog.LevelError))
	// Output:
	// false
	// true
}
