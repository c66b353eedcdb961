package otel

// NOTE: the sampling decision, made before any OpenTelemetry call:
// decide reads the force header, then the W3C traceparent field
// (parseParent, a check that accepts what propagation.TraceContext
// accepts and nothing else, without building a SpanContext), then
// draws from the runtime's per-thread ChaCha8 (math/rand/v2's top-level
// Uint64: lock-free, safe from any goroutine) against the ratio of the
// method or of the root calls, kept as a threshold on 64 bits. Nothing
// here allocates.

import (
	"bytes"
	"math"
	"unsafe"

	"math/rand/v2"
	"strings"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/parser"
)

// threshold is a ratio as a threshold on a uniform uint64: 0 samples
// nothing, math.MaxUint64 everything.
type threshold uint64

const (
	never  threshold = 0
	always threshold = math.MaxUint64
)

// thresholdOf returns the threshold of ratio r: never for r ≤ 0 (and
// NaN), always for r ≥ 1.
func thresholdOf(r float64) threshold {
	switch {
	case !(r > 0):
		return never
	case r >= 1:
		return always
	}
	return threshold(r * (1 << 64)) // r < 1: below 2^64
}

// draw reports whether a call with threshold th is sampled.
func (th threshold) draw() bool {
	return th != never && (th == always || threshold(rand.Uint64()) < th)
}

// prefixRatio is a per-method ratio for the names that start with
// prefix (a Methods key ending in "*").
type prefixRatio struct {
	prefix string
	th     threshold
}

// sampler decides which calls are traced; immutable after New.
type sampler struct {
	root       threshold
	exact      map[string]threshold // nil when there is none
	prefixes   []prefixRatio        // longest first
	force      string               // the force header's name; "" for none
	fields     []string             // the header fields decide reads: traceparent, then the force header if named
	paramsMeta bool                 // Options.ParamsMeta
}

// newSampler builds the sampler of o.
func newSampler(o *Options) sampler {
	s := sampler{root: thresholdOf(o.Ratio), force: o.ForceHeader, fields: []string{traceparentHeader}, paramsMeta: o.ParamsMeta}
	if o.ForceHeader != "" {
		s.fields = append(s.fields, o.ForceHeader)
	}
	for name, r := range o.Methods {
		if p, ok := strings.CutSuffix(name, "*"); ok {
			s.prefixes = append(s.prefixes, prefixRatio{p, thresholdOf(r)})
			continue
		}
		if s.exact == nil {
			s.exact = map[string]threshold{}
		}
		s.exact[name] = thresholdOf(r)
	}
	// Longest prefix first, so that the most specific one wins.
	for i := 1; i < len(s.prefixes); i++ {
		for j := i; j > 0 && len(s.prefixes[j].prefix) > len(s.prefixes[j-1].prefix); j-- {
			s.prefixes[j], s.prefixes[j-1] = s.prefixes[j-1], s.prefixes[j]
		}
	}
	return s
}

// decision is how a call was sampled.
type decision uint8

const (
	notSampled decision = iota
	sampledRoot
	sampledParent // the request's traceparent is valid and sampled
	sampledMeta   // no traceparent field, but the call's params._meta.traceparent is valid and sampled (Options.ParamsMeta)
	forced        // the force header; its traceparent, if any, is taken as sampled
	inTracedBatch // an element of a batch the Tracer traces: its span is the batch span's child
)

// decide returns the decision for call, whose metadata is m. It
// allocates nothing and calls no OpenTelemetry API. Safe from any
// goroutine.
func (s *sampler) decide(m *handler.Meta, call *handler.Call) decision {
	if d, ok := s.fromHeaders(m); ok {
		return d
	}
	if s.paramsMeta {
		if tp, _ := paramsMeta(call.Params()); tp != "" {
			if sampled, ok := parseParent(tp); ok {
				if sampled {
					return sampledMeta
				}
				return notSampled
			}
		}
	}
	th := s.root
	if call.Registered() && (s.exact != nil || s.prefixes != nil) {
		th = s.methodThreshold(call.Method())
	}
	if th.draw() {
		return sampledRoot
	}
	return notSampled
}

// fromHeaders returns the decision the request's header fields make —
// the force header, a valid traceparent — and false when they make
// none (a root call or batch).
func (s *sampler) fromHeaders(m *handler.Meta) (decision, bool) {
	if !m.HasHeaders() {
		return notSampled, false // a stream's call, or one in process: a root call
	}
	var tp string
	if s.force == "" {
		tp = m.Header(traceparentHeader) // found by the transport's parser: no pass over the head
	} else {
		var vals [2]string // traceparent, the force header: read in one pass over the head
		m.HeaderValues(s.fields, vals[:])
		if vals[1] != "" {
			return forced, true
		}
		tp = vals[0]
	}
	if tp != "" {
		if sampled, ok := parseParent(tp); ok {
			if sampled {
				return sampledParent, true
			}
			return notSampled, true
		}
	}
	return notSampled, false
}

// decideBatch is decide for a batch: one decision for all its elements,
// a root batch drawing against the highest threshold of its elements'
// methods.
func (s *sampler) decideBatch(m *handler.Meta, b *handler.Batch) decision {
	if d, ok := s.fromHeaders(m); ok {
		return d
	}
	th := s.root
	if s.exact != nil || s.prefixes != nil {
		th = never
		for i := range b.Len() {
			t := s.root
			if b.Registered(i) {
				t = s.methodThreshold(b.Method(i))
			}
			th = max(th, t)
		}
	}
	if th.draw() {
		return sampledRoot
	}
	return notSampled
}

// methodThreshold returns the threshold of the root calls of method.
func (s *sampler) methodThreshold(method string) threshold {
	if th, ok := s.exact[method]; ok {
		return th
	}
	for _, p := range s.prefixes {
		if strings.HasPrefix(method, p.prefix) {
			return p.th
		}
	}
	return s.root
}

// traceparentHeader is the W3C Trace Context field.
const traceparentHeader = "traceparent"

// parseParent reports whether the traceparent value tp is valid as
// propagation.TraceContext reads it (version 00 to fe; lower-case hex;
// trace and span ids not all zero; for version 00 nothing after the
// flags and no reserved flag above bit 1), and whether its sampled flag
// is set.
func parseParent(tp string) (sampled, ok bool) {
	// vv-<32 hex>-<16 hex>-ff
	const n = 2 + 1 + 32 + 1 + 16 + 1 + 2
	if len(tp) < n || tp[2] != '-' || tp[35] != '-' || tp[52] != '-' {
		return false, false
	}
	ver, ok := hexByte(tp[0], tp[1])
	if !ok || ver == 0xff {
		return false, false
	}
	flags, ok := hexByte(tp[53], tp[54])
	if !ok {
		return false, false
	}
	if len(tp) > n {
		if ver == 0 || tp[n] != '-' {
			return false, false
		}
	} else if ver == 0 && flags > 3 {
		return false, false
	}
	if !hexNonZero(tp[3:35]) || !hexNonZero(tp[36:52]) {
		return false, false
	}
	return flags&1 != 0, true
}

// hexByte decodes two lower-case hex digits.
func hexByte(hi, lo byte) (byte, bool) {
	h, ok1 := unhex(hi)
	l, ok2 := unhex(lo)
	return h<<4 | l, ok1 && ok2
}

// hexNonZero reports whether s is lower-case hex, not all zeros.
func hexNonZero(s string) bool {
	var nonZero bool
	for i := 0; i < len(s); i++ {
		v, ok := unhex(s[i])
		if !ok {
			return false
		}
		nonZero = nonZero || v != 0
	}
	return nonZero
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// metaKey is how paramsMeta finds the member "_meta" quickly.
var metaKey = []byte(`"_meta"`)

// paramsMeta returns the traceparent and tracestate strings of the
// params' "_meta" member, where MCP clients put the W3C trace context
// ({"_meta":{"traceparent":"00-…","tracestate":"…"}, …}); "" for each
// one absent, not a string, or holding an escape. params is valid JSON
// (the parser validated it). It allocates nothing.
func paramsMeta(params []byte) (tp, ts string) {
	params = bytes.TrimLeft(params, " \t\r\n")
	if len(params) < len(`{"_meta":{}}`) || params[0] != '{' || !bytes.Contains(params, metaKey) {
		return "", ""
	}
	members := parser.NewMembers(params)
	for k, esc, v, ok := members.Next(); ok; k, esc, v, ok = members.Next() {
		if esc || string(k) != "_meta" {
			continue
		}
		inner := parser.NewMembers(v) // nothing when v is not an object
		for k, esc, v, ok := inner.Next(); ok; k, esc, v, ok = inner.Next() {
			if esc || len(v) < 2 || v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 {
				continue
			}
			switch string(k) {
			case "traceparent":
				tp = unsafeString(v[1 : len(v)-1])
			case "tracestate":
				ts = unsafeString(v[1 : len(v)-1])
			}
		}
		return tp, ts
	}
	return "", ""
}

// unsafeString views b as a string, valid while b is unchanged: the
// call's params, for the call's time.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
