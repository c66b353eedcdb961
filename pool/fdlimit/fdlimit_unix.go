//go:build unix

// Package fdlimit raises a process's limit on open files, which the
// engine (one descriptor per connection) and the fan-out benchmark (one
// per subscriber) both need well above the usual soft limit of 1024.
package fdlimit

import "syscall"

// Raise raises the soft limit on open files to the hard limit and
// returns the limit now in force, 0 if it is unknown.
func Raise() uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
		_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	return lim.Cur
}
