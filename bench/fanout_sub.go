package bench

// NOTE: the subscribers of a fan-out test, on gnet event loops. A
// subscriber is one WebSocket connection: OnOpen sends its
// topic_subscribe, the first message is the reply (subscribe), and every
// message after it is a notification (deliver). Frames are parsed in
// place in gnet's inbound buffer (nextFrame); whole frames are discarded,
// a partial one is left for the next read. A notification is matched in
// place against the exact bytes a jetrpc server sends
// (scanNotification), {"jsonrpc":"2.0","method":"topic_subscription",
// "params":{"subscription":ID,"result":, then its payload scanned for
// "seq" and "t" in the form the publisher writes; any other form takes
// scanNotificationSlow, a full decode. Each subscriber keeps a bit per sequence number, for
// duplicates and losses; latencies go to its event loop's loopStats.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/gobwas/ws"
	"github.com/panjf2000/gnet/v2"
)

// Why a subscriber failed, as counted in FanoutResult.SubscribeFailed.
const (
	SubConnect   = "connect"   // could not connect
	SubWebSocket = "websocket" // the WebSocket upgrade failed
	SubRefused   = "refused"   // topic_subscribe answered an error
	SubBadReply  = "bad reply" // topic_subscribe answered something else than a subscription id
	SubTimeout   = "timeout"   // no reply to topic_subscribe within Timeout
	SubClosed    = "closed"    // the connection closed before the reply
)

// The states of a subscriber; they only move forward.
const (
	subDialing     int32 = iota // dialing, by a connect goroutine
	subFailed                   // never subscribed: see subscriber.fail
	subSubscribing              // enrolled; topic_subscribe sent or about to be
	subSubscribed               // subscribed: its deliveries count
	subDropped                  // subscribed, then its connection closed before the end
)

// subscriber is one subscription, on its own connection.
type subscriber struct {
	f     *fanout      // never nil
	node  int          // index of its target; immutable
	req   []byte       // its topic_subscribe message, unmasked; immutable, shared
	state atomic.Int32 // a sub* state; atomic only

	// Owned by its event loop while the loops run, by RunFanout after.
	fail    string     // why it failed (Sub* constants); set by who moved state to subFailed
	errText string     // the refusal's or the error's text, for the report
	prefix  []byte     // a notification of its subscription, up to its result
	id      string     // its subscription id
	seen    []uint64   // bit per sequence number received; a part of one slab
	high    int64      // the highest sequence number received, -1 for none
	dups    int64      // deliveries of a sequence number already received
	ooo     int64      // deliveries after one with a higher sequence number
	invalid int64      // notifications not understood, or of a sequence number never published
	slow    int64      // notifications not in the form scanNotification reads
	chunk   []byte     // a fragmented message's payload so far
	stats   *loopStats // its event loop's, for its node; set on first traffic
	// deflate: its connection negotiated permessage-deflate; set before
	// it is enrolled. chunkDeflated: the message in chunk had RSV1 set.
	deflate, chunkDeflated bool
}

// setFailed marks a subscriber that has not reached the event loops as
// failed.
func (s *subscriber) setFailed(kind string, err error) {
	s.fail = kind
	if err != nil {
		s.errText = err.Error()
	}
	s.state.Store(subFailed)
}

// statsKey names a loopStats: an event loop and a node.
type statsKey struct {
	el   gnet.EventLoop
	node int
}

// loopStats are the measurements of one event loop's subscribers of one
// node.
type loopStats struct {
	node      int                     // immutable
	delivered atomic.Int64            // deliveries, not counting duplicates; written by its loop only
	hist      *hdrhistogram.Histogram // delivery latency, µs; its loop's only
	last      int64                   // the latest delivery, unix ns; its loop's only
	wireIn    int64                   // bytes read by its subscribers after they subscribed; its loop's only
	messages  int64                   // messages read by its subscribers after they subscribed; its loop's only
	deflated  int64                   // of those, the compressed ones (inflated); its loop's only
	dec       decoder                 // inflates its subscribers' compressed messages; its loop's only
}

func newLoopStats(node int) *loopStats {
	return &loopStats{node: node, hist: hdrhistogram.New(histMin, histMax, histDigits)}
}

// appendSubscribe appends a topic_subscribe message for the topic, a JSON
// string.
func appendSubscribe(dst, topic []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":"`+fanoutSubscribe+`","params":[`...)
	dst = append(dst, topic...)
	return append(dst, `],"id":1}`...)
}

// appendClientFrame appends payload as a masked final frame of op.
func appendClientFrame(dst []byte, op ws.OpCode, payload []byte) []byte {
	head := len(dst)
	dst = appendWSHeader(dst, len(payload)) // a text frame's
	dst[head] = 0x80 | byte(op)
	start := len(dst)
	dst = append(dst, payload...)
	ws.Cipher(dst[start:], wsMask, 0)
	return dst
}

// frameStatus says what nextFrame found.
type frameStatus int8

const (
	frameOK   frameStatus = iota
	frameMore             // a partial frame: wait for more bytes
	frameBad              // a protocol error: drop the connection
)

// nextFrame parses the server frame at the start of b: its final bit,
// its RSV1 bit (a compressed message's first frame: only when deflate,
// the connection negotiated permessage-deflate, and only on a data
// frame), opcode and payload (aliasing b), and its size in b.
func nextFrame(b []byte, deflate bool) (fin, rsv1 bool, op ws.OpCode, payload []byte, size int, st frameStatus) {
	if len(b) < 2 {
		return false, false, 0, nil, 0, frameMore
	}
	fin, rsv1, op = b[0]&0x80 != 0, b[0]&0x40 != 0, ws.OpCode(b[0]&0x0f)
	if b[1]&0x80 != 0 || b[0]&0x30 != 0 {
		return false, false, 0, nil, 0, frameBad // servers never mask, nor use RSV2 or RSV3 unasked
	}
	if rsv1 && (!deflate || (op != ws.OpText && op != ws.OpBinary)) {
		return false, false, 0, nil, 0, frameBad // RFC 7692 6: RSV1 only on a data message's first frame, once negotiated
	}
	n, hl := uint64(b[1]&0x7f), 2
	switch n {
	case 126:
		if len(b) < 4 {
			return false, false, 0, nil, 0, frameMore
		}
		n, hl = uint64(binary.BigEndian.Uint16(b[2:4])), 4
	case 127:
		if len(b) < 10 {
			return false, false, 0, nil, 0, frameMore
		}
		n, hl = binary.BigEndian.Uint64(b[2:10]), 10
	}
	if n > maxMessage || (op.IsControl() && (n > 125 || !fin)) {
		return false, false, 0, nil, 0, frameBad // RFC 6455 5.5: control frames are short and whole
	}
	if uint64(len(b)-hl) < n {
		return false, false, 0, nil, 0, frameMore
	}
	size = hl + int(n)
	return fin, rsv1, op, b[hl:size], size, frameOK
}

// fanoutClient is the gnet event handler of the subscribers.
type fanoutClient struct {
	gnet.BuiltinEventEngine
	f *fanout
}

// OnOpen sends the subscriber's topic_subscribe. Event loop only.
func (fc *fanoutClient) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	s, _ := c.Context().(*subscriber)
	if s == nil {
		return nil, gnet.Close
	}
	return appendClientFrame(nil, ws.OpText, s.req), gnet.None
}

// OnTraffic reads the whole frames in the inbound buffer. Event loop only.
func (fc *fanoutClient) OnTraffic(c gnet.Conn) gnet.Action {
	s, _ := c.Context().(*subscriber)
	if s == nil {
		return gnet.Close
	}
	if s.stats == nil {
		s.stats = fc.f.statsFor(c.EventLoop(), s.node)
	}
	in, _ := c.Peek(-1)
	now := time.Now().UnixNano()
	subscribed := s.state.Load() == subSubscribed
	used, act := s.consume(c, in, now)
	if subscribed {
		s.stats.wireIn += int64(used)
	}
	if used > 0 { // gnet's Discard(0) discards everything
		_, _ = c.Discard(used)
	}
	return act
}

// consume handles the whole frames at the start of in and returns the
// bytes they take. Event loop only.
func (s *subscriber) consume(c gnet.Conn, in []byte, now int64) (int, gnet.Action) {
	used := 0
	for {
		fin, rsv1, op, payload, size, st := nextFrame(in[used:], s.deflate)
		switch st {
		case frameMore:
			return used, gnet.None
		case frameBad:
			return used, gnet.Close
		}
		used += size
		switch op {
		case ws.OpText, ws.OpBinary:
			if fin {
				if !s.whole(payload, rsv1, now) {
					return used, gnet.Close
				}
				continue
			}
			s.chunk = append(s.chunk[:0], payload...)
			s.chunkDeflated = rsv1
		case ws.OpContinuation:
			s.chunk = append(s.chunk, payload...)
			if len(s.chunk) > maxMessage {
				return used, gnet.Close
			}
			if fin {
				ok := s.whole(s.chunk, s.chunkDeflated, now)
				s.chunk = s.chunk[:0]
				if !ok {
					return used, gnet.Close
				}
			}
		case ws.OpPing:
			if c != nil {
				_, _ = c.Write(appendClientFrame(nil, ws.OpPong, payload))
			}
		case ws.OpPong:
		default: // close, or an unknown opcode
			return used, gnet.Close
		}
	}
}

// whole handles one whole message, inflating it first when deflated;
// false when it does not inflate (the connection must be closed). Event
// loop only.
func (s *subscriber) whole(msg []byte, deflated bool, now int64) bool {
	subscribed := s.state.Load() == subSubscribed
	if subscribed {
		s.stats.messages++
	}
	if deflated {
		var err error
		if msg, err = s.stats.dec.inflate(msg); err != nil {
			s.invalid++
			return false
		}
		if subscribed {
			s.stats.deflated++
		}
	}
	s.message(msg, now)
	return true
}

// message handles one whole message. Event loop only.
func (s *subscriber) message(msg []byte, now int64) {
	switch s.state.Load() {
	case subSubscribed:
		s.deliver(msg, now)
	case subSubscribing:
		s.subscribe(msg)
	}
	// Failed (timed out) or dropped: nothing counts any more.
}

// subscribe handles the reply to topic_subscribe. Event loop only.
func (s *subscriber) subscribe(msg []byte) {
	var reply struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  *string         `json:"result"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	kind := ""
	switch err := json.Unmarshal(msg, &reply); {
	case err != nil, reply.JSONRPC != "2.0", string(reply.ID) != "1":
		kind = SubBadReply
	case reply.Error != nil:
		kind = SubRefused
	case reply.Result == nil:
		kind = SubBadReply
	}
	if kind != "" {
		if s.state.CompareAndSwap(subSubscribing, subFailed) {
			s.fail = kind
			s.errText = string(msg)
			if reply.Error != nil {
				s.errText = strconv.Itoa(reply.Error.Code) + " " + reply.Error.Message
			}
		}
		return
	}
	id, _ := json.Marshal(*reply.Result)
	s.id = *reply.Result
	s.prefix = append(append([]byte(`{"jsonrpc":"2.0","method":"`+fanoutNotification+`","params":{"subscription":`), id...), `,"result":`...)
	s.state.CompareAndSwap(subSubscribing, subSubscribed)
}

// deliver counts one notification received at now (unix ns). Event loop
// only. It allocates nothing for a notification in a jetrpc server's form.
func (s *subscriber) deliver(msg []byte, now int64) {
	seq, t, ok := scanNotification(msg, s.prefix)
	if !ok {
		s.slow++
		seq, t, ok = scanNotificationSlow(msg, s.id)
	}
	if !ok || seq < 0 || seq >= s.f.planned {
		s.invalid++
		return
	}
	word, bit := seq/64, uint64(1)<<(seq%64)
	if s.seen[word]&bit != 0 {
		s.dups++
		return
	}
	s.seen[word] |= bit
	if seq < s.high {
		s.ooo++
	} else {
		s.high = seq
	}
	st := s.stats
	st.delivered.Add(1)
	us := (now - t) / 1000
	_ = st.hist.RecordValue(min(max(us, histMin), histMax))
	st.last = max(st.last, now)
}

// scanNotification returns the sequence number and intended send time of
// msg, a notification whose bytes start with prefix (a jetrpc server's
// form, made by subscribe) and end with "}}"; ok is false to take the
// slow path (scanNotificationSlow).
func scanNotification(msg, prefix []byte) (seq, t int64, ok bool) {
	if len(msg) < len(prefix)+2 || msg[len(msg)-1] != '}' || msg[len(msg)-2] != '}' || !bytes.HasPrefix(msg, prefix) {
		return 0, 0, false
	}
	return scanPayload(msg[len(prefix) : len(msg)-2])
}

// scanPayload returns the "seq" and "t" numbers of a payload in the
// form the publisher writes, {"seq":N,"t":T} or {"seq":N,"t":T,"pad":"…"}
// (a pad without quote or backslash); ok is false for any other form.
func scanPayload(p []byte) (seq, t int64, ok bool) {
	const seqKey, tKey, padKey = `{"seq":`, `,"t":`, `,"pad":"`
	if !bytes.HasPrefix(p, []byte(seqKey)) {
		return 0, 0, false
	}
	seq, n := scanInt(p[len(seqKey):])
	p = p[len(seqKey)+n:]
	if n == 0 || !bytes.HasPrefix(p, []byte(tKey)) {
		return 0, 0, false
	}
	t, n = scanInt(p[len(tKey):])
	p = p[len(tKey)+n:]
	switch {
	case n == 0:
		return 0, 0, false
	case len(p) == 1 && p[0] == '}':
		return seq, t, true
	case len(p) >= len(padKey)+2 && bytes.HasPrefix(p, []byte(padKey)) && p[len(p)-2] == '"' && p[len(p)-1] == '}':
		pad := p[len(padKey) : len(p)-2]
		if bytes.IndexByte(pad, '"') < 0 && bytes.IndexByte(pad, '\\') < 0 {
			return seq, t, true
		}
	}
	return 0, 0, false
}

// scanInt parses the decimal int64 at the start of p, without sign or
// leading zero (but 0 itself), and returns it and its length; 0, 0 when
// there is none, or it overflows.
func scanInt(p []byte) (int64, int) {
	var v uint64
	n := 0
	for n < len(p) && n < 20 && p[n] >= '0' && p[n] <= '9' {
		v = v*10 + uint64(p[n]-'0')
		n++
	}
	switch {
	case n == 0, n > 19, v > math.MaxInt64, n > 1 && p[0] == '0':
		return 0, 0
	}
	return int64(v), n
}

// scanNotificationSlow decodes msg in full: a JSON-RPC 2.0 notification
// of method topic_subscription for subscription id, whose result holds
// integers seq and t.
func scanNotificationSlow(msg []byte, id string) (seq, t int64, ok bool) {
	var n struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		ID      any    `json:"id"`
		Params  struct {
			Subscription string `json:"subscription"`
			Result       struct {
				Seq *int64 `json:"seq"`
				T   *int64 `json:"t"`
			} `json:"result"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &n) != nil || n.JSONRPC != "2.0" || n.Method != fanoutNotification || n.ID != nil ||
		n.Params.Subscription != id || n.Params.Result.Seq == nil || n.Params.Result.T == nil {
		return 0, 0, false
	}
	return *n.Params.Result.Seq, *n.Params.Result.T, true
}

// OnClose counts a subscriber whose connection closed before the end.
// Event loop only.
func (fc *fanoutClient) OnClose(c gnet.Conn, _ error) gnet.Action {
	s, _ := c.Context().(*subscriber)
	if s == nil || fc.f.closing.Load() {
		return gnet.None
	}
	if s.state.CompareAndSwap(subSubscribing, subFailed) {
		s.fail = SubClosed
		return gnet.None
	}
	s.state.CompareAndSwap(subSubscribed, subDropped)
	return gnet.None
}
