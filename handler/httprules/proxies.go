package httprules

// NOTE: behind a proxy, a connection's remote address is the proxy's.
// The proxy names the client in X-Forwarded-For (each proxy appends the
// address it received the request from) or X-Real-IP. Only a proxy the
// transport trusts may name it, and only the entries that trusted
// proxies appended are believed: X-Forwarded-For is read from the right,
// skipping trusted proxies, and the first address that is not one is the
// client — whatever the client itself wrote to the left of it is
// ignored. The fields are read when handler.Meta.ClientIP is called, from the head
// the call already has: nothing is parsed or kept for calls that do not
// ask.

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Proxies are the address prefixes of the proxies that a transport
// trusts to name the client they forward a request for (see
// handler.Meta.ClientIP). Make them with ParseProxies or from netip.Prefix
// values; a nil Proxies trusts no proxy.
type Proxies []netip.Prefix

// ParseProxies parses addresses and prefixes ("10.0.0.0/8", "127.0.0.1",
// "::1") into Proxies; an address alone is its /32 or /128.
func ParseProxies(list ...string) (Proxies, error) {
	var p Proxies
	for _, s := range list {
		s = strings.TrimSpace(s)
		if strings.Contains(s, "/") {
			pr, err := netip.ParsePrefix(s)
			if err != nil {
				return nil, err
			}
			if pr.Addr().Is4In6() { // ::ffff:10.0.0.0/104 is 10.0.0.0/8: addresses are tested unmapped
				if pr.Bits() < 96 {
					return nil, fmt.Errorf("netip.ParsePrefix(%q): a mapped IPv4 prefix shorter than /96", s)
				}
				pr = netip.PrefixFrom(pr.Addr().Unmap(), pr.Bits()-96)
			}
			p = append(p, pr.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, err
		}
		a = a.Unmap()
		p = append(p, netip.PrefixFrom(a, a.BitLen()))
	}
	return p, nil
}

// Contains reports whether a is the address of a trusted proxy.
func (p Proxies) Contains(a netip.Addr) bool {
	a = a.Unmap()
	for _, pr := range p {
		if pr.Contains(a) {
			return true
		}
	}
	return false
}

// ContainsAddr reports whether the address of a net.Addr (a TCP, UDP or
// IP address) is that of a trusted proxy.
func (p Proxies) ContainsAddr(a net.Addr) bool {
	ip := AddrIP(a)
	return ip.IsValid() && p.Contains(ip)
}

// Forwarded returns the client address that the proxies in front of a
// request named, from its X-Forwarded-For fields xff (in order; all its
// fields are one list, as RFC 9110 says, for proxies that add a field
// rather than extend the last) and its X-Real-IP value realIP: in
// X-Forwarded-For the rightmost address that is not a trusted proxy (the
// leftmost when all are), else X-Real-IP; the zero Addr when the request
// has neither, or when an entry met before the client does not parse
// (nothing to its left can be believed). Entries may carry a port
// ("1.2.3.4:5", "[::1]:5"); addresses with a zone are refused. It
// allocates nothing. handler.Meta.ClientIP calls it with the request's
// last 8 X-Forwarded-For fields.
func (p Proxies) Forwarded(xff []string, realIP string) netip.Addr {
	if n := len(xff); n > 0 {
		var leftmost netip.Addr
		for f := n - 1; f >= 0; f-- {
			for rest := xff[f]; ; {
				i := strings.LastIndexByte(rest, ',')
				a, ok := parseForwardedAddr(rest[i+1:])
				if !ok {
					return netip.Addr{}
				}
				if !p.Contains(a) {
					return a
				}
				leftmost = a
				if i < 0 {
					break
				}
				rest = rest[:i]
			}
		}
		return leftmost
	}
	if a, ok := parseForwardedAddr(realIP); ok {
		return a
	}
	return netip.Addr{}
}

// parseForwardedAddr parses one address of X-Forwarded-For or
// X-Real-IP, with or without a port.
func parseForwardedAddr(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if s == "" || strings.IndexByte(s, '%') >= 0 { // a zone would be interned: not from a client
		return netip.Addr{}, false
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}

// AddrIP returns the IP address of a TCP, UDP or IP address, unmapped;
// the zero Addr for others (Unix sockets, nil).
func AddrIP(a net.Addr) netip.Addr {
	var ip net.IP
	switch a := a.(type) {
	case *net.TCPAddr:
		ip = a.IP
	case *net.UDPAddr:
		ip = a.IP
	case *net.IPAddr:
		ip = a.IP
	}
	addr, _ := netip.AddrFromSlice(ip)
	return addr.Unmap()
}
