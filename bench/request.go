package bench

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/jetrpc/jetrpc/parser"
)

// message is a request template: its text with holes where the ids go.
// The calls of a message get consecutive ids.
type message struct {
	parts [][]byte     // text around the holes
	fills []*generator // what goes between parts[i] and parts[i+1]: nil for the next id; a nil fills means ids only
	holes int          // calls that want a reply
	calls int          // calls, notifications included
	batch bool         // the text is an array: its reply must be one too
	gens  bool         // some holes are generators: the body's length is known once built
	specs []int32      // a workload's: the call (callSpec) of each id hole, in id order; nil otherwise
}

// appendBody appends the message with ids first, first+1, ... to dst,
// its generators' values drawn with rng (nil when it has none).
func (m *message) appendBody(dst []byte, first uint64, rng *rand.Rand) []byte {
	dst = append(dst, m.parts[0]...)
	id := first
	for i := 1; i < len(m.parts); i++ {
		if m.fills != nil && m.fills[i-1] != nil {
			dst = m.fills[i-1].append(dst, rng)
		} else {
			dst = strconv.AppendUint(dst, id, 10)
			id++
		}
		dst = append(dst, m.parts[i]...)
	}
	return dst
}

// bodyLen returns the length of appendBody's output, for a message
// without generators.
func (m *message) bodyLen(first uint64) int {
	n := 0
	for _, p := range m.parts {
		n += len(p)
	}
	for i := range m.holes {
		n += digits(first + uint64(i))
	}
	return n
}

func digits(v uint64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

// messagesFromFlags builds the rotation of messages for a method and
// params, a batch size and a notification share: call c (counting from
// 0 over the rotation) is a notification when the share's running total
// crosses an integer at c, so that the share holds over the rotation.
func messagesFromFlags(method, params string, batch int, notify float64) ([]message, error) {
	if params != "" {
		if !parser.Valid([]byte(params)) || (params[0] != '[' && params[0] != '{') {
			return nil, fmt.Errorf("params %q must be a JSON array or object", params)
		}
	}
	n := 1
	if notify > 0 && notify < 1 {
		n = 100 // the rotation over which the share is exact to 1 %
	}
	head := []byte(`{"jsonrpc":"2.0","method":`)
	head = parser.AppendQuote(head, method)
	if params != "" {
		head = append(head, `,"params":`...)
		head = append(head, params...)
	}
	share := int(math.Round(notify * 100)) // the share in hundredths: the rotation of 100 is exact to 1 %
	out := make([]message, 0, n)
	c := 0
	for range n {
		m := message{batch: batch > 1}
		cur := []byte(nil)
		if batch > 1 {
			cur = append(cur, '[')
		}
		for k := range batch {
			if k > 0 {
				cur = append(cur, ',')
			}
			cur = append(cur, head...)
			isNotif := (c+1)*share/100 != c*share/100 // in whole hundredths: 100×0.29 is 28.999… in floating point
			c++
			m.calls++
			if isNotif {
				cur = append(cur, '}')
				continue
			}
			cur = append(cur, `,"id":`...)
			m.parts = append(m.parts, cur)
			m.holes++
			cur = []byte{'}'}
		}
		if batch > 1 {
			cur = append(cur, ']')
		}
		m.parts = append(m.parts, cur)
		out = append(out, m)
	}
	return out, nil
}

// messagesFromBodies builds the rotation from request texts: every id is
// a hole for the tool's own ids.
func messagesFromBodies(bodies [][]byte) ([]message, error) {
	if len(bodies) == 0 {
		return nil, errors.New("no request bodies")
	}
	var p parser.Parser
	out := make([]message, 0, len(bodies))
	for i, b := range bodies {
		m := p.Parse(b)
		var reqs []parser.Request
		switch m.Kind {
		case parser.KindSingle:
			reqs = append(reqs, m.Request)
		case parser.KindBatch:
			for it := m.Iter(); it.Next(); {
				reqs = append(reqs, it.Request())
			}
		default:
			return nil, fmt.Errorf("body %d is not a request: %s", i+1, m.Err.Error())
		}
		msg := message{batch: m.Kind == parser.KindBatch}
		last := 0
		for _, r := range reqs {
			if !r.Err.OK() {
				return nil, fmt.Errorf("body %d: %s", i+1, r.Err.Error())
			}
			msg.calls++
			if r.Notification {
				continue
			}
			// r.ID is a sub-slice of b: its offset locates the hole.
			off := offsetIn(b, r.ID)
			msg.parts = append(msg.parts, append([]byte(nil), b[last:off]...))
			last = off + len(r.ID)
			msg.holes++
		}
		msg.parts = append(msg.parts, append([]byte(nil), b[last:]...))
		out = append(out, msg)
	}
	return out, nil
}

// maxHoles returns the most calls wanting a reply in one message.
func maxHoles(msgs []message) int {
	n := 0
	for i := range msgs {
		n = max(n, msgs[i].holes)
	}
	return n
}

// offsetIn returns the offset of sub, a sub-slice of b, in b.
func offsetIn(b, sub []byte) int {
	for i := range b {
		if len(b)-i >= len(sub) && &b[i] == &sub[0] {
			return i
		}
	}
	return -1
}
