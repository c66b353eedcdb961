package handler_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jetrpc/jetrpc/handler"
)

func ExampleTable_Use() {
	t := handler.NewTable()
	handler.Register(t, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	// An interceptor that observes every call: it runs the rest with
	// Next, then reads the outcome. It sees the calls that reach no
	// method too.
	t.Use(func(ctx context.Context, call *handler.Call) error {
		call.Next(ctx)
		fmt.Printf("%q id=%s code=%d result=%s\n", call.Method(), call.ID(), call.Code(), call.Result())
		return nil
	})
	// One that refuses: its error is the reply, and the method never runs.
	t.Use(func(ctx context.Context, call *handler.Call) error {
		if string(call.Params()) == "[0,0]" {
			return handler.NewError(1000, "nothing to add")
		}
		return nil
	})
	batch := `[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},
	           {"jsonrpc":"2.0","method":"nope","id":2},
	           {"jsonrpc":"2.0","method":"add","params":[0,0],"id":3}]`
	fmt.Printf("%s\n", t.Dispatch(context.Background(), nil, []byte(batch)))
	// Output:
	// "add" id=1 code=0 result=3
	// "nope" id=2 code=-32601 result=
	// "add" id=3 code=1000 result=
	// [{"jsonrpc":"2.0","result":3,"id":1},{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":2},{"jsonrpc":"2.0","error":{"code":1000,"message":"nothing to add"},"id":3}]
}

func ExampleRequire() {
	t := handler.NewTable()
	type ResetParams struct {
		Token string `json:"token,omitempty"`
	}
	handler.Register(t, "reset", func(context.Context, ResetParams) (string, error) {
		return "done", nil
	}, handler.Inline(), handler.Require("admin"))
	// An interceptor that authenticates by itself, from a token in the
	// params, and grants what the token allows. A transport's Authorizer
	// would give the grants instead (CallContext's Meta.Grants).
	t.Use(func(ctx context.Context, call *handler.Call) error {
		var p ResetParams
		if json.Unmarshal(call.Params(), &p) == nil && p.Token == "s3cret" {
			ctx = handler.WithGrants(ctx, handler.Grants{"admin"})
		}
		call.Next(ctx)
		return nil
	})
	ctx := context.Background()
	fmt.Printf("%s\n", t.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"reset","params":{},"id":1}`)))
	fmt.Printf("%s\n", t.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"reset","params":{"token":"s3cret"},"id":2}`)))
	fmt.Println(t.Methods()[0].Require)
	// Output:
	// {"jsonrpc":"2.0","error":{"code":-32003,"message":"Forbidden: requires permission admin"},"id":1}
	// {"jsonrpc":"2.0","result":"done","id":2}
	// [admin]
}

func ExampleMetaFrom() {
	t := handler.NewTable()
	handler.RegisterNoParams(t, "whoami", func(ctx context.Context) (string, error) {
		m := handler.MetaFrom(ctx)
		return fmt.Sprintf("%s %s user=%q", m.Transport, m.Path(), m.Header("X-User")), nil
	}, handler.Inline())
	msg := []byte(`{"jsonrpc":"2.0","method":"whoami","id":1}`)

	// A transport keeps a CallContext and refills it for each call.
	cc := &handler.CallContext{Parent: context.Background()}
	cc.Meta.Transport = handler.TransportHTTP
	cc.Meta.SetHTTPHead([]byte("POST /rpc HTTP/1.1\r\nHost: node\r\nX-User:  ann \r\n\r\n"))
	fmt.Printf("%s\n", t.Dispatch(cc, nil, msg))

	// Called directly, there is no metadata.
	fmt.Printf("%s\n", t.Dispatch(context.Background(), nil, msg))
	// Output:
	// {"jsonrpc":"2.0","result":"http /rpc user=\"ann\"","id":1}
	// {"jsonrpc":"2.0","result":"in-process  user=\"\"","id":1}
}

func ExampleCall_Answer() {
	t := handler.NewTable()
	handler.Register(t, "price", func(_ context.Context, p [1]string) (int, error) {
		fmt.Println("looking up", p[0])
		return 42, nil
	}, handler.Inline())
	// A cache in front of the method: a hit is answered by the
	// interceptor itself, and the method never runs.
	hot := handler.Raw(`{"price":7,"cached":true}`)
	t.Use(func(ctx context.Context, call *handler.Call) error {
		if string(call.Params()) == `["tea"]` {
			call.Answer(hot)
			return nil
		}
		call.Next(ctx)
		return nil
	})
	fmt.Printf("%s\n", t.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"price","params":["tea"],"id":1}`)))
	fmt.Printf("%s\n", t.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"price","params":["gold"],"id":2}`)))
	// Output:
	// {"jsonrpc":"2.0","result":{"price":7,"cached":true},"id":1}
	// looking up gold
	// {"jsonrpc":"2.0","result":42,"id":2}
}
