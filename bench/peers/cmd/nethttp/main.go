// Command nethttp serves add, echo and sleep over HTTP with net/http and
// over TCP (newline-delimited JSON) with net and encoding/json, written
// the way a careful user would: an envelope struct with RawMessage
// fields, params decoded per method, batches handled, notifications
// unanswered.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"log"
	"net"
	"net/http"
	"time"
)

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	ID      json.RawMessage `json:"id"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
	ID      json.RawMessage `json:"id"`
}

func call(req *request) (any, *rpcError) {
	switch req.Method {
	case "add":
		var p [2]int
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, &rpcError{-32602, "Invalid params"}
		}
		return p[0] + p[1], nil
	case "echo":
		return req.Params, nil
	case "sleep":
		var ms int
		var pos [1]int
		var named struct {
			Ms int `json:"ms"`
		}
		if json.Unmarshal(req.Params, &pos) == nil {
			ms = pos[0]
		} else if json.Unmarshal(req.Params, &named) == nil {
			ms = named.Ms
		} else {
			return nil, &rpcError{-32602, "Invalid params"}
		}
		time.Sleep(time.Duration(ms) * time.Millisecond)
		return ms, nil
	}
	return nil, &rpcError{-32601, "Method not found"}
}

// handle answers one request; nil for a notification.
func handle(raw json.RawMessage) *response {
	var req request
	if err := json.Unmarshal(raw, &req); err != nil || req.JSONRPC != "2.0" || req.Method == "" {
		return &response{JSONRPC: "2.0", Error: &rpcError{-32600, "Invalid Request"}, ID: json.RawMessage("null")}
	}
	result, rerr := call(&req)
	if req.ID == nil {
		return nil
	}
	if rerr == nil && result == nil {
		result = json.RawMessage("null")
	}
	return &response{JSONRPC: "2.0", Result: result, Error: rerr, ID: req.ID}
}

// handleMessage answers a message (a request or a batch): nil when there
// is nothing to answer.
func handleMessage(msg []byte) any {
	msg = bytes.TrimSpace(msg)
	if len(msg) > 0 && msg[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(msg, &batch); err != nil || len(batch) == 0 {
			return &response{JSONRPC: "2.0", Error: &rpcError{-32600, "Invalid Request"}, ID: json.RawMessage("null")}
		}
		var out []*response
		for _, r := range batch {
			if resp := handle(r); resp != nil {
				out = append(out, resp)
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
	if !json.Valid(msg) {
		return &response{JSONRPC: "2.0", Error: &rpcError{-32700, "Parse error"}, ID: json.RawMessage("null")}
	}
	if resp := handle(msg); resp != nil {
		return resp
	}
	return nil
}

func serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 5<<20))
	if err != nil {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	out := handleMessage(body)
	if out == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func serveConn(c net.Conn) {
	defer c.Close()
	dec := json.NewDecoder(bufio.NewReader(c))
	w := bufio.NewWriter(c)
	enc := json.NewEncoder(w)
	for {
		var msg json.RawMessage
		if err := dec.Decode(&msg); err != nil {
			return
		}
		if out := handleMessage(msg); out != nil {
			if err := enc.Encode(out); err != nil {
				return
			}
		}
		// Flush once no complete request is waiting (only whitespace left).
		if onlySpace(dec.Buffered()) {
			if err := w.Flush(); err != nil {
				return
			}
		}
	}
}

// onlySpace reports whether r holds nothing but JSON whitespace.
func onlySpace(r io.Reader) bool {
	var b [64]byte
	for {
		n, err := r.Read(b[:])
		for _, c := range b[:n] {
			if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
				return false
			}
		}
		if err != nil {
			return true
		}
	}
}

func main() {
	httpAddr := flag.String("http", "", "HTTP address")
	tcpAddr := flag.String("tcp", "", "TCP address (newline-delimited JSON)")
	flag.Parse()
	if *tcpAddr != "" {
		ln, err := net.Listen("tcp", *tcpAddr)
		if err != nil {
			log.Fatal(err)
		}
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					log.Fatal(err)
				}
				go serveConn(c)
			}
		}()
	}
	if *httpAddr != "" {
		log.Fatal(http.ListenAndServe(*httpAddr, http.HandlerFunc(serveHTTP)))
	}
	select {}
}
