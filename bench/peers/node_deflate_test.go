//go:build unix

package peers

// NOTE: permessage-deflate with Node's ws (the version client.mjs's
// tests pin, testdata/wsclient/package.json) against the jetrpc binary:
// testdata/wsclient/deflate.mjs, perMessageDeflate on, sends the same
// messages to `jetrpc serve --ws-compression` and to `jetrpc serve`
// without it, and prints each handshake and reply. With the flag the
// handshake answers permessage-deflate and large replies cross the wire
// compressed; without it there is no extension and they cross raw; the
// replies, as ws hands them over inflated, are the same bytes from both.
// TestNodeWS_deflate (node_test.go) covers calls, a batch and a
// subscription against an in-process engine with WSCompression; this
// covers the command's flag, byte-for-byte equality, the bytes on the
// wire and streamed results (range). Unix only, as browser_test.go's
// buildJetrpc and startJetrpc that it uses.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine/enginetest"
)

// deflateHandshake is deflate.mjs's first line.
type deflateHandshake struct {
	WS         string  `json:"ws"`
	Node       string  `json:"node"`
	Extensions string  `json:"extensions"`
	Header     *string `json:"header"` // the server's Sec-WebSocket-Extensions; nil: none
}

// deflateReply is one reply as deflate.mjs prints it.
type deflateReply struct {
	Wire int    `json:"wire"` // bytes read from the socket for it
	Raw  string `json:"raw"`  // its text, inflated
}

// runDeflateClient runs deflate.mjs against url with msgs, one message
// each, and returns its handshake and the replies in order.
func runDeflateClient(t *testing.T, node, url string, msgs []string) (deflateHandshake, []deflateReply) {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(c, node, "deflate.mjs", url)
	cmd.Dir = wsClientDir
	cmd.Stdin = strings.NewReader(strings.Join(msgs, "\n") + "\n")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("node deflate.mjs %s: %v\nstderr: %s", url, err, errOut.Bytes())
	}
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 64<<20)
	var hs deflateHandshake
	var replies []deflateReply
	for i := 0; sc.Scan(); i++ {
		var err error
		if i == 0 {
			err = json.Unmarshal(sc.Bytes(), &hs)
		} else {
			var r deflateReply
			err = json.Unmarshal(sc.Bytes(), &r)
			replies = append(replies, r)
		}
		if err != nil {
			t.Fatalf("deflate.mjs line %d: %v: %.200s", i+1, err, sc.Bytes())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(replies) != len(msgs) {
		t.Fatalf("deflate.mjs: %d replies to %d messages\nstderr: %s", len(replies), len(msgs), errOut.Bytes())
	}
	return hs, replies
}

// TestNodeWS_perMessageDeflateServe: ws with perMessageDeflate against
// jetrpc serve --ws-compression negotiates permessage-deflate (the
// handshake's Sec-WebSocket-Extensions names it, without context
// takeover); a call, a batch, a 200 KB echo and range's 200,000 numbers
// come back equal, byte for byte, to what serve without the flag answers
// the same client, which gets no extension; the large replies take under
// half their size on the wire with the flag and all of it without.
func TestNodeWS_perMessageDeflateServe(t *testing.T) {
	node, _ := nodeWithWS(t)
	bin := buildJetrpc(t)
	_, wsOn := startJetrpc(t, bin, "--ws-compression")
	httpOff, wsOff := startJetrpc(t, bin)

	// exchange sends msgs to both servers and checks the handshakes and
	// that the replies are the same bytes; it returns the replies of the
	// server with --ws-compression and of the one without.
	exchange := func(t *testing.T, msgs []string) (on, off []deflateReply) {
		t.Helper()
		hsOn, on := runDeflateClient(t, node, wsOn, msgs)
		hsOff, off := runDeflateClient(t, node, wsOff, msgs)
		t.Logf("node %s, ws %s: with --ws-compression extensions %q; without %q", hsOn.Node, hsOn.WS, hsOn.Extensions, hsOff.Extensions)
		if h := hsOn.Header; h == nil || !strings.HasPrefix(*h, "permessage-deflate") ||
			!strings.Contains(*h, "server_no_context_takeover") || !strings.Contains(*h, "client_no_context_takeover") ||
			!strings.HasPrefix(hsOn.Extensions, "permessage-deflate") {
			t.Errorf("--ws-compression: Sec-WebSocket-Extensions %s, ws.extensions %q; want permessage-deflate without context takeover", showHeader(hsOn.Header), hsOn.Extensions)
		}
		if hsOff.Header != nil || hsOff.Extensions != "" {
			t.Errorf("without --ws-compression: Sec-WebSocket-Extensions %v, ws.extensions %q; want none", showHeader(hsOff.Header), hsOff.Extensions)
		}
		for i := range msgs {
			if on[i].Raw != off[i].Raw {
				t.Errorf("reply %d: %d bytes with --ws-compression, %d without; not the same bytes: %.120q / %.120q",
					i+1, len(on[i].Raw), len(off[i].Raw), on[i].Raw, off[i].Raw)
			}
		}
		return on, off
	}
	// checkWire checks that a large reply took under half its size on the
	// wire compressed (the echo takes 0.2%, range's numbers 35%), and at
	// least its size raw.
	checkWire := func(t *testing.T, what string, on, off deflateReply) {
		t.Helper()
		t.Logf("%s: %d bytes; on the wire %d with --ws-compression, %d without", what, len(on.Raw), on.Wire, off.Wire)
		if on.Wire <= 0 || on.Wire >= len(on.Raw)/2 {
			t.Errorf("%s: %d bytes on the wire with --ws-compression for a %d-byte reply, want under half", what, on.Wire, len(on.Raw))
		}
		if off.Wire < len(off.Raw) {
			t.Errorf("%s: %d bytes on the wire without --ws-compression for a %d-byte reply", what, off.Wire, len(off.Raw))
		}
	}

	t.Run("calls", func(t *testing.T) {
		big := strings.Repeat("jetrpc ", 200_000/7)
		on, off := exchange(t, []string{
			`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`,
			`[{"jsonrpc":"2.0","method":"add","params":[10,20],"id":2},{"jsonrpc":"2.0","method":"echo","params":["x","y"],"id":"three"},` +
				`{"jsonrpc":"2.0","method":"echo","params":["ignored"]},{"jsonrpc":"2.0","method":"nope","id":4}]`,
			`{"jsonrpc":"2.0","method":"echo","params":["` + big + `"],"id":5}`,
		})
		if want := `{"jsonrpc":"2.0","result":3,"id":1}`; on[0].Raw != want {
			t.Errorf("add: %s, want %s", on[0].Raw, want)
		}
		var batch []struct {
			ID     any             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(on[1].Raw), &batch); err != nil || len(batch) != 3 {
			t.Fatalf("batch: %v: %s", err, on[1].Raw)
		}
		got := map[string]string{}
		for _, r := range batch {
			k, _ := json.Marshal(r.ID)
			if r.Error != nil {
				got[string(k)] = "error " + strconv.Itoa(r.Error.Code)
				continue
			}
			got[string(k)] = string(r.Result)
		}
		if want := map[string]string{`2`: `30`, `"three"`: `["x","y"]`, `4`: "error -32601"}; !maps.Equal(got, want) {
			t.Errorf("batch: %v, want %v\n%s", got, want, on[1].Raw)
		}
		if want := `{"jsonrpc":"2.0","result":["` + big + `"],"id":5}`; on[2].Raw != want {
			t.Errorf("200 KB echo: %d bytes, want %d", len(on[2].Raw), len(want))
		}
		checkWire(t, "200 KB echo", on[2], off[2])
	})

	t.Run("range", func(t *testing.T) {
		enginetest.NeedRange(t, httpOff)
		const n = 200_000
		on, off := exchange(t, []string{`{"jsonrpc":"2.0","method":"range","params":{"n":200000},"id":1}`})
		enginetest.CheckRangeReply(t, "range over ws with permessage-deflate", []byte(on[0].Raw), n)
		checkWire(t, "range 200000", on[0], off[0])
	})
}

// showHeader returns a header's value quoted, or "none".
func showHeader(h *string) string {
	if h == nil {
		return "none"
	}
	return strconv.Quote(*h)
}
