package handler_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/jetrpc/jetrpc/handler"
)

func ExampleRegister() {
	t := handler.NewTable()
	type SubtractParams struct {
		Minuend    int `json:"minuend"`
		Subtrahend int `json:"subtrahend"`
	}
	handler.Register(t, "subtract", func(_ context.Context, p SubtractParams) (int, error) {
		return p.Minuend - p.Subtrahend, nil
	}, handler.Inline())
	ctx := context.Background()
	fmt.Printf("%s\n", t.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}`)))
	fmt.Printf("%s\n", t.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"subtract","params":{"subtrahend":23,"minuend":42},"id":2}`)))
	fmt.Printf("%s\n", t.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"subtract","params":[42],"id":3}`)))
	// Output:
	// {"jsonrpc":"2.0","result":19,"id":1}
	// {"jsonrpc":"2.0","result":19,"id":2}
	// {"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: subtrahend: missing required param"},"id":3}
}

func ExampleTable_Dispatch() {
	t := handler.NewTable()
	handler.Register(t, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	batch := `[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},
	           {"jsonrpc":"2.0","method":"add","params":[3,4]},
	           {"jsonrpc":"2.0","method":"nope","id":2}]`
	buf := make([]byte, 0, 512) // reuse it for every message
	buf = t.Dispatch(context.Background(), buf[:0], []byte(batch))
	fmt.Printf("%s\n", buf)
	// Output:
	// [{"jsonrpc":"2.0","result":3,"id":1},{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":2}]
}

func ExampleTable_DispatchInline() {
	t := handler.NewTable()
	handler.Register(t, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	handler.Register(t, "lookup", func(_ context.Context, p [1]string) (string, error) { return "value of " + p[0], nil })
	for _, msg := range []string{
		`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`,
		`{"jsonrpc":"2.0","method":"lookup","params":["k"],"id":2}`,
	} {
		var later handler.Pending
		out, oc := t.DispatchInline(context.Background(), nil, []byte(msg), &later)
		if oc == handler.Deferred {
			// An event loop hands later to a goroutine of its own, which
			// runs it without parsing the message again.
			out = later.Run(context.Background(), nil)
		}
		fmt.Printf("inline=%v %s\n", oc != handler.Deferred, out)
	}
	// Output:
	// inline=true {"jsonrpc":"2.0","result":3,"id":1}
	// inline=false {"jsonrpc":"2.0","result":"value of k","id":2}
}

func ExampleRegisterNoParams() {
	t := handler.NewTable()
	handler.RegisterNoParams(t, "version", func(context.Context) (string, error) { return "1.0.0", nil })
	fmt.Printf("%s\n", t.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"version","id":1}`)))
	// Output: {"jsonrpc":"2.0","result":"1.0.0","id":1}
}

func ExampleRegisterNoResult() {
	t := handler.NewTable()
	var log []string
	handler.RegisterNoResult(t, "log", func(_ context.Context, p [1]string) error {
		log = append(log, p[0])
		return nil
	})
	fmt.Printf("%q\n", t.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"log","params":["started"]}`)))
	fmt.Printf("%s\n", t.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"log","params":["done"],"id":7}`)))
	fmt.Println(log)
	// Output:
	// ""
	// {"jsonrpc":"2.0","result":null,"id":7}
	// [started done]
}

func ExampleError() {
	t := handler.NewTable()
	handler.Register(t, "withdraw", func(_ context.Context, p struct {
		Amount int `json:"amount"`
	}) (int, error) {
		if p.Amount > 100 {
			return 0, &handler.Error{Code: 1001, Message: "insufficient funds", Data: map[string]int{"balance": 100}}
		}
		return 100 - p.Amount, nil
	})
	fmt.Printf("%s\n", t.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"withdraw","params":{"amount":500},"id":1}`)))
	// Output: {"jsonrpc":"2.0","error":{"code":1001,"message":"insufficient funds","data":{"balance":100}},"id":1}
}

func ExampleNewHTTPHandler() {
	t := handler.NewTable()
	handler.Register(t, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())

	mux := http.NewServeMux()
	mux.Handle("/rpc", handler.NewHTTPHandler(t))
	srv := httptest.NewServer(mux) // in a program: http.ListenAndServe(":8080", mux)
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/rpc", "application/json",
		strings.NewReader(`{"jsonrpc":"2.0","method":"add","params":[2,3],"id":1}`))
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.Status, string(body))
	// Output: 200 OK {"jsonrpc":"2.0","result":5,"id":1}
}

// An HTTPHandler with optional authentication: a request without
// credentials is served anonymous (no grants), one with a wrong key is
// refused 401.
func ExampleHTTPPolicy_AdmitsAnonymous() {
	t := handler.NewTable()
	handler.Register(t, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	authorize := func(m *handler.Meta) (handler.Grants, error) {
		switch m.Header("Authorization") {
		case "":
			return nil, handler.ErrNoCredentials
		case "Bearer let-me-in":
			return handler.Grants{"write"}, nil
		}
		return nil, handler.ErrUnauthenticated
	}
	h := &handler.HTTPHandler{Table: t, HTTPPolicy: handler.HTTPPolicy{Authorize: authorize, AuthOptional: true}}
	srv := httptest.NewServer(h)
	defer srv.Close()

	for _, key := range []string{"", "let-me-in", "wrong"} {
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(`{"jsonrpc":"2.0","method":"add","params":[2,3],"id":1}`))
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%q: %d %s\n", key, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	fmt.Println(h.AdmitsAnonymous(handler.ErrNoCredentials), h.AdmitsAnonymous(handler.ErrUnauthenticated))
	// Output:
	// "": 200 {"jsonrpc":"2.0","result":5,"id":1}
	// "let-me-in": 200 {"jsonrpc":"2.0","result":5,"id":1}
	// "wrong": 401 missing or invalid credentials
	// true false
}

// An HTTPHandler taken out of its load balancer's pool by the
// application, and put back: the health check says so, calls go on.
func ExampleHTTPHandler_SetNotReady() {
	h := handler.NewHTTPHandler(handler.NewTable())
	srv := httptest.NewServer(h)
	defer srv.Close()
	health := func() {
		resp, err := http.Get(srv.URL + "/health")
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, string(body))
	}
	h.SetNotReady("maintenance")
	health()
	h.SetReady()
	health()
	// Output:
	// 503 {"status":"not_ready","reason":"maintenance"}
	// 200 {"status":"ok"}
}
