//go:build !race

package httprules_test

import (
	"testing"

	"github.com/jetrpc/jetrpc/handler/httprules"
)

// TestCORS_zeroAllocs: the browser checks on bytes allocate nothing.
func TestCORS_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	c := &httprules.CORS{Origins: []string{"https://a.example", "https://App.example"}}
	hosts := []string{"localhost", "node.example"}
	origin, host, ip := []byte("https://APP.example"), []byte("Node.Example:8545"), []byte("[::1]:8545")
	ok := true
	if got := testing.AllocsPerRun(200, func() {
		_, a := httprules.AllowOrigin(c, origin)
		ok = a && httprules.OriginAllowed(c, origin) && httprules.HostAllowed(hosts, host) && httprules.HostAllowed(hosts, ip) && httprules.HostAllowedStrict(hosts, host)
	}); got != 0 || !ok {
		t.Errorf("%v allocs per check, want 0 (allowed %v)", got, ok)
	}
}
