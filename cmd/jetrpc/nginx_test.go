package main

// NOTE: jetrpc behind a real nginx (deploy/nginx.conf, the documented
// example, run as it is shipped but for its addresses and certificate):
// two `jetrpc serve` processes sharing topics over a real NATS server
// (in-process nats-server), nginx terminating TLS with a certificate made
// here, balancing calls over keep-alive connections and proxying
// WebSocket. Calls, batches and subscriptions go through nginx over HTTPS
// and WSS; a message published on either node reaches every subscriber;
// one node stopped with SIGTERM and --drain-grace moves the traffic to
// the other without a failed call, and its WebSocket clients get the
// close notice and 1001.

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/nats-io/nats-server/v2/server"
)

// requireNginx turns a missing nginx into a failure (CI installs it).
const requireNginx = "JETRPC_REQUIRE_NGINX"

// needNginx returns nginx's path, or skips the test (fails it with
// JETRPC_REQUIRE_NGINX=1) where it is not installed.
func needNginx(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the nginx test runs on Linux")
	}
	path, err := exec.LookPath("nginx")
	if err != nil {
		for _, p := range []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx"} {
			if _, e := os.Stat(p); e == nil {
				return p
			}
		}
		msg := "nginx is not installed (Debian: apt-get install nginx)"
		if os.Getenv(requireNginx) == "1" {
			t.Fatalf("%s, and %s=1", msg, requireNginx)
		}
		t.Skipf("%s; set %s=1 to make this a failure", msg, requireNginx)
	}
	return path
}

// startNATS runs a NATS server in-process on a free loopback port and
// returns its URL.
func startNATS(t *testing.T) string {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS server not ready")
	}
	t.Cleanup(s.Shutdown)
	return s.ClientURL()
}

// selfSigned writes a certificate for 127.0.0.1 and localhost and its
// key into dir, and returns their paths and a pool trusting it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, roots *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "jetrpc test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	roots = x509.NewCertPool()
	roots.AddCert(cert)
	return certFile, keyFile, roots
}

// node is one `jetrpc serve` process.
type node struct {
	addr   string // host:port
	out    *syncBuffer
	cmd    *exec.Cmd
	exited chan struct{}
}

// startNode starts jetrpc serve on a free port with args, and waits
// until it serves.
func startNode(t *testing.T, bin string, args ...string) *node {
	t.Helper()
	n := &node{out: new(syncBuffer), exited: make(chan struct{})}
	n.cmd = exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	n.cmd.Stdout, n.cmd.Stderr = n.out, n.out
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = n.cmd.Wait(); close(n.exited) }()
	t.Cleanup(func() {
		_ = n.cmd.Process.Signal(syscall.SIGKILL)
		<-n.exited
	})
	re := regexp.MustCompile(`serving JSON-RPC on http://([^/]+)/`)
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case <-n.exited:
			t.Fatalf("jetrpc serve exited:\n%s", n.out.String())
		default:
		}
		if m := re.FindStringSubmatch(n.out.String()); m != nil {
			n.addr = m[1]
			return n
		}
	}
	t.Fatalf("jetrpc serve printed no address:\n%s", n.out.String())
	return nil
}

// startNginx runs nginx with deploy/nginx.conf in front of the nodes, on
// a free port, and returns that port once nginx answers.
func startNginx(t *testing.T, nginx string, roots *x509.CertPool, cert, key string, nodes ...*node) int {
	t.Helper()
	dir := t.TempDir()
	example, err := os.ReadFile("deploy/nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	conf := string(example)
	for old, repl := range map[string]string{
		"127.0.0.1:8081":                       nodes[0].addr,
		"127.0.0.1:8082":                       nodes[1].addr,
		"listen 443 ssl;":                      "listen 127.0.0.1:" + strconv.Itoa(port) + " ssl;",
		"/etc/ssl/certs/rpc.example.com.pem":   cert,
		"/etc/ssl/private/rpc.example.com.key": key,
	} {
		if !strings.Contains(conf, old) {
			t.Fatalf("deploy/nginx.conf no longer holds %q", old)
		}
		conf = strings.ReplaceAll(conf, old, repl)
	}
	if err := os.WriteFile(filepath.Join(dir, "jetrpc.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	// The main file: what /etc/nginx/nginx.conf gives, in dir.
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;\n" // the workers read the temporary folders
	}
	main := user + `worker_processes 1;
pid ` + dir + `/nginx.pid;
error_log ` + dir + `/error.log warn;
events { worker_connections 1024; }
http {
    access_log ` + dir + `/access.log;
    client_body_temp_path ` + dir + `/body;
    proxy_temp_path ` + dir + `/proxy;
    fastcgi_temp_path ` + dir + `/fastcgi;
    uwsgi_temp_path ` + dir + `/uwsgi;
    scgi_temp_path ` + dir + `/scgi;
    include ` + dir + `/jetrpc.conf;
}
`
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	exited := startProcess(t, &out, nginx, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-g", "daemon off;")
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Logf("nginx error.log:\n%s", b)
		}
	})
	client := httpsClient(roots)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		select {
		case <-exited:
			b, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx exited: %s\n%s", out.String(), b)
		default:
		}
		if resp, err := client.Get(fmt.Sprintf("https://127.0.0.1:%d/health", port)); err == nil {
			resp.Body.Close()
			return port
		}
	}
	t.Fatalf("nginx did not answer: %s", out.String())
	return 0
}

func httpsClient(roots *x509.CertPool) *http.Client {
	return &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, MaxIdleConnsPerHost: 16},
	}
}

// rpc posts body to url and returns the reply's body; any HTTP status
// but 200 is an error.
func rpc(client *http.Client, url, body string) (string, error) {
	resp, err := client.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != 200 {
		return "", fmt.Errorf("HTTP %d: %s", resp.StatusCode, b)
	}
	return string(b), nil
}

// handledAdds reads a node's count of add calls from its metrics.
func handledAdds(t *testing.T, n *node) int {
	t.Helper()
	return int(metricValue(t, n, `jsonrpc_server_handled_total{code="0",method="add"} `))
}

// metricValue reads the sample of node n's metrics whose line starts
// with series; 0 when there is none.
func metricValue(t *testing.T, n *node, series string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + n.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, series) {
			v, err := strconv.ParseFloat(strings.Fields(strings.TrimPrefix(l, series))[0], 64)
			if err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			return v
		}
	}
	return 0
}

// wsSubscriber is a WebSocket client through nginx subscribed to a topic.
type wsSubscriber struct {
	c   *websocket.Conn
	id  string
	got chan string // notifications and the close notice, in order
	end chan error  // the read error that ended it (a close frame)
}

func subscribeWSS(t *testing.T, roots *x509.CertPool, port int, topic string) *wsSubscriber {
	t.Helper()
	d := websocket.Dialer{TLSClientConfig: &tls.Config{RootCAs: roots}, HandshakeTimeout: 10 * time.Second}
	c, resp, err := d.Dial(fmt.Sprintf("wss://127.0.0.1:%d/", port), nil)
	if err != nil {
		t.Fatalf("WSS through nginx: %v (%+v)", err, resp)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"topic_subscribe","params":["`+topic+`"],"id":1}`)); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, msg, err := c.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	var reply struct{ Result string }
	if err := json.Unmarshal(msg, &reply); err != nil || !strings.HasPrefix(reply.Result, "0x") {
		t.Fatalf("topic_subscribe through nginx: %s", msg)
	}
	s := &wsSubscriber{c: c, id: reply.Result, got: make(chan string, 1024), end: make(chan error, 1)}
	_ = c.SetReadDeadline(time.Time{})
	go func() {
		for {
			_, m, err := c.ReadMessage()
			if err != nil {
				s.end <- err
				return
			}
			s.got <- string(m)
		}
	}()
	return s
}

// next returns the subscriber's next message, failing after 10 s.
func (s *wsSubscriber) next(t *testing.T) string {
	t.Helper()
	select {
	case m := <-s.got:
		return m
	case err := <-s.end:
		t.Fatalf("subscriber %s ended: %v", s.id, err)
	case <-time.After(10 * time.Second):
		t.Fatalf("subscriber %s: no message in 10 s", s.id)
	}
	return ""
}

// publishOn publishes payload on topic at node n directly (not through
// nginx) and returns its count of local deliveries.
func publishOn(t *testing.T, n *node, topic, payload string) int {
	t.Helper()
	got, err := rpc(http.DefaultClient, "http://"+n.addr+"/", `{"jsonrpc":"2.0","method":"topic_publish","params":["`+topic+`",`+payload+`],"id":1}`)
	if err != nil {
		t.Fatal(err)
	}
	var reply struct {
		Result *int
		Error  json.RawMessage
	}
	if err := json.Unmarshal([]byte(got), &reply); err != nil || reply.Result == nil {
		t.Fatalf("topic_publish on %s: %s", n.addr, got)
	}
	return *reply.Result
}

func TestNginx_twoNodesTLSWebSocketAndDrain(t *testing.T) {
	nginx := needNginx(t)
	testTwoNodesBehind(t, frontProxy{name: "nginx", start: func(t *testing.T, roots *x509.CertPool, cert, key string, nodes ...*node) int {
		return startNginx(t, nginx, roots, cert, key, nodes...)
	}})
}

// frontProxy is a load balancer put in front of two nodes.
type frontProxy struct {
	name string
	// start runs the proxy in front of the nodes, TLS ending there with
	// cert and key, and returns its port once it answers.
	start func(t *testing.T, roots *x509.CertPool, cert, key string, nodes ...*node) int
	// healthChecks: the proxy polls GET /health, so that a draining node
	// is taken out before it stops.
	healthChecks bool
}

// testTwoNodesBehind puts p in front of two jetrpc serve nodes sharing
// topics over NATS, runs calls, a batch and WebSocket subscriptions
// through it, and stops one node under load.
func testTwoNodesBehind(t *testing.T, p frontProxy) {
	bin := buildJetrpc(t)
	natsURL := startNATS(t)
	nodeArgs := []string{"--broker", natsURL, "--metrics", "/metrics", "--drain-grace", "2s", "--close-notice", "server_closing"}
	nodes := []*node{startNode(t, bin, nodeArgs...), startNode(t, bin, nodeArgs...)}
	cert, key, roots := selfSigned(t, t.TempDir())
	port := p.start(t, roots, cert, key, nodes...)
	base := fmt.Sprintf("https://127.0.0.1:%d/", port)
	client := httpsClient(roots)

	// Calls and a batch over HTTPS, balanced across both nodes.
	for i := range 20 {
		got, err := rpc(client, base, fmt.Sprintf(`{"jsonrpc":"2.0","method":"add","params":[%d,1],"id":%d}`, i, i))
		if want := fmt.Sprintf(`{"jsonrpc":"2.0","result":%d,"id":%d}`, i+1, i); err != nil || got != want {
			t.Fatalf("call %d through %s: %q %v, want %s", i, p.name, got, err, want)
		}
	}
	got, err := rpc(client, base, `[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"nope","id":2},{"jsonrpc":"2.0","method":"update"}]`)
	if want := `[{"jsonrpc":"2.0","result":3,"id":1},{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":2}]`; err != nil || got != want {
		t.Fatalf("batch through %s: %q %v, want %s", p.name, got, err, want)
	}
	a0, a1 := handledAdds(t, nodes[0]), handledAdds(t, nodes[1])
	if a0+a1 != 21 || a0 == 0 || a1 == 0 {
		t.Fatalf("add calls per node: %d and %d, want 21 spread over both", a0, a1)
	}

	// Subscribers over WSS until both nodes hold some (the proxy balances
	// connections round-robin).
	var subs []*wsSubscriber
	perNode := [2]int{}
	for len(subs) < 12 && (perNode[0] == 0 || perNode[1] == 0 || len(subs) < 4) {
		subs = append(subs, subscribeWSS(t, roots, port, "news"))
		perNode = [2]int{nodeSubscribers(t, nodes[0]), nodeSubscribers(t, nodes[1])}
	}
	if perNode[0] == 0 || perNode[1] == 0 || perNode[0]+perNode[1] != len(subs) {
		t.Fatalf("subscribers per node: %v of %d", perNode, len(subs))
	}
	// A message published on either node reaches every subscriber once.
	for i, n := range nodes {
		if k := publishOn(t, n, "news", fmt.Sprintf(`{"from":%d}`, i)); k != perNode[i] {
			t.Fatalf("publish on node %d: %d local deliveries, want %d", i, k, perNode[i])
		}
		for _, s := range subs {
			want := `{"jsonrpc":"2.0","method":"topic_subscription","params":{"subscription":"` + s.id + `","result":{"from":` + strconv.Itoa(i) + `}}}`
			if m := s.next(t); m != want {
				t.Fatalf("subscriber %s: %s, want %s", s.id, m, want)
			}
		}
	}

	// Load through the proxy while node 1 drains and stops: no call fails.
	var calls, failed atomic.Int64
	var firstErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := g*1_000_000 + i
				got, err := rpc(client, base, fmt.Sprintf(`{"jsonrpc":"2.0","method":"add","params":[%d,1],"id":%d}`, id, id))
				calls.Add(1)
				if want := fmt.Sprintf(`{"jsonrpc":"2.0","result":%d,"id":%d}`, id+1, id); err != nil || got != want {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Sprintf("%q %v", got, err))
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	if err := nodes[1].cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// During the grace the node says 503 to health checks and still
	// answers calls.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get("http://" + nodes[1].addr + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 503 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("node 1's health check did not turn 503 after SIGTERM: %v", err)
		}
	}
	if got, err := rpc(http.DefaultClient, "http://"+nodes[1].addr+"/", `{"jsonrpc":"2.0","method":"add","params":[1,1],"id":1}`); err != nil || got != `{"jsonrpc":"2.0","result":2,"id":1}` {
		t.Fatalf("a call on the draining node: %q %v", got, err)
	}
	if p.healthChecks {
		// The proxy's health check sees the 503 and takes the node out
		// while it still serves: its count of calls stops growing before
		// it exits.
		for {
			a := handledAdds(t, nodes[1])
			select {
			case <-nodes[1].exited:
				t.Fatalf("node 1 exited while %s still sent it calls", p.name)
			case <-time.After(300 * time.Millisecond):
			}
			if handledAdds(t, nodes[1]) == a {
				break
			}
		}
	}
	select {
	case <-nodes[1].exited:
	case <-time.After(15 * time.Second):
		t.Fatalf("node 1 did not exit after SIGTERM:\n%s", nodes[1].out.String())
	}
	before := handledAdds(t, nodes[0])
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d of %d calls failed through %s while a node stopped; first: %v", failed.Load(), calls.Load(), p.name, firstErr.Load())
	}
	if after := handledAdds(t, nodes[0]); after <= before {
		t.Fatalf("node 0 handled no call after node 1 exited (%d, then %d)", before, after)
	}
	if !strings.Contains(nodes[1].out.String(), "draining") {
		t.Errorf("node 1 did not say it drained:\n%s", nodes[1].out.String())
	}

	// Node 1's WebSocket clients got the close notice, then 1001; node
	// 0's still get what is published.
	var gone, kept []*wsSubscriber
	for _, s := range subs {
		select {
		case m := <-s.got:
			if m != `{"jsonrpc":"2.0","method":"server_closing","params":{"reason":"server stopping"}}` {
				t.Fatalf("subscriber %s: %s, want the close notice", s.id, m)
			}
			select {
			case err := <-s.end:
				if !websocket.IsCloseError(err, websocket.CloseGoingAway) {
					t.Fatalf("subscriber %s of the stopped node: %v, want close 1001", s.id, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("subscriber %s: no close after the notice", s.id)
			}
			gone = append(gone, s)
		default:
			kept = append(kept, s)
		}
	}
	if len(gone) != perNode[1] || len(kept) != perNode[0] {
		t.Fatalf("%d subscribers told to go, %d kept; want %d and %d", len(gone), len(kept), perNode[1], perNode[0])
	}
	if _, err := rpc(client, base, `{"jsonrpc":"2.0","method":"topic_publish","params":["news",{"after":1}],"id":1}`); err != nil {
		t.Fatal(err)
	}
	for _, s := range kept {
		if m := s.next(t); !strings.Contains(m, `"result":{"after":1}`) {
			t.Fatalf("subscriber %s after the stop: %s", s.id, m)
		}
	}
}

// nodeSubscribers reads how many live subscriptions node n holds, from
// its metrics.
func nodeSubscribers(t *testing.T, n *node) int {
	t.Helper()
	return int(metricValue(t, n, "jsonrpc_server_subscriptions "))
}

// httpsClientFrom is httpsClient with connections from the local address
// ip (127.0.0.2, say): a client nginx tells apart from its own
// connections to the nodes, which come from 127.0.0.1.
func httpsClientFrom(roots *x509.CertPool, ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, DialContext: d.DialContext},
	}
}

// Behind nginx with --trusted-proxy, the per-IP rate limit counts each
// client, not nginx: two clients (from 127.0.0.2 and 127.0.0.3) get a
// bucket each, and an X-Forwarded-For a client writes itself does not
// buy it another.
func TestNginx_trustedProxyNamesTheClient(t *testing.T) {
	nginx := needNginx(t)
	bin := buildJetrpc(t)
	// One call per client per 100 s: a second one within the test is refused.
	n := startNode(t, bin, "--trusted-proxy", "127.0.0.1", "--rate", "0.01", "--burst", "1")
	cert, key, roots := selfSigned(t, t.TempDir())
	port := startNginx(t, nginx, roots, cert, key, n, n)
	base := fmt.Sprintf("https://127.0.0.1:%d/", port)
	call := func(from, spoof string) string {
		t.Helper()
		req, err := http.NewRequest("POST", base, strings.NewReader(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if spoof != "" {
			req.Header.Set("X-Forwarded-For", spoof)
		}
		resp, err := httpsClientFrom(roots, from).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	const ok, limited = `{"jsonrpc":"2.0","result":3,"id":1}`, `"code":-32005`
	if got := call("127.0.0.2", ""); got != ok {
		t.Fatalf("first call from 127.0.0.2: %s", got)
	}
	if got := call("127.0.0.3", ""); got != ok {
		t.Fatalf("first call from 127.0.0.3 (its own bucket, not nginx's): %s", got)
	}
	if got := call("127.0.0.2", "198.51.100.7"); !strings.Contains(got, limited) {
		t.Fatalf("second call from 127.0.0.2, claiming to forward for another: %s", got)
	}
}

// jetrpc bench over TLS through nginx: https:// and wss:// with -ca (the
// test's certificate), in the closed and the open loop, every reply
// checked; without -ca the system's roots refuse the certificate, and
// the run says so.
func TestBench_tlsThroughNginx(t *testing.T) {
	nginx := needNginx(t)
	n := startNode(t, buildJetrpc(t))
	certDir := t.TempDir()
	cert, key, roots := selfSigned(t, certDir)
	port := startNginx(t, nginx, roots, cert, key, n, n)
	for _, target := range []string{fmt.Sprintf("https://127.0.0.1:%d/", port), fmt.Sprintf("wss://127.0.0.1:%d/", port)} {
		for _, load := range [][]string{{"-pipeline", "1"}, {"-rate", "300"}} { // pipelined, nginx's keepalive_requests would lose the request sent after its last
			var out, errOut strings.Builder
			args := append([]string{"-d", "500ms", "-warmup", "0", "-c", "2", "-ca", cert, "-threshold", "requests>50", "-threshold", "errors==0"}, load...)
			if err := runBench(context.Background(), append(args, target), &out, &errOut); err != nil {
				t.Fatalf("%s %v: %v\n%s%s", target, load, err, out.String(), errOut.String())
			}
		}
		var out, errOut strings.Builder
		err := runBench(context.Background(), []string{"-d", "200ms", "-warmup", "0", "-c", "1", "-q", target}, &out, &errOut)
		if err == nil || !strings.HasPrefix(err.Error(), "could not make a TLS connection to "+target+": ") {
			t.Fatalf("%s without -ca: %v\n%s", target, err, out.String())
		}
	}
}
