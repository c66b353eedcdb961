package topics

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/internal/compact"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool"
)

// NOTE: Topics, the topics of one node: which local subscriptions listen
// to each topic, its broker subscriptions, and the publish paths that
// send at once (Publish, PublishRaw, and the broker's deliveries). A
// node holds one broker subscription per topic that has local
// subscribers, however many they are, and drops it when the last one
// leaves. A message is checked and compacted once per node, then sent to
// each local subscriber with Subscription.NotifyPrepared (fanout.go). The
// subscribers of a topic are a copy-on-write slice, read without a lock
// by every delivery. Enqueue's queues are in queue.go, the counters in
// stats.go.

// Topics holds the topics of one node: which local subscriptions listen
// to each, and the node's broker subscriptions. Make it with New; its
// methods are safe from any goroutine.
type Topics struct {
	broker Broker       // nil: one node; immutable
	log    *slog.Logger // never nil; immutable

	mu     sync.Mutex
	topics map[string]*topic // topics with local subscribers; guarded by mu

	delivered atomic.Uint64 // notifications queued to local subscribers
	dropped   atomic.Uint64 // notifications refused by a connection (closed, or too slow)
	received  atomic.Uint64 // messages received from the broker
	invalid   atomic.Uint64 // messages received from the broker that were not one JSON value
	published atomic.Uint64 // messages published here
	failed    atomic.Uint64 // publications the broker refused
	failing   atomic.Bool   // the last queued publication was refused (its failure was logged)

	shards      []pubShard   // Enqueue's queues (queue.go); immutable after New
	backlog     atomic.Int64 // bytes in them
	backlogMax  int64        // WithPublishBacklog; immutable after New
	backlogFull atomic.Uint64
}

// buffers hold the messages of topics while they are encoded and fanned
// out. Not a pool.Buffers: bytebufferpool drops every buffer larger than
// 95% of those put back, so that the messages of a topic larger than
// most (or than the replies) would allocate at every fan-out. Get with
// getBuffer, give back with putBuffer.
var buffers = sync.Pool{New: func() any { return new([]byte) }}

// getBuffer returns an empty buffer, which must be given back with
// putBuffer.
func getBuffer() *[]byte {
	b := buffers.Get().(*[]byte)
	*b = (*b)[:0]
	return b
}

// putBuffer gives b back, unless it is over pool.DefaultMaxPooled; b
// and its bytes must not be used after.
func putBuffer(b *[]byte) {
	if cap(*b) <= pool.DefaultMaxPooled {
		buffers.Put(b)
	}
}

// topic is one topic with local subscribers.
type topic struct {
	name  string
	subs  atomic.Pointer[[]*handler.Subscription] // copy-on-write; writers hold Topics.mu
	ready chan struct{}                           // closed once the broker subscription is made (or failed)
	stop  func()                                  // ends the broker subscription; set before ready is closed, nil without one
	err   error                                   // the broker's refusal; set before ready is closed
}

// New returns the topics of a node that shares them with other nodes
// through b; a nil b makes a single node (in-process fan-out only). log
// receives broker errors; nil means slog.Default().
func New(b Broker, log *slog.Logger, opts ...Option) *Topics {
	if log == nil {
		log = slog.Default()
	}
	h := &Topics{broker: b, log: log, topics: map[string]*topic{}, backlogMax: DefaultPublishBacklog}
	for _, o := range opts {
		o(h)
	}
	h.newShards()
	return h
}

// lookup returns the topic name with local subscribers, nil for none.
func (h *Topics) lookup(name string) *topic {
	h.mu.Lock()
	t := h.topics[name]
	h.mu.Unlock()
	return t
}

// Subscribe binds s to the topic name: from now on, until s ends, every
// message published on it — here with Publish, or on another node — is
// sent to s's client as one notification of s, whose result is the
// message. The first local subscriber of a topic makes the node's broker
// subscription; when the last one ends, it is dropped. It returns
// ErrInvalidTopic for a name Valid refuses, handler.ErrConnClosed when s
// has ended, and the broker's error, as an *Error (s is then not bound).
// A subscription may be bound to several topics; binding it twice to one
// delivers each message twice. It waits for the broker's first
// subscription to the topic (a network round trip, for NATS).
func (h *Topics) Subscribe(s *handler.Subscription, name string) error {
	if !Valid(name) {
		return ErrInvalidTopic
	}
	if s.Context().Err() != nil {
		return handler.ErrConnClosed
	}
	h.mu.Lock()
	t := h.topics[name]
	made := t == nil
	if made {
		t = &topic{name: name, ready: make(chan struct{})}
		empty := []*handler.Subscription{}
		t.subs.Store(&empty)
		h.topics[name] = t
	}
	h.addLocked(t, s) // local messages reach s at once, while the broker subscribes
	h.mu.Unlock()
	if made {
		h.subscribeBroker(t)
	} else {
		<-t.ready
	}
	if t.err != nil {
		h.remove(t, s)
		return &Error{Op: "subscribe", Topic: name, Err: t.err}
	}
	context.AfterFunc(s.Context(), func() { h.remove(t, s) })
	return nil
}

// subscribeBroker makes t's broker subscription, then closes t.ready. A
// panic of the broker is t's error: the subscribers waiting on t.ready
// must not wait forever, nor stay bound to a topic without one.
func (h *Topics) subscribeBroker(t *topic) {
	defer close(t.ready)
	if h.broker == nil {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			t.stop, t.err = nil, errBrokerPanicked
			h.log.Error("jetrpc: the broker panicked subscribing to a topic", "topic", t.name, "panic", r)
		}
	}()
	t.stop, t.err = h.broker.Subscribe(t.name, func(payload []byte) { h.receive(t, payload) })
}

// addLocked appends s to t's subscribers. h.mu must be held.
func (h *Topics) addLocked(t *topic, s *handler.Subscription) {
	old := *t.subs.Load()
	subs := make([]*handler.Subscription, len(old), len(old)+1)
	copy(subs, old)
	subs = append(subs, s)
	t.subs.Store(&subs)
}

// remove takes s out of t's subscribers (once: later calls do nothing)
// and drops the topic, and its broker subscription, after the last one.
func (h *Topics) remove(t *topic, s *handler.Subscription) {
	h.mu.Lock()
	old := *t.subs.Load()
	i := 0
	for i < len(old) && old[i] != s {
		i++
	}
	if i == len(old) {
		h.mu.Unlock()
		return
	}
	subs := make([]*handler.Subscription, 0, len(old)-1)
	subs = append(subs, old[:i]...)
	subs = append(subs, old[i+1:]...)
	t.subs.Store(&subs)
	last := len(subs) == 0 && h.topics[t.name] == t
	if last {
		delete(h.topics, t.name)
	}
	h.mu.Unlock()
	if last {
		<-t.ready // a failed Subscribe removes its s before the broker has answered
		if t.stop != nil {
			t.stop()
		}
	}
}

// Publish sends payload, encoded once as handler.AppendJSON does (Raw
// and json.RawMessage after a validity check, compacted), to every
// subscription bound to the topic name: this node's own at once, and,
// through the broker, those of the other nodes. It returns the number
// of local subscribers whose connections took the notification. A
// broker's refusal is returned, as an *Error, with that number (the
// local deliveries are made). Safe from any goroutine; it does not
// block on the local subscribers (their connections queue), but a
// broker's Publish may (NATS while its buffer is full), so call it from
// a worker or a goroutine of your own, not from an inline method (which
// has Enqueue). Messages published from one goroutine reach each
// subscriber in order; those of concurrent Publish calls on one topic
// may reach two subscribers in two orders (Enqueue keeps one order).
func (h *Topics) Publish(name string, payload any) (int, error) {
	if !Valid(name) {
		return 0, ErrInvalidTopic
	}
	b := getBuffer()
	defer putBuffer(b)
	var err error
	if *b, err = handler.AppendJSON(*b, payload); err != nil {
		return 0, err
	}
	return h.publish(name, *b)
}

// PublishRaw is Publish of payload, one JSON value, without boxing it
// in an interface: it allocates nothing. An invalid payload is refused
// with an error and delivered to no one; an empty one is null.
func (h *Topics) PublishRaw(name string, payload []byte) (int, error) {
	if !Valid(name) {
		return 0, ErrInvalidTopic
	}
	b := getBuffer()
	defer putBuffer(b)
	var ok bool
	if *b, ok = compact.AppendValid(*b, payload); !ok {
		return 0, errInvalidPayload
	}
	return h.publish(name, *b)
}

// publish sends msg, one compact valid JSON value, to the topic name's
// local subscribers and to the broker.
func (h *Topics) publish(name string, msg []byte) (int, error) {
	h.published.Add(1)
	n := 0
	if t := h.lookup(name); t != nil {
		n = h.fanOut(t, msg)
	}
	if h.broker != nil {
		if err := h.broker.Publish(name, msg); err != nil {
			h.failed.Add(1)
			return n, &Error{Op: "publish", Topic: name, Err: err}
		}
	}
	return n, nil
}

// receive delivers a message from the broker to t's local subscribers.
func (h *Topics) receive(t *topic, payload []byte) {
	h.received.Add(1)
	if !parser.Valid(payload) {
		h.invalid.Add(1)
		h.log.Warn("jetrpc: a message from the broker is not one JSON value; dropped", "topic", t.name, "bytes", len(payload))
		return
	}
	// Compact, as Publish sends its own: a foreign publisher's newlines
	// would break the line framing of stream connections.
	b := getBuffer()
	*b = compact.Append(*b, payload)
	h.fanOut(t, *b)
	putBuffer(b)
}

// Local returns the number of local subscriptions bound to the topic
// name.
func (h *Topics) Local(name string) int {
	t := h.lookup(name)
	if t == nil {
		return 0
	}
	return len(*t.subs.Load())
}
