//go:build !race

package bench

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// TestWorker_zeroAllocs: building a request and checking its reply
// allocate nothing in steady state, on HTTP and on streams, single and
// batch, and with compressed replies decoded (gzip, zstd,
// permessage-deflate).
func TestWorker_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	for _, c := range []struct {
		name   string
		target string
		batch  int
		auth   bool    // Config.Header and a JWT
		trace  float64 // Config.TraceSample
		coding string  // the replies' compression: gzip, zstd (HTTP), deflate (WebSocket); "" for none
	}{
		{"http", "http://127.0.0.1:1/", 1, false, 0, ""},
		{"http batch", "http://127.0.0.1:1/", 3, false, 0, ""},
		{"http with headers and a JWT", "http://127.0.0.1:1/", 1, true, 0, ""},
		{"stream", "tcp://127.0.0.1:1", 1, false, 0, ""},
		{"stream batch", "tcp://127.0.0.1:1", 3, false, 0, ""},
		{"websocket", "ws://127.0.0.1:1/", 1, false, 0, ""},
		{"websocket batch", "ws://127.0.0.1:1/", 3, false, 0, ""},
		{"stream batch of 100", "tcp://127.0.0.1:1", 100, false, 0, ""},
		{"http with a traceparent on every request", "http://127.0.0.1:1/", 1, false, 1, ""},
		{"http with a traceparent on half", "http://127.0.0.1:1/", 1, true, 0.5, ""},
		{"http gzip", "http://127.0.0.1:1/", 1, false, 0, "gzip"},
		{"http zstd batch", "http://127.0.0.1:1/", 3, false, 0, "zstd"},
		{"websocket deflate", "ws://127.0.0.1:1/", 1, false, 0, "deflate"},
		{"websocket deflate batch", "ws://127.0.0.1:1/", 3, false, 0, "deflate"},
	} {
		cfg := Config{Target: c.target, Batch: c.batch, TraceSample: c.trace}
		switch c.coding {
		case "gzip", "zstd":
			cfg.Compression = []string{c.coding}
		case "deflate":
			cfg.WSCompression = true
		}
		if c.auth {
			cfg.Header = http.Header{"X-Api-Key": {"k"}}
			cfg.JWTSecret = make([]byte, 32)
		}
		if err := cfg.fill(); err != nil {
			t.Fatal(err)
		}
		tg, _ := parseTarget(cfg.Target)
		msgs, err := messagesFromFlags(cfg.Method, cfg.Params, cfg.Batch, cfg.Notify)
		if err != nil {
			t.Fatal(err)
		}
		r := newRunner(cfg, tg, msgs)
		if c.auth {
			token, err := mintJWT(cfg.JWTSecret, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			r.setToken(token)
		}
		w := newWorker(r, 0)
		w.deflate = c.coding == "deflate"
		var encoded []byte // the compressed reply: its ids are the same each time
		reply := func(body []byte, first uint64) []byte {
			if c.batch > 1 {
				body = append(body, '[')
			}
			for k := range c.batch {
				if k > 0 {
					body = append(body, ',')
				}
				body = append(body, `{"jsonrpc":"2.0","result":3,"id":`...)
				body = strconv.AppendUint(body, first+uint64(k), 10)
				body = append(body, '}')
			}
			if c.batch > 1 {
				body = append(body, ']')
			}
			return body
		}
		var body []byte
		step := func() {
			w.wbuf = w.wbuf[:0]
			if c.coding != "" {
				w.next = 0 // ids from 1 each time: one compressed reply serves
			}
			w.push(time.Now())
			first := w.next - uint64(c.batch)
			body = reply(body[:0], first)
			if c.coding != "" {
				if encoded == nil {
					switch c.coding {
					case "gzip":
						encoded = gzipped(t, body)
					case "zstd":
						encoded = zstded(t, body)
					default:
						encoded = deflated(t, body)
					}
				}
				body = append(body[:0], encoded...)
			}
			if tg.http {
				w.rbuf = append(w.rbuf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"...)
				if c.coding != "" {
					w.rbuf = append(w.rbuf, "Content-Encoding: "+c.coding+"\r\n"...)
				}
				w.rbuf = append(w.rbuf, "Content-Length: "...)
				w.rbuf = strconv.AppendInt(w.rbuf, int64(len(body)), 10)
				w.rbuf = append(w.rbuf, "\r\n\r\n"...)
			}
			if tg.ws { // a server frame: final text, unmasked, RSV1 when compressed
				if c.coding != "" {
					w.rbuf = append(w.rbuf, 0xc1)
				} else {
					w.rbuf = append(w.rbuf, 0x81)
				}
				if len(body) < 126 {
					w.rbuf = append(w.rbuf, byte(len(body)))
				} else {
					w.rbuf = append(w.rbuf, 126, byte(len(body)>>8), byte(len(body)))
				}
			}
			w.rbuf = append(w.rbuf, body...)
			if !tg.http && !tg.ws {
				w.rbuf = append(w.rbuf, '\n')
			}
			w.consume()
			if w.n != 0 || len(w.errs) != 0 {
				t.Fatalf("%s: in flight %d, errors %v", c.name, w.n, w.errs)
			}
		}
		step()
		if got := testing.AllocsPerRun(1000, step); got != 0 {
			t.Errorf("%s: %v allocs per request, want 0", c.name, got)
		}
		if w.done.Load() < 1000 {
			t.Fatalf("%s: %d requests recorded", c.name, w.done.Load())
		}
		if c.coding != "" && w.compressed < 1000 {
			t.Fatalf("%s: %d replies decoded", c.name, w.compressed)
		}
	}
}
