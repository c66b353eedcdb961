//go:build !linux || poll_opt

package engine

// NOTE: without epoll (or with gnet's poll_opt poller, whose events carry
// a pointer the engine cannot rebuild), a connection held back cannot stop
// reading: gnet goes on buffering its input, bounded by the "sent too much
// while held back" close (MaxMessageSize+MaxHeaderSize). See
// pause_linux.go.

import "sync/atomic"

// gateSupported: this build cannot hold input back in the kernel.
const gateSupported = false

// gateOff is always as if set here (kept for the tests' sake).
var gateOff atomic.Bool

// gateInput does nothing here: gnet reads every readable connection.
func (c *conn) gateInput(hold bool, pending int, wrote bool) {}

// gateSlack is 0 where input cannot be gated: gnet reads on, and a
// client that sends past a message and a head while held back is
// closed.
func (c *conn) gateSlack() int { return 0 }
