package demo_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/parser"
)

func demoTable(t testing.TB) *handler.Table {
	t.Helper()
	tab := handler.NewTable()
	demo.Register(tab)
	return tab
}

// arithmeticCase is a call of subtract or sum: its params (no params
// member when "") and the exact result, or the code and a part of the
// message of the error.
type arithmeticCase struct {
	params string
	result string
	code   parser.Code
	msg    string
}

func runArithmetic(t *testing.T, method string, cases []arithmeticCase) {
	t.Helper()
	tab := demoTable(t)
	for _, c := range cases {
		msg := `{"jsonrpc":"2.0","method":"` + method + `","params":` + c.params + `,"id":1}`
		if c.params == "" {
			msg = `{"jsonrpc":"2.0","method":"` + method + `","id":1}`
		}
		got := string(tab.Dispatch(context.Background(), nil, []byte(msg)))
		if c.code == 0 {
			if want := `{"jsonrpc":"2.0","result":` + c.result + `,"id":1}`; got != want {
				t.Errorf("%s %s:\n got %s\nwant %s", method, c.params, got, want)
			}
			continue
		}
		var r struct {
			Error *struct {
				Code    parser.Code
				Message string
			}
		}
		if err := json.Unmarshal([]byte(got), &r); err != nil || r.Error == nil || r.Error.Code != c.code || !strings.Contains(r.Error.Message, c.msg) {
			t.Errorf("%s %s: %s, want error %d %q", method, c.params, got, c.code, c.msg)
		}
	}
}

// subtract refused non-integers ("expected an integer" for [42.5, 23]);
// the specification's examples are numbers: any JSON number is accepted,
// integers exactly and answered without a fraction.
func TestSubtract_anyNumber(t *testing.T) {
	const invalid = parser.CodeInvalidParams
	runArithmetic(t, "subtract", []arithmeticCase{
		{params: `[42,23]`, result: `19`},
		{params: `[23,42]`, result: `-19`},
		{params: `{"minuend":42,"subtrahend":23}`, result: `19`},
		{params: `{"subtrahend":23,"minuend":42}`, result: `19`},
		{params: `[42.5,23]`, result: `19.5`},
		{params: `{"minuend":42.5,"subtrahend":23}`, result: `19.5`},
		{params: `{"subtrahend":0.5,"minuend":-1}`, result: `-1.5`},
		{params: `[42.0,23]`, result: `19`},
		{params: `[1e2,1]`, result: `99`},
		{params: `[1E+2,0.5e1]`, result: `95`},
		{params: `[0.1,0.3]`, result: `-0.19999999999999998`},
		{params: `[1e21,0]`, result: `1e+21`},
		{params: `[1e-7,0]`, result: `1e-7`},
		{params: `[-0.0,0]`, result: `-0`},
		{params: `[null,1]`, result: `-1`},
		// integers are exact beyond float64's 53 bits
		{params: `[9007199254740993,0]`, result: `9007199254740993`},
		{params: `[-9223372036854775807,1]`, result: `-9223372036854775808`},
		{params: `[12345678901234567890123.5,0]`, result: `1.2345678901234568e+22`},
		// refusals: -32602 naming the operand
		{params: `[1.7976931348623157e308,-1.7976931348623157e308]`, code: invalid, msg: "not a finite number"},
		{params: `[-1e308,1e308]`, code: invalid, msg: "not a finite number"},
		{params: `[1e400,1]`, code: invalid, msg: "minuend: number out of range"},
		{params: `[12345678901234567890123,1]`, code: invalid, msg: "minuend: integer out of range"},
		{params: `[9223372036854775807,-1]`, code: invalid, msg: "overflows"},
		{params: `[1,"2"]`, code: invalid, msg: "subtrahend: expected a number"},
		{params: `[true,2]`, code: invalid, msg: "minuend: expected a number"},
		{params: `[[1],2]`, code: invalid, msg: "minuend: expected a number"},
		{params: `{"minuend":{},"subtrahend":2}`, code: invalid, msg: "minuend: expected a number"},
		{params: `[1]`, code: invalid, msg: "subtrahend: missing required param"},
		{params: `{"minuend":1}`, code: invalid, msg: "subtrahend: missing required param"},
		{params: `{"subtrahend":1}`, code: invalid, msg: "minuend: missing required param"},
		{params: `[1,2,3]`, code: invalid, msg: "too many params"},
		{params: ``, code: invalid, msg: "minuend: missing required param"},
	})
}

// Regression from a review of the push API and the net/http adapter: the
// demo's subtract wrapped around on overflow; it refuses it, as add does.
func TestSubtract_overflow(t *testing.T) {
	tab := demoTable(t)
	for _, params := range []string{`[-9223372036854775808,1]`, `[9223372036854775807,-1]`} {
		out := string(tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"subtract","params":`+params+`,"id":1}`)))
		if !strings.Contains(out, `-32602`) {
			t.Errorf("subtract %s: %s, want -32602", params, out)
		}
	}
	if out := string(tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"subtract","params":[-9223372036854775807,1],"id":1}`))); out != `{"jsonrpc":"2.0","result":-9223372036854775808,"id":1}` {
		t.Errorf("subtract at the edge: %s", out)
	}
}

// sum took float64s and answered an overflow with -32603: any JSON number
// is accepted, integers are summed exactly, and a sum that does not fit is
// -32602.
func TestSum_anyNumber(t *testing.T) {
	const invalid = parser.CodeInvalidParams
	runArithmetic(t, "sum", []arithmeticCase{
		{params: `[1,2,4]`, result: `7`},
		{params: `[1,2.5]`, result: `3.5`},
		{params: `[0.5,0.5]`, result: `1`},
		{params: `[0.1,0.2]`, result: `0.30000000000000004`},
		{params: `[]`, result: `0`},
		{params: ``, result: `0`},
		{params: `[null,3]`, result: `3`},
		{params: ` [ 1 , 2 ] `, result: `3`},
		{params: `[-5]`, result: `-5`},
		// integers exact, refused only when the sum itself does not fit
		{params: `[9007199254740993,1]`, result: `9007199254740994`},
		{params: `[9223372036854775807,1,-1]`, result: `9223372036854775807`},
		{params: `[-9223372036854775808,-1,1]`, result: `-9223372036854775808`},
		{params: `[9223372036854775807,9223372036854775807,-9223372036854775808,-9223372036854775808,1]`, result: `-1`},
		{params: `[9223372036854775807,1]`, code: invalid, msg: "overflows"},
		{params: `[-9223372036854775808,-1]`, code: invalid, msg: "overflows"},
		// one float makes the sum float64, wherever it is
		{params: `[9223372036854775807,1,0.5]`, result: `9223372036854776000`},
		{params: `[0.5,9223372036854775807,1]`, result: `9223372036854776000`},
		{params: `[1e308,1e308]`, code: invalid, msg: "not a finite number"},
		{params: `[1e400]`, code: invalid, msg: "numbers: number out of range"},
		{params: `[99999999999999999999]`, code: invalid, msg: "numbers: integer out of range"},
		{params: `[1,"x"]`, code: invalid, msg: "numbers: expected a number"},
		{params: `[[1]]`, code: invalid, msg: "numbers: expected a number"},
		{params: `{"a":1}`, code: invalid, msg: "params must be an array"},
	})
}

// TestNumber_appendJSON: an integer is written exactly, a float as
// encoding/json writes a float64.
func TestNumber_appendJSON(t *testing.T) {
	for _, n := range []demo.Number{
		{Int: 0}, {Int: -19}, {Int: math.MaxInt64}, {Int: math.MinInt64},
	} {
		got, err := n.AppendJSON([]byte("x"))
		if want, _ := json.Marshal(n.Int); err != nil || string(got) != "x"+string(want) {
			t.Errorf("%+v: %s %v, want x%s", n, got, err, want)
		}
	}
	for _, f := range []float64{0, math.Copysign(0, -1), 19, 19.5, -0.1, 1e-6, 1e-7, 123456789.125, 1e20, 1e21, -1e21, 1e300, 5e-324, math.MaxFloat64} {
		got, err := demo.Number{Float: f, IsFloat: true}.AppendJSON(nil)
		if want, _ := json.Marshal(f); err != nil || string(got) != string(want) {
			t.Errorf("%v: %s %v, want %s", f, got, err, want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got, err := (demo.Number{Float: f, IsFloat: true}).AppendJSON(nil); err == nil {
			t.Errorf("%v: %s, want an error", f, got)
		}
	}
}

// TestSleep_zero: sleep 0 answers at once, without a timer (the blocking
// class at its cheapest, what the benchmarks of the worker path call),
// and a cancelled request is answered cancelled.
func TestSleep_zero(t *testing.T) {
	tab := demoTable(t)
	msg := []byte(`{"jsonrpc":"2.0","method":"sleep","params":{"ms":0},"id":1}`)
	if got := string(tab.Dispatch(context.Background(), nil, msg)); got != `{"jsonrpc":"2.0","result":0,"id":1}` {
		t.Fatalf("sleep 0: %s", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := string(tab.Dispatch(ctx, nil, msg)); !strings.Contains(got, `"code":-32001`) {
		t.Fatalf("sleep 0, cancelled: %s", got)
	}
}
