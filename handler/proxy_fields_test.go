package handler

// Edge cases of the client address behind proxies: several
// X-Forwarded-For fields, and prefixes in the IPv4-mapped form.

import (
	"net/netip"
	"testing"

	"github.com/jetrpc/jetrpc/handler/httprules"
)

// Two trusted proxies that each add their own X-Forwarded-For field (as
// HAProxy's option forwardfor does): the fields are one list (RFC 9110
// §5.3), so the client is found past the last one (only the last field
// was once read, naming the proxy 10.0.0.7).
func TestForwarded_fieldsAreOneList(t *testing.T) {
	proxies, err := httprules.ParseProxies("10.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	m := pxMeta(t, "10.0.0.2:5000", proxies, "X-Forwarded-For: 198.51.100.1", "X-Forwarded-For: 10.0.0.7")
	if got, want := m.ClientIP(), netip.MustParseAddr("198.51.100.1"); got != want {
		t.Errorf("ClientIP %v, want %v (the proxy named as the client)", got, want)
	}
}

// A prefix written in the IPv4-mapped form trusts its IPv4 addresses
// (it was once kept as an IPv6 prefix no unmapped address matched).
func TestParseProxies_mappedPrefix(t *testing.T) {
	p, err := httprules.ParseProxies("::ffff:10.0.0.0/104")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := httprules.ParseProxies("::ffff:10.0.0.0/90"); err == nil {
		t.Error("a mapped prefix shorter than /96: accepted")
	}
	for _, a := range []string{"10.0.0.1", "::ffff:10.0.0.1"} {
		if !p.Contains(netip.MustParseAddr(a)) {
			t.Errorf("::ffff:10.0.0.0/104 does not contain %s", a)
		}
	}
}
