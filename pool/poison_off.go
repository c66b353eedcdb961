//go:build !jetrpcdebug

package pool

// poison is set by the jetrpcdebug build tag: Put then overwrites buffers.
const poison = false
