package bench

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/golang-jwt/jwt/v5"
)

// testSecret is a JWT secret of the tests, as geth's jwt.hex holds one.
const testSecretHex = "0x7365637265742d6f662d7468652d6a657472706b2d62656e63682d7465737473"

func testSecret(t *testing.T) []byte {
	t.Helper()
	s, err := ParseJWTSecret([]byte("  " + testSecretHex + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkJWT verifies a header value "Bearer <token>" as geth's
// authentication does: HS256 with secret, an iat within 60 s of now, and
// no other claim. It returns the iat.
func checkJWT(t *testing.T, auth string, secret []byte) int64 {
	t.Helper()
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		t.Fatalf("Authorization %q: not a bearer token", auth)
	}
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(tok, claims, func(*jwt.Token) (any, error) { return secret, nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithIssuedAt())
	if err != nil {
		t.Fatalf("token %q: %v", tok, err)
	}
	iat, err := claims.GetIssuedAt()
	if err != nil || iat == nil {
		t.Fatalf("token %q: iat %v, %v", tok, iat, err)
	}
	if d := time.Since(iat.Time); d < -60*time.Second || d > 60*time.Second {
		t.Errorf("token %q: iat %v is %v from now", tok, iat.Time, d)
	}
	if len(claims) != 1 {
		t.Errorf("token %q: claims %v, want iat only", tok, claims)
	}
	return iat.Unix()
}

// headerLog records the values of some headers of every request a test
// server gets; safe from any goroutine.
type headerLog struct {
	mu     sync.Mutex
	values map[string]map[string]int // header name (canonical) → value → requests
}

func (l *headerLog) add(name, value string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.values == nil {
		l.values = map[string]map[string]int{}
	}
	name = http.CanonicalHeaderKey(name)
	if l.values[name] == nil {
		l.values[name] = map[string]int{}
	}
	l.values[name][value]++
}

// get returns the values recorded for name, and the requests of each.
func (l *headerLog) get(name string) map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.values[http.CanonicalHeaderKey(name)]
}

// recordingHTTPServer is a net/http JSON-RPC server that records every
// request's headers and answers each call with okReply.
func recordingHTTPServer(t *testing.T, log *headerLog) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for name, values := range r.Header {
			for _, v := range values {
				log.add(name, v)
			}
		}
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, okReply(requestIDs(string(b))[0]))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/rpc"
}

// recordingWSServer is a WebSocket JSON-RPC server that records the
// headers of every upgrade request and answers each call with okReply.
func recordingWSServer(t *testing.T, log *headerLog) string {
	return "ws://" + fakeServer(t, func(c net.Conn) {
		u := ws.Upgrader{OnHeader: func(key, value []byte) error {
			log.add(string(key), string(value))
			return nil
		}}
		if _, err := u.Upgrade(c); err != nil {
			return
		}
		br := bufio.NewReader(c)
		for {
			h, err := ws.ReadHeader(br)
			if err != nil {
				return
			}
			p := make([]byte, h.Length)
			if _, err := io.ReadFull(br, p); err != nil {
				return
			}
			ws.Cipher(p, h.Mask, 0)
			r := []byte(okReply(requestIDs(string(p))[0]))
			if ws.WriteHeader(c, ws.Header{Fin: true, OpCode: ws.OpText, Length: int64(len(r))}) != nil {
				return
			}
			if _, err := c.Write(r); err != nil {
				return
			}
		}
	}) + "/"
}

// TestRun_headersAndJWT: Config.Header and a JWT arrive with every HTTP
// request, in the open and the closed loop, and with every WebSocket
// upgrade; the token verifies as geth verifies it.
func TestRun_headersAndJWT(t *testing.T) {
	secret := testSecret(t)
	header := http.Header{}
	header.Add("X-Api-Key", "k-123")
	header.Add("X-Multi", "a")
	header.Add("X-Multi", "b c")
	for _, c := range []struct {
		name   string
		server func(*testing.T, *headerLog) string
		rate   float64
		reqs   int // requests that carry the headers: each HTTP request, or each connection's upgrade
	}{
		{"http closed loop", recordingHTTPServer, 0, 200},
		{"http open loop", recordingHTTPServer, 2000, 200},
		{"websocket", recordingWSServer, 0, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log headerLog
			target := c.server(t, &log)
			res := mustRun(t, Config{Target: target, Conns: 2, Requests: 200, Rate: c.rate, Header: header, JWTSecret: secret, Timeout: 5 * time.Second})
			if res.TotalErrors() != 0 || res.Requests != 200 {
				t.Fatalf("requests %d, errors %v", res.Requests, res.Errors)
			}
			if got := log.get("X-Api-Key"); got["k-123"] != c.reqs || len(got) != 1 {
				t.Errorf("X-Api-Key: %v, want k-123 × %d", got, c.reqs)
			}
			if got := log.get("X-Multi"); got["a"] != c.reqs || got["b c"] != c.reqs || len(got) != 2 {
				t.Errorf("X-Multi: %v, want a and b c × %d", got, c.reqs)
			}
			auths := log.get("Authorization")
			n := 0
			for auth, k := range auths {
				checkJWT(t, auth, secret)
				n += k
			}
			if n != c.reqs {
				t.Errorf("Authorization on %d requests, want %d: %v", n, c.reqs, auths)
			}
		})
	}
}

// TestRun_jwtRefresh: the token is re-minted every JWTRefresh during a
// run, on connections already open: requests carry tokens of at least
// two iat seconds over a run that spans more than a second.
func TestRun_jwtRefresh(t *testing.T) {
	secret := testSecret(t)
	var log headerLog
	target := recordingHTTPServer(t, &log)
	res := mustRun(t, Config{Target: target, Conns: 1, Rate: 200, Duration: 1500 * time.Millisecond,
		JWTSecret: secret, JWTRefresh: 100 * time.Millisecond})
	if res.TotalErrors() != 0 {
		t.Fatalf("errors %v", res.Errors)
	}
	iats := map[int64]int{}
	for auth, k := range log.get("Authorization") {
		iats[checkJWT(t, auth, secret)] += k
	}
	if len(iats) < 2 {
		t.Fatalf("iat values %v over 1.5 s with a refresh every 100 ms, want 2 or more", iats)
	}
}

// TestRunner_startJWT: the refresher publishes new heads, each with its
// token, and none after stop.
func TestRunner_startJWT(t *testing.T) {
	r := newRunner(Config{JWTSecret: testSecret(t), JWTRefresh: time.Millisecond}, target{http: true, host: "h", path: "/"}, nil)
	stop, err := r.startJWT()
	if err != nil {
		t.Fatal(err)
	}
	first := r.head.Load()
	time.Sleep(20 * time.Millisecond)
	stop()
	last := r.head.Load()
	if last == first {
		t.Error("the head was not rebuilt")
	}
	want := "POST / HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer " + last.token + "\r\nContent-Type: application/json\r\nContent-Length: "
	if string(last.text) != want {
		t.Errorf("head %q, want %q", last.text, want)
	}
	time.Sleep(10 * time.Millisecond)
	if r.head.Load() != last {
		t.Error("the head changed after stop")
	}
}

// TestRun_headerErrors: headers a stream cannot carry, bad names and
// values, the tool's own headers, Authorization next to a JWT secret and
// a negative refresh are config errors.
func TestRun_headerErrors(t *testing.T) {
	secret := testSecret(t)
	h := func(name, value string) http.Header { return http.Header{name: {value}} }
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Target: "tcp://127.0.0.1:1", Header: h("X-A", "1")}, "raw stream"},
		{Config{Target: "unix:///tmp/x.sock", JWTSecret: secret}, "raw stream"},
		{Config{Target: "http://127.0.0.1:1/", Header: h("Bad Name", "1")}, "not an HTTP token"},
		{Config{Target: "http://127.0.0.1:1/", Header: h("X-A", "1\r\nX-B: 2")}, "control character"},
		{Config{Target: "http://127.0.0.1:1/", Header: h("content-length", "1")}, "tool's own"},
		{Config{Target: "ws://127.0.0.1:1/", Header: h("Sec-WebSocket-Protocol", "x")}, "Sec-WebSocket-*"},
		{Config{Target: "http://127.0.0.1:1/", Header: h("Authorization", "Basic x"), JWTSecret: secret}, "JWT"},
		{Config{Target: "http://127.0.0.1:1/", JWTSecret: secret, JWTRefresh: -time.Second}, "negative JWT refresh"},
	} {
		_, err := Run(context.Background(), c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %v: err %v, want one with %q", c.cfg.Target, c.cfg.Header, err, c.want)
		}
	}
}

// TestParseHeader: the 'Name: Value' lines -header takes.
func TestParseHeader(t *testing.T) {
	for _, c := range []struct {
		line, name, value, err string
	}{
		{line: "X-Api-Key: abc", name: "X-Api-Key", value: "abc"},
		{line: "x-api-key:abc", name: "x-api-key", value: "abc"},
		{line: "X-A: \t a b \t", name: "X-A", value: "a b"},
		{line: "X-Empty:", name: "X-Empty", value: ""},
		{line: "X-Colons: a:b:c", name: "X-Colons", value: "a:b:c"},
		{line: "Authorization: Bearer x.y.z", name: "Authorization", value: "Bearer x.y.z"},
		{line: "!#$%&'*+-.^_`|~09az: v", name: "!#$%&'*+-.^_`|~09az", value: "v"},
		{line: "X-Tab: a\tb", name: "X-Tab", value: "a\tb"},
		{line: "NoColon", err: "want 'Name: Value'"},
		{line: ": v", err: "without a name"},
		{line: "X A: v", err: "not an HTTP token"},
		{line: "X-A : v", err: "not an HTTP token"},
		{line: "X(A): v", err: "not an HTTP token"},
		{line: "X-A: a\rb", err: "control character"},
		{line: "X-A: a\nX-B: b", err: "control character"},
		{line: "X-A: a\x00", err: "control character"},
		{line: "host: x", err: "tool's own"},
		{line: "Content-Type: text/plain", err: "tool's own"},
		{line: "CONTENT-LENGTH: 3", err: "tool's own"},
		{line: "Transfer-Encoding: chunked", err: "tool's own"},
		{line: "Connection: close", err: "tool's own"},
		{line: "Upgrade: h2c", err: "tool's own"},
		{line: "sec-websocket-key: x", err: "Sec-WebSocket-*"},
		{line: "Sec-WebSocket-Protocol: x", err: "Sec-WebSocket-*"},
	} {
		name, value, err := ParseHeader(c.line)
		switch {
		case c.err == "" && (err != nil || name != c.name || value != c.value):
			t.Errorf("%q: %q %q %v; want %q %q", c.line, name, value, err, c.name, c.value)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: err %v; want one with %q", c.line, err, c.err)
		}
	}
}

// TestParseJWTSecret: geth's jwt.hex format.
func TestParseJWTSecret(t *testing.T) {
	const hex64 = "7365637265742d6f662d7468652d6a657472706b2d62656e63682d7465737473"
	for _, c := range []struct {
		text string
		ok   bool
	}{
		{hex64, true},
		{"0x" + hex64, true},
		{"0X" + hex64, true},
		{" \n\t0x" + hex64 + "\r\n", true},
		{strings.ToUpper(hex64), true},
		{"", false},
		{"0x", false},
		{hex64[:62], false},
		{hex64 + "00", false},
		{hex64[:63] + "g", false},
		{hex64[:63], false},
		{"0x 0x" + hex64, false},
	} {
		s, err := ParseJWTSecret([]byte(c.text))
		if (err == nil) != c.ok || (c.ok && len(s) != 32) {
			t.Errorf("%q: %d bytes, err %v; want ok %v", c.text, len(s), err, c.ok)
		}
	}
}

// TestMintJWT: the token is HS256 with the one claim iat, in whole
// seconds.
func TestMintJWT(t *testing.T) {
	secret := testSecret(t)
	now := time.Now()
	tok, err := mintJWT(secret, now)
	if err != nil {
		t.Fatal(err)
	}
	if iat := checkJWT(t, "Bearer "+tok, secret); iat != now.Unix() {
		t.Errorf("iat %d, want %d", iat, now.Unix())
	}
	if _, err := jwt.Parse(tok, func(*jwt.Token) (any, error) { return []byte("other"), nil }); err == nil {
		t.Error("the token verifies with another secret")
	}
}
