package bench

// NOTE: the reply checks. consume frames what a worker has read (HTTP
// responses, newline-delimited messages, or WebSocket frames in ws.go)
// and hands each reply to its check: over HTTP a reply answers the
// oldest request (checkHTTP); over a stream it may answer any request in
// flight, found by its first id (checkStream). match checks one reply
// object against its request: its id, its shape, error or result as the
// config or the workload's call expects, and no call answered twice.
// Each failure counts one error of its kind (errKinds), when measured.

import (
	"time"

	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/parser/http1"
)

// consume frames and checks the replies in rbuf, also those that come
// when nothing is in flight.
func (w *worker) consume() {
	used := 0
	if w.r.t.ws {
		var bad string
		if used, bad = w.consumeWS(w.rbuf); bad != "" {
			w.lost(bad)
			return
		}
		n := copy(w.rbuf, w.rbuf[used:])
		w.rbuf = w.rbuf[:n]
		return
	}
	for used < len(w.rbuf) {
		in := w.rbuf[used:]
		if w.r.t.http {
			if w.n == 0 {
				w.lost(ErrUnexpectedReply) // bytes no request asked for
				return
			}
			resp, ok, err := w.resp.Next(in)
			if err != nil {
				w.lost(ErrHTTPFraming)
				return
			}
			if !ok {
				break
			}
			used += resp.Size
			var encErr error
			if w.r.decode && len(resp.Body) > 0 {
				if k := contentCoding(in[:resp.Size]); k != codingNone {
					resp.Body, encErr = w.dec.decode(k, resp.Body)
					if encErr == nil {
						w.compressed++
					}
				}
			}
			w.checkHTTP(&resp, encErr)
			if resp.Close {
				// The server closes the connection after this reply (nginx
				// after keepalive_requests, a server that drains): not an
				// error, unless requests were in flight on it, which will
				// get no reply.
				if w.n > 0 {
					w.note(ErrTransport, errClosedInFlight)
					w.lost(ErrTransport)
				} else {
					w.drop()
				}
				return
			}
			continue
		}
		start, end, st := w.frame.Next(in)
		switch st {
		case parser.NeedMore:
			used += end
			goto done
		case parser.Complete:
		default:
			w.lost(ErrNotJSON)
			return
		}
		w.checkStream(in[start:end])
		used += end
	}
done:
	n := copy(w.rbuf, w.rbuf[used:])
	w.rbuf = w.rbuf[:n]
}

// checkHTTP checks the reply to the oldest request; only when w.n > 0.
// encErr is why its compressed body did not decode, or nil.
func (w *worker) checkHTTP(resp *http1.Response, encErr error) {
	q := w.oldest()
	switch {
	case encErr != nil && resp.Status == http1.StatusOK && q.holes > 0:
		w.note(ErrEncoding, encErr)
		w.fail(ErrEncoding, q.measured)
		q.failed = true // its calls are not also missing
	case q.holes == 0:
		if resp.Status != http1.StatusNoContent && (resp.Status != http1.StatusOK || len(resp.Body) != 0) {
			w.fail(ErrHTTPStatus, q.measured)
		}
	case resp.Status != http1.StatusOK:
		w.fail(ErrHTTPStatus, q.measured)
		q.failed = true // the status says it all: no "missing reply" on top
	case w.r.cfg.NoCheck:
		q.got = q.holes
	default:
		ok, array := eachReply(resp.Body, func(it replyItem) { w.match(q, it) })
		switch {
		case !ok:
			w.fail(ErrNotJSON, q.measured)
		case array != q.batch:
			w.fail(ErrShape, q.measured)
		}
	}
	w.finish()
}

// checkStream matches one reply message to its request, which on a
// stream need not be the oldest. A message with nothing in flight, or
// with a null id, is a reply to no request.
func (w *worker) checkStream(msg []byte) {
	if w.r.cfg.NoCheck {
		// One reply message per request, in order.
		if w.n == 0 {
			w.fail(ErrUnexpectedReply, w.r.measuring(time.Now())) // a message no request asked for
			return
		}
		w.oldest().got = w.oldest().holes
		w.finish()
		return
	}
	var target *inflight
	items := 0
	ok, array := eachReply(msg, func(it replyItem) {
		items++
		if target == nil {
			if it.idOK {
				target = w.find(it.id)
			}
			if target == nil {
				kind := ErrUnknownID
				if it.idNull || w.n == 0 {
					kind = ErrUnexpectedReply
				}
				w.fail(kind, w.r.measuring(time.Now()))
				return
			}
		}
		if it.idNull {
			w.fail(ErrUnexpectedReply, target.measured)
			return
		}
		w.match(target, it)
	})
	switch {
	case !ok:
		w.fail(ErrNotJSON, w.r.measuring(time.Now()))
		return
	case items == 0:
		w.fail(ErrNotJSONRPC, w.r.measuring(time.Now())) // an empty array answers nothing
		return
	case target == nil:
		return
	}
	if array != target.batch && !target.shaped {
		w.fail(ErrShape, target.measured)
		target.shaped = true
	}
	if array && target.batch {
		target.ended = true // a batch's reply is one message: what is missing now stays missing
	}
	// Requests complete in order of their last reply; finish the ones at
	// the head that are complete.
	for w.n > 0 && (w.oldest().got >= w.oldest().holes || w.oldest().ended) {
		w.finish()
	}
}

// match checks one reply object against the request q.
func (w *worker) match(q *inflight, it replyItem) {
	inRange := it.idOK && it.id >= q.first && it.id < q.first+uint64(q.holes)
	var spec *callSpec // the workload's call it answers
	var counts *methodCounts
	if inRange && w.r.specs != nil {
		si := w.r.msgs[q.msg].specs[it.id-q.first]
		spec, counts = &w.r.specs[si], &w.mstats[si]
	}
	expectError := w.r.cfg.ExpectError
	if spec != nil && spec.expect != nil {
		expectError = spec.expect.Error != nil
	}
	switch {
	case !it.valid:
		w.fail(ErrNotJSONRPC, q.measured)
		if !inRange {
			return
		}
	case !inRange:
		w.fail(ErrUnknownID, q.measured)
		return
	case it.isError && !expectError:
		w.fail(ErrUnexpectedError, q.measured)
	case !it.isError && expectError:
		w.fail(ErrUnexpectedOK, q.measured)
	case spec != nil && spec.expect != nil && (it.isError && it.code != *spec.expect.Error || !it.isError && !equalJSONText(it.result, spec.result)):
		w.fail(ErrWrongReply, q.measured)
		if q.measured {
			counts.wrong++
		}
	}
	if it.isError && it.valid && q.measured {
		w.countCode(it.code)
	}
	if counts != nil && q.measured && it.valid {
		counts.replies++
		if it.isError {
			counts.errors++
			counts.count(it.code)
		}
	}
	k := it.id - q.first
	word, bit := k/64, uint64(1)<<(k%64)
	if q.seen[word]&bit != 0 {
		w.fail(ErrDuplicate, q.measured)
		return
	}
	q.seen[word] |= bit
	q.got++
}
