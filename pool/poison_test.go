//go:build jetrpcdebug

package pool_test

import (
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/pool"
)

// TestBuffers_poison: with the jetrpcdebug tag, a use after Put sees
// garbage instead of the old contents.
func TestBuffers_poison(t *testing.T) {
	var b pool.Buffers
	buf := b.Get()
	buf.B = append(buf.B, "secret"...)
	kept := buf.B
	b.Put(buf)
	if string(kept) != strings.Repeat("\xDD", 6) {
		t.Fatalf("after Put the bytes read %q", kept)
	}
}
