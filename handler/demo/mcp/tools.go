package mcp

// NOTE: tools/call and its two tools. The params are decoded in two
// steps: the method's own (the tool's name, its arguments and _meta as
// handler.Raw views of the request) by jetrpc, then the arguments by the
// tool, as each tool takes its own. A tool's failure is a result with
// isError set (toolError), a protocol's failure a JSON-RPC error. add,
// the tool measured most, reads its arguments in place and writes its
// sum into the reply, so that a call allocates nothing; countdown
// decodes with encoding/json.

import (
	"bytes"
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
var toolList = fixed(`{"tools":[` +
	`{"name":"add","title":"Add","description":"Add two numbers and answer the sum as text.",` +
	`"inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}},` +
	`{"name":"countdown","title":"Countdown","description":"Count down from 'from' to 0, one step every interval_ms milliseconds (default 100), ` +
	`sending a progress notification per step when the call carries a progress token; answers done.",` +
	`"inputSchema":{"type":"object","properties":{"from":{"type":"integer","minimum":0,"maximum":` + strconv.Itoa(MaxCountdown) + `},` +
	`"interval_ms":{"type":"integer","minimum":0,"maximum":` + strconv.Itoa(int(MaxCountdownInterval/time.Millisecond)) + `}},"required":["from"]}}` +
	`]}`)

// CallToolParams are the params of tools/call: the tool's name (a JSON
// string, as sent), its arguments (an object, or absent) and the
// request's _meta, whose progressToken, when present, asks for progress
// notifications. All three are views of the request, valid until the
// method returns: decoding them copies nothing.
type CallToolParams struct {
	Name      handler.Raw `json:"name"`
	Arguments handler.Raw `json:"arguments,omitempty"`
	Meta      handler.Raw `json:"_meta,omitempty"`
}

// CallToolResult is the result of tools/call: one text content block,
// and whether the tool failed. It encodes itself, so that add answers
// without allocating: its sum is written as text straight into the
// reply.
type CallToolResult struct {
	Text     string  // the text, unless IsNumber
	Number   float64 // the text when IsNumber: the shortest form that reads back as the same float64
	IsNumber bool
	IsError  bool // the tool failed, Text says why
}

// AppendJSON appends {"content":[{"type":"text","text":T}]} to dst,
// with "isError":true when the tool failed.
func (r CallToolResult) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"content":[{"type":"text","text":`...)
	if r.IsNumber {
		dst = append(dst, '"')
		dst = strconv.AppendFloat(dst, r.Number, 'g', -1, 64)
		dst = append(dst, '"')
	} else {
		dst = parser.AppendQuote(dst, r.Text)
	}
	dst = append(dst, "}]"...)
	if r.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	return append(dst, '}'), nil
}

// JSONSchemaText declares the schema of what AppendJSON writes (for
// rpc.discover).
func (CallToolResult) JSONSchemaText() string {
	return `{"type":"object","properties":{"content":{"type":"array","items":{"type":"object","properties":{` +
		`"type":{"const":"text"},"text":{"type":"string"}},"required":["type","text"]}},"isError":{"type":"boolean"}},"required":["content"]}`
}

var _ handler.JSONAppender = CallToolResult{}

// text returns the result of a tool that answers s.
func text(s string) CallToolResult { return CallToolResult{Text: s} }

// toolError returns the result of a tool that failed for the reason s.
func toolError(s string) CallToolResult { return CallToolResult{Text: s, IsError: true} }

// errNameNotString answers a tools/call whose name is not a string.
var errNameNotString = handler.NewError(parser.CodeInvalidParams, "Invalid params: name: want a string")

// callTool is tools/call.
func callTool(ctx context.Context, p CallToolParams) (CallToolResult, error) {
	if len(p.Name) < 2 || p.Name[0] != '"' {
		return CallToolResult{}, errNameNotString
	}
	name := p.Name[1 : len(p.Name)-1] // without escapes, the name itself
	if bytes.IndexByte(name, '\\') >= 0 {
		name = parser.AppendUnquote(nil, name)
	}
	switch string(name) {
	case "add":
		return add(p.Arguments), nil
	case "countdown":
		return countdown(ctx, p.Arguments, progressToken(p.Meta))
	}
	return CallToolResult{}, errUnknownTool.WithData(map[string]string{"tool": string(name)})
}

// errAddArgs is add's answer to arguments that do not fit.
var errAddArgs = toolError(`add takes {"a":number,"b":number}`)

// add answers a+b. It reads the arguments in place, allocating nothing.
func add(args handler.Raw) CallToolResult {
	var a, b float64
	var seen int // bit 0: a, bit 1: b
	mems := parser.NewMembers(args)
	for key, _, v, ok := mems.Next(); ok; key, _, v, ok = mems.Next() {
		var dst *float64
		switch string(key) {
		case "a":
			dst, seen = &a, seen|1
		case "b":
			dst, seen = &b, seen|2
		default:
			continue
		}
		if len(v) == 0 || v[0] != '-' && (v[0] < '0' || v[0] > '9') { // not a number
			return errAddArgs
		}
		f, err := strconv.ParseFloat(string(v), 64) // a JSON number: only its range can fail
		if err != nil {
			return errAddArgs
		}
		*dst = f
	}
	if seen != 3 {
		return errAddArgs
	}
	return CallToolResult{Number: a + b, IsNumber: true}
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
