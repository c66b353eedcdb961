package httprules_test

// Tests of the browser checks (cors.go): AllowOrigin, OriginAllowed,
// PreflightHeaders and HostAllowed, on strings and on bytes.

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler/httprules"
	"github.com/jetrpc/jetrpc/handler/internal/testkit"
)

func TestAllowOrigin(t *testing.T) {
	exact := &httprules.CORS{Origins: []string{"https://App.example", "http://localhost:3000"}}
	star := &httprules.CORS{Origins: []string{"*"}}
	anyLater := &httprules.CORS{Origins: []string{"https://a.example", "*"}}
	none := &httprules.CORS{}
	for _, tc := range []struct {
		at     string
		c      *httprules.CORS
		origin string
		value  string
		ok     bool
	}{
		{here(), exact, "https://App.example", "https://App.example", true},
		{here(), exact, "https://app.example", "https://App.example", true},
		{here(), exact, "HTTPS://APP.EXAMPLE", "https://App.example", true},
		{here(), exact, "http://localhost:3000", "http://localhost:3000", true},
		{here(), exact, "http://localhost:3001", "", false},
		{here(), exact, "http://localhost", "", false},
		{here(), exact, "https://app.example.evil.com", "", false},
		{here(), exact, "https://evil.com/https://app.example", "", false},
		{here(), exact, "https://app.exampl", "", false},
		{here(), exact, "null", "", false},
		{here(), exact, "", "", false},
		{here(), star, "https://whatever.example", "*", true},
		{here(), star, "null", "*", true},
		{here(), star, "", "", false},
		{here(), anyLater, "https://other.example", "*", true},
		{here(), none, "https://app.example", "", false},
		{here(), none, "", "", false},
	} {
		v, ok := httprules.AllowOrigin(tc.c, tc.origin)
		vb, okb := httprules.AllowOrigin(tc.c, []byte(tc.origin))
		if v != tc.value || ok != tc.ok || vb != v || okb != ok {
			t.Errorf("%s: AllowOrigin(%v, %q) = %q %v (bytes %q %v), want %q %v", tc.at, tc.c.Origins, tc.origin, v, ok, vb, okb, tc.value, tc.ok)
		}
	}
	if none.Enabled() || !exact.Enabled() || !star.Enabled() {
		t.Error("Enabled")
	}
}

func TestOriginAllowed(t *testing.T) {
	exact := &httprules.CORS{Origins: []string{"https://app.example"}}
	for _, tc := range []struct {
		at     string
		c      *httprules.CORS
		origin string
		want   bool
	}{
		{here(), &httprules.CORS{}, "https://any.example", true}, // no list: WebSocket default
		{here(), &httprules.CORS{}, "", true},
		{here(), exact, "", true}, // not a browser
		{here(), exact, "https://APP.example", true},
		{here(), exact, "https://evil.example", false},
		{here(), exact, "null", false},
		{here(), &httprules.CORS{Origins: []string{"*"}}, "https://evil.example", true},
	} {
		if got := httprules.OriginAllowed(tc.c, tc.origin); got != tc.want {
			t.Errorf("%s: OriginAllowed(%v, %q) = %v", tc.at, tc.c.Origins, tc.origin, got)
		}
		if got := httprules.OriginAllowed(tc.c, []byte(tc.origin)); got != tc.want {
			t.Errorf("%s: OriginAllowed bytes(%v, %q) = %v", tc.at, tc.c.Origins, tc.origin, got)
		}
	}
}

func TestCORS_preflightHeaders(t *testing.T) {
	const methods = "Access-Control-Allow-Methods: POST, GET, OPTIONS\r\n"
	for _, tc := range []struct {
		at   string
		c    httprules.CORS
		want string
	}{
		{here(), httprules.CORS{}, methods + "Access-Control-Allow-Headers: Content-Type, Authorization\r\nAccess-Control-Max-Age: 600\r\n"},
		{here(), httprules.CORS{Headers: []string{"X-A", "X-B", "Content-Type"}, MaxAge: 90 * time.Second},
			methods + "Access-Control-Allow-Headers: X-A, X-B, Content-Type\r\nAccess-Control-Max-Age: 90\r\n"},
		{here(), httprules.CORS{Headers: []string{}, MaxAge: -1}, methods},
		{here(), httprules.CORS{MaxAge: -time.Hour}, methods + "Access-Control-Allow-Headers: Content-Type, Authorization\r\n"},
		{here(), httprules.CORS{Headers: []string{"X"}, MaxAge: 24 * time.Hour}, methods + "Access-Control-Allow-Headers: X\r\nAccess-Control-Max-Age: 86400\r\n"},
	} {
		if got := tc.c.PreflightHeaders(); got != tc.want {
			t.Errorf("%s: PreflightHeaders\n got %q\nwant %q", tc.at, got, tc.want)
		}
	}
}

func TestHostAllowed(t *testing.T) {
	local := []string{"localhost"}
	for _, tc := range []struct {
		at    string
		hosts []string
		host  string
		want  bool
	}{
		{here(), nil, "evil.com", true},
		{here(), []string{}, "evil.com:80", true},
		{here(), []string{"*"}, "evil.com", true},
		{here(), []string{"a.example", "*"}, "evil.com:8080", true},
		{here(), local, "localhost", true},
		{here(), local, "localhost:8545", true},
		{here(), local, "LocalHost:8545", true},
		{here(), local, "localhost:", true},
		{here(), local, "localhost.evil.com", false},
		{here(), local, "localhost.evil.com:8545", false},
		{here(), local, "evil-localhost", false},
		{here(), local, "localhos", false},
		{here(), local, "localhost:abc", false},
		{here(), local, "evil.com", false},
		{here(), local, "evil.com:8545", false},
		{here(), local, "", true}, // no browser sends no Host
		{here(), local, "127.0.0.1", true},
		{here(), local, "127.0.0.1:8545", true},
		{here(), local, "10.0.0.255", true},
		{here(), local, "[::1]", true},
		{here(), local, "[::1]:8080", true},
		{here(), local, "[2001:db8::1]:443", true},
		{here(), local, "1.2.3", false},
		{here(), local, "1.2.3:80", false},
		{here(), local, "1.2.3.4.5", false},
		{here(), local, "1..2.3", false},
		{here(), local, "1.2.3.", false},
		{here(), local, ".1.2.3", false},
		{here(), local, "1234.1.1.1", false},
		{here(), local, "1.2.3.4.evil.com", false},
		{here(), local, "[::1", false},
		{here(), local, ":8545", false},
		{here(), local, "8545", false},
		{here(), []string{"*"}, ":8545", true},
		{here(), []string{"Node.Example", "other"}, "node.example:1", true},
		{here(), []string{"node.example"}, "NODE.EXAMPLE", true},
		{here(), []string{"node.example"}, "node.example.", false},
		// Only a real IP address is one. A bracketed name counted as an IPv6 literal (found by an attack pass).
		{here(), local, "[evil.com]", false},
		{here(), local, "[evil.com]:80", false},
		{here(), local, "[]", false},
		{here(), local, "[::]", true},
		{here(), local, "[::ffff:127.0.0.1]", true},
		{here(), local, "[fe80::1%25eth0]", false},
		{here(), local, "[1:2:3:4:5:6:7:8]", true},
		{here(), local, "[1:2:3:4:5:6:7:8:9]", false},
		{here(), local, "[1::2::3]", false},
		{here(), local, "[12345::1]", false},
		{here(), local, "[::1", false},
		{here(), local, "::1", false},
		{here(), local, "256.1.1.1", false},
		{here(), local, "01.2.3.4", false},
		{here(), local, "0.0.0.0", true},
	} {
		if got := httprules.HostAllowed(tc.hosts, tc.host); got != tc.want {
			t.Errorf("%s: HostAllowed(%q, %q) = %v, want %v", tc.at, tc.hosts, tc.host, got, tc.want)
		}
		if got := httprules.HostAllowed(tc.hosts, []byte(tc.host)); got != tc.want {
			t.Errorf("%s: HostAllowed(%q, bytes %q) = %v, want %v", tc.at, tc.hosts, tc.host, got, tc.want)
		}
	}
}

// A strict list (HostAllowedStrict) admits only its names: no IP
// address it does not name, no empty or missing Host.
func TestHostAllowedStrict(t *testing.T) {
	list := []string{"rpc.example", "10.0.0.7", "[::1]"}
	for _, tc := range []struct {
		at    string
		hosts []string
		host  string
		want  bool
	}{
		{here(), list, "rpc.example", true},
		{here(), list, "RPC.example:443", true},
		{here(), list, "10.0.0.7:8545", true},
		{here(), list, "[::1]:8545", true},
		{here(), list, "127.0.0.1", false},
		{here(), list, "[2001:db8::1]", false},
		{here(), list, "", false},
		{here(), list, ":8545", false},
		{here(), list, "evil.com", false},
		{here(), []string{"*"}, "", true},
		{here(), []string{"*"}, "127.0.0.1", true},
		{here(), nil, "", true}, // no list: no check
	} {
		if got := httprules.HostAllowedStrict(tc.hosts, tc.host); got != tc.want {
			t.Errorf("%s: HostAllowedStrict(%q, %q) = %v, want %v", tc.at, tc.hosts, tc.host, got, tc.want)
		}
		if got := httprules.HostAllowedStrict(tc.hosts, []byte(tc.host)); got != tc.want {
			t.Errorf("%s: HostAllowedStrict(%q, bytes %q) = %v, want %v", tc.at, tc.hosts, tc.host, got, tc.want)
		}
	}
}

// FuzzHostAllowed_ipLiterals: a Host passes a list of names it is not in
// exactly when it is an IP address as net/netip reads one (IPv6 in
// brackets, without a zone), with or without a port.
func FuzzHostAllowed_ipLiterals(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "[::1]", "[evil.com]", "[::ffff:1.2.3.4]", "1.2.3", "[1::2::3]", "[fe80::1%eth0]", "01.2.3.4", "[0:0:0:0:0:0:0:0]", "[::1.2.3.4]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		got := httprules.HostAllowed([]string{"name.invalid"}, host)
		want := host == ""
		name := host
		if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
			if port := host[i+1:]; strings.Trim(port, "0123456789") == "" {
				name = host[:i]
			}
		}
		if strings.HasPrefix(name, "[") && strings.HasSuffix(name, "]") && len(name) >= 2 {
			a, err := netip.ParseAddr(name[1 : len(name)-1])
			want = want || err == nil && a.Is6() && a.Zone() == ""
		} else if a, err := netip.ParseAddr(name); err == nil && a.Is4() {
			want = true
		}
		if strings.EqualFold(name, "name.invalid") {
			want = true
		}
		if got != want {
			t.Fatalf("HostAllowed(%q) = %v; want %v", host, got, want)
		}
	})
}

func TestAcceptableContentType_mediaTypes(t *testing.T) {
	for v, want := range map[string]bool{
		"": true, "application/json": true, "Application/JSON; charset=UTF-8": true,
		"application/json-rpc": true, "application/jsonrequest": true,
		"text/json": false, "application/xml": false, "application/json+x": false, ";;": false,
	} {
		if got := httprules.AcceptableContentType(v); got != want {
			t.Errorf("%q: %v, want %v", v, got, want)
		}
	}
}

// here returns the file:line of its caller, to name a table's case.
func here() string { return testkit.CallerLine(2) }
