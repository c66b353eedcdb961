// Command fasthttp serves add, echo and sleep over HTTP with
// valyala/fasthttp and bytedance/sonic, written by hand the way a
// performance-minded user would: sonic decodes the envelope with params
// kept raw, replies are appended into a reused buffer.
package main

import (
	"bytes"
	"flag"
	"log"
	"strconv"
	"time"

	"github.com/bytedance/sonic"
	"github.com/valyala/fasthttp"
)

type request struct {
	JSONRPC string                 `json:"jsonrpc"`
	Method  string                 `json:"method"`
	Params  sonic.NoCopyRawMessage `json:"params"`
	ID      sonic.NoCopyRawMessage `json:"id"`
}

func appendError(dst []byte, code int, msg string, id []byte) []byte {
	if id == nil {
		id = []byte("null")
	}
	dst = append(dst, `{"jsonrpc":"2.0","error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, `,"message":"`...)
	dst = append(dst, msg...)
	dst = append(dst, `"},"id":`...)
	dst = append(dst, id...)
	return append(dst, '}')
}

// appendReply appends the reply to req; notifications append nothing.
func appendReply(dst []byte, req *request) []byte {
	if req.JSONRPC != "2.0" || req.Method == "" {
		return appendError(dst, -32600, "Invalid Request", nil)
	}
	var result []byte
	var scratch [24]byte
	switch req.Method {
	case "add":
		var p [2]int
		if sonic.Unmarshal(req.Params, &p) != nil {
			if req.ID == nil {
				return dst
			}
			return appendError(dst, -32602, "Invalid params", req.ID)
		}
		result = strconv.AppendInt(scratch[:0], int64(p[0]+p[1]), 10)
	case "echo":
		result = req.Params
		if result == nil {
			result = []byte("null")
		}
	case "sleep":
		var pos [1]int
		var named struct {
			Ms int `json:"ms"`
		}
		ms := 0
		if sonic.Unmarshal(req.Params, &pos) == nil {
			ms = pos[0]
		} else if sonic.Unmarshal(req.Params, &named) == nil {
			ms = named.Ms
		}
		time.Sleep(time.Duration(ms) * time.Millisecond)
		result = strconv.AppendInt(scratch[:0], int64(ms), 10)
	default:
		if req.ID == nil {
			return dst
		}
		return appendError(dst, -32601, "Method not found", req.ID)
	}
	if req.ID == nil {
		return dst
	}
	dst = append(dst, `{"jsonrpc":"2.0","result":`...)
	dst = append(dst, result...)
	dst = append(dst, `,"id":`...)
	dst = append(dst, req.ID...)
	return append(dst, '}')
}

func handle(ctx *fasthttp.RequestCtx) {
	if !ctx.IsPost() {
		ctx.Error("POST only", fasthttp.StatusMethodNotAllowed)
		return
	}
	body := bytes.TrimSpace(ctx.PostBody())
	out := ctx.Response.BodyWriter()
	buf := make([]byte, 0, 256)
	if len(body) > 0 && body[0] == '[' {
		var batch []request
		if err := sonic.Unmarshal(body, &batch); err != nil || len(batch) == 0 {
			buf = appendError(buf, -32600, "Invalid Request", nil)
		} else {
			buf = append(buf, '[')
			for i := range batch {
				n := len(buf)
				if n > 1 {
					buf = append(buf, ',')
				}
				m := len(buf)
				if buf = appendReply(buf, &batch[i]); len(buf) == m {
					buf = buf[:n] // a notification: no reply, no comma
				}
			}
			if len(buf) == 1 {
				ctx.SetStatusCode(fasthttp.StatusNoContent)
				return
			}
			buf = append(buf, ']')
		}
	} else {
		var req request
		if err := sonic.Unmarshal(body, &req); err != nil {
			buf = appendError(buf, -32700, "Parse error", nil)
		} else if buf = appendReply(buf, &req); len(buf) == 0 {
			ctx.SetStatusCode(fasthttp.StatusNoContent)
			return
		}
	}
	ctx.SetContentType("application/json")
	_, _ = out.Write(buf)
}

func main() {
	addr := flag.String("http", "127.0.0.1:9001", "HTTP address")
	flag.Parse()
	log.Fatal(fasthttp.ListenAndServe(*addr, handle))
}
