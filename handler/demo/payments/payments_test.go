package payments_test

// The service as its clients meet it: the engine on loopback with API
// keys made optional, an idempotency Store, topics and the readiness
// check; HTTP and WebSocket clients.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsutil"
	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/engine/enginetest"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/auth"
	"github.com/jetrpc/jetrpc/handler/demo/payments"
	"github.com/jetrpc/jetrpc/handler/idempotency"
	"github.com/jetrpc/jetrpc/handler/topics"
)

const writerKey = "w-0123456789abcdef0123456789abcdef" // holds "write"

// start runs the service as a deployment would: open reads, keyed
// writes, retries made safe, readiness from the store.
func start(t *testing.T) (*payments.Service, string) {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	tab := handler.NewTable(handler.WithLogger(quiet))
	tab.Use(idempotency.New(idempotency.Options{Key: idempotency.HeaderOrParamKey(idempotency.DefaultHeader, "key")}).Intercept)
	svc := payments.New(map[string]int64{"ann": 100, "bob": 0}, topics.New(nil, quiet), quiet)
	svc.Register(tab)
	keys := auth.NewKeys(map[string]handler.Grants{writerKey: {"write"}})
	_, addr := enginetest.Start(t, tab, engine.WithAuthorize(keys.Authorize), engine.WithAuthOptional(true), engine.WithReady(svc.Ready))
	return svc, addr
}

// post sends one call over HTTP with the headers, and returns the status
// and the body.
func post(t *testing.T, addr, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", "http://"+addr+"/", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const transfer = `{"jsonrpc":"2.0","method":"transfer","params":{"from":"ann","to":"bob","amount":30},"id":7}`

// Open reads, keyed writes: an anonymous caller reads a balance and is
// refused a transfer with -32003 (not 401); the key with the grant
// transfers; a wrong key is 401.
func TestService_openReadsKeyedWrites(t *testing.T) {
	_, addr := start(t)
	if code, body := post(t, addr, `{"jsonrpc":"2.0","method":"balance_get","params":{"account":"ann"},"id":1}`); code != 200 || body != `{"jsonrpc":"2.0","result":100,"id":1}` {
		t.Errorf("anonymous balance_get: %d %s", code, body)
	}
	if code, body := post(t, addr, transfer); code != 200 || !strings.Contains(body, `"code":-32003`) {
		t.Errorf("anonymous transfer: %d %s, want -32003", code, body)
	}
	if code, body := post(t, addr, transfer, "Authorization", "Bearer "+writerKey); code != 200 || body != `{"jsonrpc":"2.0","result":{"id":1,"from":"ann","to":"bob","amount":30},"id":7}` {
		t.Errorf("keyed transfer: %d %s", code, body)
	}
	if code, _ := post(t, addr, transfer, "Authorization", "Bearer wrong-key-0123456789abcdef0123"); code != 401 {
		t.Errorf("a wrong key: %d, want 401", code)
	}
}

// A transfer retried with its Idempotency-Key — over HTTP, and over a new
// WebSocket after the first one dropped — moves the money once and
// answers every retry the first transfer; the same key with another
// amount is refused.
func TestService_retriedTransferMovesMoneyOnce(t *testing.T) {
	svc, addr := start(t)
	first := ""
	for i := range 3 {
		code, body := post(t, addr, transfer, "Authorization", "Bearer "+writerKey, "Idempotency-Key", "t-1")
		if code != 200 || !strings.Contains(body, `"result":{"id":1,`) {
			t.Fatalf("try %d: %d %s", i+1, code, body)
		}
		if first == "" {
			first = body
		} else if body != first {
			t.Errorf("try %d answered %s, want the first transfer %s", i+1, body, first)
		}
	}
	other := strings.Replace(transfer, `"amount":30`, `"amount":31`, 1)
	if _, body := post(t, addr, other, "Authorization", "Bearer "+writerKey, "Idempotency-Key", "t-1"); !strings.Contains(body, fmt.Sprintf(`"code":%d`, idempotency.CodeKeyReused)) {
		t.Errorf("the key reused for another amount: %s", body)
	}

	keyed := `{"jsonrpc":"2.0","method":"transfer","params":{"from":"ann","to":"bob","amount":5,"key":"t-2"},"id":9}`
	ws1 := dialWS(t, addr, writerKey)
	if err := wsutil.WriteClientText(ws1, []byte(keyed)); err != nil {
		t.Fatal(err)
	}
	ws1.Close() // dropped before the reply was read
	ws2 := dialWS(t, addr, writerKey)
	defer ws2.Close()
	if err := wsutil.WriteClientText(ws2, []byte(keyed)); err != nil {
		t.Fatal(err)
	}
	reply, err := wsutil.ReadServerText(ws2)
	if err != nil || !strings.Contains(string(reply), `"result":{"id":2,"from":"ann","to":"bob","amount":5}`) {
		t.Fatalf("the retry on a new WebSocket: %s %v", reply, err)
	}
	if n := svc.Applied(); n != 2 {
		t.Errorf("%d transfers applied, want 2 (one per key)", n)
	}
	if _, body := post(t, addr, `{"jsonrpc":"2.0","method":"balance_get","params":{"account":"ann"},"id":1}`); body != `{"jsonrpc":"2.0","result":65,"id":1}` {
		t.Errorf("ann's balance after the retries: %s, want 65", body)
	}
}

// A subscriber of one account's transfers gets each as a ledger_transfer
// notification; unknown accounts are refused.
func TestService_ledgerSubscription(t *testing.T) {
	_, addr := start(t)
	c := dialWS(t, addr)
	defer c.Close()
	send := func(msg string) map[string]json.RawMessage {
		t.Helper()
		if err := wsutil.WriteClientText(c, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		b, err := wsutil.ReadServerText(c)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return m
	}
	if m := send(`{"jsonrpc":"2.0","method":"ledger_subscribe","params":["account","nobody"],"id":1}`); !strings.Contains(string(m["error"]), `"code":4001`) {
		t.Errorf("an unknown account's subscription: %s", m["error"])
	}
	m := send(`{"jsonrpc":"2.0","method":"ledger_subscribe","params":["account","bob"],"id":2}`)
	var id string
	if err := json.Unmarshal(m["result"], &id); err != nil || id == "" {
		t.Fatalf("subscribe: %v %s", err, m["error"])
	}
	post(t, addr, transfer, "Authorization", "Bearer "+writerKey)
	note, err := wsutil.ReadServerText(c)
	want := `{"jsonrpc":"2.0","method":"ledger_transfer","params":{"subscription":"` + id + `","result":{"id":1,"from":"ann","to":"bob","amount":30}}}`
	if err != nil || string(note) != want {
		t.Errorf("notification %s %v\nwant %s", note, err, want)
	}
}

// The health check follows the store: 503 naming it while it is down,
// 200 again once it is back; calls are served meanwhile.
func TestService_readiness(t *testing.T) {
	svc, addr := start(t)
	health := func() (int, string) {
		resp, err := http.Get("http://" + addr + "/health")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := health(); code != 200 {
		t.Errorf("health %d with the store up", code)
	}
	svc.SetStoreUp(false)
	if code, body := health(); code != 503 || !strings.Contains(body, "store unreachable") {
		t.Errorf("health %d %s with the store down", code, body)
	}
	svc.SetStoreUp(true)
	if code, _ := health(); code != 200 {
		t.Errorf("health %d with the store back", code)
	}
}

// dialWS opens a WebSocket to the engine, with the API key when one is
// given (in the upgrade request's Authorization), else anonymous.
func dialWS(t *testing.T, addr string, key ...string) net.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var d ws.Dialer
	if len(key) > 0 {
		d.Header = ws.HandshakeHeaderHTTP(http.Header{"Authorization": {"Bearer " + key[0]}})
	}
	c, _, _, err := d.Dial(ctx, "ws://"+addr+"/")
	if err != nil {
		t.Fatal(err)
	}
	return c
}
