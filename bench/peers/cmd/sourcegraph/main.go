// Command sourcegraph serves add, echo and sleep with
// sourcegraph/jsonrpc2 over TCP (plain JSON values) and, with -ws, over
// WebSocket (its websocket package, on gorilla/websocket). It has no
// batches.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/gorilla/websocket"
	"github.com/sourcegraph/jsonrpc2"
	jsonrpc2ws "github.com/sourcegraph/jsonrpc2/websocket"
)

func handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	var params json.RawMessage
	if req.Params != nil {
		params = *req.Params
	}
	switch req.Method {
	case "add":
		var p [2]int
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: "Invalid params"}
		}
		return p[0] + p[1], nil
	case "echo":
		return params, nil
	case "sleep":
		var p [1]int
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: "Invalid params"}
		}
		time.Sleep(time.Duration(p[0]) * time.Millisecond)
		return p[0], nil
	}
	return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "Method not found"}
}

func main() {
	addr := flag.String("tcp", "127.0.0.1:9004", "TCP address")
	wsAddr := flag.String("ws", "", "WebSocket address")
	flag.Parse()
	if *wsAddr != "" {
		up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
		go func() {
			log.Fatal(http.ListenAndServe(*wsAddr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				c, err := up.Upgrade(w, r, nil)
				if err != nil {
					return
				}
				conn := jsonrpc2.NewConn(r.Context(), jsonrpc2ws.NewObjectStream(c), jsonrpc2.HandlerWithError(handle))
				<-conn.DisconnectNotify()
			})))
		}()
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go func() {
			conn := jsonrpc2.NewConn(context.Background(), jsonrpc2.NewPlainObjectStream(c), jsonrpc2.HandlerWithError(handle))
			<-conn.DisconnectNotify()
		}()
	}
}
