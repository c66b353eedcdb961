package demo

// NOTE: the arithmetic of subtract and sum. Their operands are any JSON
// numbers, read by hand from handler.Raw so that a call allocates nothing:
// an operand written as an integer (no fraction, no exponent) is an exact
// int64, any other is a float64. Integers are added and subtracted
// exactly, and an integer result beyond 64 bits is refused rather than
// rounded; as soon as one operand is a float the arithmetic is float64,
// and a result that is not finite is refused. Both refusals are -32602:
// the params do not fit the method.

import (
	"math"
	"math/bits"
	"strconv"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/parser"
)

// Number is the result of subtract and sum: an exact integer, written
// without a fraction (19), or a float64, written as encoding/json writes
// it (19.5, 1e+21).
type Number struct {
	// Int is the value when IsFloat is false.
	Int int64
	// Float is the value when IsFloat is true.
	Float float64
	// IsFloat says which of Int and Float holds the value.
	IsFloat bool
}

var _ handler.JSONAppender = Number{}

// JSONSchemaText declares the JSON Schema of a Number, a JSON number, to
// an OpenRPC document (handler/openrpc's SchemaDeclarer): AppendJSON
// writes it, where no reflection sees.
func (Number) JSONSchemaText() string { return `{"type":"number"}` }

// AppendJSON appends n as a JSON number. A Float that is not finite, which
// subtract and sum never answer, is an error.
func (n Number) AppendJSON(dst []byte) ([]byte, error) {
	if !n.IsFloat {
		return strconv.AppendInt(dst, n.Int, 10), nil
	}
	f := n.Float
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, errNotFinite
	}
	// encoding/json's format: 'f' within [1e-6, 1e21), 'e' outside.
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// 1e-07 → 1e-7, as encoding/json
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}

// float returns n as a float64.
func (n Number) float() float64 {
	if n.IsFloat {
		return n.Float
	}
	return float64(n.Int)
}

// finite returns f as a Number, or the error for a result that is not
// finite.
func finite(f float64) (Number, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return Number{}, errNotFinite
	}
	return Number{Float: f, IsFloat: true}, nil
}

// Reasons an operand does not fit.
const (
	reasonWantNumber = "expected a number"
	reasonIntRange   = "integer out of range"
	reasonNumRange   = "number out of range"
)

// parseNumber reads the JSON value v (valid JSON, as params are) as a
// number. null is 0, as encoding/json leaves a number it is given null
// for. An integer beyond 64 bits is refused rather than rounded, as a
// result beyond 64 bits is. It returns "" or the reason v is not a number
// that fits.
func parseNumber(v handler.Raw) (Number, string) {
	if len(v) == 0 {
		return Number{}, reasonWantNumber
	}
	if v[0] == 'n' {
		return Number{}, "" // null
	}
	if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return Number{}, reasonWantNumber
	}
	digits, neg := []byte(v), v[0] == '-'
	if neg {
		digits = digits[1:]
	}
	var u uint64
	over := false
	for _, c := range digits {
		if c < '0' || c > '9' {
			return parseFloat(v) // a fraction or an exponent
		}
		d := uint64(c - '0')
		if over || u > (math.MaxUint64-d)/10 {
			over = true // unless a fraction follows: an integer too long
			continue
		}
		u = u*10 + d
	}
	switch {
	case over:
	case neg && u <= 1<<63:
		return Number{Int: -int64(u)}, "" // -(1<<63) wraps to MinInt64
	case !neg && u <= math.MaxInt64:
		return Number{Int: int64(u)}, ""
	}
	return Number{}, reasonIntRange
}

// parseFloat reads the JSON number v that has a fraction or an exponent.
func parseFloat(v handler.Raw) (Number, string) {
	// string(v) does not escape: up to 32 bytes it is on the stack.
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return Number{}, reasonNumRange
	}
	return Number{Float: f, IsFloat: true}, ""
}

// sub returns a - b.
func sub(a, b Number) (Number, error) {
	if a.IsFloat || b.IsFloat {
		return finite(a.float() - b.float())
	}
	d := a.Int - b.Int
	if (d < a.Int) != (b.Int > 0) {
		return Number{}, errOverflowSub
	}
	return Number{Int: d}, nil
}

// sumOf adds the numbers of the JSON array params (absent params are no
// numbers: 0). When every operand is an integer the sum is exact, or
// refused if it overflows; when one is a float, all are added as float64
// in order, whatever the position of the float.
func sumOf(params handler.Raw) (Number, error) {
	if len(params) == 0 {
		return Number{}, nil
	}
	if params[0] != '[' {
		return Number{}, errSumWantArray
	}
	// The integers are added in 128 bits (hi, lo), so that the sum is
	// refused only when it does not fit, not when a partial sum does not.
	var (
		lo       uint64
		hi       int64
		floats   float64
		anyFloat bool
	)
	vals := parser.NewValues(params)
	for v, ok := vals.Next(); ok; v, ok = vals.Next() {
		n, reason := parseNumber(v)
		if reason != "" {
			return Number{}, operandError("numbers", reason)
		}
		floats += n.float()
		if n.IsFloat {
			anyFloat = true
			continue
		}
		var carry uint64
		lo, carry = bits.Add64(lo, uint64(n.Int), 0)
		hi += int64(carry) + n.Int>>63 // n.Int>>63 is -1 for a negative
	}
	switch {
	case anyFloat:
		return finite(floats)
	case hi != int64(lo)>>63:
		return Number{}, errOverflow
	}
	return Number{Int: int64(lo)}, nil
}
