// Command otlpsink is an OTLP/HTTP trace receiver for measurements: it
// answers every POST /v1/traces with 200 and an empty
// application/x-protobuf body (an empty ExportTraceServiceResponse,
// which the otlptracehttp exporter takes for a full success) and keeps
// nothing but counts: requests, bytes received (as sent, gzip or not)
// and spans (from the request's protobuf, gunzipped where it says
// gzip). A run that traces against it can then show that spans really
// went out, at the cost of a loopback POST per batch and no more.
//
//	go run ./bench/scripts/otlpsink [-addr 127.0.0.1:0]
//
// It prints "otlpsink: listening on http://ADDR" on stdout once it
// listens (-addr :0 or a port of 0: the kernel picks one), serves the
// counts as JSON at GET /stats, and prints them on SIGTERM or SIGINT
// before it exits. -addr must be a loopback address.
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// stats are the sink's counts; atomic only.
type stats struct {
	requests atomic.Int64 // POST /v1/traces received
	bytes    atomic.Int64 // their bodies' bytes, as sent
	spans    atomic.Int64 // spans in them
	bad      atomic.Int64 // bodies that did not decode (still answered 200)
}

func (s *stats) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]int64{
		"requests": s.requests.Load(),
		"bytes":    s.bytes.Load(),
		"spans":    s.spans.Load(),
		"bad":      s.bad.Load(),
	})
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "loopback `address` to listen on (a port of 0: the kernel picks)")
	flag.Parse()
	if err := run(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "otlpsink:", err)
		os.Exit(1)
	}
}

func run(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if host == "" {
		addr = "127.0.0.1" + addr
	} else if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("-addr %s: want a loopback address", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	var st stats
	srv := &http.Server{Handler: newHandler(&st)}
	fmt.Printf("otlpsink: listening on http://%s\n", ln.Addr())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		srv.Shutdown(context.Background())
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	b, _ := st.MarshalJSON()
	fmt.Printf("otlpsink: %s\n", b)
	return nil
}

// newHandler serves POST /v1/traces and GET /stats, counting into st.
func newHandler(st *stats) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		st.requests.Add(1)
		st.bytes.Add(int64(len(body)))
		if err == nil && r.Header.Get("Content-Encoding") == "gzip" {
			body, err = gunzip(body)
		}
		n := 0
		if err == nil {
			n, err = countSpans(body)
		}
		st.spans.Add(int64(n))
		if err != nil {
			st.bad.Add(1)
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(st)
	})
	return mux
}

func gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// countSpans counts the spans of a protobuf ExportTraceServiceRequest:
// resource_spans (1) → scope_spans (2) → spans (2).
func countSpans(b []byte) (int, error) {
	n := 0
	err := fields(b, func(num int, v []byte) error {
		if num != 1 { // resource_spans
			return nil
		}
		return fields(v, func(num int, v []byte) error {
			if num != 2 { // scope_spans
				return nil
			}
			return fields(v, func(num int, _ []byte) error {
				if num == 2 { // spans
					n++
				}
				return nil
			})
		})
	})
	return n, err
}

var errProto = errors.New("malformed protobuf")

// fields calls f with each length-delimited field of message b; the
// other wire types are skipped.
func fields(b []byte, f func(num int, v []byte) error) error {
	for len(b) > 0 {
		key, k := uvarint(b)
		if k == 0 {
			return errProto
		}
		b = b[k:]
		num, typ := int(key>>3), key&7
		switch typ {
		case 0: // varint
			_, k = uvarint(b)
			if k == 0 {
				return errProto
			}
			b = b[k:]
		case 1: // fixed64
			if len(b) < 8 {
				return errProto
			}
			b = b[8:]
		case 5: // fixed32
			if len(b) < 4 {
				return errProto
			}
			b = b[4:]
		case 2: // length-delimited
			l, k := uvarint(b)
			if k == 0 || l > uint64(len(b)-k) {
				return errProto
			}
			if err := f(num, b[k:k+int(l)]); err != nil {
				return err
			}
			b = b[k+int(l):]
		default:
			return errProto
		}
	}
	return nil
}

// uvarint decodes a varint from b: the value and its length, 0 when b
// does not hold a whole one.
func uvarint(b []byte) (uint64, int) {
	var x uint64
	for i := 0; i < len(b) && i < 10; i++ {
		x |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return x, i + 1
		}
	}
	return 0, 0
}
