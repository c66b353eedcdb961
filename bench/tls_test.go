package bench_test

// Tests of https:// targets (TLS): a Go TLS server with jetrpc's
// net/http adapter, in the closed and the open loop, and a certificate
// the tool does not trust.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/bench"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
)

func TestRun_https(t *testing.T) {
	tab := handler.NewTable()
	demo.Register(tab)
	srv := httptest.NewUnstartedServer(&handler.HTTPHandler{Table: tab})
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes below
	srv.StartTLS()
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	trusted := &tls.Config{RootCAs: roots}

	res := run(t, bench.Config{Target: srv.URL + "/", Requests: 2000, Conns: 4, Pipeline: 2, Warmup: -1, TLS: trusted})
	if res.TotalErrors() != 0 || res.Requests != 2000 {
		t.Fatalf("closed loop over TLS: %d requests, errors %v %v", res.Requests, res.Errors, res.ErrorDetail)
	}
	res = run(t, bench.Config{Target: srv.URL + "/", Rate: 400, Duration: 500 * time.Millisecond, Conns: 2, Warmup: -1, TLS: trusted, Batch: 3})
	if res.TotalErrors() != 0 || res.Requests < 150 || res.Calls != 3*res.Requests {
		t.Fatalf("open loop over TLS: %d requests, %d calls, errors %v %v", res.Requests, res.Calls, res.Errors, res.ErrorDetail)
	}

	// The system's roots do not hold the test server's certificate.
	res, err := bench.Run(t.Context(), bench.Config{Target: srv.URL + "/", Duration: 200 * time.Millisecond, Conns: 2, Warmup: -1})
	if err != nil {
		t.Fatal(err)
	}
	f := res.Failure()
	if res.Errors[bench.ErrTLS] == 0 || f == nil || !strings.HasPrefix(f.Error(), "could not make a TLS connection to "+srv.URL+"/: ") ||
		!strings.Contains(f.Error(), "certificate") {
		t.Fatalf("untrusted certificate: errors %v, failure %v", res.Errors, f)
	}
	// Nor does -insecure's config check anything.
	res = run(t, bench.Config{Target: srv.URL + "/", Requests: 100, Conns: 1, Warmup: -1, TLS: &tls.Config{InsecureSkipVerify: true}})
	if res.TotalErrors() != 0 {
		t.Fatalf("insecure: errors %v", res.Errors)
	}
}

// A reply larger than the read buffer (64 KiB) over TLS, in the closed
// loop on goroutines: the buffer grows, and every reply is checked.
func TestRun_httpsLargeReplies(t *testing.T) {
	tab := handler.NewTable()
	big := handler.Raw(`"` + strings.Repeat("x", 200<<10) + `"`)
	handler.RegisterNoParams(tab, "big", func(context.Context) (handler.Raw, error) { return big, nil })
	srv := httptest.NewTLSServer(&handler.HTTPHandler{Table: tab})
	defer srv.Close()
	res := run(t, bench.Config{Target: srv.URL + "/", Method: "big", Params: "[]", Requests: 50, Conns: 2, Warmup: -1,
		TLS: &tls.Config{InsecureSkipVerify: true}})
	if res.TotalErrors() != 0 || res.Requests != 50 {
		t.Fatalf("%d requests, errors %v %v", res.Requests, res.Errors, res.ErrorDetail)
	}
}
