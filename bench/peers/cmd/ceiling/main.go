// Command ceiling is the physical limit of this machine for JSON-RPC over
// HTTP/1.1 and newline-delimited TCP: a gnet server that answers every
// request with a fixed, precomputed reply, without parsing JSON. It finds
// request boundaries only (the end of the head plus Content-Length, or a
// newline), so that pipelined load is answered correctly.
package main

import (
	"bytes"
	"flag"
	"log"
	"strconv"

	"github.com/panjf2000/gnet/v2"
)

var (
	httpReply = []byte("HTTP/1.1 200 OK\r\nServer: ceiling\r\nContent-Type: application/json\r\nContent-Length: 35\r\n\r\n" +
		`{"jsonrpc":"2.0","result":3,"id":1}`)
	lineReply = []byte(`{"jsonrpc":"2.0","result":3,"id":1}` + "\n")
)

type server struct {
	gnet.BuiltinEventEngine
	out []byte
}

func (s *server) OnTraffic(c gnet.Conn) gnet.Action {
	in, _ := c.Peek(-1)
	out := s.out[:0]
	used := 0
	for used < len(in) {
		rest := in[used:]
		if rest[0] == '{' || rest[0] == '[' {
			nl := bytes.IndexByte(rest, '\n')
			if nl < 0 {
				break
			}
			out = append(out, lineReply...)
			used += nl + 1
			continue
		}
		end := bytes.Index(rest, []byte("\r\n\r\n"))
		if end < 0 {
			break
		}
		n := 0
		if k := bytes.Index(rest[:end], []byte("Content-Length: ")); k >= 0 {
			v := rest[k+16:]
			if e := bytes.IndexByte(v, '\r'); e >= 0 {
				n, _ = strconv.Atoi(string(v[:e]))
			}
		}
		if len(rest) < end+4+n {
			break
		}
		out = append(out, httpReply...)
		used += end + 4 + n
	}
	if used > 0 {
		_, _ = c.Discard(used)
	}
	if len(out) > 0 {
		_, _ = c.Write(out)
	}
	s.out = out
	return gnet.None
}

func main() {
	addr := flag.String("addr", "tcp://127.0.0.1:9000", "listen address")
	loops := flag.Int("loops", 1, "event loops")
	flag.Parse()
	log.Fatal(gnet.Run(&server{}, *addr, gnet.WithNumEventLoop(*loops), gnet.WithReuseAddr(true)))
}
