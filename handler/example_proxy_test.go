package handler_test

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"strings"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/httprules"
)

// Behind a trusted proxy, ClientIP is the client the proxy forwarded the
// call for, and the rate limits count by it; what the client wrote in
// X-Forwarded-For itself is ignored.
func ExampleMeta_ClientIP() {
	t := handler.NewTable()
	handler.RegisterNoParams(t, "whoami", func(ctx context.Context) (string, error) {
		m := handler.MetaFrom(ctx)
		return fmt.Sprintf("%s via %s", m.ClientIP(), m.Remote.(*net.TCPAddr).IP), nil
	})
	proxies, err := httprules.ParseProxies("10.0.0.0/8")
	if err != nil {
		panic(err)
	}
	h := &handler.HTTPHandler{Table: t, HTTPPolicy: handler.HTTPPolicy{TrustedProxies: proxies}}

	r := httptest.NewRequest("POST", "/", strings.NewReader(`{"jsonrpc":"2.0","method":"whoami","id":1}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-Forwarded-For", "6.6.6.6, 198.51.100.7") // the proxy appended 198.51.100.7
	r.RemoteAddr = "10.0.0.5:41000"                          // the proxy
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Println(w.Body.String())
	// Output: {"jsonrpc":"2.0","result":"198.51.100.7 via 10.0.0.5","id":1}
}
