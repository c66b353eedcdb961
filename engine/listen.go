package engine

// NOTE: listeners and accepting. Go's net listeners accept — one goroutine
// per listener, backing off on EMFILE instead of stopping as gnet's own
// acceptor does — and each connection is enrolled into one of the gnet
// client's event loops.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/jetrpc/jetrpc/handler/httprules"
	"github.com/jetrpc/jetrpc/pool/fdlimit"
)

// listen opens one listener.
func (e *Engine) listen(addr string) (net.Listener, error) {
	network, address := "tcp", addr
	switch {
	case strings.HasPrefix(addr, "tcp://"):
		address = strings.TrimPrefix(addr, "tcp://")
	case strings.HasPrefix(addr, "tcp4://"):
		network, address = "tcp4", strings.TrimPrefix(addr, "tcp4://")
	case strings.HasPrefix(addr, "tcp6://"):
		network, address = "tcp6", strings.TrimPrefix(addr, "tcp6://")
	case strings.HasPrefix(addr, "unix://"):
		network, address = "unix", strings.TrimPrefix(addr, "unix://")
		if fi, err := os.Stat(address); err == nil && fi.Mode()&os.ModeSocket != 0 && staleSocket(address) {
			_ = os.Remove(address) // left by an earlier run: nobody listens on it
		}
	case strings.Contains(addr, "://"):
		return nil, fmt.Errorf("jetrpc: unsupported address %q (use tcp:// or unix://)", addr)
	}
	lc := net.ListenConfig{}
	if e.opts.ReusePort && network != "unix" {
		lc.Control = setReusePort
	}
	ln, err := lc.Listen(context.Background(), network, address)
	if err != nil {
		return nil, fmt.Errorf("jetrpc: listen %s: %w", addr, err)
	}
	return ln, nil
}

// staleSocket reports whether the Unix socket at path has no listener:
// a connection to it is refused. A live socket is left alone, and Listen
// then fails with "address already in use".
func staleSocket(path string) bool {
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		_ = c.Close()
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

func (e *Engine) closeListeners() {
	for _, ln := range e.listeners {
		_ = ln.Close()
	}
}

// accept accepts connections until the listener is closed. Temporary
// errors, EMFILE among them, are retried after a growing pause: the
// engine never stops because it ran out of file descriptors.
func (e *Engine) accept(ln net.Listener) {
	defer e.acceptWG.Done()
	var pause time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if pause == 0 {
				pause = 5 * time.Millisecond
			} else if pause = 2 * pause; pause > time.Second {
				pause = time.Second
			}
			e.opts.Logger.Warn("jetrpc: accept failed; retrying", "err", err, "pause", pause)
			time.Sleep(pause)
			continue
		}
		pause = 0
		if f := e.opts.AcceptConn; f != nil && !f(nc.RemoteAddr()) {
			e.opts.Logger.Debug("jetrpc: connection refused", "remote", nc.RemoteAddr().String())
			e.refusedConn(nc, httprules.ReasonAddress)
			_ = nc.Close() // before gnet or the engine holds anything of it
			e.stats.refusedAddr.Add(1)
			continue
		}
		if n := e.nconns.Add(1); n > int64(e.maxConns) || e.draining.Load() {
			e.nconns.Add(-1) // over the limit (counted across listeners): refused at once
			_ = nc.Close()
			if n > int64(e.maxConns) {
				e.refusedConn(nc, httprules.ReasonTooManyConns)
				e.stats.refusedMax.Add(1)
			} else {
				e.stats.refusedStop.Add(1)
			}
			continue
		}
		e.stats.accepted.Add(1) // before it can be served: a client that sees its connection served sees it counted
		if _, err := e.cli.EnrollContext(nc, nil); err != nil {
			e.nconns.Add(-1)
			e.opts.Logger.Warn("jetrpc: cannot enroll a connection", "err", err)
		}
	}
}

// raiseFileLimit raises the soft limit on open files to the hard limit
// and returns how many connections that leaves room for (0 if unknown).
func raiseFileLimit() int {
	limit := fdlimit.Raise()
	if limit == 0 {
		return 0
	}
	// Each connection holds one descriptor; keep some for the rest of
	// the process (listeners, pollers, files, outgoing connections).
	reserve := uint64(64)
	if limit/8 > reserve {
		reserve = min(limit/8, 1024)
	}
	if limit <= reserve {
		return 1
	}
	return int(min(limit-reserve, 1<<30))
}

func setReusePort(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, 0xf /* SO_REUSEPORT */, 1)
	})
	if err != nil {
		return err
	}
	return serr
}
