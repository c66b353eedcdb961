package main

// NOTE: TestDocs_quickStartRuns runs blocks of the docs (docRuns) as a
// reader would type them, in a docSession: a command the docs use is
// done in Go — jetrpc serve in-process on a free loopback port; curl,
// socat and wscat with Go's HTTP, TCP and WebSocket clients; echo and
// openssl rand into files — and its output is compared with the one the
// doc prints in the comments under it. A command it does not know fails
// the test: teach docSession.run, or leave the block out with a reason.
// The docs are read by the helpers of docs_test.go.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// docRun is a block of a doc that TestDocs_quickStartRuns runs.
type docRun struct {
	doc, heading string // the block: the first sh block under heading
	port         string // the port its commands name for the server
	// assumesServer: the block calls the server of the README's quick
	// start (go run ./cmd/jetrpc serve) without starting it.
	assumesServer bool
}

// docRuns are the blocks run for real. Left out, each exercised
// elsewhere: the many-nodes block (nats-server and npm's wscat:
// TestNginx_*, TestHAProxy_* and .ci/run's two nodes over a nats-server
// process), and load runs (seconds of both cores; .ci/run runs jetrpc
// bench smokes, and TestDocs_commandsParse parses every one).
var docRuns = []docRun{
	{doc: "README.md", heading: "Try it", port: "8080"},
	{doc: "cmd/jetrpc/README.md", heading: "Putting it on the internet", port: "8545"},
	{doc: "cmd/jetrpc/README.md", heading: "Operating it", port: "8080"},
	{doc: "cmd/jetrpc/README.md", heading: "rpc.discover (OpenRPC)", port: "8080", assumesServer: true},
}

// TestDocs_quickStartRuns runs the blocks of docRuns as a reader would,
// with the server on a free loopback port, and compares each output the
// doc prints in the comments under a command ("# {...}", "# HTTP/1.1 204
// No Content") with what the command gives.
func TestDocs_quickStartRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers; -short")
	}
	for _, r := range docRuns {
		t.Run(r.doc+"#"+anchorOf(r.heading), func(t *testing.T) {
			d := loadDoc(t, r.doc)
			i := slices.IndexFunc(d.blocks, func(b codeBlock) bool { return b.heading == r.heading && b.lang == "sh" })
			if i < 0 {
				t.Fatalf("%s has no sh block under %q", r.doc, r.heading)
			}
			dir := t.TempDir()
			t.Chdir(dir) // where the block's files go
			s := &docSession{t: t, port: r.port, block: d.blocks[i], where: r.doc}
			if r.assumesServer {
				s.serve(r.doc, nil, "")
			}
			s.run()
		})
	}
}

// docSession runs one block: the server it starts, the files it writes.
type docSession struct {
	t     *testing.T
	where string
	block codeBlock
	port  string // the port the doc names
	addr  string // where the server listens: 127.0.0.1:PORT
}

// headerLineRE matches a header line of an output: "Vary: Origin".
var headerLineRE = regexp.MustCompile(`^[A-Z][A-Za-z-]+: `)

// sampleLineRE matches a line of the Prometheus exposition:
// jsonrpc_server_handled_total{code="0",method="add"} 1.
var sampleLineRE = regexp.MustCompile(`^[a-z_:]+\{[^}]*\} `)

// outputOf returns the output the doc prints for the pipeline that
// starts on line start: the comment lines under it, up to the next
// pipeline's line, that start as output does (a JSON value, a status
// line), and those that go on with it (indented, or headers).
func outputOf(comments []shellComment, start, next int) []string {
	var out []string
	for _, c := range comments {
		if c.line <= start || c.line >= next {
			continue
		}
		switch {
		case strings.HasPrefix(c.text, "{"), strings.HasPrefix(c.text, "["), strings.HasPrefix(c.text, "HTTP/"),
			sampleLineRE.MatchString(c.text),
			len(out) > 0 && strings.HasPrefix(c.text, " "),
			len(out) > 0 && headerLineRE.MatchString(c.text):
			out = append(out, c.text)
		default:
			if len(out) > 0 {
				return out
			}
		}
	}
	return out
}

// matchOutput reports whether got is what the doc prints, want: "…" in
// an id (0x6b0f…) stands for the rest of it, and "..." for anything.
func matchOutput(want, got string) (ids []string, ok bool) {
	re := regexp.QuoteMeta(want)
	re = regexp.MustCompile(`0x[0-9a-f]*…`).ReplaceAllString(re, `(0x[0-9a-f]+)`)
	re = strings.ReplaceAll(re, `\.\.\.`, `.*?`)
	m := regexp.MustCompile("^" + re + "$").FindStringSubmatch(got)
	if m == nil {
		return nil, false
	}
	return m[1:], true
}

func (s *docSession) run() {
	t := s.t
	src := s.block.text
	pipes, comments, err := shellPipelines(shellSource(s.block))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(src, "\n")
	ran := 0
	for k, p := range pipes {
		next := len(lines) + 1
		if k+1 < len(pipes) {
			next = pipes[k+1].line
		}
		want := outputOf(comments, p.line, next)
		at := fmt.Sprintf("%s:%d", s.where, s.block.line+p.line-1)
		first := p.stages[0].words
		switch {
		case first[0] == "go" && len(first) > 3 && first[2] == "./cmd/jetrpc" && first[3] == "serve":
			s.serve(at, first[4:], p.comment)
		case first[0] == "go" && len(first) > 3 && first[2] == "./cmd/jetrpc" && first[3] == "openrpc":
			if err := run(context.Background(), first[3:], io.Discard, io.Discard); err != nil {
				t.Errorf("%s: %v", at, err)
			}
		case first[0] == "go" && len(first) > 3 && first[2] == "./cmd/jetrpc" && first[3] == "bench":
			continue // a load run: parsed by TestDocs_commandsParse, run by .ci/run's smokes
		case first[0] == "curl":
			got := s.curl(at, first[1:])
			for _, st := range p.stages[1:] {
				got = filter(t, at, st.words, got)
			}
			s.compare(at, want, got)
		case first[0] == "printf" && len(p.stages) == 2 && p.stages[1].words[0] == "socat":
			s.compare(at, want, s.socat(at, printf(first[1:]), p.stages[1].words[1:]))
		case first[0] == "npx" && slices.Equal(first[1:3], []string{"wscat", "-c"}):
			s.wscat(at, s.url(first[3]), lines[p.line:next-1])
		case first[0] == "echo" && p.stages[0].stdout != "":
			s.write(at, p.stages[0].stdout, s.expand(strings.Join(first[1:], " "))+"\n")
		case first[0] == "openssl" && len(first) == 4 && first[1] == "rand" && first[2] == "-hex" && p.stages[0].stdout != "":
			n, _ := strconv.Atoi(first[3])
			s.write(at, p.stages[0].stdout, randomHex(t, n)+"\n")
		default:
			t.Errorf("%s: %s: no runner for this command; teach docSession.run or leave the block out of docRuns with a reason",
				at, strings.Join(first, " "))
			continue
		}
		ran++
	}
	if ran == 0 {
		t.Fatalf("%s: ran nothing", s.where)
	}
}

// write writes a file a command of the block makes.
func (s *docSession) write(at, name, content string) {
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		s.t.Fatalf("%s: %v", at, err)
	}
}

// expand does the shell's $(...) for the commands the docs use in
// words: openssl rand -hex N, and cut -d' ' -f1 FILE.
func (s *docSession) expand(w string) string {
	return regexp.MustCompile(`\$\([^)]*\)`).ReplaceAllStringFunc(w, func(sub string) string {
		f := strings.Fields(strings.Trim(sub, "$()"))
		switch {
		case len(f) == 4 && f[0] == "openssl" && f[1] == "rand" && f[2] == "-hex":
			n, _ := strconv.Atoi(f[3])
			return randomHex(s.t, n)
		case len(f) == 5 && f[0] == "cut" && f[1] == "-d'" && f[2] == "'" && f[3] == "-f1":
			b, err := os.ReadFile(f[4])
			if err != nil {
				s.t.Fatal(err)
			}
			first, _, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
			return first
		}
		s.t.Fatalf("no expansion of %q", sub)
		return ""
	})
}

// serve starts jetrpc serve with the doc's arguments, its listeners
// moved to a free loopback port, and checks the "prints: ..." the doc
// says it prints.
func (s *docSession) serve(at string, args []string, comment string) {
	t := s.t
	var served []string
	for i := 0; i < len(args); i++ {
		if args[i] == "--listen" && i+1 < len(args) {
			i++ // the doc's port, on every interface: a free one on loopback instead
			continue
		}
		served = append(served, args[i])
	}
	served = append(served, "--listen", "127.0.0.1:0")
	lines := startServe(t, 1, served...)
	u, err := tcpHostPort(urlsIn(lines[0])["tcp"])
	if err != nil {
		t.Fatalf("%s: %v", at, err)
	}
	s.addr = u
	if want, ok := strings.CutPrefix(comment, "prints: "); ok {
		want = strings.ReplaceAll(want, "127.0.0.1:"+s.port, s.addr)
		if !strings.Contains(lines[0], want) {
			t.Errorf("%s: serve printed %q, the doc says %q", at, lines[0], want)
		}
	}
}

// tcpHostPort returns the host:port of tcp://host:port.
func tcpHostPort(u string) (string, error) {
	h, ok := strings.CutPrefix(u, "tcp://")
	if !ok {
		return "", fmt.Errorf("no tcp:// URL printed: %q", u)
	}
	return h, nil
}

// url turns the doc's address of the server into the real one, keeping
// the host name: localhost:8545 → http://localhost:8545/, dialed at s.addr.
func (s *docSession) url(u string) string {
	if !strings.Contains(u, "://") {
		u = "http://" + u
	}
	if strings.Count(u, "/") == 2 {
		u += "/"
	}
	return u
}

// client is curl's: it dials the server wherever the URL says it is,
// keeping the URL's Host, and closes its connection once done, as curl
// exits.
func (s *docSession) client() *http.Client {
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			DisableKeepAlives: true,
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, s.addr)
			},
		},
	}
}

// curl does what curl does with args (-s, -i, -X, -H, -d, a URL) and
// returns its output.
func (s *docSession) curl(at string, args []string) string {
	t := s.t
	if s.addr == "" {
		t.Fatalf("%s: curl before the server started", at)
	}
	method, url, body, head := "", "", "", false
	var header [][2]string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-s":
		case a == "-i" || a == "-si":
			head = true
		case (a == "-X" || a == "-H" || a == "-d") && i+1 < len(args):
			i++
			v := s.expand(args[i])
			switch a {
			case "-X":
				method = v
			case "-H":
				k, val, _ := strings.Cut(v, ":")
				header = append(header, [2]string{k, strings.TrimSpace(val)})
			case "-d":
				body = v
			}
		case !strings.HasPrefix(a, "-") && url == "":
			url = s.url(a)
		default:
			t.Fatalf("%s: curl %s: teach docSession.curl", at, a)
		}
	}
	if method == "" {
		method = "GET"
		if body != "" {
			method = "POST"
		}
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatalf("%s: %v", at, err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded") // curl -d's
	}
	for _, h := range header {
		req.Header.Set(h[0], h[1])
	}
	resp, err := s.client().Do(req)
	if err != nil {
		t.Fatalf("%s: %v", at, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: %v", at, err)
	}
	if !head {
		return string(b)
	}
	var out strings.Builder
	fmt.Fprintf(&out, "%s %s\n", resp.Proto, resp.Status)
	for k, v := range resp.Header {
		for _, e := range v {
			fmt.Fprintf(&out, "%s: %s\n", k, e)
		}
	}
	out.WriteString("\n")
	out.Write(b)
	return out.String()
}

// filter runs a pipeline's later stage on in: head -1, grep WORD.
func filter(t *testing.T, at string, words []string, in string) string {
	switch {
	case slices.Equal(words, []string{"head", "-1"}):
		first, _, _ := strings.Cut(in, "\n")
		return first
	case len(words) == 2 && words[0] == "grep":
		var out []string
		for _, l := range strings.Split(in, "\n") {
			if strings.Contains(l, words[1]) {
				out = append(out, l)
			}
		}
		if len(out) == 0 {
			t.Errorf("%s: grep %s: no line", at, words[1])
		}
		return strings.Join(out, "\n")
	}
	t.Fatalf("%s: %s: teach filter", at, strings.Join(words, " "))
	return ""
}

// printf is the shell's printf of one argument: \n and \t turned.
func printf(args []string) string {
	return strings.NewReplacer(`\n`, "\n", `\t`, "\t").Replace(strings.Join(args, ""))
}

// socat does socat - TCP:HOST:PORT: it sends in, half-closes, and reads
// until the server closes.
func (s *docSession) socat(at, in string, args []string) string {
	t := s.t
	if len(args) != 2 || args[0] != "-" || !strings.HasPrefix(args[1], "TCP:") {
		t.Fatalf("%s: socat %q: teach docSession.socat", at, args)
	}
	c, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", at, err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, in); err != nil {
		t.Fatalf("%s: %v", at, err)
	}
	_ = c.(*net.TCPConn).CloseWrite()
	out, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("%s: %v", at, err)
	}
	return string(out)
}

// wscat plays the session of lines, "> " sent and "< " received, over a
// WebSocket to u; an id received (0x6b0f…) replaces the doc's in what
// follows.
func (s *docSession) wscat(at, u string, session []string) {
	t := s.t
	u = strings.Replace(strings.Replace(u, "http://", "ws://", 1), "127.0.0.1:"+s.port, s.addr, 1)
	c, _, err := websocket.DefaultDialer.Dial(u, nil)
	if err != nil {
		t.Fatalf("%s: %v", at, err)
	}
	defer c.Close()
	ids := map[string]string{}
	idRE := regexp.MustCompile(`0x[0-9a-f]*…`)
	for _, l := range session {
		switch {
		case strings.HasPrefix(l, "> "):
			msg := idRE.ReplaceAllStringFunc(l[2:], func(id string) string { return ids[id] })
			if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
				t.Fatalf("%s: %v", at, err)
			}
		case strings.HasPrefix(l, "< "):
			want := l[2:]
			for {
				_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
				_, got, err := c.ReadMessage()
				if err != nil {
					t.Fatalf("%s: waiting for %s: %v", at, want, err)
				}
				// A clock notification may come before a reply the doc shows after it.
				if strings.Contains(want, `"id":`) && strings.Contains(string(got), `"method":"clock_subscription"`) {
					continue
				}
				found, ok := matchOutput(want, string(got))
				if !ok {
					t.Fatalf("%s: got %s, the doc says %s", at, got, want)
				}
				for i, id := range idRE.FindAllString(want, -1) {
					if i < len(found) {
						ids[id] = found[i]
					}
				}
				break
			}
		}
	}
}

// compare checks a command's output against the lines the doc prints
// for it: a JSON value (its lines joined), or a status line and headers,
// or exposition lines, each of which must be in the output.
func (s *docSession) compare(at string, want []string, got string) {
	t := s.t
	if len(want) == 0 {
		return
	}
	if strings.HasPrefix(want[0], "HTTP/") || sampleLineRE.MatchString(want[0]) {
		have := map[string]bool{}
		sc := bufio.NewScanner(strings.NewReader(got))
		for sc.Scan() {
			have[strings.TrimSpace(sc.Text())] = true
		}
		for _, w := range want {
			if !have[w] {
				t.Errorf("%s: no line %q in the output:\n%s", at, w, got)
			}
		}
		return
	}
	var joined strings.Builder
	for _, w := range want {
		w, _, _ = strings.Cut(strings.TrimSpace(w), "  ") // a remark after two spaces: (0 subscribers ...)
		joined.WriteString(w)
	}
	first, _, _ := strings.Cut(strings.TrimSpace(got), "\n")
	if _, ok := matchOutput(joined.String(), first); !ok {
		t.Errorf("%s: got %s, the doc says %s", at, first, joined.String())
	}
}
