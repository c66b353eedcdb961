package handler

// NOTE: the names of a subscription namespace's methods
// (SubscriptionMethods), and one subscribe method for several kinds of
// subscription (RegisterSubscriptionKinds), the shape of geth's
// eth_subscribe: ["newHeads"], ["logs", {filter}]. Each kind is compiled
// as the subscribe method of RegisterSubscription would be (a typed
// invoker, its params plan and codecs built at registration); the
// subscribe method's invoker, subscribeKinds, reads the kind from the
// first param, then lends the kind's invoker the request with the rest
// of the params as its params. Every kind shares the namespace's live
// subscriptions (and so the limits), its unsubscribe method and its
// notification method.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	"github.com/jetrpc/jetrpc/parser"
)

// SubscriptionNames names the three methods of a subscription
// namespace. An empty field keeps the default of the namespace ns.
type SubscriptionNames struct {
	// Subscribe is the method that makes subscriptions; <ns>_subscribe
	// by default.
	Subscribe string
	// Unsubscribe is the method that ends one, given its id;
	// <ns>_unsubscribe by default.
	Unsubscribe string
	// Notification is the method of the notifications the subscriptions
	// send; <ns>_subscription by default.
	Notification string
}

// SubscriptionMethods names the methods that RegisterSubscription or
// RegisterSubscriptionKinds (and so package handler/topics' Register)
// registers for a namespace, in place of <ns>_subscribe,
// <ns>_unsubscribe and <ns>_subscription, to speak an existing
// protocol's names (Solana's accountSubscribe, accountUnsubscribe and
// accountNotification, say). The namespace stays the subscriptions'
// identity (Table.Subscriptions, MethodInfo.Subscription); the
// notifications keep their params, {"subscription":ID,"result":…}.
// Given to any other registration, it makes that registration fail; a
// subscribe name equal to the unsubscribe name, or either taken, makes
// the subscription's registration fail.
func SubscriptionMethods(names SubscriptionNames) MethodOption {
	return func(c *methodConfig) { c.subNames = &names }
}

// SubscriptionKind is one kind of subscription of a subscribe method of
// RegisterSubscriptionKinds. Make it with NewSubscriptionKind; its zero
// value is refused at registration.
type SubscriptionKind struct {
	name string
	// compile compiles the kind for the subscribe method of t whose
	// subscriptions live in reg and send notifications named notify.
	compile func(t *Table, method string, reg *subscriptions, notify string) (invoker, SubscriptionKindInfo, error)
}

// SubscriptionKindInfo describes one kind of a subscribe method of
// RegisterSubscriptionKinds, for discovery (MethodInfo.Kinds).
type SubscriptionKindInfo struct {
	// Name is the kind's name, the first param of its subscribe calls.
	Name string
	// Params are the names of the params that follow the name: the
	// JSON names of P's fields in order; nil for a P that is not a
	// struct.
	Params []string
	// ParamsType is the kind's P; nil for a kind that takes no params
	// (P an empty struct or array).
	ParamsType reflect.Type
}

// NewSubscriptionKind returns the kind name, for
// RegisterSubscriptionKinds: a subscribe call whose first param is name
// decodes the rest of its params into a P, as Register decodes a
// method's params (by position only, since the kind comes first: a P
// struct takes its fields in order), then makes a Subscription and
// calls start with them, as RegisterSubscription does. Params that do
// not fit P are answered -32602 naming the param ("param 2" for the
// first after the kind, in an array P). A kind without params takes
// struct{}: ["newHeads"]. P's constraints are Register's, checked at
// registration.
func NewSubscriptionKind[P any](name string, start func(ctx context.Context, p P, sub *Subscription) error) SubscriptionKind {
	compile := func(t *Table, method string, reg *subscriptions, notify string) (invoker, SubscriptionKindInfo, error) {
		if start == nil {
			return nil, SubscriptionKindInfo{}, fmt.Errorf("jetrpc: method %q: kind %q: nil start function", method, name)
		}
		mt, m, err := compileMethod(t, method, subscribeFunc(reg, notify, start), nil, false)
		if err != nil {
			return nil, SubscriptionKindInfo{}, fmt.Errorf("jetrpc: method %q: kind %q: %w", method, name, err)
		}
		// Count the params from the kind's name, the first (the plan
		// is this kind's own).
		for i := range m.pp.labels {
			m.pp.labels[i] = "param " + strconv.Itoa(i+2)
		}
		if m.pp.tooMany != "" {
			m.pp.tooMany = "too many params: kind " + strconv.Quote(name) + " takes " + strconv.Itoa(max(len(m.pp.fields), m.pp.n))
		}
		info := SubscriptionKindInfo{Name: name, Params: mt.info.Params, ParamsType: mt.info.ParamsType}
		if m.pp.shape == shapeNone {
			info.Params, info.ParamsType = nil, nil
		}
		return m, info, nil
	}
	return SubscriptionKind{name: name, compile: compile}
}

// RegisterSubscriptionKinds registers a subscription namespace, as
// RegisterSubscription does, whose one subscribe method serves several
// kinds of subscription — geth's shape: eth_subscribe ["newHeads"] or
// ["logs", {filter}], eth_unsubscribe [id], notifications
// eth_subscription. The first param of a subscribe call names the kind
// and the rest are that kind's params (see NewSubscriptionKind). A call
// whose params are not an array whose first element is a string is
// answered -32602 naming the param "kind"; a kind not registered is
// answered -32601 `no "K" subscription in NS namespace`, as geth does.
// The kinds share the namespace's unsubscribe and notification methods
// (SubscriptionMethods names them) and its live subscriptions, which
// count against the table's limits as RegisterSubscription's do. opts
// apply to the subscribe method, as RegisterSubscription's: Inline, a
// Timeout, Notifies and the rest apply to every kind.
//
// For discovery, the subscribe method takes params ["kind", "params"]
// (MethodInfo.ParamsType is []json.RawMessage, by position), its
// default description lists the kinds, and MethodInfo.Kinds describes
// each.
//
// It panics as RegisterSubscription does, and also when kinds is empty
// or two kinds have one name, or a kind is the zero SubscriptionKind,
// has an empty name or an unsupported P.
func RegisterSubscriptionKinds(t *Table, ns string, kinds []SubscriptionKind, opts ...MethodOption) {
	if err := registerSubscriptionKinds(t, ns, kinds, opts...); err != nil {
		panic(err)
	}
}

// registerSubscriptionKinds is RegisterSubscriptionKinds returning the
// error: both methods are registered, or neither.
func registerSubscriptionKinds(t *Table, ns string, kinds []SubscriptionKind, opts ...MethodOption) error {
	if len(kinds) == 0 {
		return fmt.Errorf("jetrpc: subscription namespace %q: no kinds", ns)
	}
	names := make([]string, 0, len(kinds))
	for _, k := range kinds {
		if k.compile == nil || k.name == "" {
			return fmt.Errorf("jetrpc: subscription namespace %q: a kind without a name (make kinds with NewSubscriptionKind)", ns)
		}
		for _, n := range names {
			if n == k.name {
				return fmt.Errorf("jetrpc: subscription namespace %q: kind %q: %w", ns, k.name, ErrDuplicateName)
			}
		}
		names = append(names, k.name)
	}
	desc := "subscribe to " + ns + " notifications of a kind: " + strings.Join(names, ", ")
	return registerSubscriptions(t, ns, desc, opts, func(reg *subscriptions, mn SubscriptionNames, sopts []MethodOption) error {
		sk := &subscribeKinds{ns: ns, kinds: make(map[string]invoker, len(kinds))}
		infos := make([]SubscriptionKindInfo, 0, len(kinds))
		for _, k := range kinds {
			inv, info, err := k.compile(t, mn.Subscribe, reg, mn.Notification)
			if err != nil {
				return err
			}
			sk.kinds[k.name] = inv
			infos = append(infos, info)
		}
		// Compiled for its options and discovery only: sk serves it.
		describe := func(context.Context, []json.RawMessage) (string, error) { return "", nil }
		mt, _, err := compileMethod(t, mn.Subscribe, describe, append([]MethodOption{ParamNames("kind", "params")}, sopts...), false)
		if err != nil {
			return err
		}
		mt.impl, mt.info.Kinds = sk, infos
		return t.add(mt)
	})
}

// subscribeKinds is the invoker of a subscribe method of
// RegisterSubscriptionKinds. Immutable.
type subscribeKinds struct {
	ns    string
	kinds map[string]invoker // by kind name
}

// maxQuotedKind bounds the length of a kind name that the reply to an
// unknown kind repeats.
const maxQuotedKind = 64

// emptyParams are the params of a kind called without any: [].
var emptyParams = []byte("[]")

func (k *subscribeKinds) invoke(ctx context.Context, st *state, dst []byte) []byte {
	req := st.req
	raw := req.Params
	st.code = 0
	if raw == nil {
		return k.paramsError(st, dst, paramErr{label: "kind", reason: reasonMissing})
	}
	if raw[0] != '[' {
		return k.paramsError(st, dst, paramErr{reason: reasonWantArray})
	}
	vals := parser.NewValues(raw)
	v, ok := vals.Next()
	if !ok {
		return k.paramsError(st, dst, paramErr{label: "kind", reason: reasonMissing})
	}
	if v[0] != '"' {
		return k.paramsError(st, dst, paramErr{label: "kind", reason: reasonWantString})
	}
	name := v[1 : len(v)-1]
	if bytes.IndexByte(name, '\\') >= 0 {
		name = parser.AppendUnquote(nil, name)
	}
	inv := k.kinds[string(name)]
	if inv == nil {
		return k.unknown(st, dst, name)
	}
	// The rest of the params, after the kind's comma, as an array of
	// their own. A copy: the request's bytes are not this method's to
	// change.
	end := int(uintptr(unsafe.Pointer(unsafe.SliceData(v)))-uintptr(unsafe.Pointer(unsafe.SliceData(raw)))) + len(v)
	rest := emptyParams
	for i := end; i < len(raw); i++ {
		if raw[i] == ',' {
			rest = append(append(make([]byte, 0, len(raw)-i), '['), raw[i+1:]...)
			break
		}
		if raw[i] == ']' {
			break
		}
	}
	req.Params = rest
	defer func() { req.Params = raw }()
	return inv.invoke(ctx, st, dst)
}

// paramsError answers params that name no kind.
func (k *subscribeKinds) paramsError(st *state, dst []byte, e paramErr) []byte {
	req := st.req
	st.code, st.err = parser.CodeInvalidParams, ErrInvalidParams
	if req.Notification {
		return dst
	}
	return appendParamsError(dst, req.ID, req.Version, e)
}

// unknown answers a kind not registered, as geth does: -32601 `no "K"
// subscription in NS namespace`.
func (k *subscribeKinds) unknown(st *state, dst []byte, name []byte) []byte {
	req := st.req
	st.code, st.err = parser.CodeMethodNotFound, ErrMethodNotFound
	if req.Notification {
		return dst
	}
	msg := "no subscription of that kind in " + k.ns + " namespace"
	if len(name) <= maxQuotedKind {
		msg = "no " + strconv.Quote(string(name)) + " subscription in " + k.ns + " namespace"
	}
	return appendErrorReply(dst, req.ID, req.Version, parser.CodeMethodNotFound, msg, "", nil)
}
