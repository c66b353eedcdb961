//go:build unix

package peers

// NOTE: a real browser against the jetrpc binary. TestBrowser builds
// cmd/jetrpc, starts `jetrpc serve` with --api-keys (and, in two of its
// three subtests, --cors), serves testdata/browser/page.html from
// another loopback origin and loads it in headless Chromium. The page
// calls the server with fetch and a WebSocket and POSTs its outcomes
// back to its own origin (/result), where the test waits for them; then
// Chromium is stopped (SIGTERM, then its process group is waited for).
// --dump-dom with --virtual-time-budget does not fit: virtual time runs
// the page's timeouts at once while real sockets wait, so a WebSocket
// call "times out" before its reply arrives.
//
// Chromium is found on PATH and never installed here: without it the
// test skips, unless JETRPC_REQUIRE_BROWSER=1 (set by .ci/run) makes
// that a failure. The file is unix-only for the process group (the
// engine does not build for Windows anyway).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// browserNames are the names Chromium goes by on PATH, in the order
// they are looked for.
var browserNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// browserKey is the API key the page presents; its line in the keys
// file grants admin.
const browserKey = "b7e0c1d2a3f4e5d6c7b8a9f0e1d2c3b4"

// Timeouts. The build takes a second or two with a warm build cache (as
// in CI, which has built and tested the main module by then) and over a
// minute with a cold one on two cores. The page gives up by itself after
// 10 s (page.html); a subtest takes about 2 s.
const (
	buildTimeout   = 3 * time.Minute
	startTimeout   = 10 * time.Second
	pageTimeout    = 15 * time.Second
	stopTimeout    = 5 * time.Second
	stderrTailSize = 4 << 10
)

// pageResult is what page.html reports, less what the test does not
// check; failure messages print the whole report.
type pageResult struct {
	Origin    string   `json:"origin"`
	UserAgent string   `json:"userAgent"`
	Steps     []string `json:"steps"`
	Error     *jsError `json:"error"`
	HTTP      struct {
		AdminStats httpOutcome  `json:"admin_stats"`
		Add        httpOutcome  `json:"add"`
		Range      rangeOutcome `json:"range"`
		Events     struct {
			Status      int               `json:"status"`
			ContentType string            `json:"contentType"`
			Data        []json.RawMessage `json:"data"`
			Rest        string            `json:"rest"`
		} `json:"events"`
	} `json:"http"`
	EventSource struct {
		Data  []json.RawMessage `json:"data"`
		Error *jsError          `json:"error"`
	} `json:"eventsource"`
	WS struct {
		Protocol    string   `json:"protocol"`
		Add         rpcReply `json:"add"`
		AdminStats  rpcReply `json:"admin_stats"`
		Subscribe   rpcReply `json:"subscribe"`
		Unsubscribe rpcReply `json:"unsubscribe"`
		Extensions  string   `json:"extensions"`
		Large       struct {
			OK     bool `json:"ok"`
			Length int  `json:"length"`
		} `json:"large"`
		Range         rangeOutcome    `json:"range"`
		Notifications []clockNote     `json:"notifications"`
		Unexpected    json.RawMessage `json:"unexpected"`
		Garbage       json.RawMessage `json:"garbage"`
		Error         *jsError        `json:"error"`
		Close         *struct {
			Code     int  `json:"code"`
			WasClean bool `json:"wasClean"`
		} `json:"close"`
	} `json:"ws"`
}

// rangeOutcome is the page's check of range {"n":200000}, a streamed
// result: every element in place.
type rangeOutcome struct {
	OK     bool `json:"ok"`
	Length int  `json:"length"`
}

// checkRanges checks that range's streamed result reached the page
// whole, through the WebSocket (fragments) and, when the page's origin
// may fetch, through fetch (chunked, with the CORS headers).
func checkRanges(t *testing.T, r pageResult, raw []byte, fetched bool) {
	t.Helper()
	if fetched && !r.HTTP.Range.OK || !r.WS.Range.OK {
		t.Errorf("range 200000 streamed: fetch %+v, WebSocket %+v, want [0..199999] whole\n%s", r.HTTP.Range, r.WS.Range, raw)
	}
}

// checkEvents checks that fetch read countdown's three progress
// notifications as events, in order, then its reply, from an event
// stream (Accept: text/event-stream, jetrpc serve's --sse default).
func checkEvents(t *testing.T, r pageResult, raw []byte) {
	t.Helper()
	e := r.HTTP.Events
	want := []string{
		`{"jsonrpc":"2.0","method":"countdown_progress","params":{"left":2}}`,
		`{"jsonrpc":"2.0","method":"countdown_progress","params":{"left":1}}`,
		`{"jsonrpc":"2.0","method":"countdown_progress","params":{"left":0}}`,
		`{"jsonrpc":"2.0","result":"done","id":4}`,
	}
	ok := e.Status == 200 && e.ContentType == "text/event-stream" && len(e.Data) == len(want) && e.Rest == ""
	for i := 0; ok && i < len(want); i++ {
		var b bytes.Buffer // the report is indented
		ok = json.Compact(&b, e.Data[i]) == nil && b.String() == want[i]
	}
	if !ok {
		t.Errorf("countdown as an event stream through fetch: %+v, want %q\n%s", e, want, raw)
	}
}

// checkEventSource checks that an EventSource read clock_subscribe [20]
// called by GET: the subscribe reply (id 9, a subscription id), then
// notifications counting 1, 2, 3.
func checkEventSource(t *testing.T, r pageResult, raw []byte) {
	t.Helper()
	e := r.EventSource
	if e.Error != nil || len(e.Data) != 4 {
		t.Fatalf("EventSource on clock_subscribe: %+v\n%s", e, raw)
	}
	var reply struct {
		Result string `json:"result"`
		ID     int    `json:"id"`
	}
	if err := json.Unmarshal(e.Data[0], &reply); err != nil || reply.Result == "" || reply.ID != 9 {
		t.Errorf("EventSource's first event is not the subscribe reply: %s\n%s", e.Data[0], raw)
	}
	for i, d := range e.Data[1:] {
		var n struct {
			Method string    `json:"method"`
			Params clockNote `json:"params"`
		}
		if err := json.Unmarshal(d, &n); err != nil || n.Method != "clock_subscription" || n.Params.Subscription != reply.Result || n.Params.Result != int64(i+1) {
			t.Errorf("EventSource notification %d: %s\n%s", i+1, d, raw)
		}
	}
}

// jsError is a JavaScript exception as the page reports it.
type jsError struct {
	Name    string `json:"name"`
	Message string `json:"message"`
}

// httpOutcome is one fetch: the status and the body (as JSON, or as
// text when it is not JSON), or the exception.
type httpOutcome struct {
	Status int      `json:"status"`
	Body   rpcReply `json:"body"`
	Text   string   `json:"text"`
	Error  *jsError `json:"error"`
}

// rpcReply is a JSON-RPC response.
type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// clockNote is the params of a clock_subscription notification.
type clockNote struct {
	Subscription string `json:"subscription"`
	Result       int64  `json:"result"`
}

// adminStats is the part of admin_stats's result the test checks.
type adminStats struct {
	Connections int `json:"connections"`
	Caller      struct {
		Transport string `json:"transport"`
	} `json:"caller"`
}

// findBrowser returns the path of Chromium on PATH, or skips the test —
// fails it under JETRPC_REQUIRE_BROWSER=1.
func findBrowser(t *testing.T) string {
	t.Helper()
	for _, name := range browserNames {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "the real-browser test needs one of " + strings.Join(browserNames, ", ") + " on PATH (Debian: apt-get install chromium)"
	if os.Getenv("JETRPC_REQUIRE_BROWSER") == "1" {
		t.Fatalf("JETRPC_REQUIRE_BROWSER=1 but %s", msg)
	}
	t.Skipf("SKIPPED: %s; set JETRPC_REQUIRE_BROWSER=1 to fail instead", msg)
	return ""
}

// buildJetrpc builds this checkout's cmd/jetrpc, in its own module (whose
// go.sum covers the command's dependencies, which this module's code does
// not import), into a temporary directory and returns its path.
func buildJetrpc(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "jetrpc")
	start := time.Now()
	out, errOut, err := runTool(t, buildTimeout, "../..", "go", "build", "-o", bin, "./cmd/jetrpc")
	if err != nil {
		t.Fatalf("go build cmd/jetrpc: %v\n%s%s", err, out, errOut)
	}
	t.Logf("built cmd/jetrpc in %v", time.Since(start).Round(time.Millisecond))
	return bin
}

// servedRE matches the line `jetrpc serve` prints for a TCP listener.
var servedRE = regexp.MustCompile(`^jetrpc: serving JSON-RPC on (http://\S+/), (ws://\S+) and tcp://\S+$`)

// startJetrpc runs `bin serve --listen 127.0.0.1:0 args...` and returns
// the HTTP and WebSocket URLs it prints. On cleanup it sends SIGINT and
// expects a clean exit within stopTimeout.
func startJetrpc(t *testing.T, bin string, args ...string) (httpURL, wsURL string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var waitErr error // cmd.Wait's; read only after exited is closed
	exited := make(chan struct{})
	urls := make(chan [2]string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := servedRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urls <- [2]string{m[1], m[2]}:
				default:
				}
			}
		}
		waitErr = cmd.Wait() // after stdout is drained, as StdoutPipe asks
		close(exited)
	}()
	early := false // it exited before serving, which is reported already
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
			if waitErr != nil && !early {
				t.Errorf("jetrpc serve %v: after SIGINT: %v\nstderr: %s", args, waitErr, stderr.String())
			}
		case <-time.After(stopTimeout):
			_ = cmd.Process.Kill()
			<-exited
			t.Errorf("jetrpc serve %v: still running %v after SIGINT; killed\nstderr: %s", args, stopTimeout, stderr.String())
		}
	})
	select {
	case u := <-urls:
		return u[0], u[1]
	case <-exited:
		early = true
		t.Fatalf("jetrpc serve %v exited before serving: %v\nstderr: %s", args, waitErr, stderr.String())
	case <-time.After(startTimeout):
		t.Fatalf("jetrpc serve %v printed no address in %v\nstderr: %s", args, startTimeout, stderr.String())
	}
	return "", ""
}

// servePage starts the page's own origin: GET / is page.html, POST
// /result takes the page's report, the first of which goes to the
// returned channel.
func servePage(t *testing.T) (origin string, results <-chan []byte) {
	t.Helper()
	page, err := os.ReadFile(filepath.Join("testdata", "browser", "page.html"))
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan []byte, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(page)
	})
	mux.HandleFunc("POST /result", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		select {
		case ch <- b:
		default: // a second report (the page's deadline after all): the first counts
		}
		w.WriteHeader(http.StatusNoContent)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, ch
}

// runPage loads pageURL, a page on origin, in headless Chromium and
// returns the page's report, decoded and raw, stopping Chromium once it
// has arrived. The page must have run from origin and finished.
func runPage(t *testing.T, browser, origin, pageURL string, results <-chan []byte) (r pageResult, raw []byte) {
	t.Helper()
	proc, output := startBrowser(t, browser, pageURL)
	start := time.Now()
	var b []byte
	select {
	case b = <-results:
	case <-proc.exited:
		t.Fatalf("%s exited before the page reported: %v\noutput tail: %s", browser, proc.err, output.Tail(stderrTailSize))
	case <-time.After(pageTimeout):
		proc.stop(t)
		t.Fatalf("no report from the page in %v\n%s output tail: %s", pageTimeout, browser, output.Tail(stderrTailSize))
	}
	took := time.Since(start)
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("the page's report: %v\n%s", err, b)
	}
	t.Logf("%s reported in %v (steps %v)", r.UserAgent, took.Round(time.Millisecond), r.Steps)
	proc.stop(t)
	if r.Origin != origin {
		t.Fatalf("the page ran from %q, want %q\n%s", r.Origin, origin, b)
	}
	if r.Error != nil {
		t.Fatalf("page: %s: %s\n%s", r.Error.Name, r.Error.Message, b)
	}
	return r, b
}

// browserProc is a running Chromium, the leader of a process group of
// its own.
type browserProc struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed when the main process has exited
	err    error         // cmd.Wait's; read only after exited is closed
	once   sync.Once
}

// startBrowser starts headless Chromium on url and returns it with its
// output (stdout and stderr). Everything it writes goes to a scratch
// directory of its own: the profile (--user-data-dir), and HOME and the
// XDG directories, since its crash reporter keeps its database under
// XDG_CONFIG_HOME whatever the profile. Cleanup stops it and removes the
// directory.
func startBrowser(t *testing.T, browser, url string) (*browserProc, *lockedBuffer) {
	t.Helper()
	// Not t.TempDir: Chromium's crash reporter, which is in no process
	// group of ours, may still be writing there for a moment after the
	// browser has gone, and t.TempDir's removal fails the test then.
	dir, err := os.MkdirTemp("", "jetrpc-browser-")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(browser,
		"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--user-data-dir="+filepath.Join(dir, "profile"),
		"--no-first-run", "--no-default-browser-check", "--disable-extensions",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		url)
	cmd.Env = append(os.Environ(), "HOME="+dir,
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	output := new(lockedBuffer)
	cmd.Stdout, cmd.Stderr = output, output
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		t.Fatal(err)
	}
	p := &browserProc{cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.stop(t)
		removeAll(t, dir)
	})
	return p, output
}

// stop stops Chromium, if it has not stopped already, and waits until
// every process of its group has gone. SIGTERM lets it shut down in
// order, its renderer, GPU and utility processes with it (SIGKILL to the
// browser alone would leave them behind); SIGKILL to the group is the
// fallback.
func (p *browserProc) stop(t *testing.T) {
	p.once.Do(func() {
		pgid := p.cmd.Process.Pid
		start := time.Now()
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(stopTimeout):
			t.Logf("browser: still running %v after SIGTERM; killing its process group", stopTimeout)
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-p.exited
		}
		exited := time.Since(start)
		deadline := time.Now().Add(stopTimeout)
		for syscall.Kill(-pgid, 0) == nil { // ESRCH: the group is empty
			if time.Now().After(deadline) {
				t.Logf("browser: its process group still has members %v after it exited; killing them", stopTimeout)
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Logf("browser: stopped in %v, its process group empty after %v", exited.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	})
}

// removeAll removes dir, retrying for a while (see startBrowser); a
// directory it cannot remove is logged, not an error.
func removeAll(t *testing.T, dir string) {
	deadline := time.Now().Add(stopTimeout)
	for {
		err := os.RemoveAll(dir)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Logf("leaving %s: %v", dir, err)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pageURL is the page on origin, told where the server is and the key.
func pageURL(origin, httpURL, wsURL string) string {
	q := url.Values{"rpc": {httpURL}, "ws": {wsURL}, "key": {browserKey}}
	return origin + "/?" + q.Encode()
}

// TestBrowser drives headless Chromium against `jetrpc serve` from a
// page of another origin. With --cors naming that origin, a preflighted
// fetch with a bearer key and a WebSocket with the key in its
// subprotocols both work. Without --cors the browser refuses the fetch
// (CORS) but not the WebSocket, which CORS does not cover and the server
// then opens to any origin. With --cors naming only some other origin,
// the server refuses the page's WebSocket too. An EventSource reads a
// subscription by GET from a server without keys.
func TestBrowser(t *testing.T) {
	browser := findBrowser(t)
	bin := buildJetrpc(t)
	keys := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keys, []byte("# the browser test's key\n"+browserKey+" admin\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	t.Run("cors", func(t *testing.T) {
		origin, results := servePage(t)
		httpURL, wsURL := startJetrpc(t, bin, "--cors", origin, "--api-keys", keys)
		r, raw := runPage(t, browser, origin, pageURL(origin, httpURL, wsURL), results)
		checkWS(t, r, raw)
		checkRanges(t, r, raw, true)
		checkEvents(t, r, raw)

		stats := httpResult[adminStats](t, "fetch admin_stats", r.HTTP.AdminStats, raw)
		if stats.Caller.Transport != "http" || stats.Connections < 1 {
			t.Errorf("fetch admin_stats: %+v, want caller.transport http and a connection\n%s", stats, raw)
		}
		if add := httpResult[int](t, "fetch add", r.HTTP.Add, raw); add != 3 {
			t.Errorf("fetch add [1,2] = %d, want 3\n%s", add, raw)
		}
	})

	t.Run("eventsource", func(t *testing.T) {
		// EventSource sends no Authorization: a server without keys, its
		// CORS naming the page's origin.
		origin, results := servePage(t)
		httpURL, wsURL := startJetrpc(t, bin, "--cors", origin)
		r, raw := runPage(t, browser, origin, pageURL(origin, httpURL, wsURL)+"&es=1", results)
		checkEventSource(t, r, raw)
	})

	t.Run("no-cors", func(t *testing.T) {
		origin, results := servePage(t)
		httpURL, wsURL := startJetrpc(t, bin, "--api-keys", keys)
		r, raw := runPage(t, browser, origin, pageURL(origin, httpURL, wsURL), results)
		checkFetchRefused(t, r, raw)
		checkWS(t, r, raw)
		checkRanges(t, r, raw, false)
		if r.WS.Extensions != "" {
			t.Errorf("WebSocket extensions %q without --ws-compression, want none\n%s", r.WS.Extensions, raw)
		}
	})

	// Chromium offers permessage-deflate by itself: with --ws-compression
	// the server answers it, and the 210 KB echo comes back compressed.
	t.Run("ws-compression", func(t *testing.T) {
		origin, results := servePage(t)
		httpURL, wsURL := startJetrpc(t, bin, "--api-keys", keys, "--ws-compression")
		r, raw := runPage(t, browser, origin, pageURL(origin, httpURL, wsURL), results)
		checkWS(t, r, raw)
		checkRanges(t, r, raw, false)
		if e := r.WS.Extensions; !strings.HasPrefix(e, "permessage-deflate") || !strings.Contains(e, "client_no_context_takeover") {
			t.Errorf("WebSocket extensions %q, want permessage-deflate without context takeover\n%s", e, raw)
		}
	})

	t.Run("other-origin", func(t *testing.T) {
		origin, results := servePage(t)
		httpURL, wsURL := startJetrpc(t, bin, "--cors", "http://localhost:1", "--api-keys", keys)
		r, raw := runPage(t, browser, origin, pageURL(origin, httpURL, wsURL), results)
		checkFetchRefused(t, r, raw)
		// The server answers the handshake 403; a browser tells a page
		// no more than that it failed: an error event, then close 1006.
		w := r.WS
		if w.Error == nil || w.Error.Message != "WebSocket error before open" || w.Protocol != "" ||
			w.Close == nil || w.Close.Code != 1006 || w.Add.Result != nil {
			t.Errorf("WebSocket from an origin --cors does not name: want it refused before open, closed 1006\n%s", raw)
		}
	})
}

// checkFetchRefused checks that Chromium refused both fetches: it hands
// a page no reply that the server did not mark for the page's origin
// (Access-Control-Allow-Origin), so the preflight fails and fetch
// throws.
func checkFetchRefused(t *testing.T, r pageResult, raw []byte) {
	t.Helper()
	for _, f := range []struct {
		name string
		o    httpOutcome
	}{{"admin_stats", r.HTTP.AdminStats}, {"add", r.HTTP.Add}} {
		if f.o.Error == nil || f.o.Error.Name != "TypeError" || f.o.Error.Message != "Failed to fetch" {
			t.Errorf("fetch %s: want TypeError: Failed to fetch, got %+v\n%s", f.name, f.o, raw)
		}
	}
}

// checkWS checks that the page's WebSocket part worked: the subprotocol
// jsonrpc answered, add, admin_stats with the key's admin grant, a clock
// subscription's notifications in order, the unsubscription and a clean
// close.
func checkWS(t *testing.T, r pageResult, raw []byte) {
	t.Helper()
	w := r.WS
	if w.Error != nil {
		t.Fatalf("WebSocket: %s: %s\n%s", w.Error.Name, w.Error.Message, raw)
	}
	if w.Protocol != "jsonrpc" {
		t.Errorf("WebSocket protocol %q, want jsonrpc (never the bearer. token)\n%s", w.Protocol, raw)
	}
	if add := result[int](t, "ws add", w.Add, raw); add != 3 {
		t.Errorf("ws add [1,2] = %d, want 3\n%s", add, raw)
	}
	if s := result[adminStats](t, "ws admin_stats", w.AdminStats, raw); s.Caller.Transport != "websocket" {
		t.Errorf("ws admin_stats: %+v, want caller.transport websocket\n%s", s, raw)
	}
	id := result[string](t, "ws clock_subscribe", w.Subscribe, raw)
	if !strings.HasPrefix(id, "0x") || len(id) != 34 {
		t.Errorf("subscription id %q, want 0x and 32 hex digits\n%s", id, raw)
	}
	if len(w.Notifications) < 2 {
		t.Errorf("%d clock notifications, want at least 2\n%s", len(w.Notifications), raw)
	}
	for i, n := range w.Notifications {
		if n.Subscription != id || n.Result != int64(i+1) {
			t.Errorf("notification %d: %+v, want subscription %s result %d\n%s", i, n, id, i+1, raw)
			break
		}
	}
	if !w.Large.OK || w.Large.Length != 210000 {
		t.Errorf("ws echo of 210 KB: %+v, want it back whole\n%s", w.Large, raw)
	}
	if ok := result[bool](t, "ws clock_unsubscribe", w.Unsubscribe, raw); !ok {
		t.Errorf("clock_unsubscribe: false\n%s", raw)
	}
	if w.Unexpected != nil || w.Garbage != nil {
		t.Errorf("unexpected WebSocket messages\n%s", raw)
	}
	if w.Close == nil || w.Close.Code != 1000 || !w.Close.WasClean {
		t.Errorf("WebSocket close: %+v, want a clean 1000\n%s", w.Close, raw)
	}
}

// httpResult returns the result of a fetch, which must have succeeded
// with 200.
func httpResult[T any](t *testing.T, what string, o httpOutcome, raw []byte) T {
	t.Helper()
	if o.Error != nil {
		t.Fatalf("%s: %s: %s\n%s", what, o.Error.Name, o.Error.Message, raw)
	}
	if o.Status != http.StatusOK {
		t.Fatalf("%s: status %d, want 200\n%s", what, o.Status, raw)
	}
	return result[T](t, what, o.Body, raw)
}

// result decodes the result of a JSON-RPC reply, which must have one.
func result[T any](t *testing.T, what string, r rpcReply, raw []byte) T {
	t.Helper()
	var v T
	if r.Error != nil || r.Result == nil {
		t.Fatalf("%s: no result (error %s)\n%s", what, r.Error, raw)
	}
	if err := json.Unmarshal(r.Result, &v); err != nil {
		t.Fatalf("%s: result %s: %v", what, r.Result, err)
	}
	return v
}

// lockedBuffer is a bytes.Buffer that a process's output goroutines may
// write while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer // guarded by mu
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Tail returns the last n bytes written.
func (l *lockedBuffer) Tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.b.Bytes()
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
