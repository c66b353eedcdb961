package handler

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool"
)

// NOTE: the subscribe pattern of geth and most JSON-RPC push APIs:
// <ns>_subscribe answers a subscription id, then the server sends
// {"jsonrpc":"2.0","method":"<ns>_subscription","params":{"subscription":ID,"result":…}}
// until <ns>_unsubscribe [ID] or the connection closes. The notifications
// never precede the subscribe reply: Conn.Send holds a message until the
// replies of the requests received before it are written.
//
// Limits: the namespaces of a table share one subLimits (made by the
// first RegisterSubscription, found through Table.subs), which holds the
// live subscriptions of every namespace and counts them, per connection
// and in all, under one mutex. A subscription's entry in its namespace's
// live map is its slot: add puts it there if the limits allow, and
// remove takes it out, once, whichever of unsubscribe, Unsubscribe, a
// failed start or the end of the connection comes first.

// Subscription is one client's subscription, made by a subscribe method
// registered with RegisterSubscription. Its methods are safe from any
// goroutine.
type Subscription struct {
	id     string
	method string // <ns>_subscription
	conn   Conn
	ctx    context.Context
	cancel context.CancelFunc
	reg    *subscriptions
	mu     sync.Mutex // a notification is checked and queued, or the subscription ended: not both at once

	prefixOnce sync.Once
	prefix     []byte // {"jsonrpc":"2.0","method":M,"params":{"subscription":ID,"result": — made by the first NotifyRaw (prefixOnce), immutable after
}

// ID returns the subscription's id, as the client knows it.
func (s *Subscription) ID() string { return s.id }

// Context is done when the subscription ends: unsubscribed, ended by
// the server with Unsubscribe, or its connection closed.
func (s *Subscription) Context() context.Context { return s.ctx }

// Conn returns the connection the subscription sends to.
func (s *Subscription) Conn() Conn { return s.conn }

// Notify sends the client one notification of the subscription, result
// encoded as AppendJSON does. After the subscription has ended it
// returns ErrConnClosed; see Conn.Send for the other errors. A client too
// slow to read is disconnected, which ends all of its subscriptions.
//
// A notification queued before an unsubscribe completed may reach the
// client just after the unsubscribe reply, never after the reply to a
// later request (clients drop notifications of ids they no longer hold,
// as geth's does).
func (s *Subscription) Notify(result any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		return ErrConnClosed
	}
	return Notify(s.conn, s.method, subscriptionParams{s.id, result})
}

// makePrefix makes s.prefix: a notification of s without its result
// and the closing "}}".
func (s *Subscription) makePrefix() {
	b := make([]byte, 0, 80+len(s.method)+len(s.id))
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = parser.AppendQuote(b, s.method)
	b = append(b, `,"params":{"subscription":`...)
	b = parser.AppendQuote(b, s.id)
	s.prefix = append(b, `,"result":`...)
}

// NotifyRaw sends the client one notification of the subscription
// whose result is result, as it is: result must be one valid JSON value
// without whitespace outside its strings, and is not checked (as for
// Conn.Send), so that a message checked and compacted once can be sent
// to many subscriptions — package handler/topics does. Its errors, and
// its order with an unsubscribe, are Notify's. result is not kept after
// it returns. It allocates nothing in steady state (the first call makes
// the notification's fixed head).
func (s *Subscription) NotifyRaw(result []byte) error {
	s.prefixOnce.Do(s.makePrefix)
	b := getNotifyBuffer()
	*b = append(*b, s.prefix...)
	*b = append(*b, result...)
	*b = append(*b, notifySuffix...)
	err := s.send(*b)
	putNotifyBuffer(b)
	return err
}

// notifySuffix closes a notification after its result.
var notifySuffix = []byte("}}")

// NotifyPrepared sends the client one notification of the subscription
// whose result is p's payload, as NotifyRaw does (the payload is one
// valid compact JSON value, not checked), with NotifyRaw's errors and
// order. When the connection is a PreparedSender (the engine's are), the
// payload is not copied per subscription, and a WebSocket client that
// negotiated permessage-deflate gets p's bytes compressed once for all
// the subscriptions it is sent to; package handler/topics sends every
// published message so. p must hold a reference during the call; it is
// retained while the message is queued. It allocates nothing in steady
// state.
func (s *Subscription) NotifyPrepared(p *Prepared) error {
	ps, ok := s.conn.(PreparedSender)
	if !ok {
		return s.NotifyRaw(p.Payload())
	}
	s.prefixOnce.Do(s.makePrefix)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		return ErrConnClosed
	}
	return ps.SendPrepared(s.prefix, p, notifySuffix)
}

// send queues msg, a whole notification of s, unless s has ended.
func (s *Subscription) send(msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		return ErrConnClosed
	}
	return s.conn.Send(msg)
}

// notifyBuffers hold the notifications of NotifyRaw while they are
// queued. Not a pool.Buffers: bytebufferpool drops every buffer larger
// than 95% of those put back, so that a topic's messages larger than
// most (or than the replies) would allocate at every delivery. Get with
// getNotifyBuffer, give back with putNotifyBuffer.
var notifyBuffers = sync.Pool{New: func() any { return new([]byte) }}

// getNotifyBuffer returns an empty buffer, which must be given back
// with putNotifyBuffer.
func getNotifyBuffer() *[]byte {
	b := notifyBuffers.Get().(*[]byte)
	*b = (*b)[:0]
	return b
}

// putNotifyBuffer gives b back, unless it is over pool.DefaultMaxPooled;
// b and its bytes must not be used after.
func putNotifyBuffer(b *[]byte) {
	if cap(*b) <= pool.DefaultMaxPooled {
		notifyBuffers.Put(b)
	}
}

// Unsubscribe ends the subscription from the server's side. The client
// is not told; later notifications are refused.
func (s *Subscription) Unsubscribe() { s.end() }

// end gives back the subscription's slot and ends its context.
func (s *Subscription) end() {
	s.reg.remove(s)
	s.mu.Lock() // wait for a notification being queued
	s.cancel()
	s.mu.Unlock()
}

// subscriptionParams is {"subscription":ID,"result":R}.
type subscriptionParams struct {
	id     string
	result any
}

// AppendJSON implements JSONAppender.
func (p subscriptionParams) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"subscription":`...)
	dst = parser.AppendQuote(dst, p.id)
	dst = append(dst, `,"result":`...)
	dst, err := AppendJSON(dst, p.result)
	if err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// subscriptions are the live subscriptions of one namespace.
type subscriptions struct {
	lim  *subLimits               // shared by the table's namespaces; immutable, never nil
	live map[string]*Subscription // by id; guarded by lim.mu
}

// subLimits counts the live subscriptions of a table, all namespaces
// together, against Options.MaxSubscriptionsPerConn and
// Options.MaxSubscriptions.
type subLimits struct {
	perConn, total       int    // the limits; immutable
	errPerConn, errTotal *Error // the replies past them; immutable
	mu                   sync.Mutex
	n                    int          // live subscriptions; guarded by mu
	refused              uint64       // subscribe calls refused for the limits; guarded by mu
	byConn               map[Conn]int // live subscriptions of each connection, never 0 (the entry is deleted); guarded by mu
}

func newSubLimits(o *Options) *subLimits {
	return &subLimits{
		perConn:    o.MaxSubscriptionsPerConn,
		total:      o.MaxSubscriptions,
		errPerConn: NewError(parser.CodeTooManySubscriptions, "Too many subscriptions: "+strconv.Itoa(o.MaxSubscriptionsPerConn)+" per connection"),
		errTotal:   NewError(parser.CodeTooManySubscriptions, "Too many subscriptions: the server holds "+strconv.Itoa(o.MaxSubscriptions)),
		byConn:     map[Conn]int{},
	}
}

// add takes a slot for s, which must not be live yet: it makes s live
// and returns nil, or returns the error of the limit that refuses it.
func (r *subscriptions) add(s *Subscription) *Error {
	l := r.lim
	l.mu.Lock()
	defer l.mu.Unlock()
	k := l.byConn[s.conn]
	switch {
	case k >= l.perConn:
		l.refused++
		return l.errPerConn
	case l.n >= l.total:
		l.refused++
		return l.errTotal
	}
	for r.live[s.id] != nil { // 128 random bits: never, but a slot must not be overwritten
		s.id = newSubscriptionID()
	}
	r.live[s.id] = s
	l.byConn[s.conn] = k + 1
	l.n++
	return nil
}

// remove gives back the slot of s if it is live; calls after the first
// do nothing.
func (r *subscriptions) remove(s *Subscription) {
	l := r.lim
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.live[s.id] != s {
		return
	}
	delete(r.live, s.id)
	l.n--
	if k := l.byConn[s.conn] - 1; k > 0 {
		l.byConn[s.conn] = k
	} else {
		delete(l.byConn, s.conn)
	}
}

// lookup returns the live subscription id, or nil.
func (r *subscriptions) lookup(id string) *Subscription {
	r.lim.mu.Lock()
	defer r.lim.mu.Unlock()
	return r.live[id]
}

// RegisterSubscription registers <ns>_subscribe and <ns>_unsubscribe.
//
// A <ns>_subscribe request with params P creates a Subscription and
// calls start with it; if start returns nil, the client gets the
// subscription's id (a string, as geth makes them: "0x" and 32 hex
// digits), else start's error. start must not block: it typically starts
// a goroutine, or adds the subscription to a list fed by an event source,
// which calls sub.Notify until sub.Context() is done. Notifications sent
// by start itself reach the client after the subscribe reply.
//
// <ns>_unsubscribe with params [id] ends the subscription and answers
// true; an id that this connection does not hold is answered
// ErrSubscriptionNotFound. A subscription also ends when its connection
// closes. Over HTTP, subscribe is answered ErrNotificationsUnsupported.
// opts apply to <ns>_subscribe (Notifies among them declares the type
// of the notifications' result, for discovery); <ns>_unsubscribe is
// inline. The table's CallTimeout does not apply to <ns>_subscribe (start
// must not block); given a Timeout in opts, a subscribe whose start ends
// past it is answered parser.CodeDeadline and its subscription ended.
//
// The live subscriptions of all the table's namespaces count together
// against Options.MaxSubscriptionsPerConn (per connection) and
// Options.MaxSubscriptions (in all): a subscribe past either is answered
// parser.CodeTooManySubscriptions (errors.Is ErrTooManySubscriptions), with the
// message "Too many subscriptions: N per connection" or "Too many
// subscriptions: the server holds N", and start is not called. A
// subscription's slot is given back when it ends, however it ends: on
// unsubscribe, Unsubscribe, start's error or panic, or its connection's
// close.
func RegisterSubscription[P any](t *Table, ns string, start func(ctx context.Context, p P, sub *Subscription) error, opts ...MethodOption) {
	if err := registerSubscription(t, ns, start, opts...); err != nil {
		panic(err)
	}
}

// registerSubscription is RegisterSubscription returning the error: both
// methods are registered, or neither.
func registerSubscription[P any](t *Table, ns string, start func(ctx context.Context, p P, sub *Subscription) error, opts ...MethodOption) error {
	if start == nil {
		return fmt.Errorf("jetrpc: subscription namespace %q: nil start function", ns)
	}
	return registerSubscriptions(t, ns, "", opts, func(reg *subscriptions, names SubscriptionNames, sopts []MethodOption) error {
		return register(t, names.Subscribe, subscribeFunc(reg, names.Notification, start), sopts)
	})
}

// registerSubscriptions registers the methods of the subscription
// namespace ns: addSubscribe registers its subscribe method, with the
// options it is given (desc its default description, "" for the
// usual), and registerSubscriptions its unsubscribe method. Both are
// registered, or neither.
func registerSubscriptions(t *Table, ns, desc string, opts []MethodOption, addSubscribe func(reg *subscriptions, names SubscriptionNames, opts []MethodOption) error) error {
	if ns == "" {
		return fmt.Errorf("jetrpc: subscription namespace is empty")
	}
	var cfg methodConfig
	for _, o := range opts {
		o(&cfg)
	}
	names := SubscriptionNames{Subscribe: ns + "_subscribe", Unsubscribe: ns + "_unsubscribe", Notification: ns + "_subscription"}
	if n := cfg.subNames; n != nil {
		names.Subscribe = cmp.Or(n.Subscribe, names.Subscribe)
		names.Unsubscribe = cmp.Or(n.Unsubscribe, names.Unsubscribe)
		names.Notification = cmp.Or(n.Notification, names.Notification)
	}
	if names.Subscribe == names.Unsubscribe {
		return fmt.Errorf("jetrpc: subscription namespace %q: subscribe and unsubscribe are both %q: %w", ns, names.Subscribe, ErrDuplicateName)
	}
	reg := &subscriptions{live: map[string]*Subscription{}} // lim set below, under t.mu
	unsubscribe := func(ctx context.Context, p [1]string) (bool, error) {
		c := Connection(ConnFrom(ctx))
		s := reg.lookup(p[0])
		if s == nil || c == nil || s.conn != c {
			return false, ErrSubscriptionNotFound
		}
		s.end()
		return true, nil
	}
	t.mu.Lock()
	if t.subs == nil {
		t.subs = map[string]*subscriptions{}
	}
	if t.subs[ns] != nil {
		t.mu.Unlock()
		return fmt.Errorf("jetrpc: subscription namespace %q: %w", ns, ErrDuplicateName)
	}
	reg.lim = t.subLimitsLocked()
	if reg.lim == nil {
		reg.lim = newSubLimits(&t.opts)
	}
	t.subs[ns] = reg
	t.mu.Unlock()
	// On failure nothing of the namespace is left (unless the table was
	// sealed meanwhile: then it is in use and must not change).
	undo := func(name string) {
		t.mu.Lock()
		if !t.sealed.Load() {
			delete(t.subs, ns)
			if name != "" {
				delete(t.methods, name)
			}
		}
		t.mu.Unlock()
	}
	// The table's CallTimeout does not apply to subscribe (start must not
	// block anyway): a subscription made after its call was answered
	// -32002 would hold its slot for nothing. A Timeout in opts does.
	base := []MethodOption{Description(cmp.Or(desc, "subscribe to "+ns+" notifications")), Timeout(0), subscription(ns, names, true)}
	if err := addSubscribe(reg, names, append(base, opts...)); err != nil {
		undo("")
		return err
	}
	if err := register(t, names.Unsubscribe, unsubscribe, []MethodOption{Inline(), Description("end a " + ns + " subscription"), ParamNames("id"), subscription(ns, names, false)}); err != nil {
		undo(names.Subscribe)
		return err
	}
	return nil
}

// subscribeFunc returns the method function of a subscribe method whose
// subscriptions live in reg, send notifications named notifyMethod, and
// are started by start.
func subscribeFunc[P any](reg *subscriptions, notifyMethod string, start func(ctx context.Context, p P, sub *Subscription) error) func(context.Context, P) (string, error) {
	return func(ctx context.Context, p P) (string, error) {
		// The connection's Conn: its notifications wait for this reply.
		c := Connection(ConnFrom(ctx))
		if c == nil || !c.CanPush() {
			return "", ErrNotificationsUnsupported
		}
		sctx, cancel := context.WithCancel(c.Context())
		s := &Subscription{id: newSubscriptionID(), method: notifyMethod, conn: c, ctx: sctx, cancel: cancel, reg: reg}
		if err := reg.add(s); err != nil {
			cancel()
			return "", err
		}
		// The connection closed (now or before add): give the slot back.
		context.AfterFunc(sctx, func() { reg.remove(s) })
		if h, ok := c.(StreamHolder); ok {
			// An event stream: it stays open for the notifications while
			// the subscription lives.
			if release, ok := h.Hold(); ok {
				context.AfterFunc(sctx, release)
			}
		}
		ok := false
		defer func() {
			if !ok { // start failed or panicked
				s.end()
			}
		}()
		if err := start(ctx, p, s); err != nil {
			return "", err
		}
		if err := ctx.Err(); err != nil {
			return "", err // past a Timeout given to subscribe: the client is told it failed, so it must not stay
		}
		ok = true
		return s.id, nil
	}
}

// Subscriptions returns the number of live subscriptions of namespace ns
// registered with RegisterSubscription on t, for tests and metrics. It is
// safe from any goroutine.
func (t *Table) Subscriptions(ns string) int {
	t.mu.Lock()
	reg := t.subs[ns]
	t.mu.Unlock()
	if reg == nil {
		return 0
	}
	return reg.count()
}

// SubscriptionCount returns the number of live subscriptions of all the
// namespaces of t together: the count Options.MaxSubscriptions bounds.
// It is safe from any goroutine.
func (t *Table) SubscriptionCount() int {
	n, _ := t.subscriptionCounts()
	return n
}

// subscriptionCounts returns the live subscriptions and the subscribe
// calls refused for the limits on them. Safe from any goroutine.
func (t *Table) subscriptionCounts() (live int, refused uint64) {
	t.mu.Lock()
	l := t.subLimitsLocked()
	t.mu.Unlock()
	if l == nil {
		return 0, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n, l.refused
}

// subLimitsLocked returns the limits shared by t's namespaces, nil if it
// has none yet. t.mu must be held.
func (t *Table) subLimitsLocked() *subLimits {
	for _, reg := range t.subs {
		return reg.lim
	}
	return nil
}

// count returns the number of live subscriptions of the namespace.
func (r *subscriptions) count() int {
	r.lim.mu.Lock()
	defer r.lim.mu.Unlock()
	return len(r.live)
}

// newSubscriptionID returns "0x" and 32 random hex digits.
func newSubscriptionID() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	var out [34]byte
	out[0], out[1] = '0', 'x'
	hex.Encode(out[2:], b[:])
	return string(out[:])
}
