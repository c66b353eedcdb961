package auth_test

// Helpers shared by the tests of the package. Table cases record their
// own file:line with here(), printed when they fail.

import (
	"net"
	"strings"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/internal/testkit"
)

// here returns the file:line of its caller, for table cases.
func here() string { return testkit.CallerLine(2) }

// head returns an HTTP request head for target with the header lines
// fields ("Name: value" each).
func head(target string, fields ...string) []byte {
	var b strings.Builder
	b.WriteString("POST " + target + " HTTP/1.1\r\nHost: a\r\n")
	for _, f := range fields {
		b.WriteString(f + "\r\n")
	}
	b.WriteString("\r\n")
	return []byte(b.String())
}

// httpMeta returns a Meta for an HTTP request to target with the header
// lines fields.
func httpMeta(target string, fields ...string) *handler.Meta {
	m := &handler.Meta{Transport: handler.TransportHTTP}
	m.SetHTTPHead(head(target, fields...))
	return m
}

// wsMeta returns a Meta for a WebSocket upgrade request to target with
// the header lines fields.
func wsMeta(target string, fields ...string) *handler.Meta {
	m := &handler.Meta{Transport: handler.TransportHTTP}
	h := strings.Replace(string(head(target, fields...)), "POST ", "GET ", 1)
	h = strings.Replace(h, "\r\n\r\n", "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n", 1)
	m.SetHTTPHead([]byte(h))
	return m
}

// tcp returns the TCP address of ip (port 4242).
func tcp(ip string) *net.TCPAddr {
	return &net.TCPAddr{IP: net.ParseIP(ip), Port: 4242}
}
