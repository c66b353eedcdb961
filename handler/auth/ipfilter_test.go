package auth_test

import (
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/auth"
)

// otherAddr is a net.Addr of a type IPFilter does not know.
type otherAddr struct{ network, s string }

func (a otherAddr) Network() string { return a.network }
func (a otherAddr) String() string  { return a.s }

func TestIPFilter_Allowed(t *testing.T) {
	open := mustFilter(t, nil, nil)
	denyOnly := mustFilter(t, nil, []string{"10.0.0.0/8", "::1", "2001:db8::/32"})
	lan := mustFilter(t,
		[]string{"10.0.0.0/8", "192.168.1.7", "::1", "fd00::/8", " 127.0.0.1 "},
		[]string{"10.9.0.0/16", "fd00::bad", "::ffff:10.8.0.0/112"})
	mapped := mustFilter(t, []string{"::ffff:172.16.0.0/108", "::ffff:8.8.8.8"}, nil)
	unix := &net.UnixAddr{Name: "/run/jetrpc.sock", Net: "unix"}
	for _, c := range []struct {
		at   string
		f    *auth.IPFilter
		addr net.Addr
		want bool
	}{
		// No lists.
		{at: here(), f: open, addr: tcp("1.2.3.4"), want: true},
		{at: here(), f: open, addr: tcp("2001:db8::1"), want: true},
		{at: here(), f: open, addr: nil, want: true},
		{at: here(), f: nil, addr: tcp("1.2.3.4"), want: true},
		// Deny only: everything else allowed.
		{at: here(), f: denyOnly, addr: tcp("10.1.2.3"), want: false},
		{at: here(), f: denyOnly, addr: tcp("11.1.2.3"), want: true},
		{at: here(), f: denyOnly, addr: tcp("::1"), want: false},
		{at: here(), f: denyOnly, addr: tcp("::2"), want: true},
		{at: here(), f: denyOnly, addr: tcp("2001:db8:1::1"), want: false},
		{at: here(), f: denyOnly, addr: tcp("2001:db9::1"), want: true},
		{at: here(), f: denyOnly, addr: tcp("::ffff:10.1.2.3"), want: false}, // mapped
		{at: here(), f: denyOnly, addr: &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3).To4()}, want: false},
		{at: here(), f: denyOnly, addr: &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3).To16()}, want: false},
		{at: here(), f: denyOnly, addr: nil, want: true},
		{at: here(), f: denyOnly, addr: unix, want: true},
		// Allow and deny: deny wins.
		{at: here(), f: lan, addr: tcp("10.1.2.3"), want: true},
		{at: here(), f: lan, addr: tcp("10.9.2.3"), want: false},
		{at: here(), f: lan, addr: tcp("10.8.2.3"), want: false}, // denied as ::ffff:10.8.0.0/112
		{at: here(), f: lan, addr: tcp("::ffff:10.1.2.3"), want: true},
		{at: here(), f: lan, addr: tcp("::ffff:10.9.2.3"), want: false},
		{at: here(), f: lan, addr: tcp("192.168.1.7"), want: true},
		{at: here(), f: lan, addr: tcp("192.168.1.8"), want: false},
		{at: here(), f: lan, addr: tcp("127.0.0.1"), want: true},
		{at: here(), f: lan, addr: tcp("127.0.0.2"), want: false},
		{at: here(), f: lan, addr: tcp("::1"), want: true},
		{at: here(), f: lan, addr: &net.TCPAddr{IP: net.ParseIP("fe80::1"), Zone: "eth0"}, want: false},
		{at: here(), f: lan, addr: tcp("fd00::1"), want: true},
		{at: here(), f: lan, addr: &net.TCPAddr{IP: net.ParseIP("fd00::1"), Zone: "eth0"}, want: true},
		{at: here(), f: lan, addr: tcp("fd00::bad"), want: false},
		{at: here(), f: lan, addr: tcp("8.8.8.8"), want: false},
		{at: here(), f: lan, addr: tcp("::a00:1"), want: false}, // IPv4-compatible, not mapped
		{at: here(), f: lan, addr: &net.UDPAddr{IP: net.ParseIP("10.1.2.3")}, want: true},
		{at: here(), f: lan, addr: &net.IPAddr{IP: net.ParseIP("10.9.2.3")}, want: false},
		{at: here(), f: lan, addr: &net.TCPAddr{}, want: false},
		// Not IP: Unix sockets always; others only without an allow list.
		{at: here(), f: lan, addr: unix, want: true},
		{at: here(), f: lan, addr: &net.UnixAddr{Name: "@", Net: "unixpacket"}, want: true},
		{at: here(), f: lan, addr: otherAddr{"unix", "/run/x.sock"}, want: true},
		{at: here(), f: lan, addr: nil, want: false},
		{at: here(), f: lan, addr: otherAddr{"pipe", "pipe"}, want: false},
		{at: here(), f: open, addr: otherAddr{"pipe", "pipe"}, want: true},
		// Other types, parsed from String.
		{at: here(), f: lan, addr: otherAddr{"tcp", "10.1.2.3:80"}, want: true},
		{at: here(), f: lan, addr: otherAddr{"tcp", "10.9.2.3:80"}, want: false},
		{at: here(), f: lan, addr: otherAddr{"tcp", "[::ffff:10.1.2.3]:80"}, want: true},
		{at: here(), f: lan, addr: otherAddr{"ip", "::1"}, want: true},
		{at: here(), f: lan, addr: otherAddr{"tcp", "[fd00::1%eth0]:80"}, want: true},
		// IPv4-mapped entries.
		{at: here(), f: mapped, addr: tcp("172.20.1.1"), want: true},
		{at: here(), f: mapped, addr: tcp("172.32.1.1"), want: false},
		{at: here(), f: mapped, addr: tcp("8.8.8.8"), want: true},
		{at: here(), f: mapped, addr: tcp("::ffff:8.8.8.8"), want: true},
	} {
		if got := c.f.Allowed(c.addr); got != c.want {
			t.Errorf("%s: Allowed(%v) = %v; want %v", c.at, c.addr, got, c.want)
		}
		var m handler.Meta
		if c.addr != nil {
			m.Remote = c.addr
		}
		g, err := c.f.Authorize(&m)
		if g != nil || (err == nil) != c.want || (err != nil && (err != handler.ErrAccessDenied || handler.AuthStatus(err) != 403)) {
			t.Errorf("%s: Authorize = %q, %v; want nil, %v", c.at, g, err, map[bool]error{true: nil, false: handler.ErrAccessDenied}[c.want])
		}
	}
}

func TestIPFilter_AllowedIP(t *testing.T) {
	f := mustFilter(t, []string{"10.0.0.0/8"}, []string{"10.9.0.0/16"})
	for _, c := range []struct {
		at   string
		ip   netip.Addr
		want bool
	}{
		{at: here(), ip: netip.MustParseAddr("10.1.0.1"), want: true},
		{at: here(), ip: netip.MustParseAddr("::ffff:10.1.0.1"), want: true},
		{at: here(), ip: netip.MustParseAddr("::ffff:10.9.0.1"), want: false},
		{at: here(), ip: netip.MustParseAddr("11.1.0.1"), want: false},
		{at: here(), ip: netip.Addr{}, want: false},
	} {
		if got := f.AllowedIP(c.ip); got != c.want {
			t.Errorf("%s: AllowedIP(%v) = %v; want %v", c.at, c.ip, got, c.want)
		}
	}
	var nilFilter *auth.IPFilter
	if !nilFilter.AllowedIP(netip.Addr{}) {
		t.Error("nil filter refused")
	}
}

func TestNewIPFilter_errors(t *testing.T) {
	for _, c := range []struct {
		at          string
		allow, deny []string
		want        string
	}{
		{at: here(), allow: []string{"10.0.0.0/33"}, want: "allow list"},
		{at: here(), allow: []string{"10.0.0"}, want: "allow list"},
		{at: here(), allow: []string{""}, want: "allow list"},
		{at: here(), allow: []string{"localhost"}, want: "allow list"},
		{at: here(), deny: []string{"::1/129"}, want: "deny list"},
		{at: here(), deny: []string{"fe80::1%eth0"}, want: "zones are not supported"},
		{at: here(), deny: []string{"fe80::1%eth0/64"}, want: "deny list"},
		{at: here(), deny: []string{"10.0.0.1:80"}, want: "deny list"},
	} {
		f, err := auth.NewIPFilter(c.allow, c.deny)
		if err == nil || f != nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "jetrpc: ") {
			t.Errorf("%s: NewIPFilter = %v, %v; want an error with %q", c.at, f, err, c.want)
		}
	}
}

func mustFilter(t *testing.T, allow, deny []string) *auth.IPFilter {
	t.Helper()
	f, err := auth.NewIPFilter(allow, deny)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
