//go:build !unix

// Package fdlimit raises a process's limit on open files, which the
// engine (one descriptor per connection) and the fan-out benchmark (one
// per subscriber) both need well above the usual soft limit of 1024.
package fdlimit

// Raise returns 0: the limit is unknown here.
func Raise() uint64 { return 0 }
