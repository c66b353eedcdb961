package engine

// White-box tests of the connection core's helpers: the constant-time
// comparison of the authorization cache (access.go) and the release of
// jobs (work.go).

import (
	"bytes"
	"reflect"
	"testing"
)

// TestSameBytes: sameBytes is bytes.Equal for slices of one length,
// whatever byte differs, at every offset of every length to 40.
func TestSameBytes(t *testing.T) {
	for n := 0; n <= 40; n++ {
		a := bytes.Repeat([]byte{0xA5}, n)
		if !sameBytes(a, bytes.Clone(a)) {
			t.Fatalf("len %d: equal slices differ", n)
		}
		for i := range n {
			for _, bit := range []byte{1, 0x80} {
				b := bytes.Clone(a)
				b[i] ^= bit
				if sameBytes(a, b) {
					t.Fatalf("len %d: a difference at %d (bit %#x) not seen", n, i, bit)
				}
			}
		}
	}
}

// TestJob_releaseClearsEveryField: release leaves a job as a new one
// but for the buffers it keeps (emptied) and the parts it need not clear
// (the Pending Run empties, the CallContext an HTTP job overwrites): a
// field added to job without a line in release fails here.
func TestJob_releaseClearsEveryField(t *testing.T) {
	j := new(job)
	v := reflect.ValueOf(j).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		f = reflect.NewAt(f.Type(), f.Addr().UnsafePointer()).Elem() // unexported: set it anyway
		switch f.Kind() {
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 3, 3))
		case reflect.String:
			f.SetString("x")
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int64:
			f.SetInt(7)
		case reflect.Uint8, reflect.Uint64:
			f.SetUint(7)
		case reflect.Struct: // the Pending and the CallContext
		default:
			t.Fatalf("field %s: kind %v not covered by this test", v.Type().Field(i).Name, f.Kind())
		}
	}
	j.release()
	for i := range v.NumField() {
		name, f := v.Type().Field(i).Name, v.Field(i)
		switch {
		case f.Kind() == reflect.Slice:
			if f.Len() != 0 {
				t.Errorf("%s: %d bytes left", name, f.Len())
			}
		case f.Kind() == reflect.Struct:
		case !f.IsZero():
			t.Errorf("%s: not cleared", name)
		}
	}
}
