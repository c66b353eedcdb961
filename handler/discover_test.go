package handler_test

// Tests of what discovery records (discover.go): the Go types, summary,
// declared errors and subscriptions in MethodInfo, and RegisterExtension.

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
)

// infoOf returns the MethodInfo of name.
func infoOf(t *testing.T, tab *handler.Table, name string) handler.MethodInfo {
	t.Helper()
	for _, m := range tab.Methods() {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("no method %q", name)
	return handler.MethodInfo{}
}

// TestMethodInfo_discovery: the params and result types of each kind of
// registration, nil for no params and for an always-null result; summary
// and declared errors in order.
func TestMethodInfo_discovery(t *testing.T) {
	type P struct {
		A int `json:"a"`
	}
	errA, errB := handler.NewError(1, "a"), handler.NewError(2, "b")
	tab := handler.NewTable()
	handler.Register(tab, "full", func(context.Context, P) ([]string, error) { return nil, nil },
		handler.Summary("sum"), handler.Description("desc"), handler.Errors(errA), handler.Errors(errB))
	handler.RegisterNoParams(tab, "noparams", func(context.Context) (*P, error) { return nil, nil })
	handler.RegisterNoResult(tab, "noresult", func(context.Context, [2]int) error { return nil })
	handler.Register(tab, "empty", func(context.Context, struct{}) (handler.Raw, error) { return nil, nil })

	full := infoOf(t, tab, "full")
	if full.ParamsType != reflect.TypeFor[P]() || full.ResultType != reflect.TypeFor[[]string]() {
		t.Errorf("full: params %v, result %v", full.ParamsType, full.ResultType)
	}
	if full.Summary != "sum" || full.Description != "desc" || len(full.Errors) != 2 || full.Errors[0] != errA || full.Errors[1] != errB {
		t.Errorf("full: %+v", full)
	}
	if full.Subscription != "" || full.Notification != "" || full.NotificationType != nil {
		t.Errorf("full is no subscription: %+v", full)
	}
	if np := infoOf(t, tab, "noparams"); np.ParamsType != nil || np.ResultType != reflect.TypeFor[*P]() {
		t.Errorf("noparams: params %v, result %v", np.ParamsType, np.ResultType)
	}
	if nr := infoOf(t, tab, "noresult"); nr.ParamsType != reflect.TypeFor[[2]int]() || nr.ResultType != nil {
		t.Errorf("noresult: params %v, result %v", nr.ParamsType, nr.ResultType)
	}
	if e := infoOf(t, tab, "empty"); e.ParamsType != reflect.TypeFor[struct{}]() || e.ResultType != reflect.TypeFor[handler.Raw]() {
		t.Errorf("empty: params %v, result %v", e.ParamsType, e.ResultType)
	}
	// Methods copies the list.
	for _, m := range tab.Methods() {
		if m.Name == "full" {
			m.Errors[0] = nil
		}
	}
	if infoOf(t, tab, "full").Errors[0] != errA {
		t.Error("Methods shares its Errors with the table")
	}
}

// TestMethodInfo_subscription: the two methods of a namespace, and the
// type declared with Notifies.
func TestMethodInfo_subscription(t *testing.T) {
	tab := handler.NewTable()
	handler.RegisterSubscription(tab, "news", func(context.Context, [1]string, *handler.Subscription) error { return nil },
		handler.Notifies[[]string](), handler.Summary("headlines"))
	handler.RegisterSubscription(tab, "plain", func(context.Context, struct{}, *handler.Subscription) error { return nil })
	sub := infoOf(t, tab, "news_subscribe")
	if sub.Subscription != "news" || sub.Notification != "news_subscription" || sub.NotificationType != reflect.TypeFor[[]string]() ||
		sub.Summary != "headlines" || sub.ResultType != reflect.TypeFor[string]() || sub.ParamsType != reflect.TypeFor[[1]string]() {
		t.Errorf("news_subscribe: %+v", sub)
	}
	unsub := infoOf(t, tab, "news_unsubscribe")
	if unsub.Subscription != "news" || unsub.Notification != "" || unsub.NotificationType != nil || unsub.ResultType != reflect.TypeFor[bool]() {
		t.Errorf("news_unsubscribe: %+v", unsub)
	}
	if plain := infoOf(t, tab, "plain_subscribe"); plain.Notification != "plain_subscription" || plain.NotificationType != nil {
		t.Errorf("plain_subscribe: %+v", plain)
	}
}

// TestRegister_discoveryOptionRefusals: a nil error, a code declared
// twice, Notifies outside RegisterSubscription.
func TestRegister_discoveryOptionRefusals(t *testing.T) {
	tab := handler.NewTable()
	fn := func(context.Context, [1]int) (int, error) { return 0, nil }
	for name, opt := range map[string]handler.MethodOption{
		"nil error":      handler.Errors(nil),
		"duplicate code": handler.Errors(handler.NewError(5, "x"), handler.NewError(5, "y")),
		"notifies":       handler.Notifies[int](),
	} {
		if err := registerErr(func() { handler.Register(tab, "m", fn, opt) }); err == nil {
			t.Errorf("%s: registered", name)
		}
	}
	if len(tab.Methods()) != 0 {
		t.Errorf("refused registrations left %v", tab.Methods())
	}
}

// TestRegisterExtension: an "rpc." name registers and is served, other
// names are refused, and Register still refuses "rpc." names.
func TestRegisterExtension(t *testing.T) {
	tab := handler.NewTable()
	hello := func(context.Context, struct{}) (string, error) { return "hi", nil }
	if err := registerErr(func() { handler.RegisterExtension(tab, "rpc.hello", hello, handler.Inline()) }); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"hello", "rpc.", "", "RPC.hello", "rpc_hello"} {
		if err := registerErr(func() { handler.RegisterExtension(tab, name, hello) }); err == nil || !strings.Contains(err.Error(), `"rpc."`) {
			t.Errorf("%q: %v", name, err)
		}
	}
	if err := registerErr(func() { handler.RegisterExtension(tab, "rpc.hello", hello) }); !errors.Is(err, handler.ErrDuplicateName) {
		t.Errorf("twice: %v", err)
	}
	if err := registerErr(func() { handler.RegisterExtension[struct{}, string](tab, "rpc.nil", nil) }); err == nil {
		t.Error("nil function registered")
	}
	if err := registerErr(func() { handler.Register(tab, "rpc.other", hello) }); !errors.Is(err, handler.ErrReservedName) {
		t.Errorf("Register rpc.other: %v", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("RegisterExtension of a name without rpc. did not panic")
			}
		}()
		handler.RegisterExtension(tab, "plain", hello)
	}()
	if got := call(t, tab, `{"jsonrpc":"2.0","method":"rpc.hello","params":[],"id":1}`); got != `{"jsonrpc":"2.0","result":"hi","id":1}` {
		t.Errorf("rpc.hello: %s", got)
	}
	if found, inline := tab.Lookup("rpc.hello"); !found || !inline {
		t.Errorf("Lookup(rpc.hello): %v %v", found, inline)
	}
}

// Errors declares what a method may answer, for discovery (package
// handler/openrpc lists them in the method's errors).
func ExampleErrors() {
	errNotFound := handler.NewError(404, "no such user")
	t := handler.NewTable()
	handler.Register(t, "user", func(_ context.Context, p [1]string) (string, error) {
		if p[0] != "ada" {
			return "", errNotFound
		}
		return "Ada Lovelace", nil
	}, handler.Errors(errNotFound), handler.Summary("the full name of a user"))
	m := t.Methods()[0]
	fmt.Println(m.Summary, int(m.Errors[0].Code), m.Errors[0].Message, m.ParamsType, m.ResultType)
	// Output:
	// the full name of a user 404 no such user [1]string string
}

// Notifies declares the result type of a subscription's notifications.
func ExampleNotifies() {
	t := handler.NewTable()
	handler.RegisterSubscription(t, "prices", func(context.Context, [1]string, *handler.Subscription) error { return nil },
		handler.Notifies[float64]())
	for _, m := range t.Methods() {
		fmt.Printf("%s: subscription %q, notification %q %v\n", m.Name, m.Subscription, m.Notification, m.NotificationType)
	}
	// Output:
	// prices_subscribe: subscription "prices", notification "prices_subscription" float64
	// prices_unsubscribe: subscription "prices", notification "" <nil>
}

// RegisterExtension serves a method of the JSON-RPC 2.0 system
// extensions, whose name begins with "rpc.", which Register refuses.
func ExampleRegisterExtension() {
	t := handler.NewTable()
	handler.RegisterExtension(t, "rpc.ping", func(context.Context, struct{}) (string, error) { return "pong", nil }, handler.Inline())
	fmt.Println(string(t.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"rpc.ping","id":1}`))))
	defer func() { fmt.Println(recover()) }() // Register panics with an error
	handler.Register(t, "rpc.pong", func(context.Context, struct{}) (string, error) { return "", nil })
	// Output:
	// {"jsonrpc":"2.0","result":"pong","id":1}
	// jetrpc: method names beginning with "rpc." are reserved
}
