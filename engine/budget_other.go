//go:build !linux

package engine

// availableMemory returns 0 (unknown) here: the default budget is
// DefaultMaxOutputBudget.
func availableMemory() int64 { return 0 }
