package mcp

// NOTE: tools/call and its two tools. The params are decoded in two
// steps: the method's own (the tool's name, its arguments and _meta as
// handler.Raw views of the request) by jetrpc, then the arguments into
// the tool's own struct by encoding/json, as each tool takes its own.
// A tool's failure is a result with isError set (toolError), a
// protocol's failure a JSON-RPC error.

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/parser"
)

// Limits of the countdown tool.
const (
	// MaxCountdown is the largest from a countdown takes.
	MaxCountdown = 100_000
	// MaxCountdownInterval is the longest interval between its steps.
	MaxCountdownInterval = time.Minute
	// DefaultCountdownInterval is its interval when interval_ms is absent.
	DefaultCountdownInterval = 100 * time.Millisecond
)

// toolList is the result of tools/list.
var toolList = handler.Raw(`{"tools":[` +
	`{"name":"add","title":"Add","description":"Add two numbers and answer the sum as text.",` +
	`"inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}},` +
	`{"name":"countdown","title":"Countdown","description":"Count down from 'from' to 0, one step every interval_ms milliseconds (default 100), ` +
	`sending a progress notification per step when the call carries a progress token; answers done.",` +
	`"inputSchema":{"type":"object","properties":{"from":{"type":"integer","minimum":0,"maximum":` + strconv.Itoa(MaxCountdown) + `},` +
	`"interval_ms":{"type":"integer","minimum":0,"maximum":` + strconv.Itoa(int(MaxCountdownInterval/time.Millisecond)) + `}},"required":["from"]}}` +
	`]}`)

// CallToolParams are the params of tools/call: the tool's name, its
// arguments (an object, or absent) and the request's _meta, whose
// progressToken, when present, asks for progress notifications. The Raw
// fields are valid until the method returns.
type CallToolParams struct {
	Name      string      `json:"name"`
	Arguments handler.Raw `json:"arguments,omitempty"`
	Meta      handler.Raw `json:"_meta,omitempty"`
}

// CallToolResult is the result of tools/call: the tool's content, and
// whether the tool failed.
type CallToolResult struct {
	Content []TextContent `json:"content"`
	IsError bool          `json:"isError,omitempty"`
}

// TextContent is a content block of text.
type TextContent struct {
	Type string `json:"type"` // "text"
	Text string `json:"text"`
}

// text returns the result of a tool that answers s.
func text(s string) CallToolResult {
	return CallToolResult{Content: []TextContent{{Type: "text", Text: s}}}
}

// toolError returns the result of a tool that failed for the reason s.
func toolError(s string) CallToolResult {
	r := text(s)
	r.IsError = true
	return r
}

// callTool is tools/call.
func callTool(ctx context.Context, p CallToolParams) (CallToolResult, error) {
	switch p.Name {
	case "add":
		return add(p.Arguments), nil
	case "countdown":
		return countdown(ctx, p.Arguments, progressToken(p.Meta))
	}
	return CallToolResult{}, errUnknownTool.WithData(map[string]string{"tool": p.Name})
}

// addArgs are add's arguments; a nil field was not given.
type addArgs struct {
	A *float64 `json:"a"`
	B *float64 `json:"b"`
}

// add answers a+b, the shortest text that reads back as the same float64.
func add(raw handler.Raw) CallToolResult {
	var a addArgs
	if err := json.Unmarshal(orEmpty(raw), &a); err != nil || a.A == nil || a.B == nil {
		return toolError(`add takes {"a":number,"b":number}`)
	}
	return text(strconv.FormatFloat(*a.A+*a.B, 'g', -1, 64))
}

// countdownArgs are countdown's arguments.
type countdownArgs struct {
	From       *int64 `json:"from"`
	IntervalMs *int64 `json:"interval_ms"`
}

// countdown counts from args.from down to 0, sleeping interval_ms before
// each step and reporting it with a progress notification when token is
// not nil; it answers "done", or ctx's error once ctx is done.
func countdown(ctx context.Context, raw handler.Raw, token []byte) (CallToolResult, error) {
	var a countdownArgs
	if err := json.Unmarshal(orEmpty(raw), &a); err != nil || a.From == nil {
		return toolError(`countdown takes {"from":N,"interval_ms":M}`), nil
	}
	interval := DefaultCountdownInterval
	if a.IntervalMs != nil {
		interval = time.Duration(*a.IntervalMs) * time.Millisecond
	}
	if *a.From < 0 || *a.From > MaxCountdown || interval < 0 || interval > MaxCountdownInterval {
		return toolError("countdown: from must be 0 to " + strconv.Itoa(MaxCountdown) +
			", interval_ms 0 to " + strconv.Itoa(int(MaxCountdownInterval/time.Millisecond))), nil
	}
	conn := handler.ConnFrom(ctx)
	push := token != nil && conn != nil && conn.CanPush()
	timer := time.NewTimer(interval)
	defer timer.Stop()
	from := *a.From
	for n := from - 1; n >= 0; n-- {
		select {
		case <-ctx.Done():
			return CallToolResult{}, ctx.Err()
		case <-timer.C:
		}
		if push {
			// An error (the client went, or reads too slowly) leaves the
			// countdown to ctx, which is done then too.
			_ = handler.Notify(conn, "notifications/progress", progress{token: token, progress: from - n, total: from, left: n})
		}
		timer.Reset(interval)
	}
	return text("done"), nil
}

// progress is the params of a countdown's notifications/progress:
// {"progressToken":T,"progress":P,"total":N,"message":"N left"}. It
// encodes itself, allocating nothing beyond dst.
type progress struct {
	token                 []byte // the client's token, as JSON: a string or a number
	progress, total, left int64
}

// AppendJSON appends p's JSON to dst.
func (p progress) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"progressToken":`...)
	dst = append(dst, p.token...)
	dst = append(dst, `,"progress":`...)
	dst = strconv.AppendInt(dst, p.progress, 10)
	dst = append(dst, `,"total":`...)
	dst = strconv.AppendInt(dst, p.total, 10)
	dst = append(dst, `,"message":"`...)
	dst = strconv.AppendInt(dst, p.left, 10)
	return append(dst, ` left"}`...), nil
}

var _ handler.JSONAppender = progress{}

// progressToken returns a copy of the progressToken of the request's
// _meta, as JSON, or nil when there is none or it is neither a string
// nor a number.
func progressToken(meta handler.Raw) []byte {
	if meta == nil {
		return nil
	}
	mems := parser.NewMembers(meta)
	for key, _, v, ok := mems.Next(); ok; key, _, v, ok = mems.Next() {
		if string(key) == "progressToken" && len(v) > 0 && (v[0] == '"' || v[0] == '-' || v[0] >= '0' && v[0] <= '9') {
			return append([]byte(nil), v...)
		}
	}
	return nil
}

// orEmpty returns raw, or {} when the arguments are absent.
func orEmpty(raw handler.Raw) []byte {
	if raw == nil {
		return []byte(`{}`)
	}
	return raw
}
