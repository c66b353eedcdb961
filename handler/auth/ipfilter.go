package auth

import (
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/jetrpc/jetrpc/handler"
)

// IPFilter decides from a caller's IP address whether it may connect:
// an allow list and a deny list of networks. Build it with NewIPFilter;
// it is immutable from then on, and its methods are safe from any
// goroutine. A nil *IPFilter allows everything.
//
// Use Allowed as the engine's connection hook (engine.Options.AcceptConn),
// which refuses a connection before reading a byte of it, or Authorize
// as an Authorizer (net/http, or with Any).
type IPFilter struct {
	allow, deny []netip.Prefix // immutable; masked, IPv4 as 4-byte addresses
}

// NewIPFilter returns a filter that allows the addresses in the networks
// of allow, except those in the networks of deny. Each entry is a CIDR
// ("10.0.0.0/8", "fd00::/8") or a single address ("127.0.0.1", "::1");
// an IPv4-mapped IPv6 entry ("::ffff:10.0.0.0/104") stands for its IPv4
// network. An empty allow list allows every address not denied. An entry
// that does not parse, or has a zone ("fe80::1%eth0"), is an error
// naming it.
func NewIPFilter(allow, deny []string) (*IPFilter, error) {
	f := new(IPFilter)
	var err error
	if f.allow, err = parsePrefixes("allow", allow); err != nil {
		return nil, err
	}
	if f.deny, err = parsePrefixes("deny", deny); err != nil {
		return nil, err
	}
	return f, nil
}

// parsePrefixes parses the entries of list, named name in errors.
func parsePrefixes(name string, list []string) ([]netip.Prefix, error) {
	ps := make([]netip.Prefix, 0, len(list))
	for _, s := range list {
		p, err := parsePrefix(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("jetrpc: IP %s list: %w", name, err)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// parsePrefix parses a CIDR or a single address into a masked prefix,
// IPv4-mapped ones made IPv4.
func parsePrefix(s string) (netip.Prefix, error) {
	var p netip.Prefix
	if strings.IndexByte(s, '/') >= 0 {
		var err error
		if p, err = netip.ParsePrefix(s); err != nil {
			return netip.Prefix{}, err
		}
	} else {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, err
		}
		if a.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("address %q: zones are not supported", s)
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}

// Allowed reports whether a client at addr may connect: false if its IP
// address is in a denied network (deny wins), else true if it is in an
// allowed network or the allow list is empty. An IPv4-mapped IPv6
// address (::ffff:10.1.2.3) is matched as IPv4, and a zone is ignored.
//
// An address that is not an IP address is not in any list: a Unix socket
// (*net.UnixAddr, or any address whose Network is "unix", "unixgram" or
// "unixpacket") is always allowed, since the socket file's permissions
// guard it and it has no IP to filter by; any other (nil, or an address
// that does not parse) is allowed only when the allow list is empty.
//
// It does not allocate for *net.TCPAddr, *net.UDPAddr and *net.IPAddr.
// Event loop safe: it does not block. Safe from any goroutine.
func (f *IPFilter) Allowed(addr net.Addr) bool {
	if f == nil {
		return true
	}
	var ip netip.Addr
	switch a := addr.(type) {
	case *net.TCPAddr:
		ip, _ = netip.AddrFromSlice(a.IP)
	case *net.UDPAddr:
		ip, _ = netip.AddrFromSlice(a.IP)
	case *net.IPAddr:
		ip, _ = netip.AddrFromSlice(a.IP)
	case *net.UnixAddr:
		return true
	case nil:
	default:
		switch addr.Network() {
		case "unix", "unixgram", "unixpacket":
			return true
		}
		ip = parseAddr(addr.String())
	}
	if !ip.IsValid() {
		return len(f.allow) == 0
	}
	return f.allowedIP(ip.Unmap())
}

// parseAddr parses "host:port" or a bare address; the zero Addr if s is
// neither.
func parseAddr(s string) netip.Addr {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().WithZone("")
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return a.WithZone("")
	}
	return netip.Addr{}
}

// AllowedIP reports whether a client at ip may connect, as Allowed does
// for its address. The invalid zero Addr is allowed only when the allow
// list is empty.
func (f *IPFilter) AllowedIP(ip netip.Addr) bool {
	if f == nil {
		return true
	}
	if !ip.IsValid() {
		return len(f.allow) == 0
	}
	return f.allowedIP(ip.Unmap().WithZone(""))
}

// allowedIP is Allowed for a valid, unmapped address without a zone.
func (f *IPFilter) allowedIP(ip netip.Addr) bool {
	for _, p := range f.deny {
		if p.Contains(ip) {
			return false
		}
	}
	if len(f.allow) == 0 {
		return true
	}
	for _, p := range f.allow {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// Authorize returns nil grants if Allowed(m.Remote), else
// handler.ErrAccessDenied (HTTP 403). The method value f.Authorize is a
// handler.Authorizer, for net/http or to combine with Any; on the engine,
// prefer Allowed as the connection hook. It does not allocate for a TCP
// address. Safe from any goroutine.
func (f *IPFilter) Authorize(m *handler.Meta) (handler.Grants, error) {
	if !f.Allowed(m.Remote) {
		return nil, handler.ErrAccessDenied
	}
	return nil, nil
}
