package bench

// NOTE: the publisher of a fan-out test: one WebSocket connection of its
// own, written by run (an open loop: publish k at its intended time
// t0 + k/rate, however late the ones before it were) and read by a
// goroutine of its own (readReplies), which checks the replies and sums
// their local-delivery counts. Both share the connection's writes (pongs)
// under wmu. At 100 publishes a second nothing here needs to be
// allocation-free; the message is still built in one reused buffer.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/gobwas/ws"
)

// Kinds of publisher errors, as counted in FanoutResult.PublishErrors.
const (
	PubConnect   = "connect"       // could not connect
	PubWebSocket = "websocket"     // the WebSocket upgrade failed, a bad frame, or a close from the server
	PubTransport = "transport"     // a write failed, or the connection closed early
	PubError     = "error reply"   // topic_publish answered an error
	PubBadReply  = "bad reply"     // a reply that is not JSON-RPC, or whose result is not an integer
	PubUnknownID = "unknown id"    // a reply to no publish sent, or a second one
	PubMissing   = "missing reply" // a publish without a reply by the end of the drain
	PubUnsent    = "not sent"      // planned, and never sent (the connection failed first)
)

const (
	pubMethod   = `"` + fanoutPublish + `"`
	pubPadding  = `,"pad":""` // the padding's overhead in a payload
	pubReplyMax = 1 << 20     // a publish reply is an integer: anything longer is wrong
)

var errBadFrame = errors.New("a masked, reserved or oversized frame from the server")

// publisher is the fan-out test's publisher.
type publisher struct {
	f     *fanout // never nil
	t     target  // its node; immutable
	topic []byte  // the topic as a JSON string; immutable
	pad   string  // padding bytes; immutable

	conn       net.Conn      // set by run before readReplies starts; nil when it could not connect
	wmu        sync.Mutex    // held by a write to conn, and to use the fields below that readReplies shares
	closing    atomic.Bool   // conn is being closed by the run: a read error is not a failure
	finished   atomic.Bool   // run has sent its last publish
	readerDone chan struct{} // closed when readReplies returns

	sent  atomic.Int64 // publishes written
	acked atomic.Int64 // publishes answered (result or error), once each

	// Owned by run; t0 is set before readReplies starts, then immutable.
	t0         time.Time
	end        time.Time               // when the last publish was written, or publishing stopped
	lag        *hdrhistogram.Histogram // µs from a publish's intended time to its write
	body, wbuf []byte
	payload    int // bytes of the first payload

	// Shared by run and readReplies: guarded by wmu until readerDone is
	// closed.
	replied []uint64                // bit per publish answered
	results int64                   // the replies' local-delivery counts, summed
	ack     *hdrhistogram.Histogram // µs from a publish's intended time to its reply
	errs    map[string]int64        // errors by kind (Pub*)
	errText string                  // the first failure's text
}

func newPublisher(f *fanout, t target, topic []byte) *publisher {
	p := &publisher{
		f: f, t: t, topic: topic, readerDone: make(chan struct{}),
		lag:     hdrhistogram.New(histMin, histMax, histDigits),
		ack:     hdrhistogram.New(histMin, histMax, histDigits),
		replied: make([]uint64, (f.planned+63)/64),
		errs:    map[string]int64{},
	}
	if f.cfg.PayloadSize > 0 {
		p.pad = strings.Repeat("x", f.cfg.PayloadSize)
	}
	return p
}

// failedLocked counts an error of kind, and keeps the first one's text.
// p.wmu must be held, unless readReplies is not running.
func (p *publisher) failedLocked(kind, text string) {
	p.errs[kind]++
	if p.errText == "" {
		p.errText = kind + ": " + text
	}
}

// run connects and publishes every planned message at its intended time,
// until ctx is done or the connection fails.
func (p *publisher) run(ctx context.Context) {
	cfg := &p.f.cfg
	defer func() { p.end = time.Now(); p.finished.Store(true) }()
	nc, _, kind, err := cfg.dialWS(ctx, &p.t, false)
	if err != nil {
		if kind == SubWebSocket {
			kind = PubWebSocket
		} else {
			kind = PubConnect
		}
		p.failedLocked(kind, err.Error())
		close(p.readerDone)
		p.t0 = time.Now()
		p.errs[PubUnsent] += p.f.planned
		return
	}
	p.conn = nc
	p.t0 = time.Now()
	go p.readReplies()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for seq := int64(0); seq < p.f.planned; seq++ {
		intended := cfg.intended(p.t0, seq)
		if d := time.Until(intended); d > 0 {
			timer.Reset(d)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		} else if ctx.Err() != nil {
			return
		}
		p.wbuf = appendClientFrame(p.wbuf[:0], ws.OpText, p.message(seq, intended))
		p.sent.Add(1) // before the write: its reply may come before Write returns
		p.wmu.Lock()
		_ = nc.SetWriteDeadline(time.Now().Add(cfg.Timeout))
		_, err := nc.Write(p.wbuf)
		if err != nil {
			p.sent.Add(-1)
			p.failedLocked(PubTransport, err.Error())
			p.errs[PubUnsent] += p.f.planned - seq
		}
		p.wmu.Unlock()
		if err != nil {
			return
		}
		_ = p.lag.RecordValue(min(max(time.Since(intended).Microseconds(), histMin), histMax))
	}
}

// message builds publish seq, intended at intended: topic_publish
// [topic, {"seq":seq,"t":unix ns,"pad":"x…"}] with id seq+1.
func (p *publisher) message(seq int64, intended time.Time) []byte {
	b := append(p.body[:0], `{"jsonrpc":"2.0","method":`+pubMethod+`,"params":[`...)
	b = append(b, p.topic...)
	b = append(b, ',')
	start := len(b)
	b = append(b, `{"seq":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"t":`...)
	b = strconv.AppendInt(b, intended.UnixNano(), 10)
	if n := len(p.pad) - (len(b) - start) - len(pubPadding) - 1; n > 0 {
		b = append(b, `,"pad":"`...)
		b = append(b, p.pad[:n]...)
		b = append(b, '"')
	}
	b = append(b, '}')
	if p.payload == 0 {
		p.payload = len(b) - start
	}
	b = append(b, `],"id":`...)
	b = strconv.AppendInt(b, seq+1, 10)
	p.body = append(b, '}')
	return p.body
}

// readReplies reads the publisher's connection until it closes: replies
// are checked and counted, pings answered.
func (p *publisher) readReplies() {
	defer close(p.readerDone)
	br := bufio.NewReaderSize(p.conn, 64<<10)
	var buf, msg []byte
	for {
		h, err := ws.ReadHeader(br)
		if err == nil && (h.Masked || h.Length > pubReplyMax || h.Rsv != 0) {
			err = errBadFrame
		}
		if err == nil {
			if int64(cap(buf)) < h.Length {
				buf = make([]byte, h.Length)
			}
			buf = buf[:h.Length]
			_, err = io.ReadFull(br, buf)
		}
		if err != nil {
			if !p.over() {
				p.wmu.Lock()
				p.failedLocked(PubTransport, "reading replies: "+err.Error())
				p.wmu.Unlock()
			}
			return
		}
		switch h.OpCode {
		case ws.OpPing:
			pong := appendClientFrame(nil, ws.OpPong, buf)
			p.wmu.Lock()
			_, _ = p.conn.Write(pong)
			p.wmu.Unlock()
			continue
		case ws.OpPong:
			continue
		case ws.OpText, ws.OpBinary:
			msg = append(msg[:0], buf...)
		case ws.OpContinuation:
			msg = append(msg, buf...)
		default: // a close, or an unknown opcode
			if !p.over() {
				p.wmu.Lock()
				p.failedLocked(PubWebSocket, "the server closed the connection")
				p.wmu.Unlock()
			}
			return
		}
		if len(msg) > pubReplyMax {
			msg = msg[:0]
			h.Fin = false // not a reply: dropped, and counted missing
		}
		if h.Fin {
			p.reply(msg, time.Now())
		}
	}
}

// reply checks one reply to a publish.
func (p *publisher) reply(msg []byte, now time.Time) {
	var r struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      *int64          `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if err := json.Unmarshal(msg, &r); err != nil || r.JSONRPC != "2.0" || r.ID == nil || (r.Result == nil) == (r.Error == nil) {
		p.failedLocked(PubBadReply, string(msg))
		return
	}
	seq := *r.ID - 1
	if seq < 0 || seq >= p.sent.Load() {
		p.failedLocked(PubUnknownID, string(msg))
		return
	}
	word, bit := seq/64, uint64(1)<<(seq%64)
	if p.replied[word]&bit != 0 {
		p.failedLocked(PubUnknownID, "a second reply: "+string(msg))
		return
	}
	p.replied[word] |= bit
	p.acked.Add(1)
	_ = p.ack.RecordValue(min(max(now.Sub(p.f.cfg.intended(p.t0, seq)).Microseconds(), histMin), histMax))
	if r.Error != nil {
		p.failedLocked(PubError, strconv.Itoa(r.Error.Code)+" "+r.Error.Message)
		return
	}
	n, err := strconv.ParseInt(string(r.Result), 10, 64)
	if err != nil {
		p.failedLocked(PubBadReply, "the result is not an integer: "+string(msg))
		return
	}
	p.results += n
}

// over reports whether the connection is no longer needed: the run is
// closing it, or every publish is sent and answered (a server may close
// a connection idle through a long drain). Safe from any goroutine.
func (p *publisher) over() bool {
	return p.closing.Load() || (p.finished.Load() && p.allAnswered())
}

// allAnswered reports whether every publish sent has its reply. Safe
// from any goroutine.
func (p *publisher) allAnswered() bool { return p.acked.Load() >= p.sent.Load() }

// close closes the connection and waits for readReplies; the publishes
// still unanswered count as missing.
func (p *publisher) close() {
	p.closing.Store(true)
	if p.conn != nil {
		_ = p.conn.Close()
	}
	<-p.readerDone
	if missing := p.sent.Load() - p.acked.Load(); missing > 0 {
		p.failedLocked(PubMissing, strconv.FormatInt(missing, 10)+" publishes unanswered")
	}
}
