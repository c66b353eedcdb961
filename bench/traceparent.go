package bench

// NOTE: the W3C traceparent a share of the requests carry
// (Config.TraceSample), so that a load test shows up in the server's
// traces. Each worker draws from a PCG source of its own (trace, seeded
// from crypto/rand when the worker is made; nil when the share is 0): it
// decides whether a request carries one and draws its trace and span ids.
// With a share of 0 the request path only tests that nil: no draw, no
// allocation. The header is appended after Content-Length, so that the
// head built once per token (httpHead) stays shared.

import (
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
)

// traceparentName is the header's name, as W3C Trace Context writes it.
const traceparentName = "traceparent"

// checkTrace checks Config.TraceSample against the target t.
func (c *Config) checkTrace(t *target) error {
	if !(c.TraceSample >= 0 && c.TraceSample <= 1) { // NaN too
		return errors.New("the trace sample must be a share between 0 and 1")
	}
	if c.TraceSample == 0 {
		return nil
	}
	if !t.http && !t.ws {
		return fmt.Errorf("target %q is a raw stream: a traceparent can only be sent over http:// or ws://", c.Target)
	}
	if len(c.Header.Values(traceparentName)) > 0 {
		return errors.New("a traceparent header and a trace sample: the tool writes the traceparent")
	}
	return nil
}

// newTraceRand returns a worker's source of trace draws for share: nil
// when share is 0, otherwise a PCG seeded from crypto/rand, so that two
// load generators started together do not send the same ids.
func newTraceRand(share float64) *rand.Rand {
	if share <= 0 {
		return nil
	}
	var seed [16]byte
	_, _ = crand.Read(seed[:]) // crypto/rand.Read does not fail (Go 1.24)
	return rand.New(rand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:])))
}

// traced draws whether the next request carries a traceparent. It must
// be called only with w.trace set; worker's goroutine only.
func (w *worker) traced() bool {
	s := w.r.cfg.TraceSample
	return s >= 1 || w.trace.Float64() < s
}

// appendTraceparent appends a traceparent header line to dst, with a
// share of Config.TraceSample: "traceparent: 00-<trace id>-<span id>-01",
// fresh random ids (never all zero), the sampled flag set. It appends
// nothing when the share is 0 or the draw says no. Worker's goroutine
// only.
func (w *worker) appendTraceparent(dst []byte) []byte {
	if w.trace == nil || !w.traced() {
		return dst
	}
	dst = append(dst, traceparentName+": "...)
	dst = appendTraceparentValue(dst, w.trace)
	return append(dst, "\r\n"...)
}

// appendTraceparentValue appends a traceparent value with fresh ids
// drawn from rng, the sampled flag set.
func appendTraceparentValue(dst []byte, rng *rand.Rand) []byte {
	hi, lo, span := rng.Uint64(), rng.Uint64(), rng.Uint64()
	if hi|lo == 0 {
		lo = 1 // an all-zero trace id is invalid
	}
	if span == 0 {
		span = 1 // and so is an all-zero span id
	}
	dst = append(dst, "00-"...)
	dst = appendHex64(dst, hi)
	dst = appendHex64(dst, lo)
	dst = append(dst, '-')
	dst = appendHex64(dst, span)
	return append(dst, "-01"...)
}

// appendHex64 appends v as 16 lower-case hex digits.
func appendHex64(dst []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	for s := 60; s >= 0; s -= 4 {
		dst = append(dst, digits[v>>uint(s)&0xf])
	}
	return dst
}
