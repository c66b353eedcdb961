// Command slowsubs measures what subscribers that never read cost a
// `jetrpc serve` process: it starts the server, connects -clients
// subscribers (WebSocket or TCP streams, with small kernel receive
// buffers, so that the server's side fills in seconds instead of first
// filling megabytes of the clients' kernel buffers), each of which
// subscribes to a topic with topic_subscribe, reads the subscribe reply
// and then never reads again; then one publisher publishes on the topic
// with topic_publish, an open loop at -rate publishes a second. It
// prints a timeline (the server's RSS, the bytes it says it holds for
// its connections, the subscribers a publish still reaches), the
// server's RSS at rest, its peak (VmHWM) and the growth between them,
// and the server's close counters from its metrics.
//
//	go build -o /tmp/jetrpc ./cmd/jetrpc
//	go run ./bench/scripts/slowsubs -jetrpc /tmp/jetrpc [-clients 300]
//	    [-transport ws|tcp] [-rate 1000] [-payload 1000] [-d 30s]
//	    [-rcvbuf 4096] [-log FILE] [-- SERVE_FLAGS...]
//
// Everything is on 127.0.0.1; the run ends after -d (at most 60 s), or
// 2 s after the last subscriber is gone, whichever comes first, and the
// server is stopped. SERVE_FLAGS go to `jetrpc serve` (say
// --max-output-budget, --max-push-queue); the server's environment is
// this one's (say GOMEMLIMIT). Compare two builds by running it once
// with each: cmd/jetrpc/README.md's figures (Limits) are such runs, on 2 cores.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gorilla/websocket"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "slowsubs:", err)
		os.Exit(1)
	}
}

func run() error {
	bin := flag.String("jetrpc", "jetrpc", "the jetrpc binary to run as the server")
	clients := flag.Int("clients", 300, "subscribers that never read")
	transport := flag.String("transport", "ws", "the subscribers' transport: ws or tcp")
	rate := flag.Int("rate", 1000, "publishes per second (an open loop)")
	payload := flag.Int("payload", 1000, "bytes of each published payload (a JSON string)")
	dur := flag.Duration("d", 30*time.Second, "longest run, once the subscribers are connected")
	rcvbuf := flag.Int("rcvbuf", 4096, "the subscribers' kernel receive buffer, in bytes, set before connecting (0: the kernel's autotuning)")
	topic := flag.String("topic", "slow", "the topic")
	logFile := flag.String("log", "", "write the server's output (stdout and stderr) to `file`")
	flag.Parse()
	if *transport != "ws" && *transport != "tcp" {
		return fmt.Errorf("-transport %q: ws or tcp", *transport)
	}
	if *dur > 60*time.Second {
		return errors.New("-d: at most 60s")
	}
	srv, err := startServer(*bin, flag.Args(), *logFile)
	if err != nil {
		return err
	}
	defer srv.stop()
	idle := srv.rss()

	dialer := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		if *rcvbuf <= 0 {
			return nil
		}
		return c.Control(func(fd uintptr) {
			_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, *rcvbuf)
		})
	}}
	sub := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"topic_subscribe","params":[%q]}`, *topic)
	var subs []io.Closer
	defer func() {
		for _, c := range subs {
			_ = c.Close()
		}
	}()
	for i := range *clients {
		c, err := subscribe(dialer, *transport, srv.addr, sub)
		if err != nil {
			return fmt.Errorf("subscriber %d: %w", i, err)
		}
		subs = append(subs, c)
	}
	time.Sleep(500 * time.Millisecond)
	rest := srv.rss()
	fmt.Printf("server %s %s; %d %s subscribers that never read (receive buffer %d), %d publishes/s of %d bytes\n",
		*bin, strings.Join(flag.Args(), " "), *clients, *transport, *rcvbuf, *rate, *payload)
	fmt.Printf("server RSS idle %.1f MiB, with the subscribers connected %.1f MiB\n", mib(idle), mib(rest))

	pub, err := net.Dial("tcp", srv.addr)
	if err != nil {
		return err
	}
	defer pub.Close()
	var reach, answered, refused atomic.Int64
	reach.Store(int64(*clients))
	go func() {
		r := bufio.NewReaderSize(pub, 1<<16)
		for {
			line, err := r.ReadSlice('\n')
			if err != nil {
				return
			}
			var rep struct {
				Result *int64
				Error  json.RawMessage
			}
			if json.Unmarshal(line, &rep) == nil && rep.Result != nil {
				reach.Store(*rep.Result)
			} else {
				refused.Add(1)
			}
			answered.Add(1)
		}
	}()
	msg := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"topic_publish","params":[%q,%q]}`+"\n", *topic, strings.Repeat("x", *payload)))
	t0 := time.Now()
	var sent int64
	var gone time.Time
	peakSeen := rest
	var batch []byte
	for next := time.Second; time.Since(t0) < *dur; {
		time.Sleep(10 * time.Millisecond)
		el := time.Since(t0)
		due := int64(el.Seconds()*float64(*rate)) - sent
		batch = batch[:0]
		for range due {
			batch = append(batch, msg...)
		}
		if len(batch) > 0 {
			_ = pub.SetWriteDeadline(time.Now().Add(time.Second))
			n, _ := pub.Write(batch)
			sent += int64(n / len(msg))
		}
		rss := srv.rss()
		peakSeen = max(peakSeen, rss)
		if el >= next {
			held := ""
			if v, ok := srv.gauge("jsonrpc_server_output_held_bytes"); ok {
				held = fmt.Sprintf(", output held %.1f MiB", v/(1<<20))
			}
			fmt.Printf("%5.1fs RSS %7.1f MiB (+%.1f)%s, a publish reaches %d subscribers; %d publishes sent, %d answered, %d refused\n",
				el.Seconds(), mib(rss), mib(rss-rest), held, reach.Load(), sent, answered.Load(), refused.Load())
			next += time.Second
		}
		if reach.Load() == 0 && answered.Load() > 0 {
			if gone.IsZero() {
				gone = time.Now()
			} else if time.Since(gone) > 2*time.Second {
				break
			}
		}
	}
	hwm := srv.hwm()
	fmt.Printf("server RSS at rest %.1f MiB, peak %.1f MiB (VmHWM; sampled every 10 ms: %.1f MiB): grew by %.1f MiB\n",
		mib(rest), mib(hwm), mib(peakSeen), mib(hwm-rest))
	if !gone.IsZero() {
		fmt.Printf("every subscriber disconnected %.1fs after publishing began; RSS %.1f MiB 2 s later\n", gone.Sub(t0).Seconds(), mib(srv.rss()))
	} else {
		fmt.Printf("after %v a publish still reaches %d subscribers\n", *dur, reach.Load())
	}
	srv.metrics()
	return nil
}

// subscribe connects one subscriber, subscribes, and reads the reply: it
// reads nothing more.
func subscribe(d *net.Dialer, transport, addr, sub string) (io.Closer, error) {
	if transport == "ws" {
		wd := &websocket.Dialer{NetDialContext: d.DialContext, HandshakeTimeout: 10 * time.Second}
		c, _, err := wd.Dial("ws://"+addr+"/", nil)
		if err != nil {
			return nil, err
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if err := c.WriteMessage(websocket.TextMessage, []byte(sub)); err != nil {
			return nil, err
		}
		if _, rep, err := c.ReadMessage(); err != nil || !strings.Contains(string(rep), `"result":"0x`) {
			return nil, fmt.Errorf("subscribe: %s %v", rep, err)
		}
		return c, nil
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	if _, err := c.Write([]byte(sub + "\n")); err != nil {
		return nil, err
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	// One byte at a time: nothing past the reply is taken from the socket.
	var rep []byte
	b := make([]byte, 1)
	for len(rep) == 0 || rep[len(rep)-1] != '\n' {
		if _, err := c.Read(b); err != nil {
			return nil, err
		}
		rep = append(rep, b[0])
	}
	if !strings.Contains(string(rep), `"result":"0x`) {
		return nil, fmt.Errorf("subscribe: %s", rep)
	}
	return c, nil
}

// server is the jetrpc serve process.
type server struct {
	cmd  *exec.Cmd
	addr string
	done chan struct{}
}

var serving = regexp.MustCompile(`tcp://(127\.0\.0\.1:[0-9]+)`)

func startServer(bin string, flags []string, logFile string) (*server, error) {
	var log io.Writer = io.Discard
	if logFile != "" {
		f, err := os.Create(logFile)
		if err != nil {
			return nil, err
		}
		log = f
	}
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--metrics", "/metrics"}, flags...)
	cmd := exec.Command(bin, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		warned := 0
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(log, line)
			if m := serving.FindStringSubmatch(line); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			} else if strings.Contains(line, "level=WARN") {
				warned++
				if warned <= 3 {
					fmt.Println("server:", line)
				}
			}
		}
	}()
	go func() { _ = cmd.Wait(); close(s.done) }()
	select {
	case s.addr = <-addr:
		return s, nil
	case <-s.done:
		return nil, errors.New("the server exited")
	case <-time.After(10 * time.Second):
		s.stop()
		return nil, errors.New("the server printed no address in 10 s")
	}
}

func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// status returns a field of /proc/PID/status, in bytes.
func (s *server) status(field string) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(s.cmd.Process.Pid) + "/status")
	if err != nil {
		return 0
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == field+":" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n << 10
		}
	}
	return 0
}

func (s *server) rss() int64 { return s.status("VmRSS") }
func (s *server) hwm() int64 { return s.status("VmHWM") }

// gauge returns the value of the series name (without labels) from the
// server's metrics (jetrpc serve of this tree; older builds lack some).
func (s *server) gauge(name string) (float64, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.addr+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// metrics prints the server's counters of closed connections and pushes.
func (s *server) metrics() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.addr+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println("metrics:", err)
		return
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "#") || strings.HasSuffix(l, " 0") {
			continue
		}
		if strings.Contains(l, "connections_closed_total") || strings.Contains(l, "slow_consumers") ||
			strings.Contains(l, "pushes") || strings.Contains(l, "topic_deliveries") {
			fmt.Println("metric", l)
		}
	}
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }
