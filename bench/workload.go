package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/jetrpc/jetrpc/parser"
)

// NOTE: a workload is a mix of calls, each with a weight, templated
// params and an optional expected reply. It compiles to a rotation of
// calls in which each one's share is its weight's, exactly (a smooth
// weighted round-robin, so that the mix holds over any stretch of the
// run, not only over the whole), and each message of the rotation to
// literal text with holes: the ids, and the generators of the params,
// filled in at every send without allocating (a per-worker PCG, strconv
// and a hex table).

// Workload is a mix of calls (LoadWorkload reads one from JSON):
//
//	{"calls": [
//	  {"method": "eth_getBalance", "weight": 5, "params": [{"$hex": 20}, "latest"]},
//	  {"method": "add", "params": [{"$int": [1, 100]}, {"$seq": {}}], "expect": {"result": 3}},
//	  {"method": "nope", "weight": 0.5, "expect": {"error": -32601}},
//	  {"method": "log", "notify": true, "params": {"line": {"$lines": "lines.jsonl"}}}
//	]}
//
// A params value (at any depth) that is an object of one member whose
// name starts with "$" is a generator: {"$seq": {}} a number counting up
// over the run; {"$int": [LO, HI]} and {"$float": [LO, HI]} a random
// number in the range; {"$choice": [V, ...]} one of the values, at
// random; {"$hex": N} a string "0x" and N random bytes in hex;
// {"$lines": FILE} the JSON values of FILE's lines, in turn (a path
// relative to the workload file's folder).
type Workload struct {
	Calls []WorkloadCall `json:"calls"`

	dir string // where $lines files are found: the workload file's folder (LoadWorkload)
}

// WorkloadCall is one call of a Workload.
type WorkloadCall struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
	// Weight is the call's share of the mix against the others'; 0 means 1.
	Weight float64 `json:"weight,omitempty"`
	// Notify sends it as a notification (no id, no reply).
	Notify bool `json:"notify,omitempty"`
	// Expect, when set, is the reply it must get: a result (compared as
	// JSON text, white space aside) or an error code. Another reply
	// counts as ErrWrongReply.
	Expect *Expect `json:"expect,omitempty"`
	// Free marks a call whose reply may differ from one server to
	// another (a clock, a random id): the differential check (Diff)
	// does not compare it.
	Free bool `json:"free,omitempty"`
}

// Expect is the reply a workload call must get: Result or Error.
type Expect struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *int64          `json:"error,omitempty"`
}

// LoadWorkload reads a workload file (JSON) and the files its $lines
// generators name, relative to its folder.
func LoadWorkload(path string) (*Workload, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var w Workload
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("workload %s: %w", path, err)
	}
	w.dir = filepath.Dir(path)
	return &w, nil
}

// generator kinds.
const (
	genSeq = iota
	genInt
	genFloat
	genChoice
	genHex
	genLines
)

// generator fills one templated value at each send.
type generator struct {
	kind     int
	lo, hi   int64
	flo, fhi float64
	n        int      // genHex: bytes
	values   [][]byte // genChoice, genLines: compact JSON values
	next     atomic.Uint64
}

const hexDigits = "0123456789abcdef"

// append appends a value of g to dst.
func (g *generator) append(dst []byte, rng *rand.Rand) []byte {
	switch g.kind {
	case genSeq:
		return strconv.AppendUint(dst, g.next.Add(1), 10)
	case genInt:
		return strconv.AppendInt(dst, g.lo+rng.Int64N(g.hi-g.lo+1), 10)
	case genFloat:
		return strconv.AppendFloat(dst, g.flo+rng.Float64()*(g.fhi-g.flo), 'g', -1, 64)
	case genChoice:
		return append(dst, g.values[rng.IntN(len(g.values))]...)
	case genHex:
		dst = append(dst, '"', '0', 'x')
		for i := 0; i < g.n; i += 8 {
			v := rng.Uint64()
			for k := 0; k < 8 && i+k < g.n; k++ {
				b := byte(v >> (8 * k))
				dst = append(dst, hexDigits[b>>4], hexDigits[b&15])
			}
		}
		return append(dst, '"')
	default: // genLines
		return append(dst, g.values[(g.next.Add(1)-1)%uint64(len(g.values))]...)
	}
}

// callSpec is a compiled workload call.
type callSpec struct {
	method string
	notify bool
	parts  [][]byte     // the call's text around its generators (and its id hole at the end, unless notify)
	gens   []*generator // between parts
	expect *Expect
	result []byte // Expect.Result, compact
	free   bool   // WorkloadCall.Free
}

// compile compiles the workload's calls.
func (w *Workload) compile() ([]callSpec, error) {
	if len(w.Calls) == 0 {
		return nil, errors.New("the workload has no calls")
	}
	specs := make([]callSpec, len(w.Calls))
	for i, c := range w.Calls {
		where := fmt.Sprintf("workload call %d (%s)", i+1, c.Method)
		if c.Method == "" {
			return nil, fmt.Errorf("workload call %d has no method", i+1)
		}
		if !(c.Weight >= 0) || math.IsInf(c.Weight, 0) {
			return nil, fmt.Errorf("%s: a weight is a finite number, 0 or more", where)
		}
		s := callSpec{method: c.Method, notify: c.Notify, expect: c.Expect, free: c.Free}
		cur := []byte(`{"jsonrpc":"2.0","method":`)
		cur = parser.AppendQuote(cur, c.Method)
		if len(c.Params) > 0 && string(c.Params) != "null" {
			var v any
			dec := json.NewDecoder(bytes.NewReader(c.Params))
			dec.UseNumber()
			if err := dec.Decode(&v); err != nil {
				return nil, fmt.Errorf("%s: params: %w", where, err)
			}
			if _, gen := generatorOf(v); gen {
				return nil, fmt.Errorf("%s: params must be an array or an object, not a generator", where)
			}
			switch v.(type) {
			case []any, map[string]any:
			default:
				return nil, fmt.Errorf("%s: params must be an array or an object", where)
			}
			cur = append(cur, `,"params":`...)
			var err error
			if cur, err = s.template(cur, v, w.dir); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
		}
		if c.Notify {
			if c.Expect != nil {
				return nil, fmt.Errorf("%s: a notification gets no reply to expect", where)
			}
			s.parts = append(s.parts, append(cur, '}'))
		} else {
			s.parts = append(s.parts, append(cur, `,"id":`...), []byte{'}'})
		}
		if e := c.Expect; e != nil {
			if (e.Result == nil) == (e.Error == nil) {
				return nil, fmt.Errorf("%s: expect a result or an error code, one of them", where)
			}
			if e.Result != nil {
				if !parser.Valid(e.Result) {
					return nil, fmt.Errorf("%s: the expected result is not JSON", where)
				}
				s.result = compactJSON(e.Result)
			}
		}
		specs[i] = s
	}
	return specs, nil
}

// template appends the JSON value v, turning generators into holes.
func (s *callSpec) template(cur []byte, v any, dir string) ([]byte, error) {
	if g, ok := generatorOf(v); ok {
		gen, err := newGenerator(g, dir)
		if err != nil {
			return nil, err
		}
		s.parts = append(s.parts, cur)
		s.gens = append(s.gens, gen)
		return nil, nil
	}
	switch x := v.(type) {
	case []any:
		cur = append(cur, '[')
		for i, e := range x {
			if i > 0 {
				cur = append(cur, ',')
			}
			var err error
			if cur, err = s.template(cur, e, dir); err != nil {
				return nil, err
			}
		}
		return append(cur, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		cur = append(cur, '{')
		for i, k := range keys {
			if i > 0 {
				cur = append(cur, ',')
			}
			cur = parser.AppendQuote(cur, k)
			cur = append(cur, ':')
			var err error
			if cur, err = s.template(cur, x[k], dir); err != nil {
				return nil, err
			}
		}
		return append(cur, '}'), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(cur, b...), nil
}

// generatorOf reports whether v is a generator: an object of one member
// whose name starts with "$".
func generatorOf(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return nil, false
	}
	for k := range m {
		return m, strings.HasPrefix(k, "$")
	}
	return nil, false
}

// newGenerator compiles one generator.
func newGenerator(m map[string]any, dir string) (*generator, error) {
	for name, arg := range m {
		bad := func(want string) error { return fmt.Errorf("%s takes %s", name, want) }
		switch name {
		case "$seq":
			return &generator{kind: genSeq}, nil
		case "$int", "$float":
			r, ok := arg.([]any)
			if !ok || len(r) != 2 {
				return nil, bad("[LO, HI]")
			}
			lo, err1 := strconv.ParseFloat(fmt.Sprint(r[0]), 64)
			hi, err2 := strconv.ParseFloat(fmt.Sprint(r[1]), 64)
			if err1 != nil || err2 != nil || hi < lo || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
				return nil, bad("[LO, HI], two numbers with LO ≤ HI")
			}
			if name == "$float" {
				return &generator{kind: genFloat, flo: lo, fhi: hi}, nil
			}
			if lo != math.Trunc(lo) || hi != math.Trunc(hi) || math.Abs(lo) > 1<<53 || math.Abs(hi) > 1<<53 {
				return nil, bad("[LO, HI], two integers")
			}
			return &generator{kind: genInt, lo: int64(lo), hi: int64(hi)}, nil
		case "$choice":
			vs, ok := arg.([]any)
			if !ok || len(vs) == 0 {
				return nil, bad("a non-empty array of values")
			}
			g := &generator{kind: genChoice}
			for _, v := range vs {
				b, err := json.Marshal(v)
				if err != nil {
					return nil, err
				}
				g.values = append(g.values, b)
			}
			return g, nil
		case "$hex":
			n, err := strconv.Atoi(fmt.Sprint(arg))
			if err != nil || n < 0 || n > 1<<20 {
				return nil, bad("a number of bytes, 0 to 1048576")
			}
			return &generator{kind: genHex, n: n}, nil
		case "$lines":
			file, ok := arg.(string)
			if !ok || file == "" {
				return nil, bad("a file name")
			}
			if !filepath.IsAbs(file) && dir != "" {
				file = filepath.Join(dir, file)
			}
			values, err := readLines(file)
			if err != nil {
				return nil, err
			}
			return &generator{kind: genLines, values: values}, nil
		default:
			return nil, fmt.Errorf("no generator %s ($seq, $int, $float, $choice, $hex, $lines)", name)
		}
	}
	return nil, errors.New("an empty generator")
}

// readLines reads a JSONL file: one JSON value per non-empty line.
func readLines(file string) ([][]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxMessage)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if !parser.Valid(line) {
			return nil, fmt.Errorf("%s:%d: not a JSON value", file, n)
		}
		out = append(out, compactJSON(line))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no values", file)
	}
	return out, nil
}

// compactJSON returns valid JSON v without insignificant white space.
func compactJSON(v []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return append([]byte(nil), v...)
	}
	return b.Bytes()
}

// equalJSONText reports whether a and b, valid JSON, are the same text
// but for white space outside strings. It allocates nothing.
func equalJSONText(a, b []byte) bool {
	i, j := 0, 0
	inStr := false
	for {
		if !inStr {
			for i < len(a) && isSpace(a[i]) {
				i++
			}
			for j < len(b) && isSpace(b[j]) {
				j++
			}
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		if a[i] != b[j] {
			return false
		}
		switch c := a[i]; {
		case inStr && c == '\\':
			if i+1 >= len(a) || j+1 >= len(b) || a[i+1] != b[j+1] {
				return false
			}
			i, j = i+1, j+1
		case c == '"':
			inStr = !inStr
		}
		i, j = i+1, j+1
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// rotation returns the order of the calls in the mix: each call's count
// in proportion to its weight (exactly when the weights are integers
// summing to 10,000 at most, else rounded over 1,000), interleaved by a
// smooth weighted round-robin.
func rotation(calls []WorkloadCall) ([]int, error) {
	weights := make([]float64, len(calls))
	integral, sum := true, 0.0
	for i, c := range calls {
		weights[i] = c.Weight
		if c.Weight == 0 {
			weights[i] = 1
		}
		integral = integral && weights[i] == math.Trunc(weights[i])
		sum += weights[i]
	}
	if math.IsInf(sum, 0) || !(sum > 0) {
		return nil, errors.New("the workload's weights must add up to a finite number above 0")
	}
	counts := make([]int, len(calls))
	total := 0
	if integral && sum <= 10_000 {
		for i, w := range weights {
			counts[i] = int(w)
			total += counts[i]
		}
	} else { // largest remainder over 1,000
		type rem struct {
			i int
			r float64
		}
		var rems []rem
		for i, w := range weights {
			exact := w / sum * 1000
			counts[i] = int(exact)
			total += counts[i]
			rems = append(rems, rem{i, exact - float64(counts[i])})
		}
		sort.Slice(rems, func(a, b int) bool { return rems[a].r > rems[b].r })
		for k := 0; total < 1000; k++ {
			counts[rems[k%len(rems)].i]++
			total++
		}
	}
	if total == 0 {
		return nil, errors.New("the workload's weights are all 0")
	}
	out := make([]int, 0, total)
	cur := make([]int, len(counts))
	for range total {
		best := -1
		for i, c := range counts {
			if c == 0 {
				continue
			}
			cur[i] += c
			if best < 0 || cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= total
		out = append(out, best)
	}
	return out, nil
}

// messagesFromWorkload builds the messages of a workload: a message per
// call of the rotation, or, with batch > 1, per batch of consecutive
// calls of it (each call in as many batches, so that the mix holds).
func messagesFromWorkload(specs []callSpec, rot []int, batch int) []message {
	if batch < 1 {
		batch = 1
	}
	out := make([]message, len(rot))
	for i := range rot {
		m := message{batch: batch > 1}
		cur := []byte(nil)
		if batch > 1 {
			cur = append(cur, '[')
		}
		for k := range batch {
			if k > 0 {
				cur = append(cur, ',')
			}
			si := rot[(i*batch+k)%len(rot)]
			s := &specs[si]
			m.calls++
			for p := 0; p < len(s.parts)-1; p++ {
				cur = append(cur, s.parts[p]...)
				if p < len(s.gens) {
					m.parts = append(m.parts, cur)
					m.fills = append(m.fills, s.gens[p])
					cur = nil
				} else { // the id hole, after the generators
					m.parts = append(m.parts, cur)
					m.fills = append(m.fills, nil)
					m.holes++
					m.specs = append(m.specs, int32(si))
					cur = nil
				}
			}
			cur = append(cur, s.parts[len(s.parts)-1]...)
		}
		if batch > 1 {
			cur = append(cur, ']')
		}
		m.parts = append(m.parts, cur)
		m.gens = len(m.fills) > m.holes
		out[i] = m
	}
	return out
}
