package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestServe_curlMethodHeader: jetrpc serve --method-header Mcp-Method
// answers curl's POST whose header names its method, refuses one whose
// body names another (400, -32600) and one for a method it does not
// have (404, -32601) before reading its body.
func TestServe_curlMethodHeader(t *testing.T) {
	curl := needCurl(t)
	srv := serveOperate(t, false, "--listen", "127.0.0.1:0", "--method-header", "Mcp-Method")
	call := func(method, body string) (string, string) {
		t.Helper()
		out, err := exec.Command(curl, "-sS", "-w", "\n%{http_code}", "-H", "Content-Type: application/json", "-H", "Mcp-Method: "+method, "--data-binary", body, srv.rpc).Output()
		if err != nil {
			t.Fatalf("curl: %v", err)
		}
		b, code, _ := strings.Cut(string(out), "\n")
		return code, b
	}
	for _, tc := range []struct{ method, body, code, want string }{
		{"add", `{"jsonrpc":"2.0","method":"add","params":[40,2],"id":1}`, "200", `{"jsonrpc":"2.0","result":42,"id":1}`},
		{"add", `{"jsonrpc":"2.0","method":"echo","params":[1],"id":2}`, "400", `"code":-32600`},
		{"nosuch", `{"jsonrpc":"2.0","method":"nosuch","id":3}`, "404", `"code":-32601`},
	} {
		if code, b := call(tc.method, tc.body); code != tc.code || !strings.Contains(b, tc.want) {
			t.Errorf("%s %s: %s %s, want %s %s", tc.method, tc.body, code, b, tc.code, tc.want)
		}
	}
}
