//go:build linux

package main

// NOTE: decompression bombs against a live `jetrpc serve` process, its
// memory read from /proc/PID/status (VmRSS, and VmHWM: the peak resident
// set since the process started). Each bomb is about a megabyte (gzip and
// raw deflate; zstd's is far smaller) that inflates to bombSize bytes:
// bombPrefix, the opening of a valid call, then spaces — valid JSON
// whitespace all the way, so nothing but the size limit (--max-message)
// can stop it. The bombs are built from a compressed megabyte repeated
// (zstd's from RLE blocks): the test never holds, nor compresses, the
// inflated bytes either. The server must refuse each
// (413 over HTTP, close 1009 over WebSocket) with its peak resident set
// grown by less than bombRSSGrowth over its baseline, and then still
// answer a normal call. Wall time is never asserted.

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/gorilla/websocket"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// bombSize is how far each bomb inflates: 1 GiB.
const bombSize = 1 << 30

// bombPrefix opens each bomb's inflated bytes: a call whose params array
// the spaces after it never close.
const bombPrefix = `{"jsonrpc":"2.0","method":"echo","params":[`

// bombRSSGrowth bounds how far the server's peak resident set may grow
// over its baseline while it refuses a bomb: 64 MiB, against the 1 GiB a
// server that inflated it whole would need. Measured (linux/amd64, the
// default --max-message of 5 MiB): 10 to 15 MiB for each bomb
// (the test logs VmRSS and VmHWM before and after each).
const bombRSSGrowth = 64 << 20

// The bombs are built from pieces that repeat, so that the test does
// not spend its time compressing a gibibyte (seconds; minutes under the
// race detector): bombChunk bytes of spaces compressed once, their
// compressed form written bombSize/bombChunk-1 times after a first chunk
// that starts with bombPrefix.
const bombChunk = 1 << 20

// bombHead returns the first chunk of a bomb's inflated bytes:
// bombPrefix, then spaces.
func bombHead() []byte {
	b := bytes.Repeat([]byte{' '}, bombChunk)
	copy(b, bombPrefix)
	return b
}

// deflateBomb returns a raw deflate stream that inflates to bombSize
// bytes, bombHead's and then spaces, ending in a sync flush (0x00 0x00
// 0xff 0xff) and without a final block. The first chunk is compressed,
// then flushed, which byte-aligns the stream; so is the second, and its
// blocks — literal spaces and matches that reach back at most 32 KiB,
// into spaces — decode to the same spaces wherever spaces precede them:
// they are repeated for the rest.
func deflateBomb() []byte {
	var b bytes.Buffer
	w, _ := flate.NewWriter(&b, flate.BestCompression) // the level is valid
	_, _ = w.Write(bombHead())                         // bytes.Buffer never fails
	_ = w.Flush()
	n := b.Len()
	_, _ = w.Write(bytes.Repeat([]byte{' '}, bombChunk))
	_ = w.Flush()
	rep := bytes.Clone(b.Bytes()[n:])
	for range bombSize/bombChunk - 2 {
		b.Write(rep)
	}
	return b.Bytes()
}

// gzipBomb returns deflateBomb's stream as a gzip member (RFC 1952): a
// header, the stream closed by an empty final block, and the trailer
// (CRC-32 and size of the inflated bytes).
func gzipBomb(deflate []byte) []byte {
	b := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff} // deflate, no flags, no time, unknown OS
	b = append(b, deflate...)
	b = append(b, 0x03, 0x00) // BFINAL, fixed Huffman codes, end of block
	sum := crc32.ChecksumIEEE(bombHead())
	spaces := bytes.Repeat([]byte{' '}, bombChunk)
	for range bombSize/bombChunk - 1 {
		sum = crc32.Update(sum, crc32.IEEETable, spaces)
	}
	b = binary.LittleEndian.AppendUint32(b, sum)
	return binary.LittleEndian.AppendUint32(b, bombSize) // ISIZE: the size mod 2^32
}

// zstdBomb returns a zstd frame (RFC 8878) that inflates to bombPrefix
// and then bombSize bytes of spaces: a raw block of bombPrefix, then RLE
// blocks of 128 KiB of spaces (4 bytes each), the last one marked last.
// Its window is 128 KiB, the largest block, and it declares no content
// size.
func zstdBomb() []byte {
	const block = 128 << 10
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 7 << 3} // magic; no content size, no checksum, no dictionary; window 2^(10+7)
	header := func(last bool, typ, size int) {
		h := size<<3 | typ<<1
		if last {
			h |= 1
		}
		b = append(b, byte(h), byte(h>>8), byte(h>>16))
	}
	header(false, 0, len(bombPrefix)) // raw
	b = append(b, bombPrefix...)
	for i := range bombSize / block {
		header(i == bombSize/block-1, 1, block) // RLE
		b = append(b, ' ')
	}
	return b
}

// bombs are the compressed bombs, each made once per test binary.
var bombs = sync.OnceValues(func() (b [3][]byte, err error) {
	deflate := deflateBomb()
	b = [3][]byte{gzipBomb(deflate), zstdBomb(), bytes.TrimSuffix(deflate, []byte{0, 0, 0xff, 0xff})}
	// Their first megabytes inflate as they should (all of each would
	// take seconds).
	want := bombHead()
	zr, err := zstd.NewReader(bytes.NewReader(b[1]))
	if err != nil {
		return b, err
	}
	defer zr.Close()
	for i, r := range []io.Reader{
		gzipReader(b[0]),
		zr,
		flate.NewReader(io.MultiReader(bytes.NewReader(b[2]), bytes.NewReader([]byte{0, 0, 0xff, 0xff}))),
	} {
		got := make([]byte, 4*bombChunk)
		if _, err := io.ReadFull(r, got); err != nil {
			return b, fmt.Errorf("bomb %d: %w", i, err)
		}
		if !bytes.HasPrefix(got, want) || bytes.Count(got[len(bombPrefix):], []byte{' '}) != len(got)-len(bombPrefix) {
			return b, fmt.Errorf("bomb %d inflates to %.60q…", i, got)
		}
	}
	return b, nil
})

// gzipReader returns a gzip.Reader of b, or a reader of its error.
func gzipReader(b []byte) io.Reader {
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return iotest.ErrReader(err)
	}
	return r
}

// makeBombs returns the gzip, zstd and raw deflate bombs: deflate as a
// permessage-deflate message (RFC 7692 7.2.1: flushed, the final 0x00
// 0x00 0xff 0xff removed).
func makeBombs(t *testing.T) (gz, zs, deflate []byte) {
	t.Helper()
	b, err := bombs()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("bombs inflating to %d MiB: gzip %d bytes, zstd %d, deflate %d", bombSize>>20, len(b[0]), len(b[1]), len(b[2]))
	return b[0], b[1], b[2]
}

// procMem is a process's resident set: now, and its peak so far.
type procMem struct{ rss, hwm int64 } // bytes

func (m procMem) String() string {
	return fmt.Sprintf("VmRSS %.1f MiB, VmHWM %.1f MiB", float64(m.rss)/(1<<20), float64(m.hwm)/(1<<20))
}

// readProcMem reads VmRSS and VmHWM from /proc/pid/status.
func readProcMem(t *testing.T, pid int) procMem {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	var m procMem
	for l := range strings.Lines(string(b)) {
		name, v, ok := strings.Cut(l, ":")
		if !ok || name != "VmRSS" && name != "VmHWM" {
			continue
		}
		f := strings.Fields(v) // "12345 kB"
		if len(f) != 2 || f[1] != "kB" {
			t.Fatalf("/proc/%d/status: %q", pid, l)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			t.Fatalf("/proc/%d/status: %q", pid, l)
		}
		if name == "VmRSS" {
			m.rss = kb << 10
		} else {
			m.hwm = kb << 10
		}
	}
	if m.rss == 0 || m.hwm == 0 {
		t.Fatalf("/proc/%d/status has no VmRSS or VmHWM:\n%s", pid, b)
	}
	return m
}

// checkGrowth fails the test when the peak resident set of the process
// grew by bombRSSGrowth or more since base, and logs the figures.
func checkGrowth(t *testing.T, what string, pid int, base procMem) {
	t.Helper()
	after := readProcMem(t, pid)
	grew := after.hwm - base.hwm
	t.Logf("%s: baseline %v; after %v: peak grew %.1f MiB", what, base, after, float64(grew)/(1<<20))
	if grew >= bombRSSGrowth {
		t.Errorf("%s: the server's peak resident set grew by %d MiB (from %d to %d MiB), want under %d MiB",
			what, grew>>20, base.hwm>>20, after.hwm>>20, bombRSSGrowth>>20)
	}
}

// TestServe_compressionBombs: jetrpc serve --compression gzip,zstd
// --ws-compression, a process of its own, refuses a gzip and a zstd body
// that inflate to 1 GiB with 413, and a permessage-deflate message that
// inflates to 1 GiB by closing the connection 1009, inflating no more
// than --max-message of each: its peak resident set grows by less than
// bombRSSGrowth. After each it still answers a call, over HTTP and over
// a compressed WebSocket. Each bomb meets a fresh process, so that no
// bomb finds the buffers an earlier one grew.
func TestServe_compressionBombs(t *testing.T) {
	gz, zs, deflate := makeBombs(t)
	bin := buildJetrpc(t)
	// start starts a server, makes a call over HTTP and over a compressed
	// WebSocket, and returns it with its resident set then.
	start := func(t *testing.T) (n *node, rpc, wsURL string, base procMem) {
		n = startNode(t, bin, "--compression", "gzip,zstd", "--ws-compression")
		rpc, wsURL = "http://"+n.addr+"/", "ws://"+n.addr+"/"
		callHTTP(t, rpc)
		callWSDeflate(t, wsURL)
		return n, rpc, wsURL, readProcMem(t, n.cmd.Process.Pid)
	}

	for _, c := range []struct {
		coding string
		body   []byte
	}{{"gzip", gz}, {"zstd", zs}} {
		t.Run(c.coding, func(t *testing.T) {
			n, rpc, wsURL, base := start(t)
			req, err := http.NewRequest("POST", rpc, bytes.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Content-Encoding", c.coding)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Errorf("a %s body of %d bytes inflating to %d MiB: %d %q, want 413", c.coding, len(c.body), bombSize>>20, resp.StatusCode, b)
			}
			checkGrowth(t, c.coding+" bomb", n.cmd.Process.Pid, base)
			callHTTP(t, rpc)
			callWSDeflate(t, wsURL)
		})
	}

	t.Run("permessage-deflate", func(t *testing.T) {
		n, rpc, wsURL, base := start(t)
		code, err := sendWSBomb(n.addr, deflate)
		if err != nil {
			t.Fatal(err)
		}
		if code != websocket.CloseMessageTooBig {
			t.Errorf("a permessage-deflate message of %d bytes inflating to %d MiB: close %d, want 1009", len(deflate), bombSize>>20, code)
		}
		checkGrowth(t, "permessage-deflate bomb", n.cmd.Process.Pid, base)
		callHTTP(t, rpc)
		callWSDeflate(t, wsURL)
	})
}

// callWSDeflate calls add over a WebSocket to url that negotiated
// permessage-deflate and checks the reply.
func callWSDeflate(t *testing.T, url string) {
	t.Helper()
	d := websocket.Dialer{EnableCompression: true, HandshakeTimeout: 10 * time.Second}
	c, resp, err := d.Dial(url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	defer c.Close()
	if ext := resp.Header.Get("Sec-WebSocket-Extensions"); !strings.HasPrefix(ext, "permessage-deflate") {
		t.Fatalf("dial %s: extensions %q, want permessage-deflate", url, ext)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if err := c.WriteMessage(websocket.TextMessage, []byte(addCall)); err != nil {
		t.Fatal(err)
	}
	_, b, err := c.ReadMessage()
	if err != nil || string(b) != addReply {
		t.Fatalf("ws add: %q %v; want %s", b, err, addReply)
	}
}

// sendWSBomb opens a WebSocket to addr offering permessage-deflate, sends
// msg as one compressed text message (RSV1 set) and returns the code of
// the close frame the server answers with. It writes the frames itself:
// a client library would compress the message itself.
func sendWSBomb(addr string, msg []byte) (code int, err error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	u := url.URL{Scheme: "http", Host: addr, Path: "/"}
	hs := "GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + addr + "\r\n" +
		"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n" +
		"Sec-WebSocket-Key: " + base64.StdEncoding.EncodeToString(key) + "\r\n" +
		"Sec-WebSocket-Extensions: permessage-deflate; client_no_context_takeover; server_no_context_takeover\r\n\r\n"
	if _, err := io.WriteString(c, hs); err != nil {
		return 0, err
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return 0, fmt.Errorf("handshake: %w", err)
	}
	if ext := resp.Header.Get("Sec-WebSocket-Extensions"); resp.StatusCode != http.StatusSwitchingProtocols || !strings.HasPrefix(ext, "permessage-deflate") {
		return 0, fmt.Errorf("handshake: %s, extensions %q; want 101 with permessage-deflate", resp.Status, ext)
	}
	// One frame: FIN, RSV1, text; masked, a 64-bit length.
	frame := make([]byte, 0, 14+len(msg))
	frame = append(frame, 0x80|0x40|websocket.TextMessage, 0x80|127)
	frame = binary.BigEndian.AppendUint64(frame, uint64(len(msg)))
	var mask [4]byte
	_, _ = rand.Read(mask[:])
	frame = append(frame, mask[:]...)
	for i, b := range msg {
		frame = append(frame, b^mask[i&3])
	}
	// The server may close before it has read the whole frame: a write
	// error then is no failure, the close frame it sent first tells.
	_, werr := c.Write(frame)
	for {
		op, payload, err := readServerFrame(br)
		if err != nil {
			return 0, fmt.Errorf("no close frame (write: %v): %w", werr, err)
		}
		if op == websocket.CloseMessage {
			if len(payload) < 2 {
				return 0, fmt.Errorf("close frame %x without a code", payload)
			}
			return int(binary.BigEndian.Uint16(payload)), nil
		}
	}
}

// readServerFrame reads one unmasked frame and returns its opcode and
// payload.
func readServerFrame(r *bufio.Reader) (op int, payload []byte, err error) {
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return 0, nil, err
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return 0, nil, err
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	if h[1]&0x80 != 0 || n > 64<<20 {
		return 0, nil, fmt.Errorf("frame header %x, length %d: masked or too long", h, n)
	}
	payload = make([]byte, n)
	_, err = io.ReadFull(r, payload)
	return int(h[0] & 0x0f), payload, err
}
