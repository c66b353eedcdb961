package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsutil"
)

// NOTE: several targets in one run. RunTargets measures them in
// interleaved rounds (each round runs every target, in the reverse order
// every other round, so that the drift of a shared machine spreads over
// all of them) and reports each one's medians with their spread, and
// its ratio to the first. Diff sends the same calls to every target, one
// at a time, and reports the calls whose replies differ: the result as
// JSON text (white space aside) and the error code; error messages are
// not compared, nor the replies of workload calls marked Free.

// NamedTarget is a target of a run over several.
type NamedTarget struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// ParseNamedTarget reads NAME=URL.
func ParseNamedTarget(s string) (NamedTarget, error) {
	name, url, ok := strings.Cut(s, "=")
	if !ok || name == "" || url == "" {
		return NamedTarget{}, fmt.Errorf("target %q: want NAME=URL", s)
	}
	if _, err := parseTarget(url); err != nil {
		return NamedTarget{}, err
	}
	return NamedTarget{Name: name, URL: url}, nil
}

// TargetRuns are the runs of one target of RunTargets.
type TargetRuns struct {
	NamedTarget
	Runs []*Result `json:"runs"`
}

// TargetsResult is what RunTargets measured.
type TargetsResult struct {
	Rounds  int          `json:"rounds"`
	Targets []TargetRuns `json:"targets"`
}

// RunTargets runs cfg against each target, rounds times, interleaved.
// Config.Compression applies to its http:// and https:// targets and
// Config.WSCompression to its ws:// and wss:// ones, each left out for
// the others, so that one config compares HTTP compression with
// WebSocket compression, as long as one target takes each (or Run's
// error stands).
func RunTargets(ctx context.Context, cfg Config, targets []NamedTarget, rounds int, progress io.Writer) (*TargetsResult, error) {
	if len(targets) < 2 {
		return nil, errors.New("several targets: two at least")
	}
	if rounds < 1 {
		return nil, errors.New("one round at least")
	}
	res := &TargetsResult{Rounds: rounds}
	var anyHTTP, anyWS bool
	for _, t := range targets {
		res.Targets = append(res.Targets, TargetRuns{NamedTarget: t})
		pt, _ := parseTarget(t.URL)
		anyHTTP, anyWS = anyHTTP || pt.http, anyWS || pt.ws
	}
	for r := range rounds {
		for k := range targets {
			i := k
			if r%2 == 1 {
				i = len(targets) - 1 - k
			}
			c := cfg
			c.Target, c.Progress = targets[i].URL, nil
			if t, err := parseTarget(c.Target); err == nil {
				if !t.http && anyHTTP {
					c.Compression = nil // an HTTP setting, for the others
				}
				if !t.ws && anyWS {
					c.WSCompression = false // a WebSocket setting, for the others
				}
			}
			run, err := Run(ctx, c)
			if err != nil {
				return res, fmt.Errorf("%s: %w", targets[i].Name, err)
			}
			res.Targets[i].Runs = append(res.Targets[i].Runs, run)
			if progress != nil {
				fmt.Fprintf(progress, "round %d/%d  %-12s %12s requests/s  p99 %s  %d errors\n", r+1, rounds, targets[i].Name,
					group(run.RequestsPerSec), us(run.Latency.P99), run.TotalErrors())
			}
			if err := ctx.Err(); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}

// WriteTable writes each target's medians and spreads side by side, and
// their ratios to the first target's, with the U test's verdict.
func (t *TargetsResult) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "%-12s %-22s %-22s %-22s %s\n", "target", "requests/s", "p50", "p99", "errors")
	base := t.Targets[0]
	metric := func(runs []*Result, of func(*Result) float64) []float64 {
		xs := make([]float64, len(runs))
		for i, r := range runs {
			xs[i] = of(r)
		}
		return xs
	}
	rps := func(r *Result) float64 { return r.RequestsPerSec }
	p50 := func(r *Result) float64 { return float64(r.Latency.P50) }
	p99 := func(r *Result) float64 { return float64(r.Latency.P99) }
	for i, tr := range t.Targets {
		cell := func(of func(*Result) float64, latency bool) string {
			m, spread := medianSpread(metric(tr.Runs, of))
			s := group(m)
			if latency {
				s = us(int64(m))
			}
			if spread > 0 {
				s += fmt.Sprintf(" ±%.0f%%", 100*spread)
			}
			if i > 0 {
				bm, _ := medianSpread(metric(base.Runs, of))
				if bm != 0 {
					s += fmt.Sprintf(" ×%.2f", m/bm)
				}
				if mannWhitneyP(metric(base.Runs, of), metric(tr.Runs, of)) >= 0.05 {
					s += "~"
				}
			}
			return s
		}
		var errs int64
		for _, r := range tr.Runs {
			errs += r.TotalErrors()
		}
		fmt.Fprintf(w, "%-12s %-22s %-22s %-22s %d\n", tr.Name, cell(rps, false), cell(p50, true), cell(p99, true), errs)
	}
	fmt.Fprintf(w, "(medians of %d rounds, interleaved; ±: the largest distance of a round from the median; ×: the ratio to %s; ~: within the noise, p ≥ 0.05)\n",
		t.Rounds, base.Name)
}

// Difference is a call whose replies differ between targets.
type Difference struct {
	Method  string            `json:"method"`
	Request string            `json:"request"`
	Replies map[string]string `json:"replies"` // by target name
}

// DiffResult is what Diff found.
type DiffResult struct {
	Calls       int            `json:"calls"`       // calls sent to every target
	Compared    int            `json:"compared"`    // of those, compared (not free)
	Differ      int            `json:"differ"`      // of those, answered differently
	ByMethod    map[string]int `json:"by_method"`   // differing calls by method
	Differences []Difference   `json:"differences"` // the first ones, 10 at most
}

// Diff sends n calls of cfg's mix (its workload, or Method and Params)
// to every target, one at a time, and compares their replies.
func Diff(ctx context.Context, cfg Config, targets []NamedTarget, n int) (*DiffResult, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	var msgs []message
	var specs []callSpec
	if cfg.Workload != nil {
		var err error
		if specs, err = cfg.Workload.compile(); err != nil {
			return nil, err
		}
		rot, err := rotation(cfg.Workload.Calls)
		if err != nil {
			return nil, err
		}
		msgs = messagesFromWorkload(specs, rot, 1)
	} else if cfg.Bodies != nil {
		var err error
		if msgs, err = messagesFromBodies(cfg.Bodies); err != nil {
			return nil, err
		}
	} else {
		var err error
		if msgs, err = messagesFromFlags(cfg.Method, cfg.Params, 1, 0); err != nil {
			return nil, err
		}
	}
	clients := make([]*oneCaller, len(targets))
	for i, t := range targets {
		c, err := newOneCaller(ctx, t.URL, cfg.Header, cfg.TLS)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		defer c.close()
		clients[i] = c
	}
	rng := rand.New(rand.NewPCG(1, 2))
	res := &DiffResult{ByMethod: map[string]int{}}
	var body []byte
	for k := 0; k < n; k++ {
		m := &msgs[k%len(msgs)]
		if m.holes == 0 {
			continue // a notification: nothing to compare
		}
		body = m.appendBody(body[:0], 1, rng)
		method, free := cfg.Method, false
		if cfg.Bodies != nil {
			method = "body " + strconv.Itoa(k%len(msgs)+1)
		}
		if specs != nil {
			s := &specs[m.specs[0]]
			method, free = s.method, s.free
		}
		replies := make([]string, len(targets))
		for i, c := range clients {
			r, err := c.call(ctx, body)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", targets[i].Name, err)
			}
			replies[i] = r
		}
		res.Calls++
		if free {
			continue
		}
		res.Compared++
		same := true
		for i := 1; i < len(replies); i++ {
			same = same && replyKey(replies[i]) == replyKey(replies[0])
		}
		if same {
			continue
		}
		res.Differ++
		res.ByMethod[method]++
		if len(res.Differences) < 10 {
			d := Difference{Method: method, Request: string(body), Replies: map[string]string{}}
			for i, t := range targets {
				d.Replies[t.Name] = replies[i]
			}
			res.Differences = append(res.Differences, d)
		}
	}
	return res, nil
}

// replyKey is what Diff compares of a reply: its result as compact JSON,
// or its error code; the reply itself when it is not a JSON-RPC one.
func replyKey(reply string) string {
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code json.Number `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(reply), &r) != nil {
		return "raw:" + reply
	}
	if r.Error != nil {
		return "error:" + r.Error.Code.String()
	}
	return "result:" + string(compactJSON(r.Result))
}

// WriteTable writes what Diff found.
func (d *DiffResult) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "differential  %d calls sent to every target, %d compared, %d answered differently\n", d.Calls, d.Compared, d.Differ)
	methods := slices.Sorted(maps.Keys(d.ByMethod))
	for _, m := range methods {
		fmt.Fprintf(w, "              %s: %d\n", m, d.ByMethod[m])
	}
	for _, x := range d.Differences {
		fmt.Fprintf(w, "              %s\n", x.Request)
		names := slices.Sorted(maps.Keys(x.Replies))
		for _, n := range names {
			fmt.Fprintf(w, "                %-10s %s\n", n, strings.TrimSpace(x.Replies[n]))
		}
	}
}

// oneCaller sends one call at a time to a target and reads its reply.
type oneCaller struct {
	url    string
	t      target
	header http.Header
	httpc  *http.Client
	conn   net.Conn
	br     *bufio.Reader
}

func newOneCaller(ctx context.Context, url string, header http.Header, tlsConfig *tls.Config) (*oneCaller, error) {
	t, err := parseTarget(url)
	if err != nil {
		return nil, err
	}
	c := &oneCaller{url: url, t: t, header: header}
	switch {
	case t.http:
		c.httpc = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig}}
		return c, nil
	case t.ws:
		d := ws.Dialer{Timeout: 5 * time.Second, TLSConfig: tlsConfig}
		if header != nil {
			d.Header = ws.HandshakeHeaderHTTP(header)
		}
		conn, _, _, err := d.Dial(ctx, url)
		if err != nil {
			return nil, err
		}
		c.conn = conn
		return c, nil
	default:
		d := net.Dialer{Timeout: 5 * time.Second}
		conn, err := d.DialContext(ctx, t.network, t.address)
		if err != nil {
			return nil, err
		}
		c.conn, c.br = conn, bufio.NewReaderSize(conn, 64<<10)
		return c, nil
	}
}

// call sends body and returns the reply.
func (c *oneCaller) call(ctx context.Context, body []byte) (string, error) {
	switch {
	case c.httpc != nil:
		req, err := http.NewRequestWithContext(ctx, "POST", c.url, bytes.NewReader(body))
		if err != nil {
			return "", err
		}
		for k, vs := range c.header {
			req.Header[k] = vs
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.httpc.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxMessage))
		return string(b), err
	case c.t.ws:
		_ = c.conn.SetDeadline(time.Now().Add(10 * time.Second))
		if err := wsutil.WriteClientText(c.conn, body); err != nil {
			return "", err
		}
		b, err := wsutil.ReadServerText(c.conn)
		return string(b), err
	default:
		_ = c.conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.conn.Write(append(body, '\n')); err != nil {
			return "", err
		}
		line, err := c.br.ReadString('\n')
		return strings.TrimSpace(line), err
	}
}

func (c *oneCaller) close() {
	if c.conn != nil {
		_ = c.conn.Close()
	}
}
