package handler_test

// Tests of named subscriptions and subscription kinds (subscribe_kinds.go).

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
)

// subscribeID returns the result of a subscribe reply, failing t if it
// is not a subscription id.
func subscribeID(t *testing.T, reply []byte) string {
	t.Helper()
	var r struct{ Result string }
	if err := json.Unmarshal(reply, &r); err != nil || len(r.Result) != 34 {
		t.Fatalf("subscribe reply %s", reply)
	}
	return r.Result
}

func TestSubscriptionMethods_names(t *testing.T) {
	tab := handler.NewTable()
	var sub *handler.Subscription
	handler.RegisterSubscription(tab, "account", func(_ context.Context, p [1]string, s *handler.Subscription) error {
		sub = s
		return nil
	}, handler.Inline(), handler.SubscriptionMethods(handler.SubscriptionNames{
		Subscribe: "accountSubscribe", Unsubscribe: "accountUnsubscribe", Notification: "accountNotification",
	}))
	c := &recConn{ctx: context.Background(), push: true}
	ctx := handler.ContextWithConn(c.ctx, c)
	call := func(msg string) []byte { return tab.Dispatch(ctx, nil, []byte(msg)) }
	if got := string(call(`{"jsonrpc":"2.0","method":"account_subscribe","params":["a"],"id":1}`)); !strings.Contains(got, "-32601") {
		t.Fatalf("the default name is served: %s", got)
	}
	id := subscribeID(t, call(`{"jsonrpc":"2.0","method":"accountSubscribe","params":["a"],"id":1}`))
	if err := sub.Notify(7); err != nil {
		t.Fatal(err)
	}
	if want := `{"jsonrpc":"2.0","method":"accountNotification","params":{"subscription":"` + id + `","result":7}}`; len(c.sent) != 1 || c.sent[0] != want {
		t.Fatalf("sent %q, want %s", c.sent, want)
	}
	_ = sub.NotifyRaw([]byte(`"raw"`))
	if want := `{"jsonrpc":"2.0","method":"accountNotification","params":{"subscription":"` + id + `","result":"raw"}}`; len(c.sent) != 2 || c.sent[1] != want {
		t.Fatalf("sent %q, want %s", c.sent, want)
	}
	if got := string(call(`{"jsonrpc":"2.0","method":"accountUnsubscribe","params":["` + id + `"],"id":2}`)); got != `{"jsonrpc":"2.0","result":true,"id":2}` || tab.Subscriptions("account") != 0 {
		t.Fatal(got, tab.Subscriptions("account"))
	}
	infos := map[string]handler.MethodInfo{}
	for _, mi := range tab.Methods() {
		infos[mi.Name] = mi
	}
	if s := infos["accountSubscribe"]; s.Subscription != "account" || s.Notification != "accountNotification" || s.Unsubscribe != "accountUnsubscribe" {
		t.Fatalf("accountSubscribe: %+v", s)
	}
	if u := infos["accountUnsubscribe"]; u.Subscription != "account" || u.Notification != "" || u.Unsubscribe != "" || len(infos) != 2 {
		t.Fatalf("accountUnsubscribe: %+v (%d methods)", u, len(infos))
	}
}

// TestSubscriptionMethods_partial: a name left empty keeps its default.
func TestSubscriptionMethods_partial(t *testing.T) {
	tab := handler.NewTable()
	handler.RegisterSubscription(tab, "x", func(context.Context, [1]int, *handler.Subscription) error { return nil },
		handler.SubscriptionMethods(handler.SubscriptionNames{Notification: "x_event"}))
	var got []string
	for _, mi := range tab.Methods() {
		got = append(got, mi.Name+">"+mi.Notification+">"+mi.Unsubscribe)
	}
	if want := []string{"x_subscribe>x_event>x_unsubscribe", "x_unsubscribe>>"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("%q, want %q", got, want)
	}
}

func TestSubscriptionMethods_refused(t *testing.T) {
	start := func(context.Context, [1]int, *handler.Subscription) error { return nil }
	names := handler.SubscriptionMethods(handler.SubscriptionNames{Subscribe: "sub", Unsubscribe: "unsub"})
	tab := handler.NewTable()
	if err := registerErr(func() {
		handler.Register(tab, "m", func(context.Context, [1]int) (int, error) { return 0, nil }, names)
	}); err == nil || !strings.Contains(err.Error(), "SubscriptionMethods is for RegisterSubscription") {
		t.Fatalf("on Register: %v", err)
	}
	if err := registerErr(func() {
		handler.RegisterSubscription(tab, "a", start, handler.SubscriptionMethods(handler.SubscriptionNames{Subscribe: "same", Unsubscribe: "same"}))
	}); !errors.Is(err, handler.ErrDuplicateName) {
		t.Fatalf("subscribe = unsubscribe: %v", err)
	}
	// All or nothing: the unsubscribe name is taken, so the subscribe
	// method is not left behind, and the namespace is free again.
	handler.Register(tab, "unsub", func(context.Context, [1]int) (int, error) { return 0, nil })
	if err := registerErr(func() { handler.RegisterSubscription(tab, "a", start, names) }); !errors.Is(err, handler.ErrDuplicateName) {
		t.Fatalf("unsubscribe taken: %v", err)
	}
	if found, _ := tab.Lookup("sub"); found {
		t.Fatal("the subscribe method stayed")
	}
	handler.RegisterSubscription(tab, "a", start) // the namespace is free
	if found, _ := tab.Lookup("a_subscribe"); !found {
		t.Fatal("a_subscribe not registered")
	}
}

// ethKinds registers geth's shape on tab: eth_subscribe ["newHeads"],
// ["logs", {filter}] and ["count", n], the subscriptions made kept in
// *subs by kind.
func ethKinds(tab *handler.Table, subs map[string][]*handler.Subscription, opts ...handler.MethodOption) {
	type filter struct {
		Address string   `json:"address"`
		Topics  []string `json:"topics,omitempty"`
	}
	handler.RegisterSubscriptionKinds(tab, "eth", []handler.SubscriptionKind{
		handler.NewSubscriptionKind("newHeads", func(_ context.Context, _ struct{}, s *handler.Subscription) error {
			subs["newHeads"] = append(subs["newHeads"], s)
			return nil
		}),
		handler.NewSubscriptionKind("logs", func(_ context.Context, p struct{ Filter filter }, s *handler.Subscription) error {
			if p.Filter.Address == "" {
				return handler.NewError(-32602, "empty address")
			}
			subs["logs"] = append(subs["logs"], s)
			return nil
		}),
		handler.NewSubscriptionKind("count", func(_ context.Context, p [1]int, s *handler.Subscription) error {
			subs["count"] = append(subs["count"], s)
			return nil
		}),
	}, append([]handler.MethodOption{handler.Inline()}, opts...)...)
}

func TestRegisterSubscriptionKinds_dispatch(t *testing.T) {
	tab := handler.NewTable()
	subs := map[string][]*handler.Subscription{}
	ethKinds(tab, subs)
	c := &recConn{ctx: context.Background(), push: true}
	ctx := handler.ContextWithConn(c.ctx, c)
	call := func(params string) string {
		return string(tab.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"eth_subscribe"`+params+`,"id":1}`)))
	}
	for _, tc := range []struct{ params, want string }{
		{``, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: kind: missing required param"},"id":1}`},
		{`,"params":[]`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: kind: missing required param"},"id":1}`},
		{`,"params":{"kind":"newHeads"}`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: params must be an array"},"id":1}`},
		{`,"params":[1]`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: kind: expected a string"},"id":1}`},
		{`,"params":["nope"]`, `{"jsonrpc":"2.0","error":{"code":-32601,"message":"no \"nope\" subscription in eth namespace"},"id":1}`},
		{`,"params":["` + strings.Repeat("n", 65) + `"]`, `{"jsonrpc":"2.0","error":{"code":-32601,"message":"no subscription of that kind in eth namespace"},"id":1}`},
		{`,"params":["newHeads",1]`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: the method takes no params"},"id":1}`},
		{`,"params":["logs"]`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: Filter: missing required param"},"id":1}`},
		{`,"params":["logs",{"address":7}]`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: Filter: `},
		{`,"params":["logs",{"address":""}]`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"empty address"},"id":1}`},
		{`,"params":["count","x"]`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: param 2: expected an integer"},"id":1}`},
		{`,"params":["count",1,2]`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: too many params: kind \"count\" takes 1"},"id":1}`},
		{`,"params":["count"]`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: param 2: missing required param"},"id":1}`},
	} {
		if got := call(tc.params); !strings.HasPrefix(got, tc.want) {
			t.Errorf("params %s: %s, want %s", tc.params, got, tc.want)
		}
	}
	if n := tab.Subscriptions("eth"); n != 0 {
		t.Fatalf("%d subscriptions after refusals", n)
	}
	ids := map[string]string{}
	for kind, params := range map[string]string{
		"newHeads": `["newHeads"]`,
		"logs":     ` [ "logs" , {"address":"0xab","topics":["t"]} ] `,
		"count":    `["\u0063ount",3]`, // an escaped kind name
	} {
		ids[kind] = subscribeID(t, []byte(call(`,"params":`+params)))
		if len(subs[kind]) != 1 || subs[kind][0].ID() != ids[kind] {
			t.Fatalf("%s: subscriptions %v", kind, subs[kind])
		}
	}
	if n := tab.Subscriptions("eth"); n != 3 {
		t.Fatalf("%d subscriptions, want 3", n)
	}
	// One notification method and one unsubscribe method for all kinds.
	for _, kind := range []string{"newHeads", "logs", "count"} {
		c.sent = nil
		_ = subs[kind][0].Notify(kind)
		if want := `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"` + ids[kind] + `","result":"` + kind + `"}}`; len(c.sent) != 1 || c.sent[0] != want {
			t.Fatalf("%s: sent %q, want %s", kind, c.sent, want)
		}
		if got := string(tab.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"eth_unsubscribe","params":["`+ids[kind]+`"],"id":2}`))); got != `{"jsonrpc":"2.0","result":true,"id":2}` {
			t.Fatalf("%s: unsubscribe: %s", kind, got)
		}
	}
	if n := tab.Subscriptions("eth"); n != 0 {
		t.Fatalf("%d subscriptions after unsubscribing", n)
	}
	// A notification (no id) gets no reply, and an unknown kind makes none.
	if got := tab.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"eth_subscribe","params":["nope"]}`)); len(got) != 0 {
		t.Fatalf("notification answered %s", got)
	}
}

// TestRegisterSubscriptionKinds_limits: the limits count the kinds, and
// the table's other namespaces, together.
func TestRegisterSubscriptionKinds_limits(t *testing.T) {
	tab := handler.NewTable(handler.WithMaxSubscriptions(2, 3))
	subs := map[string][]*handler.Subscription{}
	ethKinds(tab, subs)
	handler.RegisterSubscription(tab, "other", func(context.Context, [1]int, *handler.Subscription) error { return nil }, handler.Inline())
	a := &recConn{ctx: context.Background(), push: true}
	b := &recConn{ctx: context.Background(), push: true}
	ctxA, ctxB := handler.ContextWithConn(a.ctx, a), handler.ContextWithConn(b.ctx, b)
	call := func(ctx context.Context, msg string) string { return string(tab.Dispatch(ctx, nil, []byte(msg))) }
	subscribeID(t, []byte(call(ctxA, `{"jsonrpc":"2.0","method":"eth_subscribe","params":["newHeads"],"id":1}`)))
	subscribeID(t, []byte(call(ctxA, `{"jsonrpc":"2.0","method":"eth_subscribe","params":["count",1],"id":1}`)))
	if got := call(ctxA, `{"jsonrpc":"2.0","method":"eth_subscribe","params":["logs",{"address":"a"}],"id":1}`); !strings.Contains(got, "Too many subscriptions: 2 per connection") {
		t.Fatal(got)
	}
	subscribeID(t, []byte(call(ctxB, `{"jsonrpc":"2.0","method":"other_subscribe","params":[1],"id":1}`)))
	if got := call(ctxB, `{"jsonrpc":"2.0","method":"eth_subscribe","params":["newHeads"],"id":1}`); !strings.Contains(got, "Too many subscriptions: the server holds 3") {
		t.Fatal(got)
	}
	if len(subs["logs"]) != 0 || len(subs["newHeads"]) != 1 {
		t.Fatalf("start called past the limits: %v", subs)
	}
	if tab.SubscriptionCount() != 3 || tab.Subscriptions("eth") != 2 {
		t.Fatal(tab.SubscriptionCount(), tab.Subscriptions("eth"))
	}
	// Another connection cannot end A's subscription.
	id := subs["newHeads"][0].ID()
	if got := call(ctxB, `{"jsonrpc":"2.0","method":"eth_unsubscribe","params":["`+id+`"],"id":1}`); !strings.Contains(got, "-32") || strings.Contains(got, "true") {
		t.Fatal(got)
	}
}

func TestRegisterSubscriptionKinds_methodInfo(t *testing.T) {
	tab := handler.NewTable()
	ethKinds(tab, nil, handler.Notifies[string]())
	ms := tab.Methods()
	if len(ms) != 2 {
		t.Fatalf("%d methods", len(ms))
	}
	s, u := ms[0], ms[1]
	if s.Name != "eth_subscribe" || s.Subscription != "eth" || s.Notification != "eth_subscription" || s.Unsubscribe != "eth_unsubscribe" ||
		s.NotificationType != reflect.TypeFor[string]() || !reflect.DeepEqual(s.Params, []string{"kind", "params"}) ||
		s.ParamsType != reflect.TypeFor[[]json.RawMessage]() || s.Description != "subscribe to eth notifications of a kind: newHeads, logs, count" {
		t.Fatalf("eth_subscribe: %+v", s)
	}
	var kinds []string
	for _, k := range s.Kinds {
		kinds = append(kinds, k.Name+"("+strings.Join(k.Params, ",")+")")
		if k.Name == "newHeads" && k.ParamsType != nil || k.Name == "count" && k.ParamsType != reflect.TypeFor[[1]int]() {
			t.Errorf("kind %s: ParamsType %v", k.Name, k.ParamsType)
		}
	}
	if want := []string{"newHeads()", "logs(Filter)", "count()"}; !reflect.DeepEqual(kinds, want) {
		t.Fatalf("kinds %q, want %q", kinds, want)
	}
	if u.Name != "eth_unsubscribe" || u.Kinds != nil || u.Notification != "" {
		t.Fatalf("eth_unsubscribe: %+v", u)
	}
}

func TestRegisterSubscriptionKinds_refused(t *testing.T) {
	ok := handler.NewSubscriptionKind("a", func(context.Context, struct{}, *handler.Subscription) error { return nil })
	for name, kinds := range map[string][]handler.SubscriptionKind{
		"no kinds":   nil,
		"zero kind":  {ok, {}},
		"empty name": {handler.NewSubscriptionKind("", func(context.Context, struct{}, *handler.Subscription) error { return nil })},
		"twice":      {ok, ok},
		"nil start":  {handler.NewSubscriptionKind[struct{}]("b", nil)},
		"bad P":      {handler.NewSubscriptionKind("b", func(context.Context, *int, *handler.Subscription) error { return nil })},
	} {
		tab := handler.NewTable()
		if err := registerErr(func() { handler.RegisterSubscriptionKinds(tab, "e", kinds) }); err == nil {
			t.Errorf("%s: registered", name)
		}
		if len(tab.Methods()) != 0 {
			t.Errorf("%s: methods left: %v", name, tab.Methods())
		}
		handler.RegisterSubscriptionKinds(tab, "e", []handler.SubscriptionKind{ok}) // the namespace is free
	}
	tab := handler.NewTable()
	handler.RegisterSubscriptionKinds(tab, "e", []handler.SubscriptionKind{ok})
	if err := registerErr(func() { handler.RegisterSubscriptionKinds(tab, "e", []handler.SubscriptionKind{ok}) }); !errors.Is(err, handler.ErrDuplicateName) {
		t.Fatalf("namespace twice: %v", err)
	}
}
