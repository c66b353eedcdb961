//go:build !race

package auth_test

import (
	"net"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/auth"
)

// TestKeys_Authorize_zeroAllocs guards the promise that checking an API
// key in the Authorization header allocates nothing: it runs for every
// HTTP request on the engine's event loop. Refusals are free too.
func TestKeys_Authorize_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	k := auth.NewKeys(map[string]handler.Grants{keyAdmin: {"admin"}})
	for _, c := range []struct {
		at string
		m  *handler.Meta
		ok bool
	}{
		{at: here(), m: httpMeta("/", "Content-Type: application/json", "Authorization: Bearer "+keyAdmin), ok: true},
		{at: here(), m: wsMeta("/", "Sec-WebSocket-Protocol: jsonrpc, bearer."+keyAdmin), ok: true},
		{at: here(), m: wsMeta("/?access_token=" + keyAdmin), ok: true},
		{at: here(), m: httpMeta("/", "Authorization: Bearer "+keyAdmin+keyAdmin+keyAdmin)}, // past []byte(s)'s 32-byte buffer
		{at: here(), m: httpMeta("/", "Authorization: Bearer x"+keyAdmin)},
		{at: here(), m: httpMeta("/")},
		{at: here(), m: &handler.Meta{Transport: handler.TransportStream}},
	} {
		allocs := testing.AllocsPerRun(100, func() {
			g, err := k.Authorize(c.m)
			if (err == nil) != c.ok || (c.ok && len(g) != 1) {
				t.Fatalf("%s: Authorize = %q, %v", c.at, g, err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: Authorize: %v allocs; want 0", c.at, allocs)
		}
	}
}

// TestToken_zeroAllocs: Token allocates nothing, whatever the source,
// unless the query needs percent-decoding or it must read the
// Sec-WebSocket-Protocol fields past the first (the first holds no
// token).
func TestToken_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	for _, c := range tokenCases {
		m := httpMeta(c.target, c.fields...)
		if allocs := testing.AllocsPerRun(100, func() { _ = auth.Token(m) }); allocs != 0 && !c.allocs {
			t.Errorf("%s: Token: %v allocs; want 0", c.at, allocs)
		}
	}
}

// TestIPFilter_zeroAllocs: Allowed and Authorize allocate nothing for a
// TCP address, IPv4, IPv6 or mapped.
func TestIPFilter_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	f, err := auth.NewIPFilter([]string{"10.0.0.0/8", "::1", "fd00::/8"}, []string{"10.9.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range []net.Addr{
		tcp("10.1.2.3"),
		tcp("10.9.2.3"),
		&net.TCPAddr{IP: net.IPv4(10, 1, 2, 3).To4()},
		tcp("::ffff:10.1.2.3"),
		tcp("::1"),
		&net.TCPAddr{IP: net.ParseIP("fd00::1"), Zone: "eth0"},
		tcp("8.8.8.8"),
		&net.UnixAddr{Name: "/run/x.sock", Net: "unix"},
		nil,
	} {
		m := &handler.Meta{Remote: addr}
		allocs := testing.AllocsPerRun(100, func() {
			_ = f.Allowed(addr)
			_, _ = f.Authorize(m)
		})
		if allocs != 0 {
			t.Errorf("Allowed(%v): %v allocs; want 0", addr, allocs)
		}
	}
}
