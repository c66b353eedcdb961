package peers

// Interoperability of geth's engine-API authentication: go-ethereum's own
// rpc.Client, with node.NewJWTAuth as its rpc.WithHTTPAuth (what consensus
// clients' tooling uses), against a jetrpc engine whose Authorize is
// auth.NewJWT. geth mints a fresh HS256 token with iat = now for every HTTP
// request and for the WebSocket handshake; the engine must accept those,
// give their callers the JWT's grants (handler.Require), and refuse a wrong
// secret, a token outside the ±60 s iat window and no token at all with
// 401, which geth reports as rpc.HTTPError (HTTP) or a failed dial (WS).

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/gorilla/websocket"
	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/engine/enginetest"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/auth"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/parser"
)

// jwtAdminAnswer is what the admin-only method jwt_admin answers.
const jwtAdminAnswer = "granted"

// serveJWT starts an engine on loopback TCP whose Authorize is
// auth.NewJWT(secret, grants), with the demo methods and two that require
// the "admin" grant: the method jwt_admin and the subscription namespace
// jwtbeat (jwtbeat_subscribe [intervalMs], then 1, 2, 3, …). It returns the
// method table and the listener's host:port.
func serveJWT(t *testing.T, secret [32]byte, grants handler.Grants) (*handler.Table, string) {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	tab := handler.NewTable(handler.WithLogger(quiet))
	demo.Register(tab)
	admin := handler.Require("admin")
	handler.RegisterNoParams(tab, "jwt_admin", func(context.Context) (string, error) {
		return jwtAdminAnswer, nil
	}, admin, handler.Inline())
	handler.RegisterSubscription(tab, "jwtbeat", func(_ context.Context, p [1]int64, sub *handler.Subscription) error {
		if p[0] < 1 || p[0] > 1000 {
			return handler.NewError(parser.CodeInvalidParams, "Invalid params: interval must be 1 to 1000 ms")
		}
		go func() {
			tick := time.NewTicker(time.Duration(p[0]) * time.Millisecond)
			defer tick.Stop()
			for n := int64(1); ; n++ {
				select {
				case <-sub.Context().Done():
					return
				case <-tick.C:
					if sub.Notify(n) != nil {
						sub.Unsubscribe()
						return
					}
				}
			}
		}()
		return nil
	}, admin, handler.Inline())
	_, addr := enginetest.Start(t, tab, engine.WithAuthorize(auth.NewJWT(secret[:], grants).Authorize))
	return tab, addr
}

// newJWTSecret returns a random secret of auth.JWTSecretLength bytes, as
// geth makes jwt.hex.
func newJWTSecret(t *testing.T) [32]byte {
	t.Helper()
	var s [32]byte
	if _, err := rand.Read(s[:]); err != nil {
		t.Fatal(err)
	}
	return s
}

// jwtAuthAt is an rpc.HTTPAuth that sends a token signed with secret whose
// iat is now+skew, made by auth.NewJWTToken (as node.NewJWTAuth makes
// them, with another clock).
func jwtAuthAt(secret [32]byte, skew time.Duration) rpc.HTTPAuth {
	return func(h http.Header) error {
		tok, err := auth.NewJWTToken(secret[:], time.Now().Add(skew))
		if err != nil {
			return err
		}
		h.Set("Authorization", "Bearer "+tok)
		return nil
	}
}

// dialGethJWT dials url with geth's client, authenticating with a (none
// when nil). Over HTTP nothing is sent until the first call; over
// WebSocket the handshake happens here.
func dialGethJWT(t *testing.T, url string, a rpc.HTTPAuth) (*rpc.Client, error) {
	t.Helper()
	var opts []rpc.ClientOption
	if a != nil {
		opts = append(opts, rpc.WithHTTPAuth(a))
	}
	c, err := rpc.DialOptions(ctx(t), url, opts...)
	if err == nil {
		t.Cleanup(c.Close)
	}
	return c, err
}

// gethJWTCalls checks, through an authenticated geth client, a call of the
// admin-only method, a call of a demo method, and a batch mixing them.
func gethJWTCalls(t *testing.T, c *rpc.Client) {
	t.Helper()
	var got string
	if err := c.CallContext(ctx(t), &got, "jwt_admin"); err != nil || got != jwtAdminAnswer {
		t.Fatalf("jwt_admin: %q %v", got, err)
	}
	var diff int
	if err := c.CallContext(ctx(t), &diff, "subtract", 42, 23); err != nil || diff != 19 {
		t.Fatalf("subtract: %d %v", diff, err)
	}
	var admin1, admin2 string
	var sum int
	batch := []rpc.BatchElem{
		{Method: "jwt_admin", Result: &admin1},
		{Method: "add", Args: []any{1, 2}, Result: &sum},
		{Method: "jwt_admin", Result: &admin2},
	}
	if err := c.BatchCallContext(ctx(t), batch); err != nil {
		t.Fatalf("batch: %v", err)
	}
	for i, el := range batch {
		if el.Error != nil {
			t.Fatalf("batch element %d (%s): %v", i, el.Method, el.Error)
		}
	}
	if admin1 != jwtAdminAnswer || sum != 3 || admin2 != jwtAdminAnswer {
		t.Fatalf("batch results: %q %d %q", admin1, sum, admin2)
	}
}

// TestGethJWT_HTTP: geth's client with node.NewJWTAuth calls over HTTP,
// one token per request, the batch included; the "*" grant lets it call
// the method that requires "admin".
func TestGethJWT_HTTP(t *testing.T) {
	secret := newJWTSecret(t)
	_, addr := serveJWT(t, secret, handler.Grants{"*"})
	c, err := dialGethJWT(t, "http://"+addr, node.NewJWTAuth(secret))
	if err != nil {
		t.Fatal(err)
	}
	gethJWTCalls(t, c)
}

// TestGethJWT_WebSocket: geth's client with node.NewJWTAuth sends the
// token in the WebSocket handshake only; the grants hold for the
// connection's life: calls, a batch and a subscription that requires
// "admin", its notifications in order, then unsubscribing.
func TestGethJWT_WebSocket(t *testing.T) {
	secret := newJWTSecret(t)
	tab, addr := serveJWT(t, secret, handler.Grants{"*"})
	c, err := dialGethJWT(t, "ws://"+addr+"/", node.NewJWTAuth(secret))
	if err != nil {
		t.Fatal(err)
	}
	gethJWTCalls(t, c)

	ch := make(chan int64)
	sub, err := c.Subscribe(ctx(t), "jwtbeat", ch, 5)
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	if n := tab.Subscriptions("jwtbeat"); n != 1 {
		t.Fatalf("%d subscriptions live on the server, want 1", n)
	}
	for want := int64(1); want <= 3; want++ {
		select {
		case got := <-ch:
			if got != want {
				t.Fatalf("notification %d carries %d", want, got)
			}
		case err := <-sub.Err():
			t.Fatalf("subscription failed before notification %d: %v", want, err)
		case <-ctx(t).Done():
			t.Fatalf("notification %d never came", want)
		}
	}
	sub.Unsubscribe()
	if err, open := <-sub.Err(); open || err != nil {
		t.Fatalf("after Unsubscribe: %v (open %v)", err, open)
	}
	deadline := time.Now().Add(5 * time.Second)
	for tab.Subscriptions("jwtbeat") != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := tab.Subscriptions("jwtbeat"); n != 0 {
		t.Fatalf("%d subscriptions live on the server after Unsubscribe", n)
	}
	// Still authorized after the subscription.
	var got string
	if err := c.CallContext(ctx(t), &got, "jwt_admin"); err != nil || got != jwtAdminAnswer {
		t.Fatalf("jwt_admin after unsubscribe: %q %v", got, err)
	}
}

// TestGethJWT_skewAccepted: a token whose iat is 30 s off, either way,
// is within geth's 60 s window, on both transports.
func TestGethJWT_skewAccepted(t *testing.T) {
	secret := newJWTSecret(t)
	_, addr := serveJWT(t, secret, handler.Grants{"*"})
	for _, skew := range []time.Duration{-30 * time.Second, 30 * time.Second} {
		for _, url := range []string{"http://" + addr, "ws://" + addr + "/"} {
			c, err := dialGethJWT(t, url, jwtAuthAt(secret, skew))
			if err != nil {
				t.Fatalf("%s, iat %v: dial: %v", url, skew, err)
			}
			var got string
			if err := c.CallContext(ctx(t), &got, "jwt_admin"); err != nil || got != jwtAdminAnswer {
				t.Fatalf("%s, iat %v: jwt_admin: %q %v", url, skew, got, err)
			}
		}
	}
}

// jwtRefusal is a client that the engine must refuse with 401.
type jwtRefusal struct {
	name  string
	where string // file:line of the case
	auth  rpc.HTTPAuth
}

// here returns its caller's file:line.
func here() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", file[strings.LastIndexByte(file, '/')+1:], line)
}

// TestGethJWT_refused: a token signed with another secret, one issued 2
// minutes ago or 2 minutes ahead, and no token are refused with 401 before
// any call runs: over HTTP geth's call (and batch) fails with
// rpc.HTTPError{StatusCode: 401}; over WebSocket its dial fails with
// gorilla's bad handshake, status 401.
func TestGethJWT_refused(t *testing.T) {
	secret := newJWTSecret(t)
	_, addr := serveJWT(t, secret, handler.Grants{"*"})
	for _, tc := range []jwtRefusal{
		{name: "other secret", where: here(), auth: node.NewJWTAuth(newJWTSecret(t))},
		{name: "stale", where: here(), auth: jwtAuthAt(secret, -2*time.Minute)},
		{name: "future", where: here(), auth: jwtAuthAt(secret, 2*time.Minute)},
		{name: "no auth", where: here(), auth: nil},
	} {
		t.Run(tc.name+"/HTTP", func(t *testing.T) {
			c, err := dialGethJWT(t, "http://"+addr, tc.auth)
			if err != nil {
				t.Fatalf("%s: dial: %v", tc.where, err)
			}
			var got string
			err = c.CallContext(ctx(t), &got, "jwt_admin")
			var httpErr rpc.HTTPError
			if !errors.As(err, &httpErr) || httpErr.StatusCode != http.StatusUnauthorized {
				t.Fatalf("%s: call: %q, %v; want rpc.HTTPError 401", tc.where, got, err)
			}
			batch := []rpc.BatchElem{{Method: "jwt_admin", Result: &got}, {Method: "add", Args: []any{1, 2}}}
			err = c.BatchCallContext(ctx(t), batch)
			if !errors.As(err, &httpErr) || httpErr.StatusCode != http.StatusUnauthorized {
				t.Fatalf("%s: batch: %v (elements %v, %v); want rpc.HTTPError 401", tc.where, err, batch[0].Error, batch[1].Error)
			}
		})
		t.Run(tc.name+"/WebSocket", func(t *testing.T) {
			c, err := dialGethJWT(t, "ws://"+addr+"/", tc.auth)
			if err == nil {
				var got string
				err := c.CallContext(ctx(t), &got, "jwt_admin")
				t.Fatalf("%s: dial succeeded; jwt_admin: %q %v", tc.where, got, err)
			}
			// geth wraps gorilla's ErrBadHandshake, adding the status.
			if !errors.Is(err, websocket.ErrBadHandshake) || !strings.Contains(err.Error(), "401") {
				t.Fatalf("%s: dial: %v; want bad handshake, HTTP status 401", tc.where, err)
			}
		})
	}
}

// TestGethJWT_challenge: the 401 that geth's clients get names the Bearer
// scheme (WWW-Authenticate), on a plain POST and on a WebSocket upgrade.
func TestGethJWT_challenge(t *testing.T) {
	secret := newJWTSecret(t)
	_, addr := serveJWT(t, secret, handler.Grants{"*"})
	hc := &http.Client{Timeout: 5 * time.Second}
	post, err := http.NewRequestWithContext(ctx(t), http.MethodPost, "http://"+addr,
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"jwt_admin"}`))
	if err != nil {
		t.Fatal(err)
	}
	post.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(post)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("POST without a token: %s, WWW-Authenticate %q", resp.Status, resp.Header.Get("WWW-Authenticate"))
	}
	d := websocket.Dialer{HandshakeTimeout: 5 * time.Second}
	conn, resp, err := d.DialContext(ctx(t), "ws://"+addr+"/", nil)
	if err == nil {
		conn.Close()
		t.Fatal("WebSocket upgrade without a token succeeded")
	}
	if resp == nil || resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("WebSocket upgrade without a token: %v, %+v", err, resp)
	}
}

// TestGethJWT_grants: a valid token whose JWT grants lack "admin" reaches
// the engine (no 401), but the admin-only method and subscription are
// answered -32003 while the other methods run, in a batch too.
func TestGethJWT_grants(t *testing.T) {
	secret := newJWTSecret(t)
	_, addr := serveJWT(t, secret, handler.Grants{"read"})
	for _, url := range []string{"http://" + addr, "ws://" + addr + "/"} {
		c, err := dialGethJWT(t, url, node.NewJWTAuth(secret))
		if err != nil {
			t.Fatalf("%s: dial: %v", url, err)
		}
		var rpcErr rpc.Error
		err = c.CallContext(ctx(t), nil, "jwt_admin")
		if !errors.As(err, &rpcErr) || rpcErr.ErrorCode() != int(parser.CodeForbidden) {
			t.Fatalf("%s: jwt_admin without the admin grant: %v; want -32003", url, err)
		}
		var sum int
		batch := []rpc.BatchElem{{Method: "jwt_admin"}, {Method: "add", Args: []any{1, 2}, Result: &sum}}
		if err := c.BatchCallContext(ctx(t), batch); err != nil {
			t.Fatalf("%s: batch: %v", url, err)
		}
		if !errors.As(batch[0].Error, &rpcErr) || rpcErr.ErrorCode() != int(parser.CodeForbidden) || batch[1].Error != nil || sum != 3 {
			t.Fatalf("%s: batch: %v, %v, %d; want -32003 then 3", url, batch[0].Error, batch[1].Error, sum)
		}
		if strings.HasPrefix(url, "ws") {
			_, err := c.Subscribe(ctx(t), "jwtbeat", make(chan int64), 5)
			if !errors.As(err, &rpcErr) || rpcErr.ErrorCode() != int(parser.CodeForbidden) {
				t.Fatalf("jwtbeat_subscribe without the admin grant: %v; want -32003", err)
			}
		}
	}
}
