package handler

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"sync"
)

// NOTE: the subscribe pattern of geth and most JSON-RPC push APIs:
// <ns>_subscribe answers a subscription id, then the server sends
// {"jsonrpc":"2.0","method":"<ns>_subscription","params":{"subscription":ID,"result":…}}
// until <ns>_unsubscribe [ID] or the connection closes. The notifications
// never precede the subscribe reply: Conn.Send holds a message until the
// replies of the requests received before it are written.

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

// Unsubscribe ends the subscription from the server's side. The client
// is not told; later notifications are refused.
func (s *Subscription) Unsubscribe() { s.end() }

// end removes the subscription from its namespace and ends its context.
func (s *Subscription) end() {
	s.reg.mu.Lock()
	delete(s.reg.live, s.id)
	s.reg.mu.Unlock()
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
	dst = AppendString(dst, p.id)
	dst = append(dst, `,"result":`...)
	dst, err := AppendJSON(dst, p.result)
	if err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// subscriptions are the live subscriptions of one namespace.
type subscriptions struct {
	mu   sync.Mutex
	live map[string]*Subscription
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
// opts apply to <ns>_subscribe; <ns>_unsubscribe is inline.
func RegisterSubscription[P any](t *Table, ns string, start func(ctx context.Context, p P, sub *Subscription) error, opts ...MethodOption) {
	if err := TryRegisterSubscription(t, ns, start, opts...); err != nil {
		panic(err)
	}
}

// TryRegisterSubscription is RegisterSubscription returning an error
// instead of panicking.
func TryRegisterSubscription[P any](t *Table, ns string, start func(ctx context.Context, p P, sub *Subscription) error, opts ...MethodOption) error {
	if ns == "" {
		return fmt.Errorf("jetrpc: subscription namespace is empty")
	}
	reg := &subscriptions{live: map[string]*Subscription{}}
	notifyMethod := ns + "_subscription"
	subscribe := func(ctx context.Context, p P) (string, error) {
		c := ConnFrom(ctx)
		if c == nil || !c.CanPush() {
			return "", ErrNotificationsUnsupported
		}
		sctx, cancel := context.WithCancel(c.Context())
		s := &Subscription{id: newSubscriptionID(), method: notifyMethod, conn: c, ctx: sctx, cancel: cancel, reg: reg}
		reg.mu.Lock()
		reg.live[s.id] = s
		reg.mu.Unlock()
		context.AfterFunc(sctx, func() {
			reg.mu.Lock()
			delete(reg.live, s.id)
			reg.mu.Unlock()
		})
		ok := false
		defer func() {
			if !ok { // start failed or panicked
				s.end()
			}
		}()
		if err := start(ctx, p, s); err != nil {
			return "", err
		}
		ok = true
		return s.id, nil
	}
	unsubscribe := func(ctx context.Context, p [1]string) (bool, error) {
		c := ConnFrom(ctx)
		reg.mu.Lock()
		s := reg.live[p[0]]
		reg.mu.Unlock()
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
	if err := TryRegister(t, ns+"_subscribe", subscribe, append([]MethodOption{Description("subscribe to " + ns + " notifications")}, opts...)...); err != nil {
		undo("")
		return err
	}
	if err := TryRegister(t, ns+"_unsubscribe", unsubscribe, Inline(), Description("end a "+ns+" subscription"), ParamNames("id")); err != nil {
		undo(ns + "_subscribe")
		return err
	}
	return nil
}

// Subscriptions returns the number of live subscriptions of namespace ns
// registered with RegisterSubscription on t, for tests and metrics.
func (t *Table) Subscriptions(ns string) int {
	t.mu.Lock()
	reg := t.subs[ns]
	t.mu.Unlock()
	if reg == nil {
		return 0
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	return len(reg.live)
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
