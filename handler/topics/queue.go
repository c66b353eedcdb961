package topics

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/jetrpc/jetrpc/handler/internal/compact"
)

// NOTE: Enqueue is the publish of inline methods. It copies the message
// into a queue and returns; a goroutine fans it out and hands it to the
// broker. The queues are shards by topic name (a topic always lands in
// the same one), each drained in order by at most one goroutine, started
// when its queue was empty and ending when it is empty again: a topic's
// messages are fanned out and published in the order Enqueue took them,
// and an event loop neither spends a large fan-out's time nor waits on a
// broker that holds a publication back. The goroutine is started from a
// func value made once per shard, so that starting it allocates nothing.
// The queues' limit (DefaultPublishBacklog, WithPublishBacklog: New's
// one Option) is here; their refusal, ErrPublishBacklog, in errors.go.

// DefaultPublishBacklog is the bytes of messages Enqueue holds before it
// refuses more (WithPublishBacklog).
const DefaultPublishBacklog = 64 << 20

// Option configures New.
type Option func(*Topics)

// WithPublishBacklog sets the bytes of messages (topic name and payload)
// Enqueue may hold waiting for their fan-out; 0 (or less) means
// DefaultPublishBacklog. Past it Enqueue answers ErrPublishBacklog. One
// message is always taken when none waits, whatever its size.
func WithPublishBacklog(bytes int) Option {
	return func(h *Topics) {
		h.backlogMax = DefaultPublishBacklog
		if bytes > 0 {
			h.backlogMax = int64(bytes)
		}
	}
}

// pubShard is one of Enqueue's queues.
type pubShard struct {
	h       *Topics
	mu      sync.Mutex
	q       []*[]byte // waiting messages, from head on: len(name) (1 byte), name, payload
	head    int
	running bool   // a goroutine drains q
	run     func() // drain, made once
}

// newShards makes h's queues: as many as the processors, up to 64.
func (h *Topics) newShards() {
	h.shards = make([]pubShard, min(max(runtime.GOMAXPROCS(0), 1), 64))
	for i := range h.shards {
		sh := &h.shards[i]
		sh.h = h
		sh.run = sh.drain
	}
}

// Enqueue publishes payload, one JSON value, on the topic name as
// PublishRaw does, but without waiting: it copies the message into the
// topic's queue and returns the number of local subscribers it will be
// offered to (those bound when it is fanned out, a moment later, receive
// it). A goroutine fans the queued messages of a topic out and hands
// them to the broker in the order Enqueue took them, so that the
// messages one connection publishes from an inline method (which runs
// them in the order they arrive) reach every subscriber in that order.
// It refuses, and queues nothing: a name Valid refuses
// (ErrInvalidTopic), a payload that is not one JSON value, and any
// message while the queues hold the publish backlog (ErrPublishBacklog).
// A broker's refusal comes later: it is counted in Stats.PublishFail
// and logged. It allocates nothing in steady state.
func (h *Topics) Enqueue(name string, payload []byte) (int, error) {
	if !Valid(name) {
		return 0, ErrInvalidTopic
	}
	b := getBuffer()
	*b = append(*b, byte(len(name)))
	*b = append(*b, name...)
	var ok bool
	if *b, ok = compact.AppendValid(*b, payload); !ok {
		putBuffer(b)
		return 0, errInvalidPayload
	}
	size := int64(len(*b))
	if n := h.backlog.Add(size); n > h.backlogMax && n != size {
		h.backlog.Add(-size)
		h.backlogFull.Add(1)
		putBuffer(b)
		return 0, ErrPublishBacklog
	}
	h.published.Add(1)
	local := h.Local(name)
	sh := &h.shards[topicHash(name)%uint32(len(h.shards))]
	sh.mu.Lock()
	if sh.head > 0 && len(sh.q) == cap(sh.q) { // reuse the drained front instead of growing
		n := copy(sh.q, sh.q[sh.head:])
		clear(sh.q[n:])
		sh.q, sh.head = sh.q[:n], 0
	}
	sh.q = append(sh.q, b)
	start := !sh.running
	sh.running = true
	sh.mu.Unlock()
	if start {
		go sh.run()
	}
	return local, nil
}

// drain sends sh's messages in order until it is empty.
func (sh *pubShard) drain() {
	h := sh.h
	for {
		sh.mu.Lock()
		if sh.head == len(sh.q) {
			sh.q, sh.head, sh.running = sh.q[:0], 0, false
			sh.mu.Unlock()
			return
		}
		b := sh.q[sh.head]
		sh.q[sh.head] = nil
		sh.head++
		sh.mu.Unlock()

		msg := *b
		n := int(msg[0])
		name := unsafe.String(&msg[1], n) // valid until b is given back, after the broker's Publish returned
		t := h.lookup(name)
		if t != nil {
			h.fanOut(t, msg[1+n:])
		}
		if h.broker != nil {
			h.brokerPublished(name, h.broker.Publish(name, msg[1+n:]))
		}
		h.backlog.Add(-int64(len(msg)))
		putBuffer(b)
	}
}

// brokerPublished counts and logs the outcome of a queued message's
// publication: the first failure after a success is logged, and the
// first success after failures, not every failure of an outage.
func (h *Topics) brokerPublished(name string, err error) {
	if err == nil {
		if h.failing.Load() && h.failing.CompareAndSwap(true, false) {
			h.log.Info("jetrpc: the broker takes publications again")
		}
		return
	}
	h.failed.Add(1)
	if h.failing.CompareAndSwap(false, true) {
		h.log.Error("jetrpc: the broker refuses publications; their local deliveries are made, further failures are counted until one succeeds", "topic", name, "err", err)
	}
}

// topicHash is FNV-1a of name.
func topicHash(name string) uint32 {
	x := uint32(2166136261)
	for i := 0; i < len(name); i++ {
		x ^= uint32(name[i])
		x *= 16777619
	}
	return x
}
