package auth_test

import (
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/auth"
)

func ExampleToken() {
	for _, h := range []string{
		"POST / HTTP/1.1\r\nAuthorization: Bearer from-header\r\n\r\n",
		"GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nSec-WebSocket-Protocol: jsonrpc, bearer.from-subprotocol\r\n\r\n",
		"GET /ws?access_token=from-query HTTP/1.1\r\nUpgrade: websocket\r\n\r\n",
		"POST /?access_token=in-a-post-url HTTP/1.1\r\n\r\n", // refused: a WebSocket upgrade's only
		"POST / HTTP/1.1\r\nAuthorization: Basic dXNlcjpwYXNz\r\n\r\n",
	} {
		var m handler.Meta
		m.SetHTTPHead([]byte(h))
		fmt.Printf("%q\n", auth.Token(&m))
	}
	// Output:
	// "from-header"
	// "from-subprotocol"
	// "from-query"
	// ""
	// ""
}

func ExampleNewKeys() {
	keys := auth.NewKeys(map[string]handler.Grants{
		"0123456789abcdef0123456789abcdef": {"admin", "read"},
	})
	var authorize handler.Authorizer = keys.Authorize // for engine.WithAuthorize

	var m handler.Meta
	m.SetHTTPHead([]byte("POST / HTTP/1.1\r\nAuthorization: Bearer 0123456789abcdef0123456789abcdef\r\n\r\n"))
	fmt.Println(authorize(&m))
	m.SetHTTPHead([]byte("POST / HTTP/1.1\r\nAuthorization: Bearer guess\r\n\r\n"))
	g, err := authorize(&m)
	fmt.Println(g, err, handler.AuthStatus(err))
	// Output:
	// [admin read] <nil>
	// [] jetrpc: missing or invalid credentials: unknown API key 401
}

func ExampleLoadKeys() {
	dir, err := os.MkdirTemp("", "keys")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "keys")
	const file = `# jetrpc API keys: key [grants]
4f1c0a3e5b2d49c8a6e7f0b1c2d3e4f5 admin,read
9a8b7c6d5e4f30211203948576afbecd read
`
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		log.Fatal(err)
	}
	keys, err := auth.LoadKeys(path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(keys.Len(), "keys")

	var m handler.Meta
	m.SetHTTPHead([]byte("POST / HTTP/1.1\r\nAuthorization: Bearer 9a8b7c6d5e4f30211203948576afbecd\r\n\r\n"))
	fmt.Println(keys.Authorize(&m))

	if err := os.WriteFile(path, []byte(file+"tooshort read\n"), 0o600); err != nil {
		log.Fatal(err)
	}
	_, err = auth.LoadKeys(path)
	var ke *auth.KeysError
	if errors.As(err, &ke) {
		fmt.Println("line", ke.Line, ke.Err)
	}
	// Output:
	// 2 keys
	// [read] <nil>
	// line 4 key shorter than 16 bytes
}

func ExampleJWT_Authorize() {
	secret := []byte("a secret of 32 bytes, at random!") // LoadJWTSecret
	j := auth.NewJWT(secret, handler.Grants{"engine"})

	// A client mints a fresh token for each request.
	token, err := auth.NewJWTToken(secret, time.Now())
	if err != nil {
		log.Fatal(err)
	}
	var m handler.Meta
	m.SetHTTPHead([]byte("POST / HTTP/1.1\r\nAuthorization: Bearer " + token + "\r\n\r\n"))
	fmt.Println(j.Authorize(&m))

	old, _ := auth.NewJWTToken(secret, time.Now().Add(-2*time.Minute))
	m.SetHTTPHead([]byte("POST / HTTP/1.1\r\nAuthorization: Bearer " + old + "\r\n\r\n"))
	_, err = j.Authorize(&m)
	fmt.Println(err, errors.Is(err, handler.ErrUnauthenticated))
	// Output:
	// [engine] <nil>
	// jetrpc: missing or invalid credentials: stale token true
}

func ExampleNewJWTToken() {
	secret := []byte("a secret of 32 bytes, at random!")
	token, err := auth.NewJWTToken(secret, time.Unix(1700000000, 0))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("Authorization: Bearer " + token)
	// Output:
	// Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpYXQiOjE3MDAwMDAwMDB9.pszGurUkVTiIS5JTtQEwrzJUG_Kzhl2WZolUwX4iU8o
}

func ExampleLoadJWTSecret() {
	dir, err := os.MkdirTemp("", "jwt")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "jwtsecret")
	// geth's format: 32 bytes in hex, 0x optional.
	hex := "0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n"
	if err := os.WriteFile(path, []byte(hex), 0o600); err != nil {
		log.Fatal(err)
	}
	secret, err := auth.LoadJWTSecret(path)
	fmt.Println(len(secret), err)

	if err := os.WriteFile(path, []byte("0x0102"), 0o600); err != nil {
		log.Fatal(err)
	}
	_, err = auth.LoadJWTSecret(path)
	fmt.Println(err != nil)
	// Output:
	// 32 <nil>
	// true
}

func ExampleAny() {
	keys := auth.NewKeys(map[string]handler.Grants{"0123456789abcdef0123456789abcdef": {"admin"}})
	secret := []byte("a secret of 32 bytes, at random!")
	j := auth.NewJWT(secret, handler.Grants{"engine"})
	authorize := auth.Any(keys.Authorize, j.Authorize) // engine.WithAuthorize(authorize)

	token, _ := auth.NewJWTToken(secret, time.Now())
	for _, bearer := range []string{"0123456789abcdef0123456789abcdef", token, "guess"} {
		var m handler.Meta
		m.SetHTTPHead([]byte("POST / HTTP/1.1\r\nAuthorization: Bearer " + bearer + "\r\n\r\n"))
		fmt.Println(authorize(&m))
	}
	// Output:
	// [admin] <nil>
	// [engine] <nil>
	// [] jetrpc: missing or invalid credentials: unknown API key
}

func ExampleIPFilter_Allowed() {
	f, err := auth.NewIPFilter(
		[]string{"10.0.0.0/8", "127.0.0.1", "::1"}, // allow
		[]string{"10.66.0.0/16"},                   // deny
	)
	if err != nil {
		log.Fatal(err)
	}
	// engine.Options{AcceptConn: f.Allowed}
	for _, addr := range []net.Addr{
		&net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 50000},
		&net.TCPAddr{IP: net.ParseIP("10.66.2.3"), Port: 50000},
		&net.TCPAddr{IP: net.ParseIP("::ffff:127.0.0.1"), Port: 50000},
		&net.TCPAddr{IP: net.ParseIP("192.0.2.1"), Port: 50000},
		&net.UnixAddr{Name: "/run/jetrpc.sock", Net: "unix"},
	} {
		fmt.Println(addr, f.Allowed(addr))
	}
	// Output:
	// 10.1.2.3:50000 true
	// 10.66.2.3:50000 false
	// 127.0.0.1:50000 true
	// 192.0.2.1:50000 false
	// /run/jetrpc.sock true
}

func ExampleIPFilter_Authorize() {
	f, err := auth.NewIPFilter(nil, []string{"192.0.2.0/24"})
	if err != nil {
		log.Fatal(err)
	}
	m := handler.Meta{Remote: &net.TCPAddr{IP: net.ParseIP("192.0.2.9"), Port: 50000}}
	_, err = f.Authorize(&m)
	fmt.Println(err, handler.AuthStatus(err))
	// Output:
	// jetrpc: access denied 403
}
