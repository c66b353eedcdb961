package enginetest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// NeedRange checks that the server at url answers handler/demo's range
// method: range [3] is [0,1,2]. Tests of streamed results call it before
// their large calls, so that a server without the method fails plainly.
func NeedRange(t testing.TB, url string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","method":"range","params":[3],"id":1}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if bytes.Contains(b, []byte(`"code":-32601`)) {
		t.Fatalf("jetrpc serve has no method range: %s", b)
	}
	if want := `{"jsonrpc":"2.0","result":[0,1,2],"id":1}`; string(b) != want {
		t.Fatalf("range [3]: %d %s, want %s", resp.StatusCode, b, want)
	}
}

// CheckRangeReply checks that reply is a JSON-RPC 2.0 reply whose
// result is range's [0,1,…,n-1], and returns its id.
func CheckRangeReply(t testing.TB, what string, reply []byte, n int) json.RawMessage {
	t.Helper()
	var r struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  []int64         `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(reply, &r); err != nil {
		t.Fatalf("%s: %v: %.200q…%.100q", what, err, reply, reply[max(0, len(reply)-100):])
	}
	if r.JSONRPC != "2.0" || r.Error != nil {
		t.Fatalf("%s: jsonrpc %q, error %s", what, r.JSONRPC, r.Error)
	}
	CheckRange(t, what, r.Result, n)
	return r.ID
}

// CheckRange checks that got is [0,1,…,n-1].
func CheckRange(t testing.TB, what string, got []int64, n int) {
	t.Helper()
	if len(got) != n {
		t.Fatalf("%s: %d numbers, want %d", what, len(got), n)
	}
	for i, v := range got {
		if v != int64(i) {
			t.Fatalf("%s: result[%d] = %d", what, i, v)
		}
	}
}
