package engine_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/auth"
)

// An engine that knows who calls: an API key in the Authorization header
// gives its grants, a method needs the "admin" grant, and pages of one
// other origin may call (CORS).
func ExampleWithAuthorize() {
	t := handler.NewTable()
	handler.RegisterNoParams(t, "whoami", func(ctx context.Context) (string, error) {
		m := handler.MetaFrom(ctx)
		return m.Transport.String() + " " + m.Header("User-Agent"), nil
	}, handler.Inline(), handler.Require("admin"))

	keys := auth.NewKeys(map[string]handler.Grants{
		"0123456789abcdef0123456789abcdef": {"admin"},
		"fedcba9876543210fedcba9876543210": nil, // authenticates, grants nothing
	})
	e := engine.New(t, engine.WithAddrs("tcp://127.0.0.1:0"), engine.WithLoops(1),
		engine.WithAuthorize(keys.Authorize), engine.WithCORS("https://app.example"))
	if err := e.Start(); err != nil {
		fmt.Println(err)
		return
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = e.Stop(ctx)
	}()
	call := func(key string) {
		req, _ := http.NewRequest("POST", "http://"+e.Addrs()[0].String()+"/",
			strings.NewReader(`{"jsonrpc":"2.0","method":"whoami","id":1}`))
		req.Header.Set("User-Agent", "example/1")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, strings.TrimSpace(string(body)))
	}
	call("")
	call("fedcba9876543210fedcba9876543210")
	call("0123456789abcdef0123456789abcdef")
	// Output:
	// 401 missing or invalid credentials
	// 200 {"jsonrpc":"2.0","error":{"code":-32003,"message":"Forbidden: requires permission admin"},"id":1}
	// 200 {"jsonrpc":"2.0","result":"http example/1","id":1}
}

// Open reads, keyed writes: with AuthOptional, a caller without
// credentials is served anonymous, with no grants — a method that needs
// one refuses it -32003 — while a key presented is still checked.
func ExampleWithAuthOptional() {
	t := handler.NewTable()
	handler.Register(t, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	handler.Register(t, "set", func(_ context.Context, p [1]int) (bool, error) { return true, nil },
		handler.Inline(), handler.Require("write"))

	keys := auth.NewKeys(map[string]handler.Grants{"0123456789abcdef0123456789abcdef": {"write"}})
	e := engine.New(t, engine.WithAddrs("tcp://127.0.0.1:0"), engine.WithLoops(1),
		engine.WithAuthorize(keys.Authorize), engine.WithAuthOptional(true))
	if err := e.Start(); err != nil {
		fmt.Println(err)
		return
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = e.Stop(ctx)
	}()
	call := func(key, body string) {
		req, _ := http.NewRequest("POST", "http://"+e.Addrs()[0].String()+"/", strings.NewReader(body))
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, strings.TrimSpace(string(b)))
	}
	call("", `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`)
	call("", `{"jsonrpc":"2.0","method":"set","params":[7],"id":2}`)
	call("0123456789abcdef0123456789abcdef", `{"jsonrpc":"2.0","method":"set","params":[7],"id":3}`)
	call("wrong-key", `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":4}`)
	// Output:
	// 200 {"jsonrpc":"2.0","result":3,"id":1}
	// 200 {"jsonrpc":"2.0","error":{"code":-32003,"message":"Forbidden: requires permission write"},"id":2}
	// 200 {"jsonrpc":"2.0","result":true,"id":3}
	// 401 missing or invalid credentials
}

// preflightOf starts an engine with opts, sends it the preflight a
// browser's page of https://app.example sends before a call, and
// returns the answer's header named name.
func preflightOf(name string, opts ...engine.Option) string {
	e := engine.New(handler.NewTable(), append([]engine.Option{engine.WithAddrs("tcp://127.0.0.1:0"), engine.WithLoops(1)}, opts...)...)
	if err := e.Start(); err != nil {
		return err.Error()
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = e.Stop(ctx)
	}()
	req, _ := http.NewRequest("OPTIONS", "http://"+e.Addrs()[0].String()+"/", nil)
	req.Header.Set("Origin", "https://app.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	resp.Body.Close()
	return resp.Header.Get(name)
}

// A page of another origin may send the headers WithCORSHeaders names
// (the default: Content-Type and Authorization).
func ExampleWithCORSHeaders() {
	fmt.Println(preflightOf("Access-Control-Allow-Headers", engine.WithCORS("https://app.example")))
	fmt.Println(preflightOf("Access-Control-Allow-Headers", engine.WithCORS("https://app.example"),
		engine.WithCORSHeaders("Content-Type", "Authorization", "X-Trace-Id")))
	// Output:
	// Content-Type, Authorization
	// Content-Type, Authorization, X-Trace-Id
}

// A browser keeps a preflight's answer as long as WithCORSMaxAge says
// (the default: 10 minutes), in seconds.
func ExampleWithCORSMaxAge() {
	fmt.Println(preflightOf("Access-Control-Max-Age", engine.WithCORS("https://app.example")))
	fmt.Println(preflightOf("Access-Control-Max-Age", engine.WithCORS("https://app.example"), engine.WithCORSMaxAge(time.Hour)))
	// Output:
	// 600
	// 3600
}
