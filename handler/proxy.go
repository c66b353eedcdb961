package handler

// NOTE: the caller's address behind trusted proxies (httprules.Proxies):
// the header fields they name the client in, read when ClientIP is
// called, from the head the call already has.

import (
	"net/netip"

	"github.com/jetrpc/jetrpc/handler/httprules"
	"github.com/jetrpc/jetrpc/parser/http1"
)

// ClientIP returns the caller's IP address: the client a trusted proxy
// forwarded the call for (see httprules.Proxies.Forwarded) when the connection
// comes from one (Proxies is set) and it named one, else Remote's
// address; the zero Addr when there is none (in process, Unix sockets).
// The rate limits count calls by it. It allocates nothing.
func (m *Meta) ClientIP() netip.Addr {
	if m.Proxies != nil {
		var fields [8]string
		n := m.lastFields("X-Forwarded-For", &fields)
		if a := m.Proxies.Forwarded(fields[:n], m.Header("X-Real-IP")); a.IsValid() {
			return a
		}
	}
	return httprules.AddrIP(m.Remote)
}

// lastFields puts the values of the last len(fields) header fields
// named name into fields, in order, and returns how many there are.
func (m *Meta) lastFields(name string, fields *[8]string) int {
	n := 0
	add := func(v string) {
		if n == len(fields) {
			copy(fields[:], fields[1:])
			n--
		}
		fields[n] = v
		n++
	}
	if m.req != nil {
		for _, v := range m.req.Header.Values(name) {
			add(v)
		}
		return n
	}
	f := http1.NewFields(m.head)
	for k, v, ok := f.Next(); ok; k, v, ok = f.Next() {
		if len(k) == len(name) && httprules.EqualFold(k, name) {
			add(view(v))
		}
	}
	return n
}
