package handler_test

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
)

// inflateSynced inflates a Deflated: the tail it lacks and an empty
// final block appended.
func inflateSynced(t testing.TB, z []byte) []byte {
	t.Helper()
	got, err := io.ReadAll(flate.NewReader(io.MultiReader(bytes.NewReader(z), strings.NewReader("\x00\x00\xff\xff\x01\x00\x00\xff\xff"))))
	if err != nil {
		t.Fatalf("inflating: %v", err)
	}
	return got
}

// TestPrepared_deflatedInflatesToPayload: Deflated inflates, with the
// standard library, to the payload; so does it after a stored block that
// precedes it (it refers to nothing before it), and a Prepared taken from
// the pool again holds the new payload's, not the old one's.
func TestPrepared_deflatedInflatesToPayload(t *testing.T) {
	for _, payload := range []string{`1`, `"x"`, `{"a":[` + strings.Repeat(`{"b":"grüße"},`, 3000) + `1]}`} {
		p := handler.NewPrepared([]byte(payload))
		if string(p.Payload()) != payload || !p.ValidUTF8() {
			t.Fatalf("payload %q valid %v", p.Payload(), p.ValidUTF8())
		}
		if got := inflateSynced(t, p.Deflated()); string(got) != payload {
			t.Fatalf("inflates to %d bytes, want %d", len(got), len(payload))
		}
		stored := append([]byte{0x00, 3, 0, ^byte(3), 0xff}, "abc"...)
		if got := inflateSynced(t, append(stored, p.Deflated()...)); string(got) != "abc"+payload {
			t.Fatalf("after a stored block: %d bytes", len(got))
		}
		p.Release()
	}
	if p := handler.NewPrepared([]byte("\"\xff\"")); p.ValidUTF8() {
		t.Fatal("invalid UTF-8 reported valid")
	} else {
		p.Release()
	}
}

// TestPrepared_referencesCounted: Retain and Release pair from any
// goroutine; releasing more often than retained, or retaining after the
// last release, panics.
func TestPrepared_referencesCounted(t *testing.T) {
	p := handler.NewPrepared([]byte(`{"n":1}`))
	var wg sync.WaitGroup
	for range 16 {
		p.Retain()
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = p.Deflated()
			p.Release()
		}()
	}
	wg.Wait()
	p.Release()
	for _, c := range []struct {
		name string
		f    func()
	}{{"Release", p.Release}, {"Retain", p.Retain}} {
		name, f := c.name, c.f
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s after the last Release did not panic", name)
				}
			}()
			f()
		}()
	}
}

// A message for many subscribers is prepared once: its compressed form
// is made on first use, once, and shared.
func ExamplePrepared() {
	msg := handler.NewPrepared([]byte(`{"price":101.25}`))
	defer msg.Release()
	z := msg.Deflated()
	fmt.Println(string(msg.Payload()), len(z) > 0, &msg.Deflated()[0] == &z[0])
	// Output: {"price":101.25} true true
}
