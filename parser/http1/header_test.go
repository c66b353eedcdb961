package http1_test

import (
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/parser/http1"
)

func TestHeader(t *testing.T) {
	const req = "\r\nPOST /rpc HTTP/1.1\r\nHost: example.com\r\nX-Request-ID:  abc \t\r\nx-request-id: second\r\nAuthorization: Bearer t:o:k\r\nX-Empty:\r\nContent-Length: 2\r\n\r\n{}"
	var r http1.Request
	var s http1.HeadScan
	if st := http1.ParseHead([]byte(req), &s, 8192, &r); st != http1.StatusOK {
		t.Fatalf("status %d", st)
	}
	head := []byte(req[:r.HeadLen])
	for name, want := range map[string]string{
		"host":           "example.com",
		"x-request-id":   "abc",
		"authorization":  "Bearer t:o:k",
		"content-length": "2",
	} {
		if got := http1.Header(head, name); string(got) != want {
			t.Errorf("Header(%q) = %q, want %q", name, got, want)
		}
	}
	if got := http1.Header(head, "x-empty"); got == nil || len(got) != 0 {
		t.Errorf("an empty value: %q (nil %v), want empty and non-nil", got, got == nil)
	}
	for _, name := range []string{"x-missing", "post /rpc http/1.1", "", "{}"} {
		if got := http1.Header(head, name); got != nil {
			t.Errorf("Header(%q) = %q, want nil", name, got)
		}
	}
	// The body after the head is not read as fields.
	if got := http1.Header([]byte(req), "{}"); got != nil {
		t.Errorf("the body read as a field: %q", got)
	}
}

func TestFields(t *testing.T) {
	head := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-A:1\r\nx-a: 2 \r\nEmpty:\r\n\r\n"
	var got []string
	f := http1.NewFields([]byte(head))
	for name, value, ok := f.Next(); ok; name, value, ok = f.Next() {
		got = append(got, string(name)+"="+string(value))
	}
	if want := "Content-Type=application/json|X-A=1|x-a=2|Empty="; strings.Join(got, "|") != want {
		t.Errorf("fields %q, want %q", strings.Join(got, "|"), want)
	}
	if _, _, ok := f.Next(); ok {
		t.Error("Next after the end")
	}
	// Input ParseHead would refuse: no panic, and it stops at the first
	// line that is not a field.
	for _, in := range []string{"", "\r\n", "GET", "GET / HTTP/1.1\r\n", "GET / HTTP/1.1\r\nX: 1\r\nno colon\r\nY: 2\r\n\r\n",
		"GET / HTTP/1.1\r\n: x\r\n\r\n", "GET / HTTP/1.1\nX: 1\nY:2", "\r\n\r\n\r\n"} {
		var names []string
		f := http1.NewFields([]byte(in))
		for name, _, ok := f.Next(); ok; name, _, ok = f.Next() {
			names = append(names, string(name))
		}
		if len(names) > 2 {
			t.Errorf("%q: fields %q", in, names)
		}
	}
	var zero http1.Fields
	if _, _, ok := zero.Next(); ok {
		t.Error("the zero Fields has a field")
	}
}
