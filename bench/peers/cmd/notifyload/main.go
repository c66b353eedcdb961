// Command notifyload measures how fast a server's notifications reach
// their clients over an event stream (a POST answered text/event-stream)
// and over a WebSocket: each of -c clients calls the method countdown
// ({"from":N,"interval_ms":0}: N notifications, then the reply) again and
// again for -d, reading every notification and the reply, and checking
// that the notifications come in order before the reply. It prints one
// JSON line: notifications and calls received, and notifications per
// second. bench/scripts/ssecost.sh runs it against `jetrpc serve`.
//
//	notifyload -mode sse|ws -c 4 -n 1000 -d 3s http://127.0.0.1:8080/
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

func main() {
	mode := flag.String("mode", "sse", "sse (POST, Accept: text/event-stream) or ws (WebSocket)")
	conns := flag.Int("c", 4, "clients")
	n := flag.Int("n", 1000, "notifications per call (countdown's from, at most 1000)")
	d := flag.Duration("d", 3*time.Second, "how long to run")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: notifyload [-mode sse|ws] [-c N] [-n N] [-d D] URL")
		os.Exit(2)
	}
	url := flag.Arg(0)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","method":"countdown","params":{"from":%d,"interval_ms":0},"id":1}`, *n)
	var notes, calls atomic.Int64
	var failed atomic.Pointer[error]
	stop := time.Now().Add(*d)
	var wg sync.WaitGroup
	start := time.Now()
	for range *conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			switch *mode {
			case "sse":
				err = sseClient(url, body, *n, stop, &notes, &calls)
			case "ws":
				err = wsClient(url, body, *n, stop, &notes, &calls)
			default:
				err = errors.New("-mode: want sse or ws")
			}
			if err != nil {
				failed.Store(&err)
			}
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	if e := failed.Load(); e != nil {
		fmt.Fprintln(os.Stderr, "notifyload:", *e)
		os.Exit(1)
	}
	out, _ := json.Marshal(map[string]any{
		"mode": *mode, "clients": *conns, "per_call": *n, "seconds": secs,
		"notifications": notes.Load(), "calls": calls.Load(),
		"notifications_per_sec": float64(notes.Load()) / secs,
	})
	fmt.Println(string(out))
}

// progress is a countdown notification's params.
type progress struct {
	Method string
	Params struct{ Left int }
	ID     json.RawMessage
	Result json.RawMessage
}

// check reads one message of a countdown of n that has had got
// notifications: it returns true for the reply, after all n.
func check(msg []byte, n, got int) (bool, error) {
	var p progress
	if err := json.Unmarshal(msg, &p); err != nil {
		return false, fmt.Errorf("%v: %.100s", err, msg)
	}
	if p.ID != nil {
		if got != n || string(p.Result) != `"done"` {
			return false, fmt.Errorf("reply after %d of %d notifications: %.100s", got, n, msg)
		}
		return true, nil
	}
	if p.Method != "countdown_progress" || p.Params.Left != n-1-got {
		return false, fmt.Errorf("notification %d: %.100s", got, msg)
	}
	return false, nil
}

func sseClient(url, body string, n int, stop time.Time, notes, calls *atomic.Int64) error {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	for time.Now().Before(stop) {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			resp.Body.Close()
			return fmt.Errorf("Content-Type %q: the server did not answer an event stream", ct)
		}
		r := bufio.NewReaderSize(resp.Body, 64<<10)
		got := 0
		for done := false; !done; {
			line, err := r.ReadSlice('\n')
			if err != nil {
				resp.Body.Close()
				return fmt.Errorf("event stream ended after %d notifications: %v", got, err)
			}
			data, ok := bytes.CutPrefix(line, []byte("data: "))
			if !ok {
				continue // the blank line between events, a comment
			}
			if done, err = check(data, n, got); err != nil {
				resp.Body.Close()
				return err
			}
			if !done {
				got++
			}
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		notes.Add(int64(got))
		calls.Add(1)
	}
	return nil
}

func wsClient(url, body string, n int, stop time.Time, notes, calls *atomic.Int64) error {
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(url, "http"), nil)
	if err != nil {
		return err
	}
	defer c.Close()
	for time.Now().Before(stop) {
		if err := c.WriteMessage(websocket.TextMessage, []byte(body)); err != nil {
			return err
		}
		got := 0
		for done := false; !done; {
			_, msg, err := c.ReadMessage()
			if err != nil {
				return fmt.Errorf("after %d notifications: %v", got, err)
			}
			if done, err = check(msg, n, got); err != nil {
				return err
			}
			if !done {
				got++
			}
		}
		notes.Add(int64(got))
		calls.Add(1)
	}
	return nil
}
