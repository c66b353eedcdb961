package handler

// Tests of the client address behind trusted proxies (proxy.go):
// X-Forwarded-For read from the right past trusted proxies, X-Real-IP,
// refusals, the rate limit counting clients instead of their proxy, and
// no allocation.

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/handler/httprules"
	"github.com/jetrpc/jetrpc/handler/ratelimit"
)

// pxMeta returns the metadata of a request from remote with the header
// lines fields, its connection from a trusted proxy when trusted.
func pxMeta(t testing.TB, remote string, trusted httprules.Proxies, fields ...string) *Meta {
	t.Helper()
	head := "POST / HTTP/1.1\r\nHost: x\r\n" + strings.Join(fields, "\r\n")
	if len(fields) > 0 {
		head += "\r\n"
	}
	m := &Meta{Transport: TransportHTTP, Remote: net.TCPAddrFromAddrPort(netip.MustParseAddrPort(remote))}
	m.SetHTTPHead([]byte(head + "\r\n"))
	if trusted.ContainsAddr(m.Remote) {
		m.Proxies = trusted
	}
	return m
}

func TestMeta_clientIP(t *testing.T) {
	proxies, err := httprules.ParseProxies("10.0.0.0/8", "127.0.0.1", " ::1 ")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, remote string
		fields       []string
		want         string
	}{
		{"no proxy: the remote", "203.0.113.9:5000", []string{"X-Forwarded-For: 198.51.100.1"}, "203.0.113.9"},
		{"one proxy", "127.0.0.1:5000", []string{"X-Forwarded-For: 198.51.100.1"}, "198.51.100.1"},
		{"a client's own entries are ignored", "127.0.0.1:5000", []string{"X-Forwarded-For: 6.6.6.6, 198.51.100.1"}, "198.51.100.1"},
		{"two trusted proxies", "10.0.0.2:5000", []string{"X-Forwarded-For: 6.6.6.6, 198.51.100.1, 10.0.0.7"}, "198.51.100.1"},
		{"the last field counts", "127.0.0.1:5000", []string{"X-Forwarded-For: 6.6.6.6", "X-Forwarded-For: 198.51.100.1"}, "198.51.100.1"},
		{"all trusted: the leftmost", "127.0.0.1:5000", []string{"X-Forwarded-For: 10.1.1.1, 10.0.0.7"}, "10.1.1.1"},
		{"with ports", "127.0.0.1:5000", []string{"X-Forwarded-For: [2001:db8::1]:443, 198.51.100.1:8080"}, "198.51.100.1"},
		{"IPv6", "[::1]:5000", []string{"x-forwarded-for: 2001:db8::1"}, "2001:db8::1"},
		{"mapped IPv4", "127.0.0.1:5000", []string{"X-Forwarded-For: ::ffff:198.51.100.1"}, "198.51.100.1"},
		{"X-Real-IP", "127.0.0.1:5000", []string{"X-Real-IP: 198.51.100.1"}, "198.51.100.1"},
		{"X-Forwarded-For first", "127.0.0.1:5000", []string{"X-Real-IP: 6.6.6.6", "X-Forwarded-For: 198.51.100.1"}, "198.51.100.1"},
		{"a garbled entry: the proxy", "127.0.0.1:5000", []string{"X-Forwarded-For: 198.51.100.1, unknown"}, "127.0.0.1"},
		{"a zone: the proxy", "127.0.0.1:5000", []string{"X-Forwarded-For: fe80::1%eth0"}, "127.0.0.1"},
		{"an empty entry: the proxy", "127.0.0.1:5000", []string{"X-Forwarded-For: 198.51.100.1,"}, "127.0.0.1"},
		{"nothing named: the proxy", "127.0.0.1:5000", nil, "127.0.0.1"},
	} {
		m := pxMeta(t, tc.remote, proxies, tc.fields...)
		if got := m.ClientIP(); got != netip.MustParseAddr(tc.want) {
			t.Errorf("%s: ClientIP %v, want %s", tc.name, got, tc.want)
		}
	}
	if got := (&Meta{}).ClientIP(); got.IsValid() {
		t.Errorf("no remote: %v", got)
	}
	for _, bad := range []string{"10.0.0.0/33", "nope", "1.2.3"} {
		if _, err := httprules.ParseProxies(bad); err == nil {
			t.Errorf("httprules.ParseProxies(%q): no error", bad)
		}
	}
}

// The rate limit counts the clients behind a trusted proxy apart (each
// its own bucket, on one connection's Quota), and the calls of an
// untrusted proxy as its own.
func TestRateLimit_clientsBehindTrustedProxy(t *testing.T) {
	proxies, _ := httprules.ParseProxies("127.0.0.1")
	tab := NewTable(WithLogger(rvLogger()), WithRateLimit(ratelimit.Limits{Rate: 1e-9, Burst: 1}))
	RegisterNoParams(tab, "ping", func(context.Context) (int, error) { return 1, nil }, Inline())
	q := tab.NewQuota() // one upstream connection carries every client
	call := func(remote, client string) string {
		cc := &CallContext{Parent: context.Background()}
		cc.Meta = *pxMeta(t, remote, proxies, "X-Forwarded-For: "+client)
		cc.Meta.Quota = q
		return string(tab.Dispatch(cc, nil, []byte(`{"jsonrpc":"2.0","method":"ping","id":1}`)))
	}
	for _, client := range []string{"198.51.100.1", "198.51.100.2", "198.51.100.3"} {
		if got := call("127.0.0.1:5000", client); !strings.Contains(got, `"result":1`) {
			t.Fatalf("first call of %s: %s", client, got)
		}
	}
	if got := call("127.0.0.1:5000", "198.51.100.2"); !strings.Contains(got, `-32005`) {
		t.Fatalf("second call of 198.51.100.2: %s", got)
	}
	// Not trusted: its forwarded clients are one caller, the proxy.
	if got := call("192.0.2.1:5000", "198.51.100.4"); !strings.Contains(got, `"result":1`) {
		t.Fatalf("untrusted proxy, first call: %s", got)
	}
	if got := call("192.0.2.1:5000", "198.51.100.5"); !strings.Contains(got, `-32005`) {
		t.Fatalf("untrusted proxy, another client: %s", got)
	}
}

// ClientIP through a trusted proxy allocates nothing.
func TestMeta_clientIPZeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	proxies, _ := httprules.ParseProxies("10.0.0.0/8", "127.0.0.1")
	m := pxMeta(t, "127.0.0.1:5000", proxies, "X-Forwarded-For: 6.6.6.6, 2001:db8::1, 10.0.0.7", "X-Real-IP: 1.1.1.1")
	want := netip.MustParseAddr("2001:db8::1")
	if a := testing.AllocsPerRun(100, func() {
		if m.ClientIP() != want {
			t.Fatal("wrong client")
		}
	}); a != 0 {
		t.Errorf("ClientIP: %v allocations, want 0", a)
	}
}

// FuzzForwarded: any X-Forwarded-For value gives, without a panic, either
// the proxy itself or the address of one of its entries.
func FuzzForwarded(f *testing.F) {
	for _, s := range []string{"198.51.100.1", "6.6.6.6, 198.51.100.1", "[2001:db8::1]:443, 10.0.0.7", "fe80::1%eth0", "unknown,", " , ,", "::ffff:1.2.3.4"} {
		f.Add(s)
	}
	proxies, _ := httprules.ParseProxies("10.0.0.0/8", "127.0.0.1")
	f.Fuzz(func(t *testing.T, xff string) {
		if strings.ContainsAny(xff, "\r\n\x00") {
			return // not a field value
		}
		m := pxMeta(t, "127.0.0.1:5000", proxies, "X-Forwarded-For: "+xff)
		got := m.ClientIP()
		if got == netip.MustParseAddr("127.0.0.1") {
			return
		}
		for _, e := range strings.Split(xff, ",") {
			if a, ok := entryAddr(e); ok && a == got {
				return
			}
		}
		t.Fatalf("X-Forwarded-For %q: client %v is none of its entries", xff, got)
	})
}

// entryAddr parses one X-Forwarded-For entry, with or without a port:
// the fuzz test's oracle.
func entryAddr(e string) (netip.Addr, bool) {
	e = strings.TrimSpace(e)
	if a, err := netip.ParseAddr(e); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(e); err == nil {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}
