// Package demo registers the methods of the bundled server: the examples
// of the JSON-RPC 2.0 specification and the methods benchmarks call. Tests
// of every transport use it too, so that the spec vectors in testdata run
// against the same methods everywhere.
package demo

import (
	"context"
	"iter"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/parser"
)

// MaxSleep bounds the sleep method.
const MaxSleep = 60 * time.Second

// SubtractParams are the params of subtract as a Go client sends them,
// by name (or by position, in this order). The method itself reads each
// operand as any JSON number: an integer exactly, a number with a
// fraction or an exponent as a float64.
type SubtractParams struct {
	Minuend    float64 `json:"minuend"`
	Subtrahend float64 `json:"subtrahend"`
}

// subtractParams are the params subtract is registered with: the operands
// as JSON text, read by parseNumber. Both are required.
type subtractParams struct {
	Minuend    handler.Raw `json:"minuend"`
	Subtrahend handler.Raw `json:"subtrahend"`
}

// SleepParams are the params of sleep: {"ms":N} or [N].
type SleepParams struct {
	Ms int64 `json:"ms"`
}

// ClockParams are the params of clock_subscribe: [intervalMs] or
// {"interval_ms":N}.
type ClockParams struct {
	IntervalMs int64 `json:"interval_ms"`
}

// MaxClockInterval bounds the interval of clock_subscribe.
const MaxClockInterval = time.Hour

// FailCode is the application error code of the fail method.
const FailCode parser.Code = 1000

// Errors of the arithmetic methods, built once: -32602, the params do not
// fit.
var (
	// errOverflowSub answers a subtract of integers whose difference does
	// not fit in 64 bits.
	errOverflowSub = handler.NewError(parser.CodeInvalidParams, "Invalid params: the difference overflows a 64-bit integer")
	// errOverflow answers an add, or a sum of integers, whose sum does not
	// fit in 64 bits.
	errOverflow = handler.NewError(parser.CodeInvalidParams, "Invalid params: the sum overflows a 64-bit integer")
	// errNotFinite answers a subtract or sum of floats whose result is not
	// a finite number.
	errNotFinite = handler.NewError(parser.CodeInvalidParams, "Invalid params: the result is not a finite number")
	// errSumWantArray answers a sum whose params are not an array.
	errSumWantArray = handler.NewError(parser.CodeInvalidParams, "Invalid params: params must be an array")
)

// operandErrors holds the error for each operand label and reason of
// parseNumber.
var operandErrors = func() map[[2]string]*handler.Error {
	m := map[[2]string]*handler.Error{}
	for _, label := range []string{"minuend", "subtrahend", "numbers"} {
		for _, reason := range []string{reasonWantNumber, reasonIntRange, reasonNumRange} {
			m[[2]string{label, reason}] = handler.NewError(parser.CodeInvalidParams, "Invalid params: "+label+": "+reason)
		}
	}
	return m
}()

// operandError returns the error for an operand label that does not fit
// for reason.
func operandError(label, reason string) error {
	if e, ok := operandErrors[[2]string{label, reason}]; ok {
		return e
	}
	return handler.NewError(parser.CodeInvalidParams, "Invalid params: "+label+": "+reason)
}

// getData is the result of get_data.
var getData = handler.Raw(`["hello",5]`)

// Register adds to t:
//
//   - subtract (by position [minuend, subtrahend] or by name) → the
//     difference; sum ([numbers]) → their sum; update, notify_hello,
//     notify_sum (any params) → null, meant as notifications; get_data
//     (no params) → ["hello", 5]: the methods of the specification's
//     examples. The operands of subtract and sum are any JSON numbers:
//     integers are computed exactly and answered without a fraction
//     (19), others as float64 (19.5); an integer beyond 64 bits, or a
//     float result that is not finite, is -32602;
//   - echo → its params unchanged; add ([a, b], integers) → a+b;
//   - sleep ({"ms":N} or [N], at most MaxSleep) → N after sleeping N ms,
//     of the blocking class, cut short when the request is cancelled;
//   - fail → an application error, code FailCode, with the params as data;
//   - countdown ({"from":N,"interval_ms":M} or [N, M], N ≤ 1000, M ≤
//     MaxSleep in all) → "done" after one countdown_progress
//     notification ({"left":k}) per step, sent through the call's
//     handler.Conn: over an HTTP event stream, a WebSocket or a stream,
//     they come before the reply; cut short with the call's context;
//   - range ({"n":N} or [N], N ≥ 0) → the array [0, 1, …, N-1], a
//     streamed result (handler.RegisterStream): sent as it is produced,
//     in bounded memory, whatever N — for measuring big replies and
//     their compression;
//   - clock_subscribe ([intervalMs] or {"interval_ms":N}, 1 to
//     MaxClockInterval ms) → a subscription id, then a clock_subscription
//     notification every interval whose result counts 1, 2, 3, …;
//     clock_unsubscribe ([id]) → true. Over WebSocket and streams, and
//     over HTTP as an event stream: a POST taking text/event-stream, or
//     a GET (it is marked HTTPGet: a browser's EventSource, with
//     ?method=clock_subscribe&params=[ms]).
//
// Every method but sleep, countdown and range is registered Inline.
func Register(t *handler.Table) {
	inline := handler.Inline()
	handler.Register(t, "subtract", func(_ context.Context, p subtractParams) (Number, error) {
		a, reason := parseNumber(p.Minuend)
		if reason != "" {
			return Number{}, operandError("minuend", reason)
		}
		b, reason := parseNumber(p.Subtrahend)
		if reason != "" {
			return Number{}, operandError("subtrahend", reason)
		}
		return sub(a, b)
	}, inline, handler.Description("minuend - subtrahend"))
	handler.Register(t, "sum", func(_ context.Context, p handler.Raw) (Number, error) {
		return sumOf(p)
	}, inline, handler.Description("the sum of the numbers given by position"), handler.ParamNames("numbers..."))
	for _, name := range []string{"update", "notify_hello", "notify_sum"} {
		handler.RegisterNoResult(t, name, func(context.Context, handler.Raw) error { return nil },
			inline, handler.Description("does nothing; meant as a notification"))
	}
	handler.RegisterNoParams(t, "get_data", func(context.Context) (handler.Raw, error) {
		return getData, nil
	}, inline, handler.Description(`["hello", 5]`))
	handler.Register(t, "echo", func(_ context.Context, p handler.Raw) (handler.Raw, error) {
		return p, nil
	}, inline, handler.Description("its params, unchanged"))
	handler.Register(t, "add", func(_ context.Context, p [2]int64) (int64, error) {
		s := p[0] + p[1]
		if (s > p[0]) != (p[1] > 0) {
			return 0, errOverflow
		}
		return s, nil
	}, inline, handler.Description("a + b"), handler.ParamNames("a", "b"))
	handler.Register(t, "sleep", func(ctx context.Context, p SleepParams) (int64, error) {
		d := time.Duration(p.Ms) * time.Millisecond
		if p.Ms < 0 || p.Ms > int64(MaxSleep/time.Millisecond) {
			return 0, handler.NewError(parser.CodeInvalidParams, "Invalid params: ms must be between 0 and 60000")
		}
		if d == 0 {
			return 0, ctx.Err() // no sleep: the blocking class at its cheapest, for benchmarks
		}
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-timer.C:
			return p.Ms, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}, handler.Description("sleeps ms milliseconds, then answers ms"))
	handler.Register(t, "fail", func(_ context.Context, p handler.Raw) (struct{}, error) {
		e := &handler.Error{Code: FailCode, Message: "fail called"}
		if len(p) > 0 {
			e.Data = p
		}
		return struct{}{}, e
	}, inline, handler.Description("fails with an application error whose data are the params"))
	handler.Register(t, "countdown", countdown, handler.Description("counts from down to 1, a countdown_progress notification each interval_ms, then answers done"), handler.ParamNames("from", "interval_ms"))
	handler.RegisterStream(t, "range", rangeOf, handler.Description("the array [0, 1, …, n-1], produced as a stream"), handler.ParamNames("n"))
	// HTTPGet: a browser's EventSource (a GET taking text/event-stream)
	// may subscribe too.
	handler.RegisterSubscription(t, "clock", startClock, inline, handler.Description("a counter pushed every interval_ms"), handler.ParamNames("interval_ms"), handler.HTTPGet(""))
}

// CountdownParams are the params of countdown: {"from":N,"interval_ms":M}
// or [N, M].
type CountdownParams struct {
	From       int64 `json:"from"`
	IntervalMs int64 `json:"interval_ms"`
}

// countdownProgress is the params of a countdown_progress notification.
type countdownProgress struct {
	Left int64 `json:"left"`
}

// countdown is countdown: one notification per step through the call's
// Conn (none where the transport cannot push: plain HTTP), a step every
// interval, ended by the call's context.
func countdown(ctx context.Context, p CountdownParams) (string, error) {
	if p.From < 0 || p.From > 1000 || p.IntervalMs < 0 || p.From*p.IntervalMs > int64(MaxSleep/time.Millisecond) {
		return "", handler.NewError(parser.CodeInvalidParams, "Invalid params: from must be 0 to 1000, interval_ms at least 0, from*interval_ms at most 60000")
	}
	c := handler.ConnFrom(ctx)
	push := c != nil && c.CanPush()
	var timer *time.Timer
	for left := p.From - 1; left >= 0; left-- {
		if p.IntervalMs > 0 {
			if timer == nil {
				timer = time.NewTimer(time.Duration(p.IntervalMs) * time.Millisecond)
				defer timer.Stop()
			} else {
				timer.Reset(time.Duration(p.IntervalMs) * time.Millisecond)
			}
			select {
			case <-timer.C:
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		if push {
			if err := handler.Notify(c, "countdown_progress", countdownProgress{Left: left}); err != nil {
				return "", err
			}
		}
	}
	return "done", ctx.Err()
}

// RangeParams are the params of range: {"n":N} or [N].
type RangeParams struct {
	N int64 `json:"n"`
}

// rangeOf is range: the integers from 0 to p.N-1, one by one, ended
// early when the call is cancelled (the client went).
func rangeOf(ctx context.Context, p RangeParams) iter.Seq2[int64, error] {
	return func(yield func(int64, error) bool) {
		if p.N < 0 {
			yield(0, handler.NewError(parser.CodeInvalidParams, "Invalid params: n must not be negative"))
			return
		}
		for i := int64(0); i < p.N; i++ {
			if !yield(i, nil) {
				return
			}
			if i&0xffff == 0xffff && ctx.Err() != nil {
				yield(0, ctx.Err())
				return
			}
		}
	}
}

// startClock runs one clock subscription: a goroutine that notifies the
// count every interval until the subscription ends or the client cannot
// keep up.
func startClock(_ context.Context, p ClockParams, sub *handler.Subscription) error {
	if p.IntervalMs < 1 || p.IntervalMs > int64(MaxClockInterval/time.Millisecond) {
		return handler.NewError(parser.CodeInvalidParams, "Invalid params: interval_ms must be between 1 and 3600000")
	}
	go func() {
		tick := time.NewTicker(time.Duration(p.IntervalMs) * time.Millisecond)
		defer tick.Stop()
		done := sub.Context().Done()
		for n := int64(1); ; n++ {
			select {
			case <-done:
				return
			case <-tick.C:
				if err := sub.Notify(n); err != nil {
					sub.Unsubscribe()
					return
				}
			}
		}
	}()
	return nil
}
